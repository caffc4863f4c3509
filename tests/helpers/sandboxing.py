"""Helpers for tests that run canary cycles against the sandbox.

Two ways to reach it: over a real socket (``canary_sandbox(repo)``: contract, CLI and
end-to-end tests, where the wire is the point) and in-process (``listen=False``: the
sandbox's WSGI app mounted in the client with ``Sandbox.transport()``; same State, faults
and request log, no port). ``run_in_process`` runs ``redline-canary run`` in this process
through that transport.
"""

from __future__ import annotations

import contextlib
import io
import os
from collections.abc import Iterator

from redline_canary.cli import build_parser
from redline_canary.commands.run import RunOptions, run
from redline_canary.errors import CanaryError, mask
from redline_canary.github.client import CANARY_TOPIC
from redline_canary.report.text import inert_line
from redline_canary.run.cycle import BRANCH_PREFIX, LABEL
from redline_canary.sandbox import Sandbox

TOKEN = "sandbox-test-credential-7f3a"


def assert_no_canary_left(sb: Sandbox, repo: str) -> None:
    """Teardown is sacred: no open canary PR, no canary branch."""
    open_canaries = [p for p in sb.open_pulls(repo) if LABEL in p.labels or p.head.startswith(BRANCH_PREFIX)]
    assert open_canaries == [], f"open canary PRs left: {open_canaries}"
    branches = [b for b in sb.branches(repo) if b.startswith(BRANCH_PREFIX)]
    assert branches == [], f"canary branches left: {branches}"


def open_canary_over_http(url: str, repo: str) -> tuple[list[int], list[str]]:
    """Open canary PR numbers and canary branches of a sandbox running in another process,
    read over HTTP as a user with curl would (``assert_no_canary_left`` for one in this process)."""
    import httpx

    auth = {"Authorization": "token reader"}
    pulls = httpx.get(f"{url}/repos/{repo}/pulls", params={"state": "open"}, headers=auth)
    refs = httpx.get(f"{url}/repos/{repo}/git/matching-refs/heads/{BRANCH_PREFIX}", headers=auth)
    assert pulls.status_code == 200 and refs.status_code == 200, (pulls.text, refs.text)
    canary = [p["number"] for p in pulls.json()
              if p["head"]["ref"].startswith(BRANCH_PREFIX) or any(lb["name"] == LABEL for lb in p["labels"])]
    return canary, [r["ref"] for r in refs.json()]


def canary_sandbox(repo: str, *, listen: bool = True) -> Iterator[Sandbox]:
    """A running sandbox with one opted-in canary repo; afterwards, nothing may be left."""
    with Sandbox(token=TOKEN, listen=listen) as sandbox:
        sandbox.create_repo(repo, topics=[CANARY_TOPIC])
        yield sandbox
        assert_no_canary_left(sandbox, repo)


def run_in_process(sb: Sandbox, *argv: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """``redline-canary run ARGV`` in this process, every client mounted on ``sb``'s app:
    (exit code, stdout, stderr), a bad-input error reported as the CLI reports it."""
    args = build_parser().parse_args(["run", "--api-url", sb.url, *argv])
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err):  # the progress lines, as a terminal would see them
        try:
            code = run(RunOptions.from_args(args, {**os.environ, **(env or {})}), out=out, err=err,
                       transport=sb.transport())
        except CanaryError as exc:
            print(f"redline-canary: {inert_line(mask(str(exc)))}", file=err)
            code = exc.exit_code
    return code, out.getvalue(), err.getvalue()
