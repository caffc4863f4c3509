"""Errors that carry their exit code, the exit-code table, and the one rule that combines
codes: a leaf, so every layer can raise and every edge can decide the same way.

Every module raises one of these (or lets an unexpected exception escape); ``cli.main``
turns them into a one-line message and its exit code (docs/cli.md, "Exit codes"). Messages
never contain tokens: callers pass paths and keys, never request headers, and every text
that leaves the process goes through :func:`mask`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

__all__ = ["EXIT_BAD_INPUT", "EXIT_GATE_FAILED", "EXIT_INFRA", "EXIT_INTERNAL", "EXIT_INTERRUPTED", "EXIT_MEANINGS",
           "EXIT_PASS", "EXIT_SILENT", "OUTCOME_WORDS", "BadInput", "CanaryError", "InfraFailure", "TargetEnd",
           "TeardownIncomplete", "combine_exit_codes", "doctor_exit_code", "exit_code_legend", "mask",
           "outcome_exit_code", "outcome_word", "register_secret", "run_exit_code", "verify_exit_code"]

# --- the exit-code table (docs/cli.md) --------------------------------------------------
EXIT_PASS: Final = 0
EXIT_GATE_FAILED: Final = 1
EXIT_BAD_INPUT: Final = 2
EXIT_SILENT: Final = 3
EXIT_INFRA: Final = 4
EXIT_INTERNAL: Final = 5
EXIT_INTERRUPTED: Final = 130

# What each code means, in one short phrase: the README's tables, the action's outputs, the
# job summary and the demo all say these words (a test holds every copy to this table).
EXIT_MEANINGS: Final = {
    EXIT_PASS: "every gate passed",
    EXIT_GATE_FAILED: "a gate failed",
    EXIT_BAD_INPUT: "bad input or configuration",
    EXIT_SILENT: "the reviewer was silent",
    EXIT_INFRA: "GitHub or infrastructure failure",
    EXIT_INTERNAL: "internal error (a bug in redline-canary, not a verdict)",
    EXIT_INTERRUPTED: "interrupted",
}
# The action's ``outcome`` output: one word per exit code.
OUTCOME_WORDS: Final = {EXIT_PASS: "pass", EXIT_GATE_FAILED: "fail", EXIT_BAD_INPUT: "bad-input",
                        EXIT_SILENT: "silent", EXIT_INFRA: "error", EXIT_INTERNAL: "internal-error",
                        EXIT_INTERRUPTED: "cancelled"}
# When targets end differently, the highest-priority code wins: 5 > 2 > 4 > 3 > 1 > 0.
# A bug outranks everything (it must never read as a verdict); an interruption outranks
# every verdict.
PRIORITY: Final = (EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_BAD_INPUT, EXIT_INFRA, EXIT_SILENT,
                   EXIT_GATE_FAILED, EXIT_PASS)
# A PR that ended without a score stands for the code of how it ended.
_OUTCOME_CODES: Final = {"cancelled": EXIT_INTERRUPTED, "silent": EXIT_SILENT, "error": EXIT_INFRA}
_VERDICTS: Final = (EXIT_PASS, EXIT_GATE_FAILED, EXIT_SILENT, EXIT_INTERRUPTED)


def combine_exit_codes(codes: Iterable[int]) -> int:
    """The code several targets (or several steps of one) stand for together."""
    rank = {code: i for i, code in enumerate(PRIORITY)}
    return min(codes, key=lambda c: rank.get(c, len(PRIORITY)), default=EXIT_PASS)


def outcome_exit_code(outcome: str, passed: bool) -> int:
    """The code one PR's record stands for: its outcome, else its gate."""
    if outcome in _OUTCOME_CODES:
        return _OUTCOME_CODES[outcome]
    return EXIT_PASS if passed else EXIT_GATE_FAILED


@dataclass(frozen=True)
class TargetEnd:
    """How one target of a run ended: the codes of its records and failures, and whether
    its teardown left a PR or branch behind."""

    codes: tuple[int, ...]
    leftovers: bool = False


def run_exit_code(ends: Sequence[TargetEnd], *, cancelled: bool = False) -> int:
    """The run's exit code, the one rule: the highest-priority code of every target; an
    interrupted run is 130 unless a bug happened; and a run that left a PR or branch behind
    is never a verdict (0, 1, 3 or 130): it is 4, and ``janitor`` finishes the job."""
    code = combine_exit_codes(c for end in ends for c in (*end.codes, *((EXIT_INFRA,) if end.leftovers else ())))
    if cancelled and code != EXIT_INTERNAL:
        code = EXIT_INTERRUPTED
    if any(end.leftovers for end in ends) and code in _VERDICTS:
        code = EXIT_INFRA
    return code


def doctor_exit_code(statuses: Iterable[Literal["ok", "warn", "fail", "info", "skip"] | str]) -> int:
    """``doctor``: a failed check is a configuration the run would trip over (exit 2);
    warnings and notes are printed, not failed on."""
    return EXIT_BAD_INPUT if any(s == "fail" for s in statuses) else EXIT_PASS


def verify_exit_code(differences: int) -> int:
    """``sandbox verify``: any interaction the sandbox answers differently fails (exit 1)."""
    return EXIT_GATE_FAILED if differences else EXIT_PASS


def exit_code_legend() -> str:
    """Every code with its meaning on one line, as the action's ``exit-code`` output says it."""
    return ", ".join(f"{code} {meaning}" for code, meaning in EXIT_MEANINGS.items())


def outcome_word(exit_code: int) -> str:
    return OUTCOME_WORDS.get(exit_code, "error")


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


def mask_json(value: Any, depth: int = 0) -> Any:
    """``value`` (decoded JSON from GitHub) with every registered secret masked in every
    string, keys included. A comment can quote the token it was read with; what GitHub
    answers is masked as it arrives, so no capture, record or notice built from it carries
    the token. Nesting past 64 levels is returned as it is: GitHub's answers are shallow."""
    if not _SECRETS or depth > 64:
        return value
    if isinstance(value, str):
        return mask(value)
    if isinstance(value, list):
        return [mask_json(v, depth + 1) for v in value]
    if isinstance(value, dict):
        return {mask(k) if isinstance(k, str) else k: mask_json(v, depth + 1) for k, v in value.items()}
    return value
