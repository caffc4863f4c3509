"""Redline's seed-score history as a legacy series: read, stored and shown apart (issue 15). Pure.

A team coming from Redline has months of ``seed-scores.jsonl`` lines written by
``score-seeds.mjs``. They are worth showing on the scoreboard, but they are not this
product's records: Redline matched comments greedily from the marker line, counted replies
and LEFT-side comments, scored silence as 0 and graded on three levels. So they are kept as
their own series under their own schema tag (:data:`LEGACY_SCHEMA`), in their own file;
``gate``, ``score --baseline`` and the history readers never take them for records (they
lack every required record key), and the report draws them in a section of their own.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from redline_canary.report.text import fmt_rate
from redline_canary.score.acknowledgements import is_iso_date
from redline_canary.score.scoring import wilson

LEGACY_SCHEMA = "redline-legacy/1"
SERIES = "redline"
_WHEN = re.compile(r"^\d{4}-\d{2}-\d{2}T(\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:Z|[+-](\d{2}):?(\d{2}))$")
_REPO = re.compile(r"^[^/\s]+/[^/\s]+$")
MAX_TEXT = 200
MAX_STACKS = 200


class LegacyError(ValueError):
    """A Redline line that cannot be read as a score (the message names the key)."""


@dataclass(frozen=True)
class StackScore:
    total: int
    caught: int
    rule_matched: int


@dataclass(frozen=True)
class LegacyRun:
    """One Redline score of one PR, as ``score-seeds.mjs`` wrote it."""

    scored_at: str
    repo: str
    pr: int | None
    standards_version: str | None
    reviewers: tuple[str, ...]
    seeded: int
    caught: int
    blocker_seeded: int
    blocker_caught: int
    rule_matched: int | None  # caught seeds that cited the right rule (None: not recoverable)
    comments_posted: int
    false_positives_on_clean: int
    untagged_findings: int
    invalid_rule_ids: int
    by_stack: Mapping[str, StackScore] = field(default_factory=dict)
    regression: tuple[str, ...] = ()
    source: str = ""  # file:line it was imported from
    imported_at: str = ""

    @property
    def silent(self) -> bool:
        """No reviewer comment at all: Redline recorded recall 0, this product calls it silent."""
        return self.comments_posted == 0

    @property
    def identity(self) -> tuple[str, int | None, str]:
        return self.repo, self.pr, self.scored_at


def _count(obj: Mapping[str, Any], key: str, where: str, default: int | None = None) -> int:
    value = obj.get(key)
    if value is None and default is not None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < 0 or value > 2**53:
        raise LegacyError(f"{where}{key}: expected a count (an integer >= 0)")
    return value


def _text(value: Any) -> str:
    """Outside text kept for display: one line, bounded, no control characters."""
    return re.sub(r"[\x00-\x1f\x7f]+", " ", str(value))[:MAX_TEXT]


def is_iso_time(text: str) -> bool:
    """An ISO-8601 time on a real calendar day, with hours, minutes, seconds and offset in
    range: the shape alone let ``2025-13-45T99:99:99Z`` into the legacy series, where it
    sorted after every real run."""
    m = _WHEN.match(text)
    if not m or not is_iso_date(text[:10]):
        return False
    hour, minute, second, off_h, off_m = (int(g) if g else 0 for g in m.groups())
    return hour <= 23 and minute <= 59 and second <= 59 and off_h <= 23 and off_m <= 59


def parse_redline(obj: Any) -> LegacyRun:
    """One ``seed-scores.jsonl`` object as written by Redline's scorer; LegacyError names what
    is wrong. Rates are recomputed from the counts (Redline rounds them to 3 places)."""
    if not isinstance(obj, Mapping):
        raise LegacyError("not a JSON object")
    repo, when = obj.get("repo"), obj.get("scored_at")
    if not isinstance(repo, str) or not _REPO.match(repo):
        raise LegacyError("repo: expected owner/name")
    if not isinstance(when, str) or not is_iso_time(when):
        raise LegacyError("scored_at: expected an ISO-8601 time that exists (2025-13-45T99:99:99Z does not)")
    pr = obj.get("pr")
    if pr is not None and (isinstance(pr, bool) or not isinstance(pr, int) or pr < 0):
        raise LegacyError("pr: expected a PR number")
    totals = obj.get("totals")
    if not isinstance(totals, Mapping):
        raise LegacyError("totals: expected an object")
    seeded = _count(totals, "seeded", "totals.")
    caught = _count(totals, "caught", "totals.")
    b_seeded = _count(totals, "blocker_seeded", "totals.", 0)
    b_caught = _count(totals, "blocker_caught", "totals.", 0)
    if caught > seeded or b_caught > b_seeded:
        raise LegacyError("totals: more caught than seeded")
    attribution = totals.get("rule_attribution")
    matched: int | None = None
    if isinstance(attribution, (int, float)) and not isinstance(attribution, bool) and math.isfinite(attribution):
        matched = min(caught, max(0, round(attribution * caught)))
    stacks: dict[str, StackScore] = {}
    raw_stacks = obj.get("by_stack")
    if isinstance(raw_stacks, Mapping):
        for name, row in list(raw_stacks.items())[:MAX_STACKS]:
            if not isinstance(row, Mapping):
                raise LegacyError(f"by_stack.{_text(name)[:40]}: expected an object")
            where = f"by_stack.{_text(name)[:40]}."
            total, got = _count(row, "total", where), _count(row, "caught", where)
            stacks[_text(name)[:60]] = StackScore(total, got, _count(row, "ruleMatched", where, 0))
    reviewers = obj.get("reviewers")
    regression = obj.get("regression")
    drops = regression.get("drops") if isinstance(regression, Mapping) else None
    version = obj.get("standards_version")
    return LegacyRun(
        scored_at=when, repo=repo, pr=pr,
        standards_version=_text(version) if isinstance(version, (str, int, float)) else None,
        reviewers=tuple(_text(r) for r in reviewers[:20]) if isinstance(reviewers, list) else (),
        seeded=seeded, caught=caught, blocker_seeded=b_seeded, blocker_caught=b_caught, rule_matched=matched,
        comments_posted=_count(totals, "comments_posted", "totals.", 0),
        false_positives_on_clean=_count(totals, "false_positives_on_clean", "totals.", 0),
        untagged_findings=_count(totals, "untagged_findings", "totals.", 0),
        invalid_rule_ids=_count(totals, "invalid_rule_ids", "totals.", 0),
        by_stack=stacks,
        regression=tuple(_text(d) for d in drops[:20]) if isinstance(drops, list) else (),
    )


def to_stored(run: LegacyRun) -> dict[str, Any]:
    """The line the legacy series file holds: tagged, so no reader takes it for a record."""
    return {
        "schema": LEGACY_SCHEMA, "series": SERIES, "source": run.source, "imported_at": run.imported_at,
        "scored_at": run.scored_at, "repo": run.repo, "pr": run.pr, "standards_version": run.standards_version,
        "reviewers": list(run.reviewers), "seeded": run.seeded, "caught": run.caught,
        "blocker_seeded": run.blocker_seeded, "blocker_caught": run.blocker_caught,
        "rule_matched": run.rule_matched, "comments_posted": run.comments_posted,
        "false_positives_on_clean": run.false_positives_on_clean, "untagged_findings": run.untagged_findings,
        "invalid_rule_ids": run.invalid_rule_ids, "silent": run.silent,
        "by_stack": {k: {"total": v.total, "caught": v.caught, "rule_matched": v.rule_matched}
                     for k, v in run.by_stack.items()},
        "regression": list(run.regression),
    }


def from_stored(obj: Any) -> LegacyRun:
    """A stored legacy line back; LegacyError when it is not one."""
    if not isinstance(obj, Mapping) or obj.get("schema") != LEGACY_SCHEMA:
        raise LegacyError(f"not a {LEGACY_SCHEMA} line")
    shaped = {
        "repo": obj.get("repo"), "pr": obj.get("pr"), "scored_at": obj.get("scored_at"),
        "standards_version": obj.get("standards_version"), "reviewers": obj.get("reviewers"),
        "totals": {k: obj.get(k) for k in ("seeded", "caught", "blocker_seeded", "blocker_caught",
                                            "comments_posted", "false_positives_on_clean",
                                            "untagged_findings", "invalid_rule_ids")},
        "by_stack": {k: {"total": v.get("total"), "caught": v.get("caught"), "ruleMatched": v.get("rule_matched")}
                     for k, v in (obj.get("by_stack") or {}).items() if isinstance(v, Mapping)}
        if isinstance(obj.get("by_stack"), Mapping) else None,
        "regression": {"drops": obj.get("regression")},
    }
    run = parse_redline(shaped)
    matched = obj.get("rule_matched")
    ok = isinstance(matched, int) and not isinstance(matched, bool) and 0 <= matched <= run.caught
    return LegacyRun(**{**run.__dict__, "rule_matched": matched if ok else None,
                        "source": _text(obj.get("source") or ""), "imported_at": _text(obj.get("imported_at") or "")})


# --------------------------------------------------------------------------- the report section

HEADING = "Imported Redline history (legacy series)"
EXPLAINER = (
    "Scores Redline's score-seeds.mjs recorded before the switch, shown as they were. They are a "
    "separate series: never gated, never a baseline, and not comparable with the runs above (Redline "
    "matched from the marker comment, counted replies and LEFT-side comments, and scored silence as 0).")
TABLE_HEAD = ("scored", "repo", "PR", "reviewers", "BLOCKER recall", "recall", "rule attribution",
              "clean FPs", "standards", "note")


def _since(runs: Iterable[LegacyRun], since: str | None) -> list[LegacyRun]:
    return sorted((r for r in runs if since is None or r.scored_at[:10] >= since),
                  key=lambda r: (r.repo, r.scored_at, r.pr or 0))


def legacy_rows(runs: Sequence[LegacyRun], since: str | None = None) -> list[list[str]]:
    """The section's table as plain text cells (each renderer escapes them its own way)."""
    rows: list[list[str]] = []
    for r in _since(runs, since):
        notes: list[str] = []
        if r.silent:
            notes.append("no reviewer comment: Redline recorded 0, this product would record silent")
        if r.regression:
            notes.append("regression: " + "; ".join(r.regression))
        attribution = "—" if r.rule_matched is None or not r.caught else fmt_rate(r.rule_matched, r.caught, None)
        rows.append([
            r.scored_at[:10], r.repo, f"#{r.pr}" if r.pr is not None else "—", ", ".join(r.reviewers) or "—",
            "—" if r.silent else fmt_rate(r.blocker_caught, r.blocker_seeded,
                                          wilson(r.blocker_caught, r.blocker_seeded)),
            "—" if r.silent else fmt_rate(r.caught, r.seeded, wilson(r.caught, r.seeded)),
            "—" if r.silent else attribution,
            "—" if r.silent else str(r.false_positives_on_clean),
            r.standards_version or "—", " · ".join(notes),
        ])
    return rows


def legacy_json(runs: Sequence[LegacyRun], since: str | None = None) -> list[dict[str, Any]]:
    return [to_stored(r) for r in _since(runs, since)]
