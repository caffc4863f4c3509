"""The gap: public vs private stacks, canonical vs variant publications (docs/corpus.md#the-gap). Pure.

Why: the corpus is public, so a reviewer's vendor can tune to it. A reviewer that does
better on the public corpus than on a team's private stacks, or on the canonical files than
on renamed variants of the same defects, is being measured on what it has memorised. Each
side pools the final seeded runs of one reviewer (BLOCKERs found, recall) with its n and
Wilson 95 % interval, and the gap is stated in words only when the intervals do not overlap:
a difference inside the noise is not a finding. Every renderer (Markdown, HTML, the job
summary) draws the same rows and sentences from here.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from redline_canary.corpus.model import CANONICAL, PACKAGED
from redline_canary.report.text import fmt_rate
from redline_canary.score.scoring import wilson

Axis = Literal["layer", "variant"]
AXES: tuple[Axis, ...] = ("layer", "variant")
# (side a, side b) of each axis, as the tables name them
SIDES: dict[Axis, tuple[str, str]] = {"layer": ("public", "private"), "variant": ("canonical", "variant")}
_BETTER: dict[Axis, tuple[str, str]] = {
    "layer": ("on the public corpus than on private code", "on private code than on the public corpus"),
    "variant": ("on the canonical files than on renamed variants", "on renamed variants than on the canonical files"),
}
# The words every renderer shows around the tables (Markdown, HTML, job summary).
TITLE = "Public vs private, canonical vs variant"
NOTE = ("Per reviewer, final seeded runs pooled; n and the Wilson 95% interval beside each number. "
        "A gap is stated only when the two intervals do not overlap.")
VARIANT_TITLE = "Recall per variant"
HEAD = ("reviewer", "publication", "runs", "BLOCKERs found", "recall")


@dataclass(frozen=True)
class Observation:
    """One final, scored seeded run: what the gap pools."""

    reviewer: str
    stack: str
    layer: str
    variant: str
    markers: int
    caught: int
    blocker_markers: int
    blockers_found: int

    def side(self, axis: Axis) -> str:
        if axis == "layer":
            return "public" if self.layer == PACKAGED else "private"
        return "canonical" if self.variant == CANONICAL else "variant"


@dataclass(frozen=True)
class Pooled:
    """One side of one axis for one reviewer: runs pooled, each number with its n and interval."""

    side: str
    runs: int
    found: tuple[int, int]  # (BLOCKERs found, BLOCKER markers)
    recall: tuple[int, int]  # (caught, markers)

    @staticmethod
    def of(side: str, obs: Sequence[Observation]) -> Pooled:
        return Pooled(side, len(obs), (sum(o.blockers_found for o in obs), sum(o.blocker_markers for o in obs)),
                      (sum(o.caught for o in obs), sum(o.markers for o in obs)))

    @staticmethod
    def text(pair: tuple[int, int]) -> str:
        return fmt_rate(pair[0], pair[1], wilson(*pair)) if pair[1] else "–"


@dataclass(frozen=True)
class Gap:
    reviewer: str
    axis: Axis
    a: Pooled  # public / canonical
    b: Pooled  # private / variant

    def sentences(self) -> list[str]:
        """The plain statement of each number whose two intervals do not overlap."""
        out = []
        for what, a, b in (("BLOCKERs found", self.a.found, self.b.found), ("recall", self.a.recall, self.b.recall)):
            apart = _apart(a, b)
            if apart:
                better = _BETTER[self.axis][0 if apart > 0 else 1]
                out.append(f"{self.reviewer} does better {better} ({what} {Pooled.text(a)} vs {Pooled.text(b)}; "
                           "the 95 % intervals do not overlap)")
        return out


def _apart(a: tuple[int, int], b: tuple[int, int]) -> int:
    """+1 when a's interval lies wholly above b's, -1 below, 0 when they overlap or one is empty."""
    ca, cb = wilson(*a) if a[1] else None, wilson(*b) if b[1] else None
    if ca is None or cb is None:
        return 0
    if ca[0] > cb[1]:
        return 1
    if cb[0] > ca[1]:
        return -1
    return 0


def gaps(observations: Iterable[Observation]) -> list[Gap]:
    """Per reviewer and axis, both sides pooled; only where that reviewer has runs on both
    sides (a public and a private stack, a canonical and a variant publication): a history
    that measured one side only has nothing to compare, and shows nothing new."""
    obs = list(observations)
    out: list[Gap] = []
    for axis in AXES:
        a_side, b_side = SIDES[axis]
        for reviewer in sorted({o.reviewer for o in obs}):
            a = [o for o in obs if o.reviewer == reviewer and o.side(axis) == a_side]
            b = [o for o in obs if o.reviewer == reviewer and o.side(axis) == b_side]
            if a and b:
                out.append(Gap(reviewer, axis, Pooled.of(a_side, a), Pooled.of(b_side, b)))
    return out


def gap_rows(found: Sequence[Gap]) -> list[list[str]]:
    """The table's rows (plain text: each renderer escapes them for its sink)."""
    rows = []
    for g in found:
        for side in (g.a, g.b):
            rows.append([g.reviewer, side.side, str(side.runs), Pooled.text(side.found), Pooled.text(side.recall)])
    return rows


def gap_sentences(found: Sequence[Gap]) -> list[str]:
    """What the table shows, in words: each gap outside the noise, else that there is none."""
    said = [s for g in found for s in g.sentences()]
    if said:
        return said
    if found:
        return ["No gap outside the noise: for every reviewer the 95 % intervals of the two sides overlap."]
    return []


VARIANT_HEAD = ("reviewer", "stack", "variant", "runs", "recall")


def variant_rows(observations: Iterable[Observation]) -> list[list[str]]:
    """Recall per (reviewer, stack, variant), when any run published a variant."""
    obs = list(observations)
    if not any(o.variant != CANONICAL for o in obs):
        return []
    groups: dict[tuple[str, str, str], list[Observation]] = {}
    for o in obs:
        groups.setdefault((o.reviewer, o.stack, o.variant), []).append(o)
    rows = []
    for (reviewer, stack, variant), mine in sorted(groups.items()):
        pooled = Pooled.of(variant, mine)
        rows.append([reviewer, stack, variant, str(pooled.runs), Pooled.text(pooled.recall)])
    return rows
