"""Text a person reads: the score table, seed lists, baseline diffs. Pure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from redline_canary.severity import SCALE


def fmt_rate(successes: int, n: int, ci: Sequence[float] | None) -> str:
    """``0.75 (3/4, 95% CI 0.30–0.95)``; every rate is printed with its n."""
    if not n:
        return "n/a (n=0)"
    text = f"{successes / n:.2f} ({successes}/{n}"
    if ci:
        text += f", 95% CI {ci[0]:.2f}–{ci[1]:.2f}"
    return text + ")"


def seed_line(seed: Mapping[str, Any]) -> str:
    """``path:line [SEVERITY] rule — description``."""
    return (f"{seed['path']}:{seed['line']} [{seed['severity']}] {seed['rule']} — "
            f"{seed.get('description', '')}").rstrip(" —")


def render_record(record: Mapping[str, Any]) -> str:
    """The compact human table for one scored PR."""
    head = (f"{record['repo']} #{record.get('pr') or '-'}  {record['stack']}/{record['kind']}  "
            f"reviewer={record['reviewer']}  mode={record['mode']}  "
            f"corpus={record['corpus_fingerprint']}")
    lines = [head, f"outcome: {record['outcome']}"
             + (f" — {record['notice']}" if record.get("notice") else "")]
    if record["outcome"] == "scored":
        if record["kind"] == "seeded":
            b = record["by_severity"]["BLOCKER"]
            lines.append("blocker recall: " + fmt_rate(b["caught"], b["markers"],
                                                      record.get("blocker_recall_ci95")))
            lines.append("recall:         " + fmt_rate(record["caught"], record["markers"],
                                                      record.get("recall_ci95")))
            lines.append(
                f"caught {record['caught']} · undercalled {record['undercalled']} · "
                f"missed {record['missed']} · cited {record['cited']} · duplicates "
                f"{record['duplicates']} · borderline {record['borderline']} · noise "
                f"{record['noise']} (of {record.get('findings', '?')} findings)")
            lines.append("by severity:    " + "  ".join(
                f"{s.name} {record['by_severity'][s.name]['caught']}/"
                f"{record['by_severity'][s.name]['markers']}"
                for s in SCALE if record["by_severity"][s.name]["markers"]))
        else:
            lines.append(
                f"clean false positives: {record['clean_false_positives']} "
                f"(below floor, reported only: {record.get('clean_findings_below_floor', 0)}; "
                f"borderline {record['borderline']}; of {record.get('findings', '?')} findings)")
    gate = record["gate"]
    lines.append("gate: " + ("PASS" if gate["passed"] else "FAIL")
                 + ("" if gate["passed"] else " — " + "; ".join(gate["reasons"])))
    for title, key in (("missed", "missed_seeds"), ("undercalled", "undercalled_seeds")):
        seeds = record.get(key) or []
        if seeds:
            lines.append(f"{title} seeds ({len(seeds)}):")
            lines.extend("  " + seed_line(s) for s in seeds)
    return "\n".join(lines)


def render_baseline(newly_missed: Sequence[Mapping[str, Any]],
                    newly_caught: Sequence[Mapping[str, Any]],
                    baseline: Mapping[str, Any] | None) -> str:
    if baseline is None:
        return "baseline: none (no earlier record with this repo, stack, kind, reviewer and corpus)"
    lines = [f"baseline: run {baseline['run_id']} at {baseline['recorded_at']}"]
    lines += [f"  newly missed: {seed_line(s)}" for s in newly_missed]
    lines += [f"  newly caught: {seed_line(s)}" for s in newly_caught]
    if not newly_missed and not newly_caught:
        lines.append("  no change in caught seeds")
    return "\n".join(lines)
