"""Compare a record with the previous comparable one (``score --baseline``). Pure."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from redline_canary.score.record import Record, Seed

_SAME = ("repo", "stack", "kind", "reviewer", "corpus_fingerprint")


@dataclass
class BaselineDiff:
    baseline: Record | None
    newly_missed: list[Seed] = field(default_factory=list)
    newly_caught: list[Seed] = field(default_factory=list)
    gate_reasons: list[str] = field(default_factory=list)


def _like(r: Record, record: Record) -> bool:
    return all(getattr(r, k) == getattr(record, k) for k in _SAME)


def comparable_runs(history: Sequence[Record], record: Record, limit: int) -> list[Record]:
    """The last ``limit`` scored runs like ``record`` (same repo, stack, kind, reviewer and
    corpus), one record per run (its final attempt), oldest first."""
    by_run: dict[str, Record] = {}
    for r in history:
        if not _like(r, record) or r.outcome != "scored" or r.run_id == record.run_id:
            continue
        if r.run_id not in by_run or r.attempt >= by_run[r.run_id].attempt:
            by_run[r.run_id] = r
    ordered = sorted(by_run.values(), key=lambda r: r.recorded_at)
    return ordered[-limit:] if limit else []


def latest_comparable(history: Sequence[Record], record: Record) -> Record | None:
    """The newest scored record with the same repo, stack, kind, reviewer and corpus."""
    runs = comparable_runs(history, record, 1)
    return runs[0] if runs else None


def compare(history: Sequence[Record], record: Record) -> BaselineDiff:
    base = latest_comparable(history, record)
    diff = BaselineDiff(base)
    if base is None or record.outcome != "scored":
        return diff
    before = {s.n: s for s in base.caught_seeds}
    now = {s.n: s for s in record.caught_seeds}
    not_caught = {s.n: s for s in record.seeds("missed_seeds", "undercalled_seeds")}
    diff.newly_missed = [not_caught[n] for n in sorted(before) if n in not_caught]
    diff.newly_caught = [now[n] for n in sorted(now) if n not in before]
    # A newly missed BLOCKER is the gate's to judge, under its own rule (score/verdict.py).
    cfp_now = record.clean_false_positives or 0
    cfp_before = base.clean_false_positives or 0
    if record.kind == "clean" and cfp_now > cfp_before:
        diff.gate_reasons.append(f"new clean false positives: {cfp_before} -> {cfp_now}")
    return diff
