"""The fault suite (issue 10): every route the cycle calls x six faults, Retry-After
spellings, looping and foreign pagination links, redirects and token leaks.

Each cell runs the real ``redline-canary run`` in this process against a fresh sandbox whose
WSGI app is mounted in the client (no socket: a dropped connection surfaces as httpx's
transport error), so ninety cells fit in a minute. The cells about the wire itself (a
client timeout, another host, a redirect, the janitor after a failed teardown, a token
GitHub refuses) use a sandbox on a real socket (``wire_sandbox``). Retry waits run in test mode
(``REDLINE_CANARY_TIME_SCALE``: a ``Retry-After: 2`` is honoured as 20 ms). For every cell
it asserts what a user is promised: no canary PR or branch left behind (or, when GitHub
refuses deletes for good, the leftovers named on stderr with exit 4 and the janitor able to
finish), a history record for every PR that was opened, and the docs/cli.md exit code.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from redline_canary.cli import main
from redline_canary.github.client import CANARY_TOPIC
from redline_canary.sandbox import Reviewer, Sandbox
from tests.helpers.clirun import ROOT
from tests.helpers.sandboxing import TOKEN, assert_no_canary_left, run_in_process

REPO = "acme/canary-mini"
CORPUS = ROOT / "tests" / "data" / "corpus"
R = "/repos/{owner}/{repo}"

# Every route one cycle calls (a test below checks this list against the sandbox's log).
CYCLE_ROUTES = [
    ("GET", R),
    ("GET", f"{R}/git/ref/{{ref}}"),
    ("GET", f"{R}/git/commits/{{commit_sha}}"),
    ("GET", f"{R}/labels/{{name}}"),
    ("POST", f"{R}/labels"),
    ("POST", f"{R}/git/trees"),
    ("POST", f"{R}/git/commits"),
    ("POST", f"{R}/git/refs"),
    ("POST", f"{R}/pulls"),
    ("POST", f"{R}/issues/{{issue_number}}/labels"),
    ("GET", f"{R}/pulls/{{pull_number}}/comments"),
    ("GET", f"{R}/pulls/{{pull_number}}/reviews"),
    ("GET", f"{R}/issues/{{issue_number}}/comments"),
    ("DELETE", f"{R}/git/refs/{{ref}}"),
    ("GET", f"{R}/pulls/{{pull_number}}"),
]
TRANSIENT_FAULTS: dict[str, dict[str, Any]] = {
    "one-502": {"status": 502, "times": 1},
    "one-drop": {"drop": True, "times": 1},
    "retry-after-2-twice": {"status": 403, "headers": {"retry-after": "2"}, "times": 2},
    "one-slow": {"delay": 1.5, "times": 1},  # the client's timeout is 1 s in test mode: on the wire
    "one-malformed-200": {"status": 200, "body": "{not json", "times": 1},
}
ALWAYS_500 = {"status": 500, "times": None}
# Teardown deletes the head branch first, which closes the PR on GitHub, and closes the
# PR explicitly (PATCH) only when a read shows it still open: a delete that fails for good
# leaves its branch behind (the PR is then closed by the PATCH).
LEFT_BEHIND_WHEN_ALWAYS_500 = {("DELETE", f"{R}/git/refs/{{ref}}")}
# A read of the PR that fails for good after the delete costs one PATCH, nothing the verdict needs.
HARMLESS_WHEN_ALWAYS_500 = {("GET", f"{R}/pulls/{{pull_number}}")}


class PassingReviewer(Reviewer):
    """Catches every BLOCKER of the mini corpus on the seeded PR and says only a MINOR nit on
    the clean twin: a healthy reviewer, so the run passes (exit 0) unless a fault wins."""

    kind = "passing"

    def act(self, ctx: Any) -> None:
        seeded = b"f\"SELECT" in ctx.files().get("app.py", b"")
        if seeded:
            inline = [{"path": "app.py", "line": 5, "body": "[BLOCKER] token committed in code"},
                      {"path": "app.py", "line": 10, "body": "[BLOCKER] SQL built from input"},
                      {"path": "web/Profile.tsx", "line": 7, "body": "[BLOCKER] raw HTML from the bio"}]
        else:
            inline = [{"path": "app.py", "line": 1, "body": "[MINOR] consider a module docstring"}]
        ctx.post_review("Reviewed.", "COMMENTED", inline)


@dataclass
class Cell:
    code: int
    stderr: str
    records: list[dict[str, Any]]
    sandbox: Sandbox


@pytest.fixture()
def fast_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REDLINE_CANARY_TIME_SCALE", "0.01")
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    monkeypatch.delenv("REDLINE_CANARY_TOKEN", raising=False)
    monkeypatch.delenv("CANARY_TARGETS", raising=False)


@pytest.fixture()
def sandbox(in_process_sandbox: Sandbox) -> Sandbox:
    in_process_sandbox.create_repo(REPO, topics=[CANARY_TOPIC])
    in_process_sandbox.attach_reviewer(REPO, PassingReviewer(latency=0.01))
    return in_process_sandbox


@pytest.fixture()
def wire_sandbox() -> Iterator[Sandbox]:
    with Sandbox(token=TOKEN) as sb:
        sb.create_repo(REPO, topics=[CANARY_TOPIC])
        sb.attach_reviewer(REPO, PassingReviewer(latency=0.01))
        yield sb


def run_cycle(sb: Sandbox, tmp_path: Path, capsys: pytest.CaptureFixture[str], *extra: str,
              reviewer: str = "redline") -> Cell:
    """``cli.main`` against a listening sandbox, ``run`` through its app otherwise."""
    history = tmp_path / "history.jsonl"
    argv = ["--repo", REPO, "--stack", "mini", "--corpus", str(CORPUS),
            "--history", str(history), "--run-id", "fault", "--reviewer", reviewer, "--confirm", "0",
            "--poll-interval", "0.03", "--stable-polls", "2", "--timeout-minutes", "0.05", *extra]
    if sb.listening:
        code = main(["run", "--api-url", sb.url, *argv])
        captured = capsys.readouterr()
        out, err = captured.out, captured.err
    else:
        code, out, err = run_in_process(sb, *argv)
    records = [json.loads(line) for line in history.read_text().splitlines()] if history.exists() else []
    everything = out + err + (history.read_text() if history.exists() else "")
    assert TOKEN not in everything
    return Cell(code, err, records, sb)


def assert_promises(cell: Cell, expected_code: int, *, left_behind: bool = False) -> None:
    sb = cell.sandbox
    assert cell.code == expected_code, cell.stderr
    opened = {p.number for p in sb.pulls(REPO)}
    recorded = {r["pr"] for r in cell.records if r["pr"] is not None}
    assert opened <= recorded, f"opened PRs without a record: {sorted(opened - recorded)}"
    if left_behind:
        assert "teardown incomplete" in cell.stderr
        for branch in [b for b in sb.branches(REPO) if b.startswith("rc/")]:
            assert branch in cell.stderr
        sb.clear_faults()
        assert main(["janitor", "--repo", REPO, "--api-url", sb.url, "--run-id", "fault"]) == 0
    assert_no_canary_left(sb, REPO)


def _id(route: tuple[str, str]) -> str:
    return f"{route[0]} {route[1].removeprefix(R) or '/repo'}"


@pytest.mark.usefixtures("fast_retries")
@pytest.mark.parametrize("fault", list(TRANSIENT_FAULTS), ids=list(TRANSIENT_FAULTS))
@pytest.mark.parametrize("route", CYCLE_ROUTES, ids=[_id(r) for r in CYCLE_ROUTES])
def test_a_transient_fault_on_any_route_is_ridden_out(
    request: pytest.FixtureRequest, tmp_path: Path, capsys: pytest.CaptureFixture[str], route: tuple[str, str],
    fault: str,
) -> None:
    sandbox: Sandbox = request.getfixturevalue("wire_sandbox" if fault == "one-slow" else "sandbox")
    sandbox.inject_fault(route[0], route[1], **TRANSIENT_FAULTS[fault])
    cell = run_cycle(sandbox, tmp_path, capsys)
    assert_promises(cell, 0)
    assert [r["outcome"] for r in cell.records] == ["scored", "scored"]
    assert len(sandbox.pulls(REPO)) == 2, "a retried create must not open a second PR"


@pytest.mark.usefixtures("fast_retries")
@pytest.mark.parametrize("route", CYCLE_ROUTES, ids=[_id(r) for r in CYCLE_ROUTES])
def test_a_route_that_always_fails_ends_as_an_infrastructure_failure(
    request: pytest.FixtureRequest, tmp_path: Path, capsys: pytest.CaptureFixture[str], route: tuple[str, str],
) -> None:
    # What is left behind is finished by the janitor, which goes over the wire.
    wire = route in LEFT_BEHIND_WHEN_ALWAYS_500
    sandbox: Sandbox = request.getfixturevalue("wire_sandbox" if wire else "sandbox")
    sandbox.inject_fault(route[0], route[1], **ALWAYS_500)
    cell = run_cycle(sandbox, tmp_path, capsys)
    if route in HARMLESS_WHEN_ALWAYS_500:
        assert_promises(cell, 0)
        return
    assert_promises(cell, 4, left_behind=route in LEFT_BEHIND_WHEN_ALWAYS_500)
    if route not in LEFT_BEHIND_WHEN_ALWAYS_500:
        assert cell.records and {r["outcome"] for r in cell.records} == {"error"}
        assert all(r["notice"] for r in cell.records)


RETRY_AFTER_ROUTES = [
    ("POST", f"{R}/git/refs"),
    ("POST", f"{R}/pulls"),
    ("GET", f"{R}/pulls/{{pull_number}}/comments"),
    ("DELETE", f"{R}/git/refs/{{ref}}"),
    ("GET", f"{R}/pulls/{{pull_number}}"),
]


@pytest.mark.usefixtures("fast_retries")
@pytest.mark.parametrize("value", ["0.5", "1.5", "soon", "-5"])
@pytest.mark.parametrize("route", RETRY_AFTER_ROUTES, ids=[_id(r) for r in RETRY_AFTER_ROUTES])
def test_any_retry_after_spelling_is_waited_out(
    sandbox: Sandbox, tmp_path: Path, capsys: pytest.CaptureFixture[str], route: tuple[str, str], value: str,
) -> None:
    sandbox.inject_fault(route[0], route[1], status=403, headers={"retry-after": value}, times=1)
    cell = run_cycle(sandbox, tmp_path, capsys)
    assert_promises(cell, 0)


@pytest.mark.usefixtures("fast_retries")
@pytest.mark.parametrize("status", [403, 429])
def test_a_secondary_limit_without_retry_after_waits_a_minute(
    sandbox: Sandbox, tmp_path: Path, capsys: pytest.CaptureFixture[str], status: int,
) -> None:
    sandbox.inject_fault("POST", f"{R}/pulls", status=status, times=1,
                         body={"message": "You have exceeded a secondary rate limit and have been temporarily "
                               "blocked from content creation. Please retry your request again later.",
                               "documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"})
    cell = run_cycle(sandbox, tmp_path, capsys)
    assert_promises(cell, 0)


def test_the_matrix_covers_every_route_a_cycle_calls(
    sandbox: Sandbox, tmp_path: Path, capsys: pytest.CaptureFixture[str], fast_retries: None,
) -> None:
    cell = run_cycle(sandbox, tmp_path, capsys)
    called = {(r.method, r.route) for r in sandbox.requests}
    assert called == set(CYCLE_ROUTES)
    assert_promises(cell, 0)


# --- GitHub behaviours recordings rarely show ------------------------------------------------

@pytest.mark.usefixtures("fast_retries")
def test_a_new_ref_not_yet_visible_to_the_pulls_api_is_retried(
    sandbox: Sandbox, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    invalid_head = {"message": "Validation Failed", "status": "422",
                    "errors": [{"resource": "PullRequest", "field": "head", "code": "invalid"}],
                    "documentation_url": "https://docs.github.com/rest/pulls/pulls#create-a-pull-request"}
    sandbox.inject_fault("POST", f"{R}/pulls", status=422, body=invalid_head, times=2)
    cell = run_cycle(sandbox, tmp_path, capsys)
    assert_promises(cell, 0)
    assert len(sandbox.pulls(REPO)) == 2


@pytest.mark.usefixtures("fast_retries")
def test_pr_creation_submitted_too_quickly_is_waited_out(
    sandbox: Sandbox, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    too_quickly = {"message": "Validation Failed", "status": "422",
                   "errors": [{"resource": "PullRequest", "code": "custom", "message": "was submitted too quickly"}]}
    sandbox.inject_fault("POST", f"{R}/pulls", status=422, body=too_quickly, times=1)
    assert_promises(run_cycle(sandbox, tmp_path, capsys), 0)


@pytest.mark.usefixtures("fast_retries")
@pytest.mark.parametrize(("route", "permission"), [
    (("POST", f"{R}/pulls"), "pull_requests=write"),
    (("POST", f"{R}/issues/{{issue_number}}/labels"), "issues=write, pull_requests=write"),
])
def test_a_fine_grained_token_without_a_permission_is_bad_configuration(
    sandbox: Sandbox, tmp_path: Path, capsys: pytest.CaptureFixture[str], route: tuple[str, str],
    permission: str,
) -> None:
    body = {"message": "Resource not accessible by personal access token",
            "documentation_url": "https://docs.github.com/rest/pulls/pulls#create-a-pull-request", "status": "403"}
    sandbox.inject_fault(route[0], route[1], status=403, body=body,
                         headers={"x-accepted-github-permissions": permission}, times=None)
    cell = run_cycle(sandbox, tmp_path, capsys)
    assert_promises(cell, 2)
    assert permission in cell.stderr and "permission" in cell.stderr
    assert "Traceback" not in cell.stderr


COPILOT_LOGIN = "copilot-pull-request-reviewer[bot]"


@pytest.mark.usefixtures("fast_retries")
@pytest.mark.parametrize("mode", ["dropped", "rejected"])
def test_a_review_request_that_does_not_take_ends_as_error_not_silent(
    sandbox: Sandbox, tmp_path: Path, capsys: pytest.CaptureFixture[str], mode: str,
) -> None:
    sandbox.review_requests(REPO, COPILOT_LOGIN, mode)  # type: ignore[arg-type]
    cell = run_cycle(sandbox, tmp_path, capsys, reviewer="copilot")
    assert_promises(cell, 4)
    seeded = next(r for r in cell.records if r["kind"] == "seeded")
    assert seeded["outcome"] == "error" and "not enabled" in seeded["notice"]
    assert seeded["recall"] is None and not seeded["gate"]["passed"]


def test_an_unlisted_review_request_is_given_up_on_in_minutes_not_forty(sandbox: Sandbox) -> None:
    sandbox.review_requests(REPO, COPILOT_LOGIN, "dropped")
    records, waited = _cycle_on_a_fake_clock(sandbox, "copilot", "unlisted")
    assert [r["outcome"] for r in records] == ["error", "error"]
    assert 10 * 60 <= waited < 11 * 60
    assert_no_canary_left(sandbox, REPO)


@pytest.mark.usefixtures("fast_retries")
def test_a_review_request_copilot_does_not_list_but_answers_is_scored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    # docs/github.md §8: reports disagree whether Copilot shows in requested_reviewers; a
    # review that arrives is the confirmation, so an unlisted request is not failed at once.
    from redline_canary.sandbox import COPILOT

    with Sandbox(token=TOKEN, listen=False) as sb:
        sb.create_repo(REPO, topics=[CANARY_TOPIC])
        sb.attach_reviewer(REPO, PassingReviewer(latency=0.01, identity=COPILOT))
        sb.review_requests(REPO, COPILOT_LOGIN, "hidden")
        cell = run_cycle(sb, tmp_path, capsys, "--timeout-minutes", "0.2", reviewer="copilot")
        assert {r["outcome"] for r in cell.records} == {"scored"}, cell.stderr
        assert_promises(cell, cell.code)


# --- the token goes nowhere else -------------------------------------------------------------

class _Catcher(ThreadingHTTPServer):
    """Another host: records every request it gets, with its Authorization header."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str | None]] = []
        catcher = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                catcher.seen.append((self.path, self.headers.get("Authorization")))
                payload = b"[]"
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_POST = do_PATCH = do_PUT = do_DELETE = do_GET  # a write sent here is seen too

            def log_message(self, format: str, *args: Any) -> None:
                pass

        super().__init__(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server_address[1]}"
        threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True).start()


@pytest.fixture()
def other_host() -> Iterator[_Catcher]:
    catcher = _Catcher()
    yield catcher
    catcher.shutdown()
    catcher.server_close()


@pytest.mark.usefixtures("fast_retries")
def test_a_pagination_link_to_another_host_is_not_followed(
    wire_sandbox: Sandbox, tmp_path: Path, capsys: pytest.CaptureFixture[str], other_host: _Catcher,
) -> None:
    wire_sandbox.inject_fault("GET", f"{R}/pulls/{{pull_number}}/comments", times=None,
                         headers={"link": f'<{other_host.url}/steal?page=2>; rel="next"'})
    assert_promises(run_cycle(wire_sandbox, tmp_path, capsys), 0)
    assert other_host.seen == []


@pytest.mark.usefixtures("fast_retries")
def test_a_pagination_link_back_at_the_same_page_does_not_spin(
    sandbox: Sandbox, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    # The Link names page 1 itself, on every answer: a naive client loops until rate-limited.
    def same_page(pr: int) -> str:
        return f'<{sandbox.url}/repos/{REPO}/issues/{pr}/comments?per_page=100>; rel="next"'

    for pr in (1, 2):
        sandbox.inject_fault("GET", f"{R}/issues/{{issue_number}}/comments", times=None,
                             headers={"link": same_page(pr)})
    cell = run_cycle(sandbox, tmp_path, capsys)
    assert_promises(cell, 0)
    reads = [r for r in sandbox.requests if r.route.endswith("/issues/{issue_number}/comments")]
    assert len(reads) < 100, f"{len(reads)} reads of one list"


@pytest.mark.usefixtures("fast_retries")
def test_a_redirect_never_carries_the_token(
    wire_sandbox: Sandbox, tmp_path: Path, capsys: pytest.CaptureFixture[str], other_host: _Catcher,
) -> None:
    wire_sandbox.inject_fault("GET", R, status=301, times=None, headers={"location": f"{other_host.url}/repos/{REPO}"},
                         body={"message": "Moved Permanently", "url": f"{other_host.url}/repos/{REPO}"})
    cell = run_cycle(wire_sandbox, tmp_path, capsys)
    assert cell.code in (2, 4) and "Traceback" not in cell.stderr
    assert other_host.seen == []  # not followed at all: another origin gets nothing of ours (issue 24)
    assert "redirect to another origin not followed" in cell.stderr
    assert_no_canary_left(wire_sandbox, REPO)


@pytest.mark.parametrize("token", ["ghp_tökén", "abc def", "line\nbreak"])
def test_a_token_headers_cannot_carry_is_bad_input(
    sandbox: Sandbox, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    token: str,
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", token)
    monkeypatch.delenv("REDLINE_CANARY_TOKEN", raising=False)
    code = main(["run", "--repo", REPO, "--stack", "mini", "--corpus", str(CORPUS), "--api-url", sandbox.url,
                 "--history", str(tmp_path / "h.jsonl")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert "the token contains characters HTTP headers cannot carry" in err
    assert token.strip() not in err and not (tmp_path / "h.jsonl").exists()


@pytest.mark.usefixtures("fast_retries")
def test_the_token_reaches_no_output_file_or_crash_log_of_a_failing_run(
    sandbox: Sandbox, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("RUNNER_TEMP", str(tmp_path))
    # GitHub echoes nothing of the request, but a hostile proxy might: put the token in the
    # error body and in a header, and check no path of ours repeats it.
    sandbox.inject_fault("POST", f"{R}/pulls", status=500, times=None, headers={"x-echo": TOKEN},
                         body={"message": f"upstream said Authorization: Bearer {TOKEN}"})
    captures = tmp_path / "captures"
    cell = run_cycle(sandbox, tmp_path, capsys, "--save-captures", str(captures))
    assert_promises(cell, 4)
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert written, "the run should have written history"
    for path in written:
        assert TOKEN not in path.read_text(errors="replace"), path
    assert "***" in cell.stderr or "upstream said" not in cell.stderr


@pytest.mark.usefixtures("fast_retries")
def test_a_wrong_token_is_bad_configuration_without_echoing_it(
    wire_sandbox: Sandbox, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    wrong = "sandbox-wrong-credential-0000"
    monkeypatch.setenv("GITHUB_TOKEN", wrong)
    code = main(["run", "--repo", REPO, "--stack", "mini", "--corpus", str(CORPUS), "--api-url", wire_sandbox.url,
                 "--history", str(tmp_path / "h.jsonl")])
    err = capsys.readouterr().err
    assert code == 2 and "401" in err and wrong not in err
    assert wire_sandbox.pulls(REPO) == [] and not (tmp_path / "h.jsonl").exists()


@pytest.mark.parametrize("url", ["ftp://example.com", "https://user:pw@example.com", "example.com",
                                 "https://example.com/?next=1", "http://", "https://example.com:99999"])
def test_an_api_url_that_is_not_a_plain_http_url_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, url: str,
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    code = main(["run", "--repo", REPO, "--stack", "mini", "--corpus", str(CORPUS), "--api-url", url,
                 "--history", str(tmp_path / "h.jsonl")])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("redline-canary: --api-url") and err.count("\n") == 1


# --- writes that succeeded but answered otherwise, and the sandbox's other GitHub modes ------

@pytest.mark.usefixtures("fast_retries")
@pytest.mark.parametrize("route", [("POST", f"{R}/git/refs"), ("POST", f"{R}/pulls"),
                                   ("POST", f"{R}/issues/{{issue_number}}/labels"), ("POST", f"{R}/labels"),
                                   ("PATCH", f"{R}/pulls/{{pull_number}}"), ("DELETE", f"{R}/git/refs/{{ref}}")],
                         ids=lambda r: _id(r))
@pytest.mark.parametrize("answer", [{"status": 502}, {"drop": True}], ids=["502", "drop"])
def test_a_write_that_happened_but_answered_a_failure_is_found_not_repeated(
    sandbox: Sandbox, tmp_path: Path, capsys: pytest.CaptureFixture[str], route: tuple[str, str],
    answer: dict[str, Any],
) -> None:
    sandbox.inject_fault(route[0], route[1], after_write=True, times=1, **answer)
    cell = run_cycle(sandbox, tmp_path, capsys)
    assert_promises(cell, 0)
    assert len(sandbox.pulls(REPO)) == 2


@pytest.mark.usefixtures("fast_retries")
def test_a_trigger_comment_that_happened_but_answered_502_is_not_posted_twice(
    sandbox: Sandbox, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    sandbox.inject_fault("POST", f"{R}/issues/{{issue_number}}/comments", status=502, after_write=True, times=1)
    run_cycle(sandbox, tmp_path, capsys, reviewer="codex")
    for pr in sandbox.pulls(REPO):
        bodies = [c["body"] for c in sandbox.capture(REPO, pr.number)["issue_comments"]
                  if "rc:run=fault" in c["body"]]
        assert len(bodies) == 1, bodies
    assert_no_canary_left(sandbox, REPO)


@pytest.mark.usefixtures("fast_retries")
def test_sandbox_modes_ref_lag_and_too_quickly_are_ridden_out(
    sandbox: Sandbox, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    sandbox.ref_visibility_lag(2)
    sandbox.submitted_too_quickly(after=1, times=1)
    assert_promises(run_cycle(sandbox, tmp_path, capsys), 0)
    assert len(sandbox.pulls(REPO)) == 2


@pytest.mark.usefixtures("fast_retries")
@pytest.mark.parametrize("status", [403, 429])
def test_sandbox_secondary_limit_without_retry_after_is_waited_out(
    sandbox: Sandbox, tmp_path: Path, capsys: pytest.CaptureFixture[str], status: int,
) -> None:
    sandbox.secondary_limit(per_minute=4, window=0.5, status=status, send_retry_after=False)
    cell = run_cycle(sandbox, tmp_path, capsys)
    sandbox.secondary_limit()
    assert_promises(cell, 0)
    assert any(r.status == status for r in sandbox.requests)


@pytest.mark.usefixtures("fast_retries")
def test_sandbox_fine_grained_token_without_pull_requests_write_is_exit_2_naming_it(
    sandbox: Sandbox, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    sandbox.fine_grained_token(missing=["pull_requests"])
    cell = run_cycle(sandbox, tmp_path, capsys)
    assert_promises(cell, 2)
    assert "pull_requests=write" in cell.stderr and cell.records == []


# --- a trigger comment that did not take --------------------------------------------------------

def _cycle_on_a_fake_clock(sb: Sandbox, reviewer: str, run_id: str) -> tuple[list[dict[str, Any]], float]:
    """One cycle in-process with an injected clock: a 40-minute timeout takes milliseconds."""
    from redline_canary.github.client import GitHubClient
    from redline_canary.github.clock import FakeClock
    from redline_canary.github.retry import RetryPolicy
    from redline_canary.run.corpus_files import load_corpus
    from redline_canary.run.cycle import CycleOptions, TargetCycle
    from redline_canary.run.targets import Target
    from redline_canary.score.polling import PollConfig

    clock = FakeClock()
    client = GitHubClient(TOKEN, sb.url, clock=clock, policy=RetryPolicy(clock=clock),
                          transport=None if sb.listening else sb.transport())
    options = CycleOptions(run_id=run_id, poll=PollConfig(interval=30.0, timeout=40 * 60.0))
    records = TargetCycle(client, Target(REPO, "mini", reviewer), load_corpus(CORPUS), options, clock).run()
    client.close()
    return [r.to_json() for r in records], clock.now()


def test_a_trigger_comment_an_acknowledging_bot_never_answers_ends_as_error_in_minutes() -> None:
    from redline_canary.sandbox import Identity, SilentReviewer

    with Sandbox(token=TOKEN, listen=False) as sb:
        sb.create_repo(REPO, topics=[CANARY_TOPIC])
        # installed on another login: the trigger reaches nobody that answers
        sb.attach_reviewer(REPO, SilentReviewer(identity=Identity("someone-else[bot]", 1), latency=0.0))
        records, waited = _cycle_on_a_fake_clock(sb, "codex", "no-ack")
        assert_no_canary_left(sb, REPO)
    assert [r["outcome"] for r in records] == ["error", "error"]
    assert all("drew no reply or reaction" in r["notice"] for r in records)
    assert 10 * 60 <= waited < 11 * 60


@pytest.mark.usefixtures("fast_retries")
def test_a_trigger_comment_acknowledged_with_eyes_is_waited_for_in_full(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    from redline_canary.review.profiles.codex import LOGIN
    from redline_canary.sandbox import Identity, SilentReviewer

    def outcomes(ack: str | None) -> list[str]:
        with Sandbox(token=TOKEN, listen=False) as sb:
            sb.create_repo(REPO, topics=[CANARY_TOPIC])
            sb.attach_reviewer(REPO, SilentReviewer(identity=Identity(LOGIN, 199175422), latency=0.0,
                                                    trigger_phrases=["@codex review"], ack_reaction=ack,
                                                    wake_on=["comment"]))
            cell = run_cycle(sb, tmp_path / (ack or "none"), capsys, reviewer="codex")
            assert_promises(cell, cell.code)
            return [r["outcome"] for r in cell.records]

    # heard (👀 on the trigger comment) but never posts: silent at the timeout, as any mute reviewer
    assert outcomes("eyes") == ["silent", "silent"]
    # never heard: the trigger did not take
    assert outcomes(None) == ["error", "error"]


@pytest.mark.usefixtures("fast_retries")
def test_a_secondary_limit_slows_the_whole_run_down_not_just_the_request(
    sandbox: Sandbox, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    from redline_canary.github.client import GitHubClient
    from redline_canary.github.clock import RealClock
    from redline_canary.github.pacing import Pacer

    pacer = Pacer(RealClock())
    client = GitHubClient(TOKEN, sandbox.url, pacer=pacer, transport=sandbox.transport())
    sandbox.inject_fault("POST", f"{R}/labels", status=403, times=1, headers={"retry-after": "0"},
                         body={"message": "You have exceeded a secondary rate limit and have been temporarily "
                                          "blocked from content creation. Please retry your request again later."})
    try:
        client.ensure_label(REPO, "redline-canary")
    finally:
        client.close()
    assert pacer.slowdowns == 1 and pacer.limits()[0] == (60.0, 40)
