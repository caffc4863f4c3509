"""Signals and crashes (issue 10): SIGINT/SIGTERM while publishing, polling and tearing down,
SIGKILL followed by the janitor, and a bug in one target that must cost no other target its
records and never read as a verdict.

The run is a real ``redline-canary run`` subprocess talking to the in-process sandbox, in
real time (no test-mode scaling): the point is the 6.5 s a runner has after a signal.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from test_faults import CORPUS, REPO, PassingReviewer

from redline_canary.cli import main
from redline_canary.github.client import CANARY_TOPIC
from redline_canary.sandbox import Sandbox
from tests.helpers.clirun import ROOT
from tests.helpers.sandboxing import TOKEN, assert_no_canary_left

R = "/repos/{owner}/{repo}"


@pytest.fixture()
def sandbox() -> Iterator[Sandbox]:
    with Sandbox(token=TOKEN) as sb:
        sb.create_repo(REPO, topics=[CANARY_TOPIC])
        sb.attach_reviewer(REPO, PassingReviewer(latency=0.01))
        yield sb


def start_run(sb: Sandbox, tmp_path: Path, *extra: str, run_id: str = "sig") -> subprocess.Popen[str]:
    env = {**os.environ, "GITHUB_TOKEN": TOKEN}
    env.pop("REDLINE_CANARY_TIME_SCALE", None)
    return subprocess.Popen(
        [sys.executable, "-m", "redline_canary", "run", "--repo", REPO, "--stack", "mini", "--corpus", str(CORPUS),
         "--api-url", sb.url, "--history", str(tmp_path / "h.jsonl"), "--run-id", run_id, "--confirm", "0",
         "--poll-interval", "0.1", "--stable-polls", "3", "--timeout-minutes", "5", *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)


def wait_for(condition: Callable[[], bool], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "the run never got there"
        time.sleep(0.01)


def seen(sb: Sandbox, method: str, route: str) -> Callable[[], bool]:
    return lambda: any(r.method == method and r.route == route for r in sb.requests)


def records(tmp_path: Path) -> list[dict[str, Any]]:
    path = tmp_path / "h.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


PHASES = {
    # a slow PR creation keeps the run inside publishing when the signal lands
    "publish": (("POST", f"{R}/pulls"), {"delay": 1.0, "times": 1}, ("POST", f"{R}/git/refs")),
    "polling": (None, None, ("GET", f"{R}/pulls/{{pull_number}}/reviews")),
    # a secondary limit on the first branch delete (teardown's first step) keeps the run inside teardown
    "teardown": (("DELETE", f"{R}/git/refs/{{ref}}"), {"status": 403, "headers": {"retry-after": "2"},
                                                       "times": 1}, ("DELETE", f"{R}/git/refs/{{ref}}")),
}


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("phase", list(PHASES))
def test_a_signal_in_any_phase_leaves_nothing_and_loses_no_record(
    sandbox: Sandbox, tmp_path: Path, phase: str, signum: int,
) -> None:
    fault_route, fault, trigger = PHASES[phase]
    if fault_route and fault:
        sandbox.inject_fault(fault_route[0], fault_route[1], **fault)
    if phase == "polling":  # a reviewer that never settles: the run is still polling when signalled
        sandbox.hub.close()
    proc = start_run(sandbox, tmp_path)
    wait_for(seen(sandbox, *trigger))
    sent = time.monotonic()
    proc.send_signal(signum)
    _out, err = proc.communicate(timeout=15)
    assert time.monotonic() - sent < 7.5, "GitHub Actions kills the job 7.5 s after the signal"
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    opened = {p.number for p in sandbox.pulls(REPO)}
    assert opened <= {r["pr"] for r in records(tmp_path)}
    assert_no_canary_left(sandbox, REPO)


def test_after_a_signal_a_short_retry_after_is_waited_out_not_given_up(sandbox: Sandbox, tmp_path: Path) -> None:
    sandbox.hub.close()  # keep it polling
    sandbox.inject_fault("DELETE", f"{R}/git/refs/{{ref}}", status=403, headers={"retry-after": "2"}, times=1)
    proc = start_run(sandbox, tmp_path)
    wait_for(lambda: len(sandbox.pulls(REPO)) == 2 and seen(sandbox, "GET", f"{R}/pulls/{{pull_number}}/reviews")())
    proc.send_signal(signal.SIGTERM)
    _out, err = proc.communicate(timeout=15)
    assert proc.returncode == 130, err
    # Teardown deletes each head branch first (which closes its PR): the limited delete is retried after 2 s.
    deletes = [r for r in sandbox.requests if r.method == "DELETE"]
    assert [r.status for r in deletes] == [403, 204, 204], "the limited delete is retried after 2 s"
    assert {r["outcome"] for r in records(tmp_path)} == {"cancelled"}
    assert_no_canary_left(sandbox, REPO)


def test_sigkill_then_janitor_leaves_nothing(sandbox: Sandbox, tmp_path: Path) -> None:
    sandbox.hub.close()
    proc = start_run(sandbox, tmp_path, run_id="killed")
    wait_for(lambda: len(sandbox.open_pulls(REPO)) == 2)
    proc.kill()
    proc.communicate(timeout=10)
    assert len(sandbox.open_pulls(REPO)) == 2  # nothing ran after SIGKILL
    env = {"GITHUB_TOKEN": TOKEN}
    res = subprocess.run([sys.executable, "-m", "redline_canary", "janitor", "--repo", REPO, "--api-url", sandbox.url,
                          "--run-id", "killed"], capture_output=True, text=True, env={**os.environ, **env}, cwd=ROOT,
                         timeout=60, check=False)
    assert res.returncode == 0, res.stderr
    assert_no_canary_left(sandbox, REPO)


def test_teardown_that_cannot_finish_names_what_is_left_and_exits_4(sandbox: Sandbox, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("REDLINE_CANARY_TIME_SCALE", "0.01")
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    sandbox.inject_fault("PATCH", f"{R}/pulls/{{pull_number}}", status=500, times=None)
    sandbox.inject_fault("DELETE", f"{R}/git/refs/{{ref}}", status=500, times=None)
    code = main(["run", "--repo", REPO, "--stack", "mini", "--corpus", str(CORPUS), "--api-url", sandbox.url,
                 "--history", str(tmp_path / "h.jsonl"), "--run-id", "stuck", "--confirm", "0",
                 "--poll-interval", "0.03", "--timeout-minutes", "0.05"])
    err = capsys.readouterr().err
    assert code == 4  # the reviewer passed, but a run that leaves junk never says 0
    left = [p.number for p in sandbox.open_pulls(REPO)]
    assert len(left) == 2 and all(f"#{n}" in err for n in left)
    assert all(b in err for b in sandbox.branches(REPO) if b.startswith("rc/"))
    assert "teardown incomplete" in err
    assert [r["outcome"] for r in records(tmp_path)] == ["scored", "scored"]
    sandbox.clear_faults()
    assert main(["janitor", "--repo", REPO, "--api-url", sandbox.url, "--run-id", "stuck"]) == 0
    assert_no_canary_left(sandbox, REPO)


# --- a bug is not a verdict --------------------------------------------------------------------
# A bug cannot be produced on purpose without planting one: these tests plant it in the
# scorer, the one place a hostile capture could reach, and check the containment around it.

def _plant_bug(monkeypatch: pytest.MonkeyPatch, stack_kind: tuple[str, str]) -> None:
    import redline_canary.run.cycle as cycle

    real = cycle.evaluate

    def evaluate(capture: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        manifest = capture.get("manifest") or {}
        if (manifest.get("stack"), manifest.get("kind")) == stack_kind and capture.get("review_comments"):
            raise ZeroDivisionError(f"planted bug near {TOKEN}")
        return real(capture, *args, **kwargs)

    monkeypatch.setattr(cycle, "evaluate", evaluate)


def test_a_bug_in_one_target_costs_no_other_target_its_records_and_exits_5(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("REDLINE_CANARY_TIME_SCALE", "0.01")
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    monkeypatch.setenv("RUNNER_TEMP", str(tmp_path))
    corpus = tmp_path / "corpus"
    import shutil

    shutil.copytree(CORPUS, corpus)
    for kind in ("seeded", "clean"):
        shutil.copytree(corpus / kind / "mini", corpus / kind / "mini2")
    _plant_bug(monkeypatch, ("mini", "seeded"))
    targets = [{"repo": "acme/canary-a", "stack": "mini"}, {"repo": "acme/canary-b", "stack": "mini2"}]
    with Sandbox(token=TOKEN) as sb:
        for t in targets:
            sb.create_repo(t["repo"], topics=[CANARY_TOPIC])
            sb.attach_reviewer(t["repo"], PassingReviewer(latency=0.01))
        code = main(["run", "--targets", json.dumps(targets), "--corpus", str(corpus), "--api-url", sb.url,
                     "--history", str(tmp_path / "h.jsonl"), "--run-id", "bug", "--confirm", "0",
                     "--poll-interval", "0.03", "--timeout-minutes", "0.05"])
        err = capsys.readouterr().err
        for t in targets:
            assert_no_canary_left(sb, t["repo"])
    assert code == 5
    got = records(tmp_path)
    a = {r["kind"]: r for r in got if r["repo"] == "acme/canary-a"}
    b = {r["kind"]: r for r in got if r["repo"] == "acme/canary-b"}
    assert a["seeded"]["outcome"] == "error" and "internal error: ZeroDivisionError" in a["seeded"]["notice"]
    assert {r["outcome"] for r in b.values()} == {"scored"} and len(b) == 2
    assert TOKEN not in err + (tmp_path / "h.jsonl").read_text()
    line = next(x for x in err.splitlines() if "internal error" in x and "traceback in" in x)
    log = Path(re.search(r"traceback in (\S+)", line)[1])  # type: ignore[index]
    text = log.read_text()
    assert log.parent == tmp_path and "Traceback" in text and "ZeroDivisionError" in text
    assert TOKEN not in text and "***" in text


def test_an_unexpected_exception_in_a_command_is_one_line_and_exit_5(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    import redline_canary.commands.corpus as corpus_command
    from redline_canary.errors import register_secret

    register_secret(TOKEN)
    monkeypatch.setenv("RUNNER_TEMP", str(tmp_path))

    def broken(*_args: Any, **_kwargs: Any) -> Any:
        raise KeyError(f"planted {TOKEN}")

    monkeypatch.setattr(corpus_command, "load_corpus", broken)
    code = main(["corpus", "show", "--corpus", str(CORPUS)])
    err = capsys.readouterr().err
    assert code == 5 and err.count("\n") == 1 and "Traceback" not in err and TOKEN not in err
    assert "internal error" in err and "KeyError" in err and str(tmp_path) in err
