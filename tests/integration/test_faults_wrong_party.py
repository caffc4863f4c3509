# ruff: noqa: F811  (the fault suite's fixtures, imported by name, are the test parameters)
"""Faults whose verdict must land on the right party (issue 24): what GitHub or the network
did to *us* is ``error`` (ours) or a clean refusal, never a verdict on the reviewer, never a
ghost branch, and never the token or a write sent where the API did not ask.

Each cell runs the real ``redline-canary run`` against the sandbox over HTTP (in-process
through its app, or on a socket where the wire itself is the point) and ends by checking the
sandbox holds no canary PR or branch.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from redline_canary.github.client import CANARY_TOPIC
from redline_canary.sandbox import Sandbox
from tests.helpers.sandboxing import TOKEN, assert_no_canary_left, run_in_process
from tests.integration.test_faults import (  # noqa: F401  (fixtures)
    CORPUS,
    REPO,
    PassingReviewer,
    R,
    _Catcher,
    assert_promises,
    fast_retries,
    other_host,
    run_cycle,
    wire_sandbox,
)

pytestmark = pytest.mark.usefixtures("fast_retries")


# --- a rate-limit wait that outlasts the poll deadline ---------------------------------

def test_a_rate_limit_wait_past_the_poll_deadline_is_ours_not_a_silent_reviewer(
    in_process_sandbox: Sandbox, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    # The reviewer answers 2 s after the PR opens. The first poll reads the inline comments
    # and reviews (nothing yet), then GitHub rate-limits the issue-comments read for 290 s
    # (2.9 s in test mode), past the 1.2 s deadline. The reviewer spoke during that wait:
    # "silent" would blame it for our wait.
    sb = in_process_sandbox
    sb.create_repo(REPO, topics=[CANARY_TOPIC])
    sb.attach_reviewer(REPO, PassingReviewer(latency=2.0))
    sb.inject_fault("GET", f"{R}/issues/{{issue_number}}/comments", status=429, times=1,
                         headers={"retry-after": "290"}, body={"message": "secondary rate limit"})
    cell = run_cycle(sb, tmp_path, capsys, "--timeout-minutes", "0.02")
    outcomes = {r["kind"]: r["outcome"] for r in cell.records}
    assert "silent" not in outcomes.values(), cell.stderr
    assert cell.code != 3, cell.stderr
    assert outcomes["seeded"] == "error" and cell.code == 4, (outcomes, cell.stderr)
    seeded = next(r for r in cell.records if r["kind"] == "seeded")
    assert "rate limit" in seeded["notice"] and "not a silent reviewer" in seeded["notice"]
    assert_no_canary_left(sb, REPO)


# --- a ref the server created after the client's timeout -------------------------------

def _wait_for_answer(sb: Sandbox, method: str, route: str, status: int) -> None:
    """Until the sandbox has answered ``method route`` with ``status`` (a request our client
    gave up on still runs to its end on the server); bounded."""
    for _ in range(1000):
        if any(r.method == method and r.route == route and r.status == status for r in sb.requests):
            return
        threading.Event().wait(0.01)
    raise AssertionError(f"the sandbox never answered {method} {route} {status}")


def test_a_ref_created_after_the_clients_timeout_does_not_survive_teardown(
    wire_sandbox: Sandbox, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    # The first ref creation is served 1.6 s late (the client gives up after 1 s in test
    # mode); every later try fails with a 500, so the cycle gives up while GitHub is still
    # creating the branch. Teardown must find it and delete it: no ghost canary branch.
    route = f"{R}/git/refs"
    wire_sandbox.inject_fault("POST", route, delay=1.6, times=1)
    wire_sandbox.inject_fault("POST", route, status=500, times=None)
    cell = run_cycle(wire_sandbox, tmp_path, capsys)
    wire_sandbox.clear_faults()
    _wait_for_answer(wire_sandbox, "POST", route, 201)
    assert cell.code == 4 and "Traceback" not in cell.stderr, cell.stderr
    assert [b for b in wire_sandbox.branches(REPO) if b.startswith("rc/")] == []
    assert_no_canary_left(wire_sandbox, REPO)


# --- redirects: reads on the API's origin only, writes never ---------------------------

@pytest.mark.parametrize("status", [307, 308])
@pytest.mark.parametrize("route", [("POST", f"{R}/git/trees"), ("POST", f"{R}/pulls"),
                                   ("DELETE", f"{R}/git/refs/{{ref}}")], ids=["tree", "pull", "delete-ref"])
def test_a_redirect_on_a_write_is_never_followed(
    wire_sandbox: Sandbox, tmp_path: Path, capsys: pytest.CaptureFixture[str], other_host: _Catcher,
    status: int, route: tuple[str, str],
) -> None:
    # A 307/308 keeps the method and the body: following it would send the corpus (or the
    # PR, or a delete) to whatever host Location names.
    method, template = route
    wire_sandbox.inject_fault(method, template, status=status, times=1,
                              headers={"location": f"{other_host.url}/upload"}, body={"message": "Moved"})
    cell = run_cycle(wire_sandbox, tmp_path, capsys)
    assert other_host.seen == [], other_host.seen
    assert "Traceback" not in cell.stderr and "redirect on a write not followed" in cell.stderr
    # Ours (exit 4); a delete that was not followed leaves its branch named for the janitor.
    assert_promises(cell, 4, left_behind=method == "DELETE")


def test_a_redirect_of_a_poll_to_another_host_is_not_counted_as_the_prs_comments(
    wire_sandbox: Sandbox, tmp_path: Path, capsys: pytest.CaptureFixture[str], other_host: _Catcher,
) -> None:
    # The other host answers an empty list: counted as the PR's inline comments, the
    # reviewer's catches would vanish and the gate fail on the reviewer. It is ours: error.
    wire_sandbox.inject_fault("GET", f"{R}/pulls/{{pull_number}}/comments", status=302, times=None,
                              headers={"location": f"{other_host.url}/comments"})
    cell = run_cycle(wire_sandbox, tmp_path, capsys)
    assert other_host.seen == []
    assert cell.code == 4 and {r["outcome"] for r in cell.records} == {"error"}, cell.stderr
    assert "redirect to another origin not followed" in cell.stderr
    wire_sandbox.clear_faults()
    assert_no_canary_left(wire_sandbox, REPO)


def test_a_redirect_of_a_read_on_the_apis_own_origin_is_followed(
    wire_sandbox: Sandbox, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    # GitHub answers a renamed repository's routes with a 301 to the same API: followed.
    wire_sandbox.inject_fault("GET", R, status=301, times=1,
                              headers={"location": f"{wire_sandbox.url}/repos/{REPO}"})
    cell = run_cycle(wire_sandbox, tmp_path, capsys)
    assert cell.code == 0, cell.stderr
    assert_no_canary_left(wire_sandbox, REPO)


# --- a comment quoting the token ---------------------------------------------------------

class _Quoter(PassingReviewer):
    """Quotes the token the run reads its comments with (a reviewer that found it in a log)."""

    kind = "quoter"

    def act(self, ctx: Any) -> None:
        ctx.post_review(f"[BLOCKER] your token {TOKEN} is in the build log", "COMMENTED",
                        [{"path": "app.py", "line": 5, "body": f"[BLOCKER] token {TOKEN} committed in code"}])


def test_a_comment_quoting_the_token_reaches_no_capture_record_or_recording(
    in_process_sandbox: Sandbox, tmp_path: Path,
) -> None:
    sb = in_process_sandbox
    sb.create_repo(REPO, topics=[CANARY_TOPIC])
    sb.attach_reviewer(REPO, _Quoter(latency=0.01))
    hist, caps, rec = tmp_path / "h.jsonl", tmp_path / "caps", tmp_path / "rec"
    code, out, err = run_in_process(
        sb, "--repo", REPO, "--stack", "mini", "--corpus", str(CORPUS), "--history", str(hist), "--run-id", "quote",
        "--save-captures", str(caps), "--record", str(rec), "--confirm", "0", "--poll-interval", "0.03",
        "--stable-polls", "2", "--timeout-minutes", "0.05")
    assert code in (0, 1), err
    written = {"stdout": out, "stderr": err, "history": hist.read_text(),
               **{p.name: p.read_text() for p in [*caps.glob("*"), *rec.glob("*")]}}
    assert len(written) > 4 and [name for name, text in written.items() if TOKEN in text] == []
    assert "your token *** is in the build log" in written["history"] + "".join(
        t for n, t in written.items() if n.endswith(".json"))  # the comment is kept, the token masked
    assert_no_canary_left(sb, REPO)
