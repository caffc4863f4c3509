"""Pass or fail, and the exit code it stands for, decided in one place (DESIGN §6, §9). Pure.

Everything that turns numbers into a verdict lives here: the gate of one PR, the
confirmation rule (a BLOCKER counts as missed only if every attempt missed it), a
baseline's extra reasons, which attempt of a PR is final, and the exit-code table with its
priorities. ``scoring`` measures, the commands print; neither decides.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from redline_canary.acknowledgements import Acknowledgement, seed_fingerprint
from redline_canary.baseline import comparable_runs, compare
from redline_canary.severity import at_or_above

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


def doctor_exit_code(statuses: Iterable[str]) -> int:
    """``doctor``: a failed check is a configuration the run would trip over (exit 2);
    warnings and notes are printed, not failed on."""
    return EXIT_BAD_INPUT if any(s == "fail" for s in statuses) else EXIT_PASS


def verify_exit_code(differences: int) -> int:
    """``sandbox verify``: any interaction the sandbox answers differently fails (exit 1)."""
    return EXIT_GATE_FAILED if differences else EXIT_PASS


def outcome_word(exit_code: int) -> str:
    return OUTCOME_WORDS.get(exit_code, "error")


BLOCKER_GATES = ("caught", "found")
ALWAYS_CAUGHT = "always caught"
INTERMITTENT = "intermittent"
NEWLY_MISSED = "newly missed"
NEVER_CAUGHT = "never caught"
SEED_CLASSES = (NEWLY_MISSED, NEVER_CAUGHT, INTERMITTENT, ALWAYS_CAUGHT)  # most urgent first
NOT_MEASURED = "none"


@dataclass(frozen=True)
class GateOptions:
    """Every gate rule a user can set (DESIGN §6); the defaults are the corpus contract."""

    min_recall: float | None = None
    require_citation: bool = False
    blocker_gate: str = "caught"  # caught: at the marked severity; found: located at >= floor
    floor: str = "MAJOR"
    baseline: str | None = None  # None, "previous", or "window:N"
    acknowledgements: tuple[Acknowledgement, ...] = ()

    @property
    def window(self) -> int | None:
        if self.baseline and self.baseline.startswith("window:"):
            return int(self.baseline.split(":", 1)[1])
        return None


def parse_baseline(value: str, where: str = "--baseline") -> str:
    """``previous`` or ``window:N`` (1 <= N <= 52); ValueError naming ``where`` otherwise."""
    text = value.strip()
    if text == "previous":
        return text
    if text.startswith("window:") and text[7:].isdigit() and 1 <= int(text[7:]) <= 52:
        return f"window:{int(text[7:])}"
    raise ValueError(f"{where}: expected previous or window:N (N from 1 to 52), got {text[:40]!r}")


@dataclass(frozen=True)
class Verdict:
    passed: bool
    reasons: tuple[str, ...]
    warnings: tuple[str, ...] = ()
    acknowledged: tuple[int, ...] = ()
    blocker_gate: str = "caught"
    failing: tuple[int, ...] = ()  # the BLOCKER seeds that fail this gate

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"passed": self.passed, "reasons": list(self.reasons),
                               "failing_seeds": list(self.failing)}
        if self.warnings:
            out["warnings"] = list(self.warnings)
        if self.acknowledged:
            out["acknowledged"] = list(self.acknowledged)
        if self.blocker_gate != "caught":
            out["blocker_gate"] = self.blocker_gate
        return out


def seed_met(record: Mapping[str, Any], n: int, options: GateOptions) -> bool:
    """Whether seed ``n`` satisfies the gate in ``record``: caught, or with ``blocker-gate:
    found`` located by a finding at or above the floor."""
    if any(s.get("n") == n for s in record.get("caught_seeds") or []):
        return True
    if options.blocker_gate != "found":
        return False
    return any(s.get("n") == n and at_or_above((s.get("evidence") or {}).get("severity", "INFO"), options.floor)
               for s in record.get("undercalled_seeds") or [])


def blocker_seeds(record: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return sorted((s for key in ("caught_seeds", "undercalled_seeds", "missed_seeds")
                   for s in record.get(key) or [] if s.get("severity") == "BLOCKER"),
                  key=lambda s: int(s.get("n") or 0))


def unmet_blockers(record: Mapping[str, Any], options: GateOptions | None = None) -> list[int]:
    """BLOCKER seeds of one record that do not satisfy the gate."""
    opts = options or GateOptions()
    return [int(s["n"]) for s in blocker_seeds(record) if not seed_met(record, int(s["n"]), opts)]


def classify(states: Sequence[str]) -> str:
    """Class of one seed from its states over runs, oldest first (the report's seed classes
    and the rolling-baseline gate use this one definition).

    Only measured states count (``none`` is ignored); "not caught" is anything but
    ``caught``. **always caught**: caught in every measured run. **never caught**: in none.
    **newly missed**: caught in one or more runs, then not caught in every run since the
    first miss (a regression). **intermittent**: everything else (flaky, or recovered).
    """
    measured = [s == "caught" for s in states if s != NOT_MEASURED]
    if all(measured):
        return ALWAYS_CAUGHT
    if not any(measured):
        return NEVER_CAUGHT
    first_miss = measured.index(False)
    if first_miss > 0 and not any(measured[first_miss:]):
        return NEWLY_MISSED
    return INTERMITTENT


def decide(record: Mapping[str, Any], options: GateOptions, *,
           attempts: Sequence[Mapping[str, Any]] = (),
           history: Sequence[Mapping[str, Any]] = ()) -> Verdict:
    """The gate of one record, from the record itself (DESIGN §6). ``attempts`` are the
    earlier attempts of the same PR (the confirmation rule: a BLOCKER counts as missed only
    if every attempt missed it); ``history`` feeds the baseline."""
    if record.get("outcome") != "scored":
        reason = f"reviewer {record.get('outcome')}"
        notice = record.get("notice")
        return Verdict(False, (f"{reason}: {notice}" if notice else reason,), blocker_gate=options.blocker_gate)
    reasons: list[str] = []
    warnings: list[str] = []
    acknowledged: list[int] = []
    failing: list[int] = []
    if record.get("kind") == "seeded":
        blockers = blocker_seeds(record)
        unmet = [s for s in blockers
                 if not any(seed_met(r, int(s["n"]), options) for r in (*attempts, record))]
        for s in blockers:
            if s in unmet:
                continue
            for known in options.acknowledgements:
                if known.names(record, s):
                    warnings.append(f"{known.label}: acknowledgement no longer needed, SEED {s['n']} was caught")
        still: list[Mapping[str, Any]] = []
        for s in unmet:
            ack = next((a for a in options.acknowledgements if a.names(record, s)), None)
            if ack is not None and ack.matches_corpus(s):
                acknowledged.append(int(s["n"]))
                warnings.append(f"SEED {s['n']} [BLOCKER] missed: acknowledged by {ack.by} until "
                                f"{ack.until} ({ack.reason})")
                continue
            if ack is not None:
                warnings.append(f"{ack.label}: no longer applies, the corpus changed SEED {s['n']} "
                                f"(fingerprint {seed_fingerprint(s)}); re-acknowledge it if it still stands")
            still.append(s)
        window = options.window
        earlier = comparable_runs(history, record, window) if window else []
        if window and earlier:
            for s in still:
                n = int(s["n"])
                states = [("caught" if seed_met(r, n, options) else "missed") if _has_seed(r, n) else NOT_MEASURED
                          for r in earlier] + ["missed"]
                kind = classify(states)
                caught = states.count("caught")
                if kind == INTERMITTENT:
                    warnings.append(f"SEED {n} [BLOCKER] intermittent: missed now, caught in {caught} of "
                                    f"the last {len(earlier)} runs")
                    continue
                failing.append(n)
                if kind == NEWLY_MISSED:
                    reasons.append(f"newly missed BLOCKER: SEED {n} (caught in {caught} of the last "
                                   f"{len(earlier)} runs)")
                else:
                    reasons.append(f"BLOCKER SEED {n} never caught in the last {len(earlier)} runs "
                                   f"(acknowledge it if it is a known gap; fingerprint {seed_fingerprint(s)})")
        elif still:
            failing = [int(x["n"]) for x in still]
            met = len(blockers) - len(still)
            reasons.append(f"{BLOCKER_REASON} {met}/{len(blockers)} < 1.0"
                           + (" (found at any severity >= " + options.floor + ")"
                              if options.blocker_gate == "found" else ""))
        recall = record.get("recall")
        if options.min_recall is not None and isinstance(recall, (int, float)) and recall < options.min_recall:
            reasons.append(f"recall {record.get('caught')}/{record.get('markers')} < {options.min_recall}")
        if options.require_citation:
            uncited = [s for s in record.get("caught_seeds") or [] if not (s.get("evidence") or {}).get("cited")]
            if uncited:
                reasons.append(f"{len(uncited)} caught seed(s) without the rule id")
    else:
        cfp = record.get("clean_false_positives") or 0
        if cfp:
            reasons.append(f"{cfp} clean false positive(s) at or above {options.floor}")
    if options.baseline == "previous":
        reasons += compare(history, record).gate_reasons
    return Verdict(not reasons, tuple(reasons), tuple(warnings), tuple(acknowledged), options.blocker_gate,
                   tuple(failing))


def _has_seed(record: Mapping[str, Any], n: int) -> bool:
    return any(s.get("n") == n for key in ("caught_seeds", "undercalled_seeds", "missed_seeds")
               for s in record.get(key) or [])


def confirm(attempts: Sequence[Mapping[str, Any]], last: dict[str, Any], attempt: int,
            options: GateOptions | None = None) -> None:
    """The confirmation rule, applied to ``last`` (the newest seeded attempt) in place: a
    BLOCKER counts as missed only if every attempt missed it."""
    opts = options or GateOptions()
    earlier = [r for r in attempts if r is not last]
    verdict = decide(last, opts, attempts=earlier)
    if last.get("outcome") == "scored" and not unmet_blockers_all(earlier, last, opts):
        last["confirmed_by_attempts"] = attempt
    last["gate"] = verdict.as_json()


def unmet_blockers_all(attempts: Sequence[Mapping[str, Any]], last: Mapping[str, Any],
                       options: GateOptions) -> list[int]:
    """BLOCKERs no attempt (earlier ones and ``last``) satisfied."""
    return [n for n in unmet_blockers(last, options)
            if not any(seed_met(r, n, options) for r in attempts)]


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
