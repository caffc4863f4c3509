"""Scenario files: the same world in-process (``Sandbox.from_scenario``) and from outside
(``sandbox serve --scenario`` as a real subprocess), and strict validation of the file."""

from __future__ import annotations

import copy
import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from redline_canary.cli import main
from redline_canary.github import client as github_api
from redline_canary.sandbox import Sandbox
from redline_canary.sandbox.scenario import CANARY_TOPIC, ScenarioError
from redline_canary.sandbox.scenario_files import load_scenario
from redline_canary.sandbox.scenario_validation import parse_scenario

AUTH = {"Authorization": "token x"}
# The brief's example, verbatim in shape.
EXAMPLE_YAML = """\
repos:
  - {name: acme/canary-python, topic: true, reviewer: bandit}
  - name: acme/product
    topic: false
    branches: [rc/2.4, rc/2.5-hotfix]
    pulls: [{head: rc/2.5-hotfix, title: Hotfix}]
faults:
  - {method: POST, route: "/repos/{owner}/{repo}/git/refs", status: 502, times: 1}
  - {method: PATCH, route: "/repos/{owner}/{repo}/pulls/{pull_number}", status: 403,
     headers: {retry-after: "0.5"}, times: 1}
  - {method: GET, route: "/repos/{owner}/{repo}/pulls/{pull_number}/comments", status: 200,
     body: "{not json", times: 1}
  - {method: GET, route: "/repos/{owner}/{repo}/issues/{issue_number}/comments", delay: 40, times: 1}
  - {method: POST, route: "/repos/{owner}/{repo}/pulls", drop: true, times: 1}
  - {method: POST, route: "/repos/{owner}/{repo}/pulls", status: 502, after_write: true, times: 1}
"""


def example() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(EXAMPLE_YAML)
    return data


@pytest.fixture
def world() -> Iterator[tuple[Sandbox, httpx.Client]]:
    with (
        Sandbox.from_scenario(example(), default_reviewer="silent", latency=0.0) as sb,
        httpx.Client(base_url=sb.url, headers=AUTH, timeout=5) as client,
    ):
        yield sb, client


def test_topic_constant_matches_the_product() -> None:
    assert CANARY_TOPIC == github_api.CANARY_TOPIC


def test_scenario_world_is_countable_through_the_api(world: tuple[Sandbox, httpx.Client]) -> None:
    sb, client = world
    assert client.get("/repos/acme/canary-python").json()["topics"] == [CANARY_TOPIC]
    assert client.get("/repos/acme/product").json()["topics"] == []
    refs = client.get("/repos/acme/product/git/matching-refs/heads/rc/").json()
    assert [r["ref"] for r in refs] == ["refs/heads/rc/2.4", "refs/heads/rc/2.5-hotfix"]
    pulls = client.get("/repos/acme/product/pulls").json()
    assert [(p["title"], p["head"]["ref"], p["user"]["login"]) for p in pulls] == [
        ("Hotfix", "rc/2.5-hotfix", "octocat")
    ]
    head = client.get(f"/repos/acme/product/git/commits/{pulls[0]['head']['sha']}").json()
    assert head["author"]["name"] == "octocat"  # the human made it, not the token's user
    assert sb.reviewer_kinds() == {"acme/canary-python": "bandit", "acme/product": "silent"}
    assert client.get("/repos/acme/canary-python/pulls").json() == []


def test_scenario_faults_fire_in_order(world: tuple[Sandbox, httpx.Client]) -> None:
    sb, client = world
    main_sha = client.get("/repos/acme/product/git/ref/heads/main").json()["object"]["sha"]
    ref = {"ref": "refs/heads/canary/x", "sha": main_sha}
    assert client.post("/repos/acme/product/git/refs", json=ref).status_code == 502
    assert client.post("/repos/acme/product/git/refs", json=ref).status_code == 201  # times: 1

    patched = client.patch("/repos/acme/product/pulls/1", json={"title": "x"})
    assert patched.status_code == 403 and patched.headers["retry-after"] == "0.5"
    assert client.patch("/repos/acme/product/pulls/1", json={"title": "x"}).status_code == 200

    garbled = client.get("/repos/acme/product/pulls/1/comments")
    assert garbled.status_code == 200 and garbled.content == b"{not json"
    with pytest.raises(httpx.ReadTimeout):  # delay: 40, times: 1
        client.get("/repos/acme/product/issues/1/comments", timeout=0.2)
    assert client.get("/repos/acme/product/issues/1/comments").json() == []

    sb.commit_files("acme/product", "canary/x", {"x.py": "x = 1\n"})
    body = {"title": "canary", "head": "canary/x", "base": "main"}
    with pytest.raises(httpx.RemoteProtocolError):  # drop: true, times: 1
        client.post("/repos/acme/product/pulls", json=body)
    assert len(sb.open_pulls("acme/product")) == 1  # dropped before the handler ran
    assert client.post("/repos/acme/product/pulls", json=body).status_code == 502  # after_write
    assert [p.head for p in sb.open_pulls("acme/product")] == ["rc/2.5-hotfix", "canary/x"]


def test_policy_keys_are_wired() -> None:
    data: dict[str, Any] = {
        "login": "ci-bot",
        "human": "maria",
        "repos": [
            {"name": "acme/a", "files": {"app.py": "x = 1\n"}, "reviewer": "none",
             "review_requests": {"copilot-pull-request-reviewer[bot]": "rejected"}},
        ],
        "secondary_limit": {"per_minute": 2, "window": 30, "status": 429, "send_retry_after": False},
        "ref_visibility_lag": {"attempts": 1, "repo": "acme/a"},
        "too_quickly": {"after": 5},
        "fine_grained_token": {"missing": ["issues", "pull_requests"]},
    }
    with Sandbox.from_scenario(data) as sb, httpx.Client(base_url=sb.url, headers=AUTH, timeout=5) as c:
        assert c.get("/user").json()["login"] == "ci-bot"
        assert sb.files("acme/a", "main") == {"app.py": b"x = 1\n"}
        assert sb.reviewer_kinds() == {}
        created = c.post("/repos/acme/a/issues", json={"title": "t"})
        assert created.status_code == 403  # opening an issue needs issues=write, nothing else will do
        assert created.headers["x-accepted-github-permissions"] == "issues=write"
        sha = c.get("/repos/acme/a/git/ref/heads/main").json()["object"]["sha"]
        assert c.post("/repos/acme/a/git/refs", json={"ref": "refs/heads/b", "sha": sha}).status_code == 201
        second = c.post("/repos/acme/a/git/refs", json={"ref": "refs/heads/c", "sha": sha})  # 3rd write
        assert second.status_code == 429 and "retry-after" not in second.headers
        assert sb.state.policies.ref_lag is not None and sb.state.policies.ref_lag.pending
        assert sb.state.policies.too_quickly is not None and sb.state.policies.too_quickly.after == 5
        assert sb.state.policies.review_request_mode("acme/a", "Copilot-Pull-Request-Reviewer[bot]") == "rejected"


def test_the_help_example_is_a_valid_scenario() -> None:
    from redline_canary.commands.sandbox import SCENARIO_HELP

    block = SCENARIO_HELP.split("\n", 1)[1].rsplit("Any problem", 1)[0]
    scenario = parse_scenario(yaml.safe_load(block))
    assert scenario.human == "octocat" and scenario.too_quickly is not None
    assert scenario.repos[0].review_requests == (("copilot-pull-request-reviewer[bot]", "hidden"),)
    assert scenario.faults[0].after_write and scenario.secondary_limit is not None
    with Sandbox.from_scenario(scenario, default_reviewer="none") as sb:
        assert sb.branches("acme/canary-python") == ["main", "rc/2.4"]


def test_yaml_and_json_files_build_the_same_scenario(tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text(EXAMPLE_YAML)
    (tmp_path / "s.json").write_text(json.dumps(example()))
    assert load_scenario(tmp_path / "s.yaml") == load_scenario(tmp_path / "s.json")
    assert load_scenario(tmp_path / "s.yaml").faults[0].times == 1
    assert load_scenario(tmp_path / "s.yaml").faults[3].times == 1


def _mutate(path: str, value: Any) -> dict[str, Any]:
    """The example with one key set (``a.0.b``; value ``...`` deletes it)."""
    data = copy.deepcopy(example())
    *parents, last = path.split(".")
    node: Any = data
    for p in parents:
        node = node[int(p)] if isinstance(node, list) else node[p]
    key: Any = int(last) if isinstance(node, list) else last
    if value is ...:
        del node[key]
    elif isinstance(node, list) and key == len(node):
        node.append(value)
    else:
        node[key] = value
    return data


BAD = [
    ("faults.2.status", "x", "faults[2].status: must be an integer 100-599"),
    ("faults.0.status", 1000, "faults[0].status: must be an integer 100-599"),
    ("faults.0.times", 0, "faults[0].times: must be an integer >= 1"),
    ("faults.0.route", "/repos/{owner}/{repo}/git/ref", "faults[0].route: the sandbox serves no route"),
    ("faults.0.method", "PUT", "faults[0].route: /repos/{owner}/{repo}/git/refs answers GET, POST, not PUT"),
    ("faults.0.method", "FETCH", "faults[0].method: must be one of GET, POST, PATCH, PUT, DELETE"),
    ("faults.0.colour", "red", "faults[0].colour: unknown key"),
    ("faults.0.repo", "acme/elsewhere", "faults[0].repo: acme/elsewhere is not one of the scenario's repos"),
    ("faults.4.status", 500, "faults[4].drop: a dropped connection has no status"),
    ("faults.1.headers", ["retry-after"], "faults[1].headers: must be a mapping"),
    ("faults.3.delay", -1, "faults[3].delay: must be a number 0-3600"),
    ("faults.6", {"method": "GET"}, "faults[6]: does nothing"),
    ("faults.6", {"route": "/repos/{owner}/{repo}/pulls", "after_write": True, "delay": 1},
     "faults[6].after_write: needs a status"),
    ("faults", {"a": 1}, "faults: must be a list"),
    ("fautls", [], "fautls: unknown key (allowed: login, human, repos,"),
    ("repos", [], "repos: must name at least one repository"),
    ("repos.0.topic", "yes", "repos[0].topic: must be true or false"),
    ("repos.0.reviewer", "copilot", "repos[0].reviewer: must be one of bandit, silent, none"),
    ("repos.0.name", "no-slash", "repos[0].name: must be OWNER/NAME"),
    ("repos.0.name", ..., "repos[0].name: is required"),
    ("repos.0.nmae", "x/y", "repos[0].nmae: unknown key"),
    ("repos.1.name", "ACME/canary-python", "repos[1].name: ACME/canary-python is already repos[0]"),
    ("repos.1.pulls.0.head", "rc/9", "repos[1].pulls[0].head: rc/9 is not one of acme/product's branches"),
    ("repos.1.pulls.0.base", "rc/nope", "repos[1].pulls[0].base: rc/nope is not a branch of acme/product"),
    ("repos.1.pulls.1", {"head": "rc/2.5-hotfix"}, "repos[1].pulls[1].head: a pull request already exists"),
    ("repos.1.branches.2", "rc/2.4", "repos[1].branches[2]: rc/2.4 is already a branch"),
    ("repos.1.branches.2", "rc..x", "repos[1].branches[2]: 'rc..x' is not a valid branch name"),
    ("repos.1.review_requests", {"bot[bot]": "ignored"}, "repos[1].review_requests.bot[bot]: must be one of"),
    ("repos.0.files", {"../x": "y"}, "repos[0].files.../x: is not a valid repository path"),
    ("fine_grained_token", {"missing": ["pull-requests"]}, "fine_grained_token.missing[0]: must be one of"),
    ("fine_grained_token", {"missing": ["issues"], "repos": ["acme/zzz"]},
     "fine_grained_token.repos[0]: acme/zzz is not one of the scenario's repos"),
    ("secondary_limit", {"per_minute": 3, "status": 500}, "secondary_limit.status: must be one of 403, 429"),
    ("secondary_limit", {"status": 429}, "secondary_limit: needs per_minute or per_hour"),
    ("too_quickly", {"after": -1}, "too_quickly.after: must be an integer >= 0"),
    ("ref_visibility_lag", True, "ref_visibility_lag: must be an integer 0-1000"),
    ("human", "redline-canary", "human: must differ from login"),
]


@pytest.mark.parametrize(("path", "value", "message"), BAD, ids=[b[2].split(":")[0] + f"={b[1]!r}" for b in BAD])
def test_bad_scenarios_exit_2_naming_file_and_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], path: str, value: Any, message: str
) -> None:
    f = tmp_path / "bad.json"
    f.write_text(json.dumps(_mutate(path, value)))
    assert main(["sandbox", "serve", "--scenario", str(f)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"redline-canary: {f}: {message}"), err
    assert err.count("\n") == 1


def test_unreadable_and_malformed_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nope.yaml"
    assert main(["sandbox", "serve", "--scenario", str(missing)]) == 2
    assert capsys.readouterr().err.startswith(f"redline-canary: {missing}: cannot read")
    twice = tmp_path / "twice.yaml"
    twice.write_text("repos: []\nrepos: [{name: a/b}]\n")
    assert main(["sandbox", "serve", "--scenario", str(twice)]) == 2
    err = capsys.readouterr().err
    assert "not valid YAML" in err and "'repos' given twice" in err and err.count("\n") == 1
    with pytest.raises(ScenarioError, match="<scenario>: must be a mapping"):
        parse_scenario(["not", "a", "mapping"])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--port", "70000"], "--port: must be 0-65535, got 70000"),
        (["--port", "-1"], "--port: must be 0-65535, got -1"),
        (["--host", "no such host"], "--host: not a host name or address"),
        (["--host", "::1"], "--host: IPv6 addresses are not supported"),
        (["--host", "nonexistent.invalid"], "--host: cannot resolve 'nonexistent.invalid'"),
        (["--host", "192.0.2.1"], "--host/--port: cannot listen on 192.0.2.1:0"),
        (["--repo", "a/b", "--repo", "A/b"], "--repo: a repository is named twice"),
    ],
)
def test_bad_addresses_exit_2(capsys: pytest.CaptureFixture[str], args: list[str], message: str) -> None:
    assert main(["sandbox", "serve", *args]) == 2
    assert capsys.readouterr().err.startswith(f"redline-canary: {message}")


def test_repo_and_scenario_do_not_mix(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "s.yaml"
    f.write_text(EXAMPLE_YAML)
    assert main(["sandbox", "serve", "--scenario", str(f), "--repo", "a/b"]) == 2
    assert "--repo: cannot be combined with --scenario" in capsys.readouterr().err


def _serve(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "redline_canary", "sandbox", "serve", "--json", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_serve_scenario_subprocess(tmp_path: Path) -> None:
    f = tmp_path / "world.yaml"
    f.write_text(EXAMPLE_YAML)
    proc = _serve("--scenario", str(f), "--reviewer-kind", "none")
    try:
        assert proc.stdout is not None
        info = json.loads(proc.stdout.readline())
        assert info["repos"] == ["acme/canary-python", "acme/product"]
        assert info["reviewers"] == {"acme/canary-python": "bandit"} and info["scenario"] == str(f)
        with httpx.Client(base_url=info["url"], headers=AUTH, timeout=5) as c:
            # orphans and human work, counted through the API alone
            assert [p["user"]["login"] for p in c.get("/repos/acme/product/pulls").json()] == ["octocat"]
            assert len(c.get("/repos/acme/product/git/matching-refs/heads/rc/").json()) == 2
            sha = c.get("/repos/acme/canary-python/git/ref/heads/main").json()["object"]["sha"]
            ref = {"ref": "refs/heads/canary/a", "sha": sha}
            assert c.post("/repos/acme/canary-python/git/refs", json=ref).status_code == 502
            assert c.post("/repos/acme/canary-python/git/refs", json=ref).status_code == 201
            garbled = c.get("/repos/acme/product/pulls/1/comments")
            assert garbled.status_code == 200 and garbled.content == b"{not json"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_serve_bad_scenario_subprocess_exits_2(tmp_path: Path) -> None:
    f = tmp_path / "bad.yaml"
    f.write_text(EXAMPLE_YAML.replace("status: 502, times: 1}", "status: 1000, times: 1}", 1))
    proc = _serve("--scenario", str(f))
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 2 and out == ""
    assert err == f"redline-canary: {f}: faults[0].status: must be an integer 100-599\n"
