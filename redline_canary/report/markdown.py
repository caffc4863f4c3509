"""The scoreboard as Markdown (``report --markdown``, the job summary): tables of the latest
runs, trends, the per-seed heat map and the cross-reviewer view, fitted under GitHub's 1 MiB
summary limit. Pure: it renders a :class:`~redline_canary.report.model.Report`, every record
field escaped for Markdown on its own.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from redline_canary.report.gap import HEAD as GAP_HEAD
from redline_canary.report.gap import NOTE as GAP_NOTE
from redline_canary.report.gap import TITLE as GAP_TITLE
from redline_canary.report.gap import (
    VARIANT_HEAD,
    VARIANT_TITLE,
    Observation,
    gap_rows,
    gap_sentences,
    gaps,
    variant_rows,
)
from redline_canary.report.legacy import EXPLAINER as LEGACY_EXPLAINER
from redline_canary.report.legacy import HEADING as LEGACY_HEADING
from redline_canary.report.legacy import TABLE_HEAD as LEGACY_HEAD
from redline_canary.report.markdown_fit import SUMMARY_LIMIT, drop_sections, size
from redline_canary.report.model import (
    NONE,
    SEED_CLASSES,
    Comparison,
    Measurement,
    Report,
    RunPoint,
    TargetReport,
)
from redline_canary.report.stats import calibration_view
from redline_canary.report.text import md_code, md_text

MARKDOWN_LIMIT = SUMMARY_LIMIT  # GitHub's job summary limit
DEFAULT_MARKDOWN_RUNS = 12
_CELL = {"caught": "🟩", "undercalled": "🟨", "missed": "🟥", NONE: "⬜"}
LEGEND = "🟩 caught · 🟨 undercalled (found, rated too low) · 🟥 missed · ⬜ not measured"



def _md(text: object) -> str:
    """Record text in Markdown (:func:`render.md_text`): no HTML, link, image, autolink,
    table break or line break. Applied to each outside field, never to a whole cell, so
    the markup this module adds around them stays markup."""
    return md_text(text)


def _row(cells: Iterable[str]) -> str:
    """A table row of cells that are already escaped."""
    return "| " + " | ".join(cells) + " |"


def _measure_text(m: Measurement | None, what: str) -> str:
    if m is None:
        return "—"
    if not m.scored:
        return f"⛔ {_md(m.outcome)} (not measured)"
    # Numbers this module formatted: nothing to escape.
    if what == "recall":
        return m.recall.text() if m.recall else "—"
    if what == "blocker":
        return m.blocker.text() if m.blocker else "—"
    if what == "cfp":
        return str(m.clean_false_positives)
    return str(m.undercalled)


def _outcome_text(run: RunPoint) -> str:
    parts = []
    for m in (run.seeded, run.clean):
        if m is not None:
            note = f" ({_md(m.notice)})" if m.notice and not m.scored else ""
            parts.append(f"{_md(m.kind)} {_md(m.outcome)}{note}")
    return " · ".join(parts) or "—"


def _gate_text(run: RunPoint) -> str:
    acked = (" (acknowledged: " + ", ".join(f"SEED {n}" for n in run.acknowledged) + ")"
             if run.acknowledged else "")
    if run.gate_passed:
        return "✅ PASS" + acked
    return "❌ FAIL: " + "; ".join(_md(r) for r in run.gate_reasons) + acked


def _latest_table(report: Report) -> list[str]:
    lines = [
        "| Target | Reviewer | Run | Outcome | Blocker recall (caught/n) | Recall (Wilson 95% CI) "
        "| Undercalled | Clean false positives | Gate | Corpus |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for t in report.targets:
        run = t.latest
        lines.append(_row((
            f"{_md(t.repo)} · {_md(t.stack)}", _md(t.reviewer), f"{_md(run.run_id)} ({_md(run.date)})",
            _outcome_text(run), _measure_text(run.seeded, "blocker"), _measure_text(run.seeded, "recall"),
            _measure_text(run.seeded, "undercalled"), _measure_text(run.clean, "cfp"),
            _gate_text(run), md_code(run.fingerprint),
        )))
    return lines


def _trend_table(t: TargetReport, max_runs: int) -> list[str]:
    shown = t.runs[-max_runs:]
    lines = []
    if len(t.runs) > len(shown):
        lines.append(f"_Last {len(shown)} of {len(t.runs)} runs; the HTML report charts them all._")
        lines.append("")
    lines += ["| Date | Run | Corpus | Blocker recall | Recall | Clean false positives | Gate |",
              "|---|---|---|---|---|---|---|"]
    for i, run in enumerate(shown):
        if run.fingerprint_changed:
            corpus = f"⚑ corpus changed → {md_code(run.fingerprint)} (not comparable with earlier rows)"
        else:
            corpus = md_code(run.fingerprint) if i == 0 else "″"
        lines.append(_row((
            _md(run.date), _md(run.run_id), corpus, _measure_text(run.seeded, "blocker"),
            _measure_text(run.seeded, "recall"), _measure_text(run.clean, "cfp"),
            "PASS" if run.gate_passed else "FAIL",
        )))
    gaps = t.gaps
    if gaps:
        lines += ["", "Gaps in the window (nothing measured, not zeros): "
                  + ", ".join(f"{_md(k)} × {v}" for k, v in sorted(gaps.items())) + "."]
    return lines


def _seed_table(t: TargetReport, max_runs: int) -> list[str]:
    if not t.seeds:
        return ["_No scored seeded run in the window._"]
    runs = t.seeded_runs
    k = min(max_runs, len(runs))
    counts = {c: sum(1 for s in t.seeds if s.seed_class == c) for c in SEED_CLASSES}
    lines = [
        "Classes over the window: " + ", ".join(f"{c} {counts[c]}" for c in SEED_CLASSES) + ".",
        "",
        f"| Seed | Class | Caught (of measured runs) | Last {k} seeded runs, oldest → newest |",
        "|---|---|---|---|",
    ]
    order = {c: i for i, c in enumerate(SEED_CLASSES)}
    for row in sorted(t.seeds, key=lambda s: (order[s.seed_class], s.seed.n)):
        strip = "".join(_CELL[c] for c in row.cells[-k:])
        lines.append(_row((
            f"SEED {row.seed.n} {row.seed.markdown()}", row.seed_class,
            f"{row.caught}/{row.observed}", strip,
        )))
    return lines


def _comparison_lines(c: Comparison) -> list[str]:
    lines = [
        f"### {_md(c.stack)} · corpus {md_code(c.fingerprint)}",
        "",
        "| Reviewer | Repos | Scored runs | Gaps | Latest recall | Latest BLOCKERs |",
        "|---|---|---|---|---|---|",
    ]
    for s in c.reviewers:
        lines.append(_row((
            _md(s.reviewer), ", ".join(_md(r) for r in s.repos), str(s.runs), str(s.gaps),
            f"{s.latest_recall.text()} \\[{_md(s.latest_run_id)}\\]", s.blockers_text(),
        )))
    for p in c.pairs:
        a, b = _md(p.a), _md(p.b)
        lines += ["", f"**{a} vs {b}** — paired over {p.seeds_compared} seeds measured by both: "
                  f"{a} catches more often on {p.a_better}, {b} on {p.b_better}, tied on {p.tied}"
                  + (f"; mean per-seed difference {p.mean_diff:+.2f} (n={p.seeds_compared})"
                     if p.mean_diff is not None else "")
                  + (f"; sign test p = {p.sign_test_p:.3g}" if p.sign_test_p is not None else "")
                  + "."]
        if p.differing:
            lines += ["", f"| Seed | {a} caught | {b} caught | Difference |",
                      "|---|---|---|---|"]
            for d in p.differing:
                lines.append(_row((
                    f"SEED {d.seed.n} {d.seed.markdown()}", f"{d.a[0]}/{d.a[1]}", f"{d.b[0]}/{d.b[1]}",
                    f"{d.diff:+.2f}",
                )))
    return lines


def _calibration_table(table: Mapping[str, Mapping[str, int]]) -> list[str]:
    head, rows = calibration_view(table)
    return [_row(head), _row("---" for _ in head), *(_row(cells) for cells in rows)]


def _sections(report: Report, max_runs: int) -> list[list[str]]:
    window = f"{_md(report.first[:10])} → {_md(report.last[:10])}" if report.first and report.last else "empty"
    head = ["# redline-canary scoreboard", "",
            f"{report.records_used} records · {len(report.targets)} targets · window {window}"
            + (f" (since {_md(report.since)})" if report.since else "") + "."]
    if report.skipped:
        head += ["", f"⚠️ {len(report.skipped)} history line(s)/record(s) skipped, not counted:"]
        head += [f"- {_md(s)}" for s in report.skipped[:20]]
        if len(report.skipped) > 20:
            head.append(f"- … and {len(report.skipped) - 20} more (listed on stderr)")
    if not report.targets:
        return [[*head, "", "_No records in the window._"], *_legacy(report)]
    sections = [head, ["", "## Latest run", "", *_latest_table(report)]]
    sections.append(["", "## Trends", "",
                     "Silent, error and cancelled runs are gaps (nothing was measured), never "
                     "zeros. ⚑ marks a corpus change: numbers on either side are not comparable."])
    sections += [["", f"### {_md(t.label)}", "", *_trend_table(t, max_runs)] for t in report.targets]
    sections.append(["", "## Seeds", "", LEGEND, "",
                     "Classes: **always caught** in every measured run; **never caught** in "
                     "none; **newly missed**: caught, then not caught in every run since the "
                     "first miss; **intermittent**: anything else."])
    sections += [["", f"### {_md(t.label)}", "", *_seed_table(t, max_runs)] for t in report.targets]
    if report.calibration:
        sections.append(["", "## Calibration", "",
                         "Per reviewer, every seed of every final seeded run in the window: the marker's "
                         "severity (rows) against the level the reviewer gave it (columns). Off the "
                         "diagonal to the right is *found, rated lower*: what `blocker-gate: found` forgives."])
        sections += [["", f"### {_md(name)}", "", *_calibration_table(rows)]
                     for name, rows in sorted(report.calibration.items())]
    sections += gap_lines(report.observations)
    if report.comparisons:
        sections.append(["", "## Cross-reviewer", "",
                         "Reviewers measured on the same stack and corpus fingerprint; per-seed "
                         "catch counts over all their scored runs in the window."])
        sections += [["", *_comparison_lines(c)] for c in report.comparisons]
    return [*sections, *_legacy(report)]


def gap_lines(observations: Sequence[Observation], level: str = "##") -> list[list[str]]:
    """Public vs private and canonical vs variant (report.gap), and recall per variant; nothing
    when no run measured a private stack or published a variant. The job summary draws it too."""
    found = gaps(observations)
    out: list[list[str]] = []
    if found:
        out.append(["", f"{level} {GAP_TITLE}", "", GAP_NOTE, "",
                    _row(GAP_HEAD), _row("---" for _ in GAP_HEAD),
                    *(_row(_md(c) for c in cells) for cells in gap_rows(found)), "",
                    *(f"- {_md(s)}" for s in gap_sentences(found))])
    per_variant = variant_rows(observations)
    if per_variant:
        out.append(["", f"{level}# {VARIANT_TITLE}", "", _row(VARIANT_HEAD), _row("---" for _ in VARIANT_HEAD),
                    *(_row(_md(c) for c in cells) for cells in per_variant)])
    return out


def _legacy(report: Report) -> list[list[str]]:
    """The imported Redline history, last and apart: it is never a baseline for the runs above."""
    if not report.legacy:
        return []
    return [["", f"## {LEGACY_HEADING}", "", LEGACY_EXPLAINER, "", _row(LEGACY_HEAD), _row("---" for _ in LEGACY_HEAD),
             *(_row(_md(c) for c in row) for row in report.legacy)]]


def render_markdown(report: Report, max_runs: int = DEFAULT_MARKDOWN_RUNS,
                    limit: int = MARKDOWN_LIMIT) -> str:
    """The Markdown scoreboard, guaranteed to be at most ``limit`` UTF-8 bytes.

    Why the guarantee: GitHub drops a job summary above 1 MiB entirely. The report first
    shows fewer runs per target; if even that does not fit, whole sections are left out
    in order from the end and a closing line says how many.
    """
    for runs in sorted({max_runs, 6, 3, 1}, reverse=True):
        if runs > max_runs:
            continue
        text = "\n".join(line for s in _sections(report, runs) for line in s) + "\n"
        if size(text) <= limit:
            return text
    return drop_sections(_sections(report, 1), limit)
