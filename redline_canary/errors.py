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
EXIT_INTERRUPTED = 130

# DESIGN §9: when targets end differently, the highest-priority code wins.
_PRIORITY = {EXIT_BAD_INPUT: 5, EXIT_INFRA: 4, EXIT_SILENT: 3, EXIT_GATE_FAILED: 2, EXIT_PASS: 1}


def combine_exit_codes(codes: list[int]) -> int:
    """The code the process exits with when several targets ended differently."""
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
