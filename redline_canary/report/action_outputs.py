"""What a step hands on: the action's outputs (pooled over the final attempts) and the plan's matrix. Pure.

Why its own module: the outputs are what a caller's workflow branches on, so the rule
"nothing scored is empty, never 0" lives here once; the job summary's headline numbers
are the same :func:`totals`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from redline_canary.errors import outcome_word
from redline_canary.score.record import Record
from redline_canary.score.verdict import final_attempts


@dataclass(frozen=True)
class Totals:
    """Pooled over the final attempts of every scored PR (the action's headline numbers)."""

    blocker_caught: int = 0
    blocker_markers: int = 0
    caught: int = 0
    markers: int = 0
    undercalled: int = 0
    clean_false_positives: int | None = None  # None: no clean PR was scored

    @property
    def blocker_recall(self) -> float | None:
        return self.blocker_caught / self.blocker_markers if self.blocker_markers else None

    @property
    def recall(self) -> float | None:
        return self.caught / self.markers if self.markers else None


def totals(records: Iterable[Record]) -> Totals:
    b_caught = b_n = caught = markers = under = 0
    cfp: int | None = None
    for r in final_attempts(records):
        if r.outcome != "scored":
            continue  # silent/error/cancelled measured nothing: never a zero
        if r.kind == "seeded":
            b_caught += r.blocker.caught
            b_n += r.blocker.markers
            caught += r.caught
            markers += r.markers
            under += r.undercalled
        elif r.clean_false_positives is not None:
            cfp = (cfp or 0) + r.clean_false_positives
    return Totals(b_caught, b_n, caught, markers, under, cfp)


def _rate_text(value: float | None) -> str:
    return "" if value is None else f"{value:.4f}".rstrip("0").rstrip(".") if value else "0"


def action_outputs(records: Sequence[Record], exit_code: int,
                   records_path: str = "") -> dict[str, str]:
    """The action's outputs. Rates are pooled fractions (``0.8``); empty when nothing of
    that kind was scored, so a caller never reads silence as a 0."""
    t = totals(records)
    run_ids = sorted({r.run_id for r in records})
    return {
        "outcome": outcome_word(exit_code),
        "exit-code": str(exit_code),
        "blocker-recall": _rate_text(t.blocker_recall),
        "recall": _rate_text(t.recall),
        "clean-false-positives": "" if t.clean_false_positives is None else str(t.clean_false_positives),
        "records": records_path,
        "run-id": run_ids[0] if len(run_ids) == 1 else ",".join(run_ids),
    }


def matrix_entry(target: Mapping[str, Any]) -> dict[str, str]:
    """One ``strategy.matrix.include`` entry: the display fields, an artifact-safe slug,
    and the whole target as compact JSON (``targets:`` input of the action), so keys such
    as ``base``, ``prefix`` and ``login`` reach the job unchanged."""
    repo, stack, reviewer = str(target["repo"]), str(target["stack"]), str(target.get("reviewer") or "redline")
    slug = "-".join(_slug(x) for x in (repo.replace("/", "--"), stack, reviewer))
    return {
        "name": f"{repo} {stack} ({reviewer})",
        "slug": slug,
        "repo": repo,
        "stack": stack,
        "reviewer": reviewer,
        "mode": str(target.get("mode") or "blind"),
        "target": json.dumps(dict(target), separators=(",", ":"), sort_keys=True),
    }


def _slug(text: str) -> str:
    """Artifact names may not hold ``"  : < > | * ? \\ /`` or CR/LF; keep a readable subset."""
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in text)
