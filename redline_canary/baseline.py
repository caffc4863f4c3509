"""Compare a record with the previous comparable one (``score --baseline``). Pure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

_SAME = ("repo", "stack", "kind", "reviewer", "corpus_fingerprint")


@dataclass
class BaselineDiff:
    baseline: Mapping[str, Any] | None
    newly_missed: list[Mapping[str, Any]] = field(default_factory=list)
    newly_caught: list[Mapping[str, Any]] = field(default_factory=list)
    gate_reasons: list[str] = field(default_factory=list)


def comparable_runs(history: Sequence[Mapping[str, Any]], record: Mapping[str, Any],
                    limit: int) -> list[Mapping[str, Any]]:
    """The last ``limit`` scored runs like ``record`` (same repo, stack, kind, reviewer and
    corpus), one record per run (its final attempt), oldest first."""
    by_run: dict[str, Mapping[str, Any]] = {}
    for r in history:
        if (all(r.get(k) == record.get(k) for k in _SAME) and r.get("outcome") == "scored"
                and r.get("run_id") != record.get("run_id")):
            key = str(r.get("run_id"))
            if key not in by_run or int(r.get("attempt") or 1) >= int(by_run[key].get("attempt") or 1):
                by_run[key] = r
    ordered = sorted(by_run.values(), key=lambda r: str(r.get("recorded_at")))
    return ordered[-limit:] if limit else []


def latest_comparable(
    history: Sequence[Mapping[str, Any]], record: Mapping[str, Any]
) -> Mapping[str, Any] | None:
    """The newest scored record with the same repo, stack, kind, reviewer and corpus."""
    runs = comparable_runs(history, record, 1)
    return runs[0] if runs else None


def compare(history: Sequence[Mapping[str, Any]], record: Mapping[str, Any]) -> BaselineDiff:
    base = latest_comparable(history, record)
    diff = BaselineDiff(base)
    if base is None or record.get("outcome") != "scored":
        return diff
    before = {s["n"]: s for s in base.get("caught_seeds", [])}
    now = {s["n"]: s for s in record.get("caught_seeds", [])}
    not_caught = {s["n"]: s for key in ("missed_seeds", "undercalled_seeds")
                  for s in record.get(key, [])}
    diff.newly_missed = [not_caught[n] for n in sorted(before) if n in not_caught]
    diff.newly_caught = [now[n] for n in sorted(now) if n not in before]
    blockers = [s for s in diff.newly_missed if s.get("severity") == "BLOCKER"]
    if blockers:
        diff.gate_reasons.append(
            "newly missed BLOCKER: " + ", ".join(f"SEED {s['n']}" for s in blockers))
    cfp_now = record.get("clean_false_positives") or 0
    cfp_before = base.get("clean_false_positives") or 0
    if record.get("kind") == "clean" and cfp_now > cfp_before:
        diff.gate_reasons.append(f"new clean false positives: {cfp_before} -> {cfp_now}")
    return diff
