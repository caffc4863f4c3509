"""From a capture and the corpus to a history record: the scoring pipeline. Pure.

Both ``score`` (offline or live) and ``run`` call :func:`evaluate`, so a number computed
in CI and one recomputed later from the saved capture are the same number.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from redline_canary.corpus.model import CANONICAL, CorpusData, fingerprint
from redline_canary.corpus.redline_scale import prefix_rule
from redline_canary.corpus.rule_ids import cite_rule
from redline_canary.corpus.severity import Severity
from redline_canary.corpus.topics import TopicIndex
from redline_canary.corpus.variants import Variant, publish_variant
from redline_canary.review.capture import comments_from_capture
from redline_canary.review.extraction import Extraction
from redline_canary.review.findings import Finding
from redline_canary.review.profiles.base import Profile
from redline_canary.score.matching import DEFAULT_WINDOW, CitesRule
from redline_canary.score.record import Mode, Outcome, PRKind, Record
from redline_canary.score.scoring import (
    DEFAULT_FLOOR,
    RecordMeta,
    Score,
    build_record,
    score_pr,
)
from redline_canary.score.verdict import GateOptions


@dataclass(frozen=True)
class ScoreSettings:
    stack: str
    kind: PRKind
    mode: Mode = "blind"
    prefix: str = ""
    window: int = DEFAULT_WINDOW
    floor: Severity = DEFAULT_FLOOR
    gate: GateOptions = field(default_factory=GateOptions)
    variant: Variant | None = None  # the variant published (None: the canonical files)


def evaluate(
    capture: Mapping[str, Any],
    corpus: CorpusData,
    settings: ScoreSettings,
    profile: Profile,
    meta: RecordMeta,
    outcome: Outcome | None = None,
) -> tuple[Score, Record]:
    """Score one captured PR and build its record (``meta`` supplies identity and clock)."""
    extraction = profile.extract(comments_from_capture(capture))
    return _evaluate(extraction, corpus, settings, profile.name, profile.cites, meta, outcome)


def evaluate_findings(
    findings: Sequence[Finding],
    corpus: CorpusData,
    settings: ScoreSettings,
    reviewer: str,
    meta: RecordMeta,
) -> tuple[Score, Record]:
    """Score a review given as a findings list (``score --findings``): the list *is* the
    review, so an empty list is a review that found nothing, not silence."""
    extraction = Extraction(findings=list(findings), activity=max(1, len(findings)))
    return evaluate_extraction(extraction, corpus, settings, reviewer, meta)


def evaluate_extraction(
    extraction: Extraction,
    corpus: CorpusData,
    settings: ScoreSettings,
    reviewer: str,
    meta: RecordMeta,
) -> tuple[Score, Record]:
    """Score what a reviewer said, already read (the operating-characteristic benchmark
    feeds real reviews and degraded copies of them through the same path as a run)."""
    return _evaluate(extraction, corpus, settings, reviewer, cite_rule, meta, None)


def _evaluate(
    extraction: Extraction,
    corpus: CorpusData,
    settings: ScoreSettings,
    reviewer: str,
    cites: CitesRule,
    meta: RecordMeta,
    outcome: Outcome | None,
) -> tuple[Score, Record]:
    _files, markers = publish_variant(corpus, settings.stack, settings.kind, settings.mode, settings.prefix,
                                      settings.variant)
    score = score_pr(
        kind=settings.kind,
        markers=markers,
        extraction=extraction,
        window=settings.window,
        floor=settings.floor,
        cites=cites,
        gate=settings.gate,
        topics=TopicIndex.of(corpus.rules),
        outcome=outcome,
    )
    full_meta = replace(meta, stack=meta.stack or settings.stack, mode=meta.mode or settings.mode,
                        reviewer=meta.reviewer or reviewer,
                        corpus_fingerprint=meta.corpus_fingerprint or fingerprint(corpus, settings.stack),
                        layer=meta.layer or corpus.layer_of(settings.stack),
                        variant=settings.variant.id if settings.variant else CANONICAL)
    return score, with_cited_prefix(build_record(score, full_meta), score)


def with_cited_prefix(record: Record, score: Score) -> Record:
    """The record with ``cited_prefix``: caught seeds whose finding's ``Redline/<SEVERITY>
    [rule-id]`` prefix names the seed's rule, the way Redline counts rule attribution, so a
    migrating team can set its old numbers beside the new ones."""
    count = sum(1 for p in score.assignment.pairs
                if p.caught and prefix_rule(p.finding.body) == p.marker.marker.rule)
    return replace(record, cited_prefix=count)
