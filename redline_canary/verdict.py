"""Pass or fail, and the exit code it stands for, decided in one place (DESIGN §6, §9). Pure.

Everything that turns numbers into a verdict lives here: the gate of one PR, the
confirmation rule (a BLOCKER counts as missed only if every attempt missed it), a
baseline's extra reasons, which attempt of a PR is final, and the exit-code table with its
priorities. ``scoring`` measures, the commands print; neither decides.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from redline_canary.scoring import GateOptions, Score

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
# The action's ``outcome`` output: one word per exit code.
OUTCOME_WORDS = {EXIT_PASS: "pass", EXIT_GATE_FAILED: "fail", EXIT_BAD_INPUT: "bad-input",
                 EXIT_SILENT: "silent", EXIT_INFRA: "error", EXIT_INTERNAL: "internal-error",
                 EXIT_INTERRUPTED: "cancelled"}
EXIT_MEANINGS = {
    EXIT_PASS: "every gate passed",
    EXIT_GATE_FAILED: "a gate failed",
    EXIT_BAD_INPUT: "bad input or configuration",
    EXIT_SILENT: "the reviewer was silent",
    EXIT_INFRA: "GitHub or infrastructure failure",
    EXIT_INTERNAL: "internal error (a bug in redline-canary, not a verdict)",
    EXIT_INTERRUPTED: "interrupted",
}
_OUTCOME_CODES = {"cancelled": EXIT_INTERRUPTED, "silent": EXIT_SILENT, "error": EXIT_INFRA}
R = TypeVar("R", bound=Mapping[str, Any])
BLOCKER_REASON = "blocker recall"


def combine_exit_codes(codes: Iterable[int]) -> int:
    """The code the process exits with when several targets ended differently."""
    codes = list(codes)
    if EXIT_INTERNAL in codes:
        return EXIT_INTERNAL
    if EXIT_INTERRUPTED in codes:
        return EXIT_INTERRUPTED
    return max(codes, key=lambda c: _PRIORITY.get(c, 0), default=EXIT_PASS)


def record_exit_code(record: Mapping[str, Any]) -> int:
    """The exit code one record stands for."""
    outcome = record.get("outcome")
    if isinstance(outcome, str) and outcome in _OUTCOME_CODES:
        return _OUTCOME_CODES[outcome]
    gate = record.get("gate")
    return EXIT_PASS if isinstance(gate, Mapping) and gate.get("passed") is True else EXIT_GATE_FAILED


def outcome_word(exit_code: int) -> str:
    return OUTCOME_WORDS.get(exit_code, "error")


def gate_score(score: Score, options: GateOptions) -> tuple[bool, list[str]]:
    """The gate of one scored PR (DESIGN §6): seeded passes iff every BLOCKER was caught
    (plus the optional recall and citation rules), clean iff nothing at or above the floor."""
    if score.outcome != "scored":
        reason = f"reviewer {score.outcome}"
        return False, [f"{reason}: {score.notice}" if score.notice else reason]
    reasons: list[str] = []
    if score.kind == "seeded":
        caught, n = score.blocker_counts
        if n and caught < n:
            reasons.append(f"{BLOCKER_REASON} {caught}/{n} < 1.0")
        recall = score.recall
        if options.min_recall is not None and recall is not None and recall < options.min_recall:
            reasons.append(f"recall {score.caught}/{len(score.seeds)} < {options.min_recall}")
        if options.require_citation:
            uncited = [p for p in score.assignment.pairs if p.caught and not p.cited]
            if uncited:
                reasons.append(f"{len(uncited)} caught seed(s) without the rule id")
    else:
        cfp = score.clean_false_positives or 0
        if cfp:
            reasons.append(f"{cfp} clean false positive(s) at or above {score.floor.name}")
    return not reasons, reasons


def missed_blockers(record: Mapping[str, Any]) -> list[int]:
    """BLOCKER seeds of a record that were not caught at their severity."""
    return [s["n"] for key in ("missed_seeds", "undercalled_seeds")
            for s in record.get(key) or [] if s.get("severity") == "BLOCKER"]


def confirm(attempts: Sequence[Mapping[str, Any]], last: dict[str, Any], attempt: int) -> None:
    """The confirmation rule, applied to ``last`` (the newest seeded attempt) in place: a
    BLOCKER counts as missed only if every attempt missed it, so a re-run that leaves no
    BLOCKER missed by all attempts passes the blocker part of the gate."""
    ever_caught = {s["n"] for r in attempts for s in r.get("caught_seeds") or [] if s.get("severity") == "BLOCKER"}
    still = [n for n in missed_blockers(last) if n not in ever_caught]
    if last.get("outcome") == "scored" and not still:
        last["gate"]["reasons"] = [r for r in last["gate"]["reasons"] if not r.startswith(BLOCKER_REASON)]
        last["gate"]["passed"] = not last["gate"]["reasons"]
        last["confirmed_by_attempts"] = attempt


def add_reasons(record: dict[str, Any], reasons: Sequence[str]) -> None:
    """Extra failing reasons (a baseline's newly missed BLOCKER) fail the record's gate."""
    if reasons:
        record["gate"]["passed"] = False
        record["gate"]["reasons"].extend(reasons)


def final_attempts(records: Iterable[R], run_ids: Sequence[str] | None = None) -> list[R]:
    """Per (repo, stack, reviewer, kind), in first-seen order, the record that judges it: the
    highest attempt (a confirmation re-run supersedes), and across several run ids the
    later-listed run (a re-run of failed jobs supersedes the first run)."""
    order = {rid: i for i, rid in enumerate(run_ids or [])}
    latest: dict[tuple[str, ...], R] = {}

    def rank(r: Mapping[str, Any]) -> tuple[int, int]:
        attempt = r.get("attempt", 1)
        return order.get(str(r.get("run_id")), 0), attempt if isinstance(attempt, int) else 1

    for r in records:
        key = tuple(str(r.get(k)) for k in ("repo", "stack", "reviewer", "kind"))
        if key not in latest or rank(r) >= rank(latest[key]):
            latest[key] = r
    return list(latest.values())
