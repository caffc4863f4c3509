"""Errors that carry their exit code, so the CLI edge is the only place that decides it.

Every module raises one of these (or lets an unexpected exception escape); ``cli.main``
turns them into a one-line message and the DESIGN §9 exit code. Messages never contain
tokens: callers pass paths and keys, never request headers.
"""

from __future__ import annotations

EXIT_PASS = 0
EXIT_GATE_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_SILENT = 3
EXIT_INFRA = 4
EXIT_INTERNAL = 5
EXIT_INTERRUPTED = 130

# DESIGN §9: when targets end differently, the highest-priority code wins:
# 5 > 2 > 4 > 3 > 1 > 0. A bug outranks everything: it must never read as a verdict.
_PRIORITY = {EXIT_INTERNAL: 6, EXIT_BAD_INPUT: 5, EXIT_INFRA: 4, EXIT_SILENT: 3, EXIT_GATE_FAILED: 2,
             EXIT_PASS: 1}


def combine_exit_codes(codes: list[int]) -> int:
    """The code the process exits with when several targets ended differently."""
    if EXIT_INTERNAL in codes:
        return EXIT_INTERNAL
    if EXIT_INTERRUPTED in codes:
        return EXIT_INTERRUPTED
    return max(codes, key=lambda c: _PRIORITY.get(c, 0), default=EXIT_PASS)


class CanaryError(Exception):
    """Base: a failure with a user-facing one-line message and an exit code."""

    exit_code = EXIT_INFRA


class BadInput(CanaryError):
    """Bad file, key, flag or config value (exit 2). Message names the file and key."""

    exit_code = EXIT_BAD_INPUT


class InfraFailure(CanaryError):
    """GitHub or infrastructure failure after retries (exit 4)."""

    exit_code = EXIT_INFRA


class TeardownIncomplete(InfraFailure):
    """Teardown could not close or delete everything this run made (exit 4, never 0 or 1)."""

    def __init__(self, repo: str, pulls: list[int], branches: list[str]) -> None:
        self.repo, self.pulls, self.branches = repo, pulls, branches
        super().__init__(
            f"{repo}: teardown incomplete: left open PR(s) {', '.join(f'#{n}' for n in pulls) or 'none'}, "
            f"branch(es) {', '.join(branches) or 'none'} (run `redline-canary janitor --repo {repo}` later)")


# --- secrets ------------------------------------------------------------------------
# Every token the process holds is registered here, and everything that leaves the process
# as text (messages, crash logs, progress) goes through `mask`, so no path can carry it.
_SECRETS: set[str] = set()


def register_secret(value: str) -> None:
    if len(value) >= 4:
        _SECRETS.add(value)


def mask(text: str) -> str:
    for secret in sorted(_SECRETS, key=len, reverse=True):
        if secret in text:
            text = text.replace(secret, "***")
    return text


def one_line(text: str) -> str:
    """Messages may quote outside text: one line no terminal or CI runner acts on."""
    from redline_canary.render import inert_line

    return inert_line(text)
