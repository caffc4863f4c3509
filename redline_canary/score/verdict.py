"""Pass or fail, and the exit code it stands for, decided in one place (docs/matching.md, docs/cli.md). Pure.

Everything that turns numbers into a verdict lives here: the gate of one PR, the
confirmation rule (a BLOCKER counts as missed only if every attempt missed it), a
baseline's extra reasons and which attempt of a PR is final. The exit-code table and the
rule that combines codes are in ``errors``. ``scoring`` measures, the commands print;
neither decides.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Literal, get_args

from redline_canary.corpus.severity import at_or_above
from redline_canary.errors import outcome_exit_code
from redline_canary.score.acknowledgements import Acknowledgement, seed_fingerprint
from redline_canary.score.baseline import comparable_runs, compare
from redline_canary.score.record import Gate, Record, Seed

BLOCKER_REASON = "blocker recall"  # blocker-gate: caught
FOUND_REASON = "blockers found"  # blocker-gate: found


def record_exit_code(record: Record) -> int:
    """The exit code one record stands for (the table is in ``errors``)."""
    return outcome_exit_code(record.outcome, record.gate.passed)


BlockerGate = Literal["caught", "found"]
BLOCKER_GATES: tuple[BlockerGate, ...] = get_args(BlockerGate)
ALWAYS_CAUGHT = "always caught"
INTERMITTENT = "intermittent"
NEWLY_MISSED = "newly missed"
NEVER_CAUGHT = "never caught"
SEED_CLASSES = (NEWLY_MISSED, NEVER_CAUGHT, INTERMITTENT, ALWAYS_CAUGHT)  # most urgent first
NOT_MEASURED = "none"


@dataclass(frozen=True)
class GateOptions:
    """Every gate rule a user can set (docs/matching.md); the defaults are the corpus contract."""

    min_recall: float | None = None
    require_citation: bool = False
    blocker_gate: BlockerGate = "found"  # found: located, on topic, at >= floor; caught: at the marked severity
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
    blocker_gate: BlockerGate = "found"
    failing: tuple[int, ...] = ()  # the BLOCKER seeds that fail this gate

    def gate(self) -> Gate:
        """The verdict as the record holds it."""
        return Gate(passed=self.passed, reasons=self.reasons, failing_seeds=self.failing,
                    warnings=self.warnings, acknowledged=self.acknowledged, blocker_gate=self.blocker_gate)


def _level_given(seed: Seed) -> str | None:
    """The severity the matched finding gave a seed; a record that kept no evidence of it
    reads as INFO (below every floor), a finding with no severity (unrated) as None."""
    ev = seed.evidence
    return ev.severity if ev is not None and ev.has("severity") else "INFO"


def seed_met(record: Record, n: int, options: GateOptions) -> bool:
    """Whether seed ``n`` satisfies the gate in ``record``: caught, or with ``blocker-gate:
    found`` located by a finding at or above the floor."""
    if any(s.n == n for s in record.caught_seeds):
        return True
    if options.blocker_gate != "found":
        return False
    return any(s.n == n and at_or_above(_level_given(s), options.floor) for s in record.undercalled_seeds)


def blocker_seeds(record: Record) -> list[Seed]:
    return sorted((s for s in record.seeds() if s.severity == "BLOCKER"), key=lambda s: s.n)


def unmet_blockers(record: Record, options: GateOptions | None = None) -> list[int]:
    """BLOCKER seeds of one record that do not satisfy the gate."""
    opts = options or GateOptions()
    return [s.n for s in blocker_seeds(record) if not seed_met(record, s.n, opts)]


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


def decide(record: Record, options: GateOptions, *,
           attempts: Sequence[Record] = (),
           history: Sequence[Record] = ()) -> Verdict:
    """The gate of one record, from the record itself (docs/matching.md). ``attempts`` are the
    earlier attempts of the same PR (the confirmation rule: a BLOCKER counts as missed only
    if every attempt missed it); ``history`` feeds the baseline."""
    if record.outcome != "scored":
        reason = f"reviewer {record.outcome}"
        notice = record.notice
        return Verdict(False, (f"{reason}: {notice}" if notice else reason,), blocker_gate=options.blocker_gate)
    reasons: list[str] = []
    warnings: list[str] = []
    acknowledged: list[int] = []
    failing: list[int] = []
    if record.kind == "seeded":
        blockers = blocker_seeds(record)
        unmet = [s for s in blockers
                 if not any(seed_met(r, s.n, options) for r in (*attempts, record))]
        for s in blockers:
            if s in unmet:
                continue
            for known in options.acknowledgements:
                if known.names(record, s):
                    warnings.append(f"{known.label}: acknowledgement no longer needed, SEED {s.n} was caught")
        still: list[Seed] = []
        for s in unmet:
            ack = next((a for a in options.acknowledgements if a.names(record, s)), None)
            if ack is not None and ack.matches_corpus(s):
                acknowledged.append(s.n)
                warnings.append(f"SEED {s.n} [BLOCKER] missed: acknowledged by {ack.by} until "
                                f"{ack.until} ({ack.reason})")
                continue
            if ack is not None:
                warnings.append(f"{ack.label}: no longer applies, the corpus changed SEED {s.n} "
                                f"(fingerprint {seed_fingerprint(s)}); re-acknowledge it if it still stands")
            still.append(s)
        window = options.window
        earlier = comparable_runs(history, record, window) if window else []
        if window and earlier:
            for s in still:
                n = s.n
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
            failing = [x.n for x in still]
            met = len(blockers) - len(still)
            if options.blocker_gate == "found":
                reasons.append(f"{FOUND_REASON} {met}/{len(blockers)} (not found: "
                               f"{', '.join(f'SEED {n}' for n in failing)})")
            else:
                reasons.append(f"{BLOCKER_REASON} {met}/{len(blockers)} < 1.0")
        if options.baseline:
            earlier_runs = comparable_runs(history, record, window or 1)
            warnings += severity_drift(record, earlier_runs, still)
            if window:
                reasons += recall_drop(record, earlier_runs)
        recall = record.recall
        if options.min_recall is not None and recall is not None and recall < options.min_recall:
            reasons.append(f"recall {record.caught}/{record.markers} < {options.min_recall}")
        if options.require_citation:
            uncited = [s for s in record.caught_seeds if not (s.evidence is not None and s.evidence.cited)]
            if uncited:
                reasons.append(f"{len(uncited)} caught seed(s) without the rule id")
    else:
        cfp = record.clean_false_positives or 0
        if cfp:
            reasons.append(f"{cfp} clean false positive(s) at or above {options.floor}")
    if options.baseline == "previous":
        reasons += compare(history, record).gate_reasons
        if record.kind == "seeded":
            # Newly missed under the run's own gate rule (seed_met), acknowledged seeds aside.
            base = comparable_runs(history, record, 1)
            lost = [s.n for s in blocker_seeds(record) if base and seed_met(base[0], s.n, options)
                    and not seed_met(record, s.n, options) and s.n not in acknowledged]
            if lost:
                reasons.append("newly missed BLOCKER: " + ", ".join(f"SEED {n}" for n in lost))
    return Verdict(not reasons, tuple(reasons), tuple(warnings), tuple(acknowledged), options.blocker_gate,
                   tuple(failing))


def _has_seed(record: Record, n: int) -> bool:
    return any(s.n == n for s in record.seeds())


def confirm(attempts: Sequence[Record], last: Record, attempt: int,
            options: GateOptions | None = None) -> Record:
    """The confirmation rule applied to ``last`` (the newest seeded attempt): a BLOCKER
    counts as missed only if every attempt missed it. Returns ``last`` re-judged."""
    opts = options or GateOptions()
    earlier = [r for r in attempts if r is not last]
    verdict = decide(last, opts, attempts=earlier)
    confirmed = last.confirmed_by_attempts
    if last.outcome == "scored" and not unmet_blockers_all(earlier, last, opts):
        confirmed = attempt
    return replace(last, gate=verdict.gate(), confirmed_by_attempts=confirmed)


def unmet_blockers_all(attempts: Sequence[Record], last: Record,
                       options: GateOptions) -> list[int]:
    """BLOCKERs no attempt (earlier ones and ``last``) satisfied."""
    return [n for n in unmet_blockers(last, options)
            if not any(seed_met(r, n, options) for r in attempts)]


def final_attempts(records: Iterable[Record], run_ids: Sequence[str] | None = None) -> list[Record]:
    """Per (repo, stack, reviewer, kind), in first-seen order, the record that judges it: the
    highest attempt (a confirmation re-run supersedes), and across several run ids the
    later-listed run (a re-run of failed jobs supersedes the first run)."""
    order = {rid: i for i, rid in enumerate(run_ids or [])}
    latest: dict[tuple[str, ...], Record] = {}

    def rank(r: Record) -> tuple[int, int]:
        return order.get(r.run_id, 0), r.attempt

    for r in records:
        key = (*r.target, r.kind)
        if key not in latest or rank(r) >= rank(latest[key]):
            latest[key] = r
    return list(latest.values())


def severity_drift(record: Record, earlier: Sequence[Record], unmet: Sequence[Seed]) -> list[str]:
    """A BLOCKER still found now, rated BLOCKER in an earlier run of the window and lower
    now: the reviewer's severity drifted (a warning, never a failure: strong reviewers
    disagree about the top level)."""
    missing = {s.n for s in unmet}
    out = []
    for s in record.undercalled_seeds:
        if s.severity != "BLOCKER" or s.n in missing:
            continue
        rated = sum(any(c.n == s.n for c in r.caught_seeds) for r in earlier)
        if rated:
            word = s.evidence.word or s.evidence.severity if s.evidence is not None else None
            out.append(f"severity drift: SEED {s.n} [BLOCKER] rated BLOCKER in {rated} of the last "
                       f"{len(earlier)} run(s), rated {word or 'lower'} now")
    return out


# With one earlier run a window has no spread of its own: the drop must then exceed what
# two independent reviews of the same PR differ by at this recall (two standard errors of
# the difference of two proportions).
DROP_SIGMAS = 2.0


def recall_drop(record: Record, earlier: Sequence[Record]) -> list[str]:
    """Fail when recall fell below the window's lowest by more than the window's own spread
    (or, for a spread smaller than sampling noise, by more than that noise)."""
    recalls = [r.recall for r in earlier if r.recall is not None]
    if record.recall is None or not recalls or not record.markers:
        return []
    low, high = min(recalls), max(recalls)
    mean = sum(recalls) / len(recalls)
    noise = DROP_SIGMAS * math.sqrt(2 * mean * (1 - mean) / record.markers)
    allowed = max(high - low, noise)
    if record.recall < low - allowed:
        return [f"recall drop: {record.caught}/{record.markers} ({record.recall:.2f}) is below the last "
                f"{len(recalls)} run(s)' lowest {low:.2f} by more than their spread ({allowed:.2f})"]
    return []
