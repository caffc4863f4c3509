"""Numbers, outcome and gate for one PR (docs/matching.md), and the history record (docs/record.md).

Pure: the caller supplies the clock reading (``recorded_at``) and every identity field.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from redline_canary.corpus.model import CANONICAL, PACKAGED
from redline_canary.corpus.publication import PublishedMarker
from redline_canary.corpus.severity import SCALE, Severity
from redline_canary.corpus.topics import NO_TOPICS, TopicIndex
from redline_canary.review.extraction import Extraction
from redline_canary.review.findings import Finding
from redline_canary.score.defaults import default
from redline_canary.score.matching import DEFAULT_WINDOW, Assignment, CitesRule, Pair, assign
from redline_canary.score.record import (
    CURRENT_SCHEMA,
    KINDS,
    Counts,
    Evidence,
    Gate,
    Mode,
    Outcome,
    PRKind,
    Record,
    Seed,
    Unmatched,
)
from redline_canary.score.verdict import GateOptions, decide

SCHEMA_VERSION = CURRENT_SCHEMA
EVIDENCE_CHARS = 300
DEFAULT_FLOOR = Severity.parse(str(default("--floor")))
_Z95 = 1.959963984540054


def wilson(successes: int, n: int, z: float = _Z95) -> tuple[float, float] | None:
    """Wilson score interval; None when there is nothing to estimate."""
    if n <= 0:
        return None
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (round(max(0.0, centre - half), 4), round(min(1.0, centre + half), 4))


def rate(successes: int, n: int) -> float | None:
    return round(successes / n, 4) if n else None


@dataclass
class Score:
    """Everything docs/matching.md defines for one PR."""

    kind: PRKind
    outcome: Outcome
    notice: str | None
    markers: list[PublishedMarker]
    findings: list[Finding]
    assignment: Assignment
    floor: Severity
    rules: GateOptions = field(default_factory=GateOptions)

    @property
    def seeds(self) -> list[PublishedMarker]:
        return [m for m in self.markers if m.marker.kind == "seed"]

    def seeds_where(self, status: str) -> list[PublishedMarker]:
        """Seeds that are caught, undercalled or missed, in corpus order."""
        by_marker = {id(p.marker): p for p in self.assignment.pairs}
        out = []
        for m in self.seeds:
            pair = by_marker.get(id(m))
            s = "missed" if pair is None else "caught" if pair.caught else "undercalled"
            if s == status:
                out.append(m)
        return sorted(out, key=lambda m: (m.marker.path, m.marker.n))

    @property
    def caught(self) -> int:
        return sum(p.caught for p in self.assignment.pairs)

    @property
    def undercalled(self) -> int:
        return sum(not p.caught for p in self.assignment.pairs)

    @property
    def missed(self) -> int:
        return len(self.seeds) - len(self.assignment.pairs)

    @property
    def cited(self) -> int:
        return sum(p.cited for p in self.assignment.pairs)

    def by_severity(self) -> dict[str, dict[str, int]]:
        table = {s.name: {"markers": 0, "caught": 0, "undercalled": 0, "missed": 0} for s in SCALE}
        for m in self.seeds:
            table[m.marker.severity.name]["markers"] += 1
        for p in self.assignment.pairs:
            table[p.marker.marker.severity.name]["caught" if p.caught else "undercalled"] += 1
        for row in table.values():
            row["missed"] = row["markers"] - row["caught"] - row["undercalled"]
        return table

    @property
    def recall(self) -> float | None:
        return rate(self.caught, len(self.seeds)) if self.kind == "seeded" else None

    @property
    def blocker_counts(self) -> tuple[int, int]:
        row = self.by_severity()["BLOCKER"]
        return row["caught"], row["markers"]

    @property
    def blocker_recall(self) -> float | None:
        return rate(*self.blocker_counts) if self.kind == "seeded" else None

    @property
    def blocker_found_counts(self) -> tuple[int, int]:
        """(BLOCKER markers *found*, BLOCKER markers): located by a finding that is not
        off-topic (off-topic pairs are never made) at a severity at or above the floor. A
        BLOCKER located only below the floor is located, not found (docs/matching.md#numbers)."""
        found = sum(p.marker.marker.severity == Severity.BLOCKER and (p.caught or self._at_or_above_floor(p.finding))
                    for p in self.assignment.pairs)
        return found, self.by_severity()["BLOCKER"]["markers"]

    @property
    def blocker_found(self) -> float | None:
        return rate(*self.blocker_found_counts) if self.kind == "seeded" else None

    def pair_of(self, m: PublishedMarker) -> Pair | None:
        return next((p for p in self.assignment.pairs if p.marker is m), None)

    def _at_or_above_floor(self, f: Finding) -> bool:
        if f.severity is None:
            return True  # unrated by location: every finding counts
        return f.severity >= self.floor

    @property
    def clean_false_positives(self) -> int | None:
        if self.kind != "clean" or self.outcome != "scored":
            return None
        flagged = self.assignment.duplicates + self.assignment.noise
        return sum(self._at_or_above_floor(f) for f in flagged)

    @property
    def clean_outside_fix(self) -> int | None:
        """Clean findings outside every FIXED place; None where the twin has none (docs/corpus.md#fixed-places)."""
        if self.kind != "clean" or self.outcome != "scored" or not any(m.marker.kind == "fixed" for m in self.markers):
            return None
        return len(self.assignment.outside_fix)

    @property
    def clean_below_floor(self) -> int | None:
        if self.kind != "clean" or self.outcome != "scored":
            return None
        flagged = self.assignment.duplicates + self.assignment.noise
        return sum(not self._at_or_above_floor(f) for f in flagged)


def decide_outcome(extraction: Extraction) -> tuple[Outcome, str | None]:
    """docs/matching.md outcome from what the reviewer did; silence is never a score."""
    if extraction.has("error") and not extraction.findings:
        return "error", extraction.notice("error")
    if extraction.has("skipped") and not extraction.findings:
        return "silent", extraction.notice("skipped")
    if extraction.activity == 0:
        return "silent", None
    return "scored", extraction.notice("error", "skipped")


def score_pr(
    *,
    kind: PRKind,
    markers: Sequence[PublishedMarker],
    extraction: Extraction,
    window: int = DEFAULT_WINDOW,
    floor: Severity = DEFAULT_FLOOR,
    cites: CitesRule | None = None,
    gate: GateOptions | None = None,
    outcome: Outcome | None = None,
    topics: TopicIndex = NO_TOPICS,
) -> Score:
    """Match, count and gate one PR. ``outcome`` overrides (e.g. ``cancelled``)."""
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r} (expected seeded or clean)")
    decided, notice = decide_outcome(extraction)
    final = outcome or decided
    findings = list(extraction.findings) if final == "scored" else []
    score = Score(
        kind=kind, outcome=final, notice=notice, markers=list(markers), findings=findings,
        assignment=assign(markers, findings, window, cites, topics), floor=floor,
        rules=replace(gate or GateOptions(), floor=floor.name),
    )
    return score


def _seed_entry(m: PublishedMarker, pair: Pair | None = None) -> Seed:
    return Seed(
        n=m.marker.n,
        path=m.marker.path,
        line=m.marker.anchor_line,
        lines=m.marker.lines,
        pushed_path=m.path,
        pushed_line=m.line,
        pushed_end_line=m.end_line,
        severity=m.marker.severity.name,
        rule=m.marker.rule,
        symbol=m.marker.symbol,
        description=m.marker.description,
        sites=tuple({"path": p.corpus_path, "line": p.corpus_line, "pushed_path": p.path, "pushed_line": p.line}
                    for p in m.sites),
        evidence=evidence(pair.finding, pair) if pair is not None else None,
    )


MAX_UNMATCHED = 100


def unmatched_entry(f: Finding, klass: str) -> Unmatched:
    """A finding no seed took (noise, a duplicate, a borderline place): what an audit adjudicates."""
    return Unmatched(
        klass=klass, comment_id=f.comment_id, channel=f.channel, source=f.source,
        url=f.url, path=f.path, line=f.start, end_line=f.end,
        severity=f.severity.name if f.severity is not None else None, word=f.word,
        excerpt=f.body[:EVIDENCE_CHARS],
    )


def unmatched(score: Score) -> list[Unmatched]:
    """Every finding no seed took, most severe first, at most MAX_UNMATCHED."""
    rows = [(f, "noise") for f in score.assignment.noise]
    rows += [(f, "duplicate") for f in score.assignment.duplicates]
    rows += [(f, "borderline") for f in score.assignment.borderline]
    rows.sort(key=lambda r: (-(r[0].severity or 0), r[1], r[0].sort_key()))
    return [unmatched_entry(f, k) for f, k in rows[:MAX_UNMATCHED]]


def evidence(f: Finding, pair: Pair) -> Evidence:
    """What a reader needs to check a match by hand (docs/matching.md): which comment, and what it said."""
    return Evidence(
        comment_id=f.comment_id,
        channel=f.channel,
        source=f.source,
        url=f.url,
        path=f.path,
        line=f.start,
        end_line=f.end,
        severity=f.severity.name if f.severity is not None else None,
        word=f.word,
        distance=pair.distance,
        cited=pair.cited,
        excerpt=f.body[:EVIDENCE_CHARS],
    )


@dataclass(frozen=True)
class RecordMeta:
    """What a record says that scoring does not decide: who, where, when (the caller's
    clock), and the run's own measurements of itself. ``evaluate`` fills the empty
    stack, mode, reviewer and corpus fingerprint from what it scored."""

    run_id: str
    recorded_at: str
    repo: str
    tool_version: str
    stack: str = ""
    reviewer: str = ""
    mode: Mode | None = None
    corpus_fingerprint: str = ""
    layer: str = ""  # evaluate fills it from the corpus (CorpusData.layer_of)
    variant: str = CANONICAL  # the variant id the PR published (docs/corpus.md#variants)
    attempt: int = 1
    pr: int | None = None
    timings: Mapping[str, float] | None = None
    api_requests: Mapping[str, int] | None = None


def build_record(score: Score, meta: RecordMeta) -> Record:
    """One history line, its gate decided from the record itself."""
    if meta.mode is None:
        raise ValueError("RecordMeta.mode is not set (evaluate fills it from the score settings)")
    seeded = score.kind == "seeded"
    scored = score.outcome == "scored"
    caught_b, n_b = score.blocker_counts
    # Silence is not a score: nothing was measured, so no seed is "missed" and no rate may
    # be read as "recall 0" or as a clean pass.
    measured = seeded and scored
    rows = score.by_severity()
    record = Record(
        schema=SCHEMA_VERSION,
        run_id=meta.run_id,
        attempt=meta.attempt,
        recorded_at=meta.recorded_at,
        repo=meta.repo,
        stack=meta.stack,
        kind=score.kind,
        pr=meta.pr,
        reviewer=meta.reviewer,
        mode=meta.mode,
        corpus_fingerprint=meta.corpus_fingerprint,
        layer=meta.layer or PACKAGED,
        variant=meta.variant,
        outcome=score.outcome,
        notice=score.notice,
        findings=len(score.findings),
        markers=len(score.seeds),
        caught=score.caught,
        undercalled=score.undercalled,
        missed=score.missed if scored else 0,
        duplicates=len(score.assignment.duplicates),
        borderline=len(score.assignment.borderline),
        noise=len(score.assignment.noise),
        cited=score.cited,
        recall=score.recall if scored else None,
        recall_ci95=wilson(score.caught, len(score.seeds)) if measured else None,
        blocker_recall=score.blocker_recall if scored else None,
        blocker_recall_ci95=wilson(caught_b, n_b) if measured else None,
        blocker_found=score.blocker_found if scored else None,
        blocker_found_ci95=wilson(*score.blocker_found_counts) if measured else None,
        by_severity={name: Counts(markers=row["markers"], caught=row["caught"], undercalled=row["undercalled"],
                                  missed=row["missed"] if scored else 0) for name, row in rows.items()},
        caught_seeds=tuple(_seed_entry(m, score.pair_of(m)) for m in score.seeds_where("caught")),
        undercalled_seeds=tuple(_seed_entry(m, score.pair_of(m)) for m in score.seeds_where("undercalled")),
        missed_seeds=tuple(_seed_entry(m) for m in score.seeds_where("missed")) if scored else (),
        unmatched_findings=tuple(unmatched(score)) if scored else (),
        clean_false_positives=score.clean_false_positives,
        clean_findings_below_floor=score.clean_below_floor,
        clean_findings_outside_fix=score.clean_outside_fix,
        gate=Gate(passed=False),  # decided below, from the record itself
        tool_version=meta.tool_version,
        timings=dict(meta.timings) if meta.timings is not None else None,
        api_requests=dict(meta.api_requests) if meta.api_requests is not None else None,
    )
    return replace(record, gate=decide(record, score.rules).gate())
