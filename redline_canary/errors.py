"""Errors that carry their exit code, so the CLI edge is the only place that decides it.

Every module raises one of these (or lets an unexpected exception escape); ``cli.main``
turns them into a one-line message and the DESIGN §9 exit code. Messages never contain
tokens: callers pass paths and keys, never request headers.
"""

from __future__ import annotations

from redline_canary.verdict import (  # the exit-code table lives with the verdict
    EXIT_BAD_INPUT,
    EXIT_GATE_FAILED,
    EXIT_INFRA,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_PASS,
    EXIT_SILENT,
    combine_exit_codes,
)

__all__ = ["EXIT_BAD_INPUT", "EXIT_GATE_FAILED", "EXIT_INFRA", "EXIT_INTERNAL", "EXIT_INTERRUPTED", "EXIT_PASS",
           "EXIT_SILENT", "BadInput", "CanaryError", "InfraFailure", "TeardownIncomplete", "combine_exit_codes",
           "mask", "one_line", "register_secret"]


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
