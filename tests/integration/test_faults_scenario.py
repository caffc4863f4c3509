"""The issue's own fault scenario, driven from outside the Python API: ``sandbox serve
--scenario FILE`` in one process, ``redline-canary run`` and ``janitor`` in others, and the
orphans counted through the API itself (open PRs, ``git/matching-refs/heads/rc/``)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.helpers.clirun import ROOT
from tests.helpers.sandboxing import TOKEN

SCENARIO = """\
repos:
  - {name: acme/canary-python, topic: true, reviewer: bandit}   # bandit | silent | none
  - name: acme/product
    topic: false
    branches: [rc/2.4, rc/2.5-hotfix]      # made by a human user from the default branch
    pulls: [{head: rc/2.5-hotfix, title: Hotfix}]
faults:       # route = the OpenAPI path template; times omitted = always
  - {method: POST, route: "/repos/{owner}/{repo}/git/refs", status: 502, times: 1}
  - {method: PATCH, route: "/repos/{owner}/{repo}/pulls/{pull_number}", status: 403,
     headers: {retry-after: "0.5"}, times: 1}
  - {method: GET, route: "/repos/{owner}/{repo}/pulls/{pull_number}/comments", status: 200,
     body: "{not json", times: 1}
  - {method: GET, route: "/repos/{owner}/{repo}/issues/{issue_number}/comments", delay: 40, times: 1}
  - {method: POST, route: "/repos/{owner}/{repo}/pulls", drop: true, times: 1}
  - {method: POST, route: "/repos/{owner}/{repo}/pulls", status: 502, after_write: true, times: 1}
"""


@pytest.fixture()
def served(tmp_path: Path) -> Iterator[str]:
    path = tmp_path / "scenario.yml"
    path.write_text(SCENARIO)
    proc = subprocess.Popen([sys.executable, "-m", "redline_canary", "sandbox", "serve", "--scenario", str(path),
                             "--latency", "0.05", "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=ROOT)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line, proc.stderr.read() if proc.stderr else ""
    yield json.loads(line)["url"]
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=10)


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GITHUB_TOKEN": TOKEN, "REDLINE_CANARY_TIME_SCALE": "0.01"}
    return subprocess.run([sys.executable, "-m", "redline_canary", *args], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=120, check=False)


def orphans(url: str, repo: str) -> tuple[list[int], list[str]]:
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {TOKEN}"}) as api:
        pulls = [p["number"] for p in api.get(f"/repos/{repo}/pulls", params={"state": "open"}).json()
                 if p["head"]["ref"].startswith("rc/")]
        refs = api.get(f"/repos/{repo}/git/matching-refs/heads/rc/").json()
    return pulls, [r["ref"].removeprefix("refs/heads/") for r in refs]


def test_the_issue_scenario_leaves_nothing_loses_nothing_and_touches_no_human_branch(
    served: str, tmp_path: Path,
) -> None:
    history = tmp_path / "h.jsonl"
    res = cli("run", "--repo", "acme/canary-python", "--stack", "python", "--api-url", served, "--history",
              str(history), "--run-id", "scenario", "--confirm", "0", "--poll-interval", "0.1",
              "--stable-polls", "3", "--timeout-minutes", "1")
    assert res.returncode == 1, res.stderr  # bandit misses the BLOCKERs: a verdict, not a crash
    records = [json.loads(x) for x in history.read_text().splitlines()]
    assert [r["outcome"] for r in records] == ["scored", "scored"]
    assert orphans(served, "acme/canary-python") == ([], [])
    with httpx.Client(base_url=served, headers={"Authorization": f"Bearer {TOKEN}"}) as api:
        made = api.get("/repos/acme/canary-python/pulls", params={"state": "all"}).json()
    assert len(made) == 2, "the dropped and the 502-after-write PR creations opened no second PR"
    assert {r["pr"] for r in records} == {p["number"] for p in made}
    # The human repository never opted in: the janitor refuses it and touches nothing.
    before = orphans(served, "acme/product")
    janitor = cli("janitor", "--repo", "acme/product", "--api-url", served, "--older-than", "0.001s")
    assert janitor.returncode == 2 and "topic 'redline-canary'" in janitor.stderr, janitor.stderr
    assert orphans(served, "acme/product") == before == ([1], ["rc/2.4", "rc/2.5-hotfix"])
