"""``redline-canary doctor`` as a user runs it: the real CLI in a subprocess, the sandbox on
a socket, built from a scenario the way a misconfigured repository looks on GitHub.

Every test also checks the promise that makes doctor safe to point at a real repository:
the sandbox saw GETs only.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from redline_canary.sandbox import Sandbox
from tests.helpers.clirun import cli
from tests.helpers.sandboxing import TOKEN

MISCONFIGURED = {
    "repos": [{"name": "acme/misconfigured", "topic": False, "empty": True}],
    "token": {"kind": "fine_grained", "expires_in_days": 5, "no_access": ["checks"]},
}
READY = {
    "repos": [{"name": "acme/ready", "labels": ["redline-exempt"], "branches": ["feature", "other"],
               "pulls": [{"head": "other", "title": "Unreviewed"},
                         {"head": "feature", "title": "Earlier work", "reviewed_by": ["coderabbitai[bot]"]}]}],
    "token": {"kind": "fine_grained", "expires_in_days": 90},
}


def _sandbox(scenario: dict[str, Any], token: str | None = TOKEN) -> Iterator[Sandbox]:
    with Sandbox.from_scenario(scenario, token=token, default_reviewer="none") as sb:
        yield sb
        writes = [(r.method, r.route) for r in sb.requests if r.method != "GET"]
        assert writes == [], f"doctor wrote: {writes}"
        assert sb.requests, "doctor read nothing"


def _doctor(sb: Sandbox, *args: str, token: str = TOKEN) -> tuple[int, str, str]:
    res = cli("doctor", "--api-url", sb.url, *args, env={"REDLINE_CANARY_TOKEN": token, "GITHUB_TOKEN": ""})
    assert TOKEN not in res.stdout + res.stderr
    return res.returncode, res.stdout, res.stderr


def _lines(out: str) -> dict[str, str]:
    """check name -> its line (status first)."""
    found: dict[str, str] = {}
    for line in out.splitlines()[1:-1]:
        status, rest = line.split(maxsplit=1)
        for name in ("token", "expiry", "repository", "permissions", "topic", "default branch", "label",
                     "check runs", "reviewer", "stack"):
            if rest.startswith(name + " "):
                found[name] = f"{status} {rest[len(name):].strip()}"
    return found


def test_a_misconfigured_repository_gets_one_line_per_check_and_a_fix_for_each_failure() -> None:
    for sb in _sandbox(MISCONFIGURED):
        code, out, err = _doctor(sb, "--repo", "acme/misconfigured", "--reviewer", "bugbot", "--stack", "python")
        assert code == 2, out + err
        lines = _lines(out)
        assert list(lines) == ["token", "expiry", "repository", "permissions", "topic", "default branch", "label",
                               "check runs", "reviewer", "stack"]
        assert lines["token"] == "OK valid: it belongs to redline-canary (User)"
        assert lines["expiry"].startswith("WARN expires in 5 day(s)") and "fix: regenerate" in lines["expiry"]
        assert lines["topic"].startswith("FAIL") and "fix: add the topic redline-canary" in lines["topic"]
        assert lines["default branch"].startswith("FAIL main has no commit")
        assert "fix: push a first commit" in lines["default branch"]
        assert lines["check runs"].startswith("SKIP")  # no commit to read check runs of
        assert lines["reviewer"].startswith("INFO no evidence")  # not a failure: a new repo has no PRs
        assert out.splitlines()[-1] == "2 blocking problem(s)"
        for line in out.splitlines():
            assert not line.lstrip().startswith("FAIL") or "fix: " in line


def test_a_ready_repository_passes_and_shows_the_reviewer_at_work() -> None:
    for sb in _sandbox(READY):
        code, out, _err = _doctor(sb, "--repo", "acme/ready", "--reviewer", "coderabbit")
        assert code == 0, out
        lines = _lines(out)
        assert lines["reviewer"] == "OK installed: PR #2 has a review by coderabbitai[bot]"
        assert lines["label"] == "OK redline-exempt exists"
        assert lines["expiry"].startswith("OK expires in 90 days")
        assert lines["permissions"].startswith("INFO fine-grained token, push access")
        assert "write access cannot be read without writing" in lines["permissions"]
        assert out.splitlines()[-1] == "no blocking problem"


def test_no_evidence_of_another_reviewer_is_said_not_failed() -> None:
    for sb in _sandbox(READY):
        code, out, _err = _doctor(sb, "--repo", "acme/ready", "--reviewer", "gemini")
        assert code == 0
        assert _lines(out)["reviewer"].startswith(
            "INFO no evidence: none of the 2 most recent PR(s) has a review or comment by gemini-code-assist[bot]")


def test_check_runs_a_profile_needs_must_be_readable() -> None:
    scenario = {**READY, "token": {"kind": "fine_grained", "no_access": ["checks"]}}
    for sb in _sandbox(scenario):
        code, out, _err = _doctor(sb, "--repo", "acme/ready", "--reviewer", "bugbot")
        assert code == 2
        line = _lines(out)["check runs"]
        assert line.startswith("FAIL not readable (GitHub answered 403") and "fix: grant the token Checks: Read" in line
        code, out, _err = _doctor(sb, "--repo", "acme/ready", "--reviewer", "coderabbit")
        assert code == 0 and _lines(out)["check runs"] == "OK not needed by the coderabbit profile"


def test_a_classic_token_without_the_repo_scope_is_blocking() -> None:
    scenario = {**READY, "token": {"kind": "classic", "scopes": ["gist", "read:org"]}}
    for sb in _sandbox(scenario):
        code, out, _err = _doctor(sb, "--repo", "acme/ready")
        assert code == 2
        line = _lines(out)["permissions"]
        assert line.startswith("FAIL classic token, scopes: gist, read:org; it cannot write here")
        assert "fix: add the repo (or public_repo) scope" in line
        assert _lines(out)["expiry"].startswith("OK no expiry announced")


def test_a_github_app_user_token_with_an_empty_scopes_header_is_not_a_classic_token() -> None:
    """GitHub answers a GitHub App user token (``ghu_``) with ``x-oauth-scopes`` present but
    empty: not a classic token's scope list (the sandbox's classic dialect with no scope
    sends exactly that header). doctor used to fail it: "classic token, scopes: none"."""
    scenario = {**READY, "token": {"kind": "classic", "scopes": []}}
    app_user = "ghu_" + "x" * 36
    for sb in _sandbox(scenario, token=app_user):
        code, out, _err = _doctor(sb, "--repo", "acme/ready", token=app_user)
        line = _lines(out)["permissions"]
        assert code == 0, out
        assert line.startswith("INFO GitHub App user token, push access"), line
        assert "classic" not in line


def test_an_invalid_token_stops_at_the_first_line() -> None:
    for sb in _sandbox(READY):
        code, out, _err = _doctor(sb, "--repo", "acme/ready", token="not-the-sandbox-token")
        assert code == 2
        lines = _lines(out)
        assert lines["token"].startswith("FAIL not valid (GitHub answered 401 Bad credentials)")
        assert "fix: create a new token" in lines["token"]
        assert {v.split()[0] for k, v in lines.items() if k != "token"} == {"SKIP"}
        assert "not-the-sandbox-token" not in out


def test_copilot_requested_by_a_ruleset_is_evidence() -> None:
    scenario = {"repos": [{"name": "acme/copilot", "copilot_review": True}]}
    for sb in _sandbox(scenario):
        code, out, _err = _doctor(sb, "--repo", "acme/copilot", "--reviewer", "copilot", "--json")
        assert code == 0
        data = json.loads(out)
        reviewer = next(c for c in data["checks"] if c["name"] == "reviewer")
        assert reviewer == {"name": "reviewer", "status": "ok", "fix": "",
                            "detail": "installed: a ruleset on main requests an automatic Copilot review"}
        assert data["blocking"] == 0 and data["exit_code"] == 0 and data["repo"] == "acme/copilot"


def test_targets_are_checked_like_run_takes_them() -> None:
    scenario = {"repos": [*MISCONFIGURED["repos"], *READY["repos"]]}
    targets = json.dumps([{"repo": "acme/ready", "stack": "python", "reviewer": "coderabbit"},
                          {"repo": "acme/misconfigured", "stack": "python"}])
    for sb in _sandbox(scenario):
        code, out, _err = _doctor(sb, "--targets", targets, "--json")
        assert code == 2
        results = [json.loads(line) for line in out.splitlines()]
        assert [(r["repo"], r["exit_code"]) for r in results] == [("acme/ready", 0), ("acme/misconfigured", 2)]


@pytest.mark.parametrize("args, message", [
    ([], "redline-canary: --repo: required (or give --targets)"),
    (["--repo", "no-slash"], "redline-canary: --repo:"),
    (["--repo", "a/b", "--reviewer", "nobody"], "redline-canary: --reviewer: unknown reviewer profile 'nobody'"),
    (["--repo", "a/b", "--stack", "cobol"], "unknown stack 'cobol'"),
])
def test_bad_input_is_one_line_and_exit_2_before_any_request(args: list[str], message: str) -> None:
    res = cli("doctor", "--api-url", "http://127.0.0.1:9", *args, env={"REDLINE_CANARY_TOKEN": TOKEN})
    assert res.returncode == 2 and res.stdout == ""
    assert res.stderr.count("\n") == 1 and message in res.stderr
