"""Helpers for tests that run canary cycles against the sandbox."""

from __future__ import annotations

from collections.abc import Iterator

from redline_canary.cycle import BRANCH_PREFIX, LABEL
from redline_canary.github_api import CANARY_TOPIC
from redline_canary.sandbox import Sandbox

TOKEN = "sandbox-test-credential-7f3a"


def assert_no_canary_left(sb: Sandbox, repo: str) -> None:
    """Teardown is sacred: no open canary PR, no canary branch."""
    open_canaries = [p for p in sb.open_pulls(repo) if LABEL in p.labels or p.head.startswith(BRANCH_PREFIX)]
    assert open_canaries == [], f"open canary PRs left: {open_canaries}"
    branches = [b for b in sb.branches(repo) if b.startswith(BRANCH_PREFIX)]
    assert branches == [], f"canary branches left: {branches}"


def canary_sandbox(repo: str) -> Iterator[Sandbox]:
    """A running sandbox with one opted-in canary repo; afterwards, nothing may be left."""
    with Sandbox(token=TOKEN) as sandbox:
        sandbox.create_repo(repo, topics=[CANARY_TOPIC])
        yield sandbox
        assert_no_canary_left(sandbox, repo)
