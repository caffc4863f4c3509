"""The public/private and canonical/variant gap (docs/corpus.md#the-gap), and the layer and variant keys it reads."""

from __future__ import annotations

import json
from typing import Any

from redline_canary.report.build import build_report
from redline_canary.report.gap import Observation, gap_rows, gap_sentences, gaps, variant_rows
from redline_canary.report.job_summary import job_summary
from redline_canary.report.markdown import render_markdown
from redline_canary.score.baseline import comparable_runs
from redline_canary.score.record import Record
from tests.helpers.records import as_record

_SEV = ("BLOCKER", "CRITICAL", "MAJOR", "MINOR", "INFO")


def seeded(run_id: str, *, caught: int, markers: int, blockers: tuple[int, int], reviewer: str = "bot",
           layer: str | None = None, variant: str | None = None, stack: str = "go",
           day: int = 1) -> Record:
    """A seeded record: ``blockers`` = (found, BLOCKER markers)."""
    found, n_b = blockers
    by_sev: dict[str, Any] = {s: {"markers": 0, "caught": 0, "undercalled": 0, "missed": 0} for s in _SEV}
    by_sev["BLOCKER"] = {"markers": n_b, "caught": found, "undercalled": 0, "missed": n_b - found}
    doc: dict[str, Any] = {"schema": 3, "run_id": run_id, "reviewer": reviewer, "stack": stack,
                           "recorded_at": f"2026-11-{day:02d}T10:00:00Z", "markers": markers, "caught": caught,
                           "missed": markers - caught, "by_severity": by_sev, "blocker_found": found / n_b}
    if layer is not None:
        doc["layer"] = layer
    if variant is not None:
        doc["variant"] = variant
    return as_record(doc)


def obs(reviewer: str, layer: str, variant: str, caught: int, markers: int, found: int, n_b: int) -> Observation:
    return Observation(reviewer, "go", layer, variant, markers, caught, n_b, found)


def test_disjoint_intervals_are_said_plainly_with_n() -> None:
    found = gaps([obs("bot", "packaged", "canonical", 58, 60, 20, 20),
                  obs("bot", "ours", "canonical", 15, 60, 4, 20)])
    assert [(g.axis, g.a.side, g.b.side) for g in found] == [("layer", "public", "private")]
    said = gap_sentences(found)
    assert said[0].startswith("bot does better on the public corpus than on private code (BLOCKERs found "
                              "1.00 (20/20, 95% CI")
    assert "vs 0.20 (4/20" in said[0] and "do not overlap" in said[0]
    assert said[1].startswith("bot does better on the public corpus than on private code (recall 0.97 (58/60")
    rows = gap_rows(found)
    assert rows[0][:3] == ["bot", "public", "1"] and rows[1][:3] == ["bot", "private", "1"]
    assert "(15/60" in rows[1][4]


def test_the_other_direction_and_the_variant_axis() -> None:
    found = gaps([obs("bot", "packaged", "canonical", 10, 60, 2, 20),
                  obs("bot", "packaged", "papers", 50, 60, 18, 20)])
    assert [g.axis for g in found] == ["variant"]  # every run is public: no layer comparison
    assert gap_sentences(found)[0].startswith("bot does better on renamed variants than on the canonical files")


def test_overlapping_intervals_are_not_a_finding() -> None:
    found = gaps([obs("bot", "packaged", "canonical", 8, 15, 3, 5), obs("bot", "ours", "canonical", 7, 15, 2, 5)])
    assert len(gap_sentences(found)) == 1 and gap_sentences(found)[0].startswith("No gap outside the noise")


def test_nothing_to_compare_shows_nothing() -> None:
    only_public = [obs("bot", "packaged", "canonical", 8, 15, 3, 5)]
    assert gaps(only_public) == [] and gap_sentences([]) == [] and variant_rows(only_public) == []
    only_private = [obs("bot", "ours", "canonical", 8, 15, 3, 5)]  # a private corpus alone: nothing to set it against
    assert gaps(only_private) == []
    two = gaps([*only_public, *only_private, obs("other", "ours", "canonical", 1, 15, 1, 5)])
    assert [(g.reviewer, g.a.runs, g.b.runs) for g in two] == [("bot", 1, 1)]


def test_recall_per_variant() -> None:
    rows = variant_rows([obs("bot", "packaged", "canonical", 8, 16, 3, 5),
                         obs("bot", "packaged", "papers", 4, 16, 1, 5),
                         obs("bot", "packaged", "papers", 12, 16, 5, 5)])
    assert [r[:4] for r in rows] == [["bot", "go", "canonical", "1"], ["bot", "go", "papers", "2"]]
    assert rows[1][4].startswith("0.50 (16/32")


def test_schema_3_records_read_as_packaged_and_canonical_and_write_back_unchanged() -> None:
    old = seeded("r0", caught=1, markers=2, blockers=(1, 1))
    doc = {**old.to_json(), "schema": 3}
    doc.pop("layer", None)
    doc.pop("variant", None)
    r = Record.from_json(json.loads(json.dumps(doc)))
    assert (r.layer, r.variant) == ("packaged", "canonical")
    assert r.to_json() == doc and "variant" not in r.to_json()
    new = seeded("r1", caught=1, markers=2, blockers=(1, 1), layer="ours", variant="papers")
    assert (new.layer, new.variant) == ("ours", "papers") and new.to_json()["variant"] == "papers"


def test_baseline_comparability_ignores_the_variant() -> None:
    history = [seeded("r1", caught=1, markers=2, blockers=(1, 1), variant="papers", day=1),
               seeded("r2", caught=1, markers=2, blockers=(1, 1), day=2)]
    now = seeded("r3", caught=1, markers=2, blockers=(1, 1), variant="vault", day=3)
    assert [r.run_id for r in comparable_runs(history, now, 5)] == ["r1", "r2"]


def test_the_report_and_the_job_summary_show_the_gap() -> None:
    records = [seeded(f"p{i}", caught=9, markers=10, blockers=(5, 5), day=i + 1) for i in range(4)]
    records += [seeded(f"q{i}", caught=2, markers=10, blockers=(1, 5), layer="ours", stack="billing",
                       reviewer="bot", day=i + 1) for i in range(4)]
    md = render_markdown(build_report(records))
    assert "## Public vs private, canonical vs variant" in md
    assert "| bot | public | 4 | 1.00 (20/20, 95% CI" in md and "| bot | private | 4 | 0.20 (4/20" in md
    assert "bot does better on the public corpus than on private code (BLOCKERs found" in md
    assert "Recall per variant" not in md  # no variant was published
    summary = job_summary(records, 0)
    assert "### Public vs private, canonical vs variant" in summary
    assert "does better on the public corpus than on private code" in summary
    assert "corpus `0123456789abcdef`, layer `ours`, outcome" in summary  # the private PR's detail line
    assert "corpus `0123456789abcdef`, outcome" in summary  # a packaged, canonical one says nothing new


def test_a_history_without_private_stacks_or_variants_renders_as_before() -> None:
    records = [seeded(f"p{i}", caught=9, markers=10, blockers=(5, 5), day=i + 1) for i in range(2)]
    assert "Public vs private" not in render_markdown(build_report(records))
    assert "Public vs private" not in job_summary(records, 0)


def test_a_hostile_reviewer_name_is_escaped_in_the_gap_table() -> None:
    records = [seeded("p", caught=9, markers=10, blockers=(5, 5), reviewer="x|<img src=y>"),
               seeded("q", caught=1, markers=10, blockers=(1, 5), reviewer="x|<img src=y>", layer="ours",
                      stack="b")]
    md = render_markdown(build_report(records))
    gap = md[md.index("## Public vs private"):]
    assert "<img" not in gap and "| x|" not in gap
