"""The scoreboard as a static folder: ``index.html`` plus one SVG per chart. Edge module.

Why static files and SVG: the folder is uploaded as an Actions artifact or pushed to a
Pages branch and must open from disk with no network — no CDN, no script, no web font.
The CSS is inline, charts are plain ``<img>`` files next to the page, and every number a
chart shows is also in a table beside it (with its n), for readers who cannot see it.

The charts are drawn as SVG text by :mod:`~redline_canary.report.charts` (pure, no
plotting library: docs/scoreboard.md#charts); this module only writes the files.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from redline_canary.errors import BadInput
from redline_canary.report.charts import STATE_COLOURS, comparison_svg, heatmap_svg, trend_svg
from redline_canary.report.gap import HEAD as GAP_HEAD
from redline_canary.report.gap import NOTE as GAP_NOTE
from redline_canary.report.gap import TITLE as GAP_TITLE
from redline_canary.report.gap import VARIANT_HEAD, VARIANT_TITLE, gap_rows, gap_sentences, gaps, variant_rows
from redline_canary.report.legacy import EXPLAINER as LEGACY_EXPLAINER
from redline_canary.report.legacy import HEADING as LEGACY_HEADING
from redline_canary.report.legacy import TABLE_HEAD as LEGACY_HEAD
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
from redline_canary.report.text import terminal_safe

_STATE_COLOURS = [STATE_COLOURS[k] for k in (NONE, "missed", "undercalled", "caught")]
# The Markdown legend uses emoji; a page must not depend on an emoji font being present.
_HEAT_LEGEND = " · ".join(
    f'<span class=swatch style="background:{colour}"></span>{label}' for colour, label in zip(
        _STATE_COLOURS, ("not measured (gap, or seed not in that corpus)", "missed",
                         "undercalled (found, rated too low)", "caught"), strict=True))

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1f2328;background:#fff}
main{max-width:1180px;margin:0 auto;padding:16px 24px 48px}
h1{font-size:1.6em;margin:.4em 0}h2{border-bottom:1px solid #d0d7de;padding-bottom:.2em;margin-top:2em}
h3{margin-top:1.6em}
table{border-collapse:collapse;margin:.6em 0 1em;font-size:13px}
th,td{border:1px solid #d0d7de;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f6f8fa}tr.gap td{color:#6e7781;font-style:italic}
tr.fpchange td{border-top:3px double #1f2328}
.pass{color:#1a7f37;font-weight:600}.fail{color:#cf222e;font-weight:600}
.note{color:#57606a}.warn{background:#fff8c5;border:1px solid #d4a72c;padding:8px 12px;border-radius:6px}
figure{margin:.8em 0}figure img{display:block;width:100%;height:auto;border:1px solid #eaeef2}
figcaption{color:#57606a;font-size:12px}
code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px}
nav ul{columns:2;padding-left:1.2em}
.cls-newly-missed{color:#cf222e;font-weight:600}.cls-never-caught{color:#8c959f}
.cls-intermittent{color:#9a6700}.cls-always-caught{color:#1a7f37}
.swatch{display:inline-block;width:10px;height:10px;margin-right:4px;border:1px solid #8c959f;vertical-align:middle}
"""


def _slug(index: int, t: TargetReport) -> str:
    return f"t{index:03d}-" + re.sub(r"[^A-Za-z0-9]+", "-", f"{t.repo}-{t.stack}-{t.reviewer}").strip("-")[:60]


def _e(text: object) -> str:
    """Record text in HTML, text or attribute alike: control characters stripped (an SVG
    or XHTML reader rejects them), then ``& < > " '`` escaped."""
    return html.escape(terminal_safe(text, multiline=True), quote=True)


# --------------------------------------------------------------------------- HTML


def _rate_cell(m: Measurement | None, what: str) -> str:
    if m is None:
        return "—"
    if not m.scored:
        return f"<span class=note>{_e(m.outcome)} — not measured</span>"
    if what == "recall":
        return _e(m.recall.text()) if m.recall else "—"
    if what == "blocker":
        return _e(m.blocker.text()) if m.blocker else "—"
    if what == "cfp":
        return _e(m.clean_false_positives)
    return _e(m.undercalled)


def _gate_cell(run: RunPoint) -> str:
    acked = (" " + _e("(acknowledged: " + ", ".join(f"SEED {n}" for n in run.acknowledged) + ")")
             if run.acknowledged else "")
    if run.gate_passed:
        return "<span class=pass>PASS</span>" + acked
    return "<span class=fail>FAIL</span> " + _e("; ".join(run.gate_reasons)) + acked


def _outcome_cell(run: RunPoint) -> str:
    parts = []
    for m in (run.seeded, run.clean):
        if m is not None:
            notice = f" ({m.notice})" if m.notice and not m.scored else ""
            parts.append(f"{m.kind} {m.outcome}{notice}")
    return _e(" · ".join(parts))


def _table(head: Sequence[str], rows: Sequence[tuple[str, Sequence[str]]], caption: str = "") -> str:
    """``rows`` are (css class, already-escaped cells)."""
    out = ["<table>"]
    if caption:
        out.append(f"<caption class=note>{_e(caption)}</caption>")
    out.append("<thead><tr>" + "".join(f"<th>{_e(h)}</th>" for h in head) + "</tr></thead><tbody>")
    for cls, cells in rows:
        attr = f' class="{cls}"' if cls else ""
        out.append(f"<tr{attr}>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    out.append("</tbody></table>")
    return "\n".join(out)


def _latest_section(report: Report, anchors: Sequence[str]) -> str:
    rows = []
    for t, anchor in zip(report.targets, anchors, strict=True):
        r = t.latest
        rows.append(("", [
            f'<a href="#{anchor}">{_e(t.repo)} · {_e(t.stack)}</a>', _e(t.reviewer),
            f"{_e(r.run_id)}<br><span class=note>{_e(r.date)}</span>", _outcome_cell(r),
            _rate_cell(r.seeded, "blocker"), _rate_cell(r.seeded, "recall"),
            _rate_cell(r.seeded, "undercalled"), _rate_cell(r.clean, "cfp"), _gate_cell(r),
            f"<code>{_e(r.fingerprint)}</code>",
        ]))
    return _table(["Target", "Reviewer", "Run", "Outcome", "Blocker recall (caught/n)",
                   "Recall (Wilson 95% CI)", "Undercalled", "Clean false positives", "Gate", "Corpus"],
                  rows)


def _runs_table(t: TargetReport) -> str:
    rows = []
    for r in reversed(t.runs):
        cls = " ".join(c for c, on in (("gap", r.gap), ("fpchange", r.fingerprint_changed)) if on)
        corpus = f"<code>{_e(r.fingerprint)}</code>" + (" ⚑ corpus changed" if r.fingerprint_changed else "")
        rows.append((cls, [_e(r.date), _e(r.run_id), corpus, _outcome_cell(r), _rate_cell(r.seeded, "blocker"),
                           _rate_cell(r.seeded, "recall"), _rate_cell(r.clean, "cfp"), _gate_cell(r)]))
    return _table(["Date", "Run", "Corpus", "Outcome", "Blocker recall", "Recall", "Clean FPs", "Gate"], rows,
                  "Newest first. A double rule marks a corpus change: rows on either side are not comparable.")


def _seeds_table(t: TargetReport) -> str:
    order = {c: i for i, c in enumerate(SEED_CLASSES)}
    rows = []
    for s in sorted(t.seeds, key=lambda s: (order[s.seed_class], s.seed.n)):
        cls = "cls-" + s.seed_class.replace(" ", "-")
        rows.append(("", [
            f"SEED {s.seed.n}", _e(s.seed.text()), f"<span class={cls}>{_e(s.seed_class)}</span>",
            f"{s.caught}/{s.observed}", _e(s.undercalled), _e(s.missed),
        ]))
    return _table(["Seed", "Where, severity, rule", "Class", "Caught (of measured runs)", "Undercalled",
                   "Missed"], rows)


def _comparison_section(c: Comparison, chart: str | None) -> str:
    parts = [f"<h3>{_e(c.stack)} · corpus <code>{_e(c.fingerprint)}</code></h3>"]
    rows = [("", [_e(s.reviewer), _e(", ".join(s.repos)), _e(s.runs), _e(s.gaps),
                  f"{_e(s.latest_recall.text())} <span class=note>[{_e(s.latest_run_id)}]</span>",
                  _e(s.blockers_text())]) for s in c.reviewers]
    parts.append(_table(["Reviewer", "Repos", "Scored runs", "Gaps", "Latest recall", "Latest BLOCKERs"],
                        rows))
    if chart:
        parts.append(f'<figure><img src="{_e(chart)}" alt="per-seed catch rate by reviewer, {_e(c.stack)}">'
                     "<figcaption>Per-seed catch rate of each reviewer on this corpus.</figcaption></figure>")
    for p in c.pairs:
        summary = (f"{p.a} vs {p.b}: paired over {p.seeds_compared} seeds measured by both — {p.a} catches "
                   f"more often on {p.a_better}, {p.b} on {p.b_better}, tied on {p.tied}")
        if p.mean_diff is not None:
            summary += f"; mean per-seed difference {p.mean_diff:+.2f} (n={p.seeds_compared})"
        if p.sign_test_p is not None:
            summary += f"; sign test p = {p.sign_test_p:.3g}"
        parts.append(f"<p>{_e(summary)}.</p>")
        if p.differing:
            parts.append(_table(
                ["Seed", "Where, severity, rule", f"{p.a} caught", f"{p.b} caught", "Difference"],
                [("", [f"SEED {d.seed.n}", _e(d.seed.text()), f"{d.a[0]}/{d.a[1]}", f"{d.b[0]}/{d.b[1]}",
                       f"{d.diff:+.2f}"]) for d in p.differing]))
    return "\n".join(parts)


def _draw_all(jobs: Sequence[tuple[str, Any, str]]) -> list[str]:
    """Each chart's SVG text, drawn in memory (a few milliseconds each: no worker
    processes); the caller writes them through the safe writer."""
    figures: dict[str, Callable[[Any], str]] = {"trend": trend_svg, "seeds": heatmap_svg, "compare": comparison_svg}
    return [figures[kind](data) for kind, data, _path in jobs]


def write_file(path: Path, text: str) -> None:
    """A plain write for tests, which name it; the command passes the safe writer. Its
    failure (a full disk, a read-only folder) is a one-line error naming the file."""
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise BadInput(f"{path}: cannot write the HTML report ({exc.strerror or exc.__class__.__name__})") from None


def render_html(report: Report, out_dir: Path | str, *, write: Callable[[Path, str], None]) -> list[Path]:
    """Write ``index.html`` and ``charts/*.svg`` under ``out_dir`` through ``write`` (the
    command passes the safe writer); returns the files.

    Old ``charts/*.svg`` files are removed first so a target that left the window does
    not leave a stale chart behind; nothing else in ``out_dir`` is touched.
    """
    out = Path(out_dir)
    charts = out / "charts"
    try:
        charts.mkdir(parents=True, exist_ok=True)
        for old in charts.glob("*.svg"):
            old.unlink()
    except OSError as exc:
        raise BadInput(f"{out}: cannot write the HTML report ({exc.strerror})") from None
    jobs: list[tuple[str, Any, str]] = []
    anchors = [_slug(i, t) for i, t in enumerate(report.targets)]
    body: list[str] = []
    for t, anchor in zip(report.targets, anchors, strict=True):
        trend = f"charts/{anchor}-trend.svg"
        jobs.append(("trend", t, str(out / trend)))
        section = [f'<section id="{anchor}"><h3>{_e(t.label)}</h3>',
                   f'<figure><img src="{trend}" alt="trend of recall, blocker recall and clean '
                   f'false positives for {_e(t.label)}"><figcaption>Bands are Wilson 95% intervals. Grey '
                   "bands are runs with nothing measured (silent/error/cancelled), never zeros; a dashed "
                   "line is a corpus change.</figcaption></figure>",
                   f"<details><summary>All {len(t.runs)} runs</summary>{_runs_table(t)}</details>"]
        if t.seeds:
            heat = f"charts/{anchor}-seeds.svg"
            jobs.append(("seeds", t, str(out / heat)))
            section += [f'<figure><img src="{heat}" alt="per-seed heat map for {_e(t.label)}">'
                        f"<figcaption>{_HEAT_LEGEND}</figcaption></figure>", _seeds_table(t)]
        else:
            section.append("<p class=note>No scored seeded run in the window.</p>")
        section.append("</section>")
        body.append("\n".join(section))
    compare_parts = []
    charted: set[str] = set()
    for i, c in enumerate(report.comparisons):
        chart = None
        if c.stack not in charted:  # the newest corpus of each stack gets a chart; older ones a table
            charted.add(c.stack)
            chart = f"charts/c{i:03d}-{re.sub(r'[^A-Za-z0-9]+', '-', c.stack)[:40]}.svg"
            jobs.append(("compare", c, str(out / chart)))
        compare_parts.append(_comparison_section(c, chart))
    for (_, _, path), svg in zip(jobs, _draw_all(jobs), strict=True):
        write(Path(path), svg)
    index = out / "index.html"
    write(index, _page(report, anchors, body, compare_parts))
    return [Path(path) for _, _, path in jobs] + [index]


def _page(report: Report, anchors: Sequence[str], targets: Sequence[str], compare: Sequence[str]) -> str:
    window = f"{report.first[:10]} → {report.last[:10]}" if report.first and report.last else "empty"
    head = [
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>redline-canary scoreboard</title>", f"<style>{_CSS}</style></head><body><main>",
        "<h1>redline-canary scoreboard</h1>",
        f"<p>{report.records_used} records · {len(report.targets)} targets · window {_e(window)}"
        + (f" (since {_e(report.since)})" if report.since else "") + ".</p>",
    ]
    if report.skipped:
        items = "".join(f"<li>{_e(s)}</li>" for s in report.skipped[:200])
        more = f"<li>… and {len(report.skipped) - 200} more</li>" if len(report.skipped) > 200 else ""
        head.append(f"<div class=warn>{len(report.skipped)} history line(s)/record(s) skipped, not counted:"
                    f"<ul>{items}{more}</ul></div>")
    if not report.targets:
        return "\n".join([*head, "<p>No records in the window.</p>", *_legacy(report), "</main></body></html>"])
    toc = "".join(f'<li><a href="#{a}">{_e(t.label)}</a></li>' for t, a in zip(report.targets, anchors, strict=True))
    parts = [
        *head, f"<nav><ul>{toc}</ul></nav>",
        "<h2>Latest run</h2>", _latest_section(report, anchors),
        "<h2>Targets: trends and seeds</h2>",
        "<p class=note>Seed classes over the window: <b>always caught</b> in every measured run; <b>never "
        "caught</b> in none; <b>newly missed</b>: caught, then not caught in every run since the first "
        "miss; <b>intermittent</b>: anything else. Undercalled counts as not caught.</p>",
        *targets,
    ]
    if report.calibration:
        parts += ["<h2>Calibration</h2>",
                  "<p class=note>Per reviewer: the marker's severity (rows) against the level the reviewer gave "
                  "it (columns), over every final seeded run in the window. Right of the diagonal is "
                  "<i>found, rated lower</i>.</p>"]
        for name, table in sorted(report.calibration.items()):
            head, rows = calibration_view(table)
            parts.append(_table(head, [("", [_e(c) for c in cells]) for cells in rows], caption=name))
    parts += _gap(report)
    if compare:
        parts += ["<h2>Cross-reviewer</h2>",
                  "<p class=note>Reviewers measured on the same stack and corpus fingerprint; per-seed catch "
                  "counts over all their scored runs in the window.</p>", *compare]
    parts += _legacy(report)
    parts.append("</main></body></html>")
    return "\n".join(parts)


def _gap(report: Report) -> list[str]:
    """Public vs private, canonical vs variant, and recall per variant (report.gap)."""
    found = gaps(report.observations)
    parts: list[str] = []
    if found:
        parts += [f"<h2>{_e(GAP_TITLE)}</h2>", f"<p class=note>{_e(GAP_NOTE)}</p>",
                  _table(GAP_HEAD, [("", [_e(c) for c in cells]) for cells in gap_rows(found)]),
                  "<ul>" + "".join(f"<li>{_e(s)}</li>" for s in gap_sentences(found)) + "</ul>"]
    per_variant = variant_rows(report.observations)
    if per_variant:
        parts += [f"<h3>{_e(VARIANT_TITLE)}</h3>",
                  _table(VARIANT_HEAD, [("", [_e(c) for c in cells]) for cells in per_variant])]
    return parts


def _legacy(report: Report) -> list[str]:
    """The imported Redline history, last and apart (legacy_model)."""
    if not report.legacy:
        return []
    return [f"<h2>{_e(LEGACY_HEADING)}</h2>", f"<p class=note>{_e(LEGACY_EXPLAINER)}</p>",
            _table(LEGACY_HEAD, [("", [_e(c) for c in row]) for row in report.legacy])]
