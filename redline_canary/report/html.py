"""The scoreboard as a static folder: ``index.html`` plus one SVG per chart. Edge module.

Why static files and SVG: the folder is uploaded as an Actions artifact or pushed to a
Pages branch and must open from disk with no network — no CDN, no script, no web font.
The CSS is inline, charts are plain ``<img>`` files next to the page, and every number a
chart shows is also in a table beside it (with its n), for readers who cannot see it.

matplotlib is an optional extra (``[report]``): only this module needs it, so it is
imported lazily and its absence is a one-line hint rather than a traceback.
"""

from __future__ import annotations

import datetime as dt
import html
import itertools
import multiprocessing
import os
import re
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import TYPE_CHECKING, Any

from redline_canary.errors import BadInput
from redline_canary.report.gap import HEAD as GAP_HEAD
from redline_canary.report.gap import VARIANT_HEAD, gap_rows, gap_sentences, gaps, variant_rows
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

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

INSTALL_HINT = "matplotlib is not installed; the HTML report needs it: pip install 'redline-canary[report]'"

_STATE_CODE = {NONE: 0, "missed": 1, "undercalled": 2, "caught": 3}
_STATE_COLOURS = ["#eeeeee", "#d62728", "#f2b01e", "#2ca02c"]
_GAP_COLOUR = "#9e9e9e"
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
figure{margin:.8em 0}figure img{max-width:100%;height:auto;border:1px solid #eaeef2}
figcaption{color:#57606a;font-size:12px}
code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px}
nav ul{columns:2;padding-left:1.2em}
.cls-newly-missed{color:#cf222e;font-weight:600}.cls-never-caught{color:#8c959f}
.cls-intermittent{color:#9a6700}.cls-always-caught{color:#1a7f37}
.swatch{display:inline-block;width:10px;height:10px;margin-right:4px;border:1px solid #8c959f;vertical-align:middle}
"""


def _matplotlib() -> Any:
    """Import matplotlib on the Agg backend, or fail with the install hint."""
    try:
        import matplotlib
    except ImportError:
        raise BadInput(INSTALL_HINT) from None
    matplotlib.use("Agg")
    return matplotlib


def _when(stamp: str) -> dt.datetime:
    return dt.datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def _slug(index: int, t: TargetReport) -> str:
    return f"t{index:03d}-" + re.sub(r"[^A-Za-z0-9]+", "-", f"{t.repo}-{t.stack}-{t.reviewer}").strip("-")[:60]


def _e(text: object) -> str:
    """Record text in HTML, text or attribute alike: control characters stripped (an SVG
    or XHTML reader rejects them), then ``& < > " '`` escaped."""
    return html.escape(terminal_safe(text, multiline=True), quote=True)


def _label(text: object) -> str:
    """Record text as a matplotlib label: one line, no control characters (they would make
    the SVG invalid XML), and every ``$`` escaped so it is never parsed as mathtext (a
    forged ``$\\foo$`` would stop the render). The SVG writer escapes ``& < >`` itself."""
    return terminal_safe(text).replace("$", "\\$")


# --------------------------------------------------------------------------- charts


def _half_width(xs: Sequence[dt.datetime]) -> dt.timedelta:
    """Half the typical spacing between runs: how wide a gap band is drawn."""
    steps = sorted((b - a) for a, b in itertools.pairwise(xs) if b > a)
    step = steps[len(steps) // 2] if steps else dt.timedelta(days=7)
    return step * 0.25


def _gap_runs(runs: Sequence[RunPoint]) -> list[tuple[int, str]]:
    return [(i, r.gap) for i, r in enumerate(runs) if r.gap]


def _isolated(values: Sequence[float], seg: Sequence[int]) -> list[int]:
    """Points with no measured neighbour in their segment: a line alone would not show them."""
    out = []
    for k, i in enumerate(seg):
        if values[i] != values[i]:
            continue
        before = k > 0 and values[seg[k - 1]] == values[seg[k - 1]]
        after = k + 1 < len(seg) and values[seg[k + 1]] == values[seg[k + 1]]
        if not before and not after:
            out.append(i)
    return out


def _trend_figure(t: TargetReport) -> Figure:
    from matplotlib.collections import PolyCollection
    from matplotlib.dates import AutoDateLocator, ConciseDateFormatter, date2num
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    # Fixed margins, not constrained layout, one collection for all gap bands, markers only
    # on short series, a figure-level title: each halves some part of the draw, and a
    # 20-target, 5-year history must render in seconds.
    fig = Figure(figsize=(11, 5.2))
    top, bottom = fig.subplots(2, 1, sharex=True, gridspec_kw={"height_ratios": [2.2, 1]})
    fig.subplots_adjust(left=0.07, right=0.985, top=0.93, bottom=0.08, hspace=0.06)
    fig.text(0.07, 0.955, _label(t.label), fontsize=11, ha="left", va="bottom")
    runs = t.runs
    xs = [_when(r.recorded_at) for r in runs]
    half = _half_width(xs)
    marker = "o" if len(runs) <= 60 else None
    nan = float("nan")

    def series(m_of: Any) -> tuple[list[float], list[float], list[float]]:
        ys, lo, hi = [], [], []
        for r in runs:
            rate = m_of(r.seeded) if r.seeded is not None and r.seeded.scored else None
            value = rate.value if rate is not None else None
            ys.append(nan if value is None else value)
            ci = rate.ci if rate is not None else None
            lo.append(nan if ci is None else ci[0])
            hi.append(nan if ci is None else ci[1])
        return ys, lo, hi

    # Each corpus fingerprint is its own segment: a line must never join numbers that
    # are not comparable.
    segments: list[list[int]] = []
    for i, r in enumerate(runs):
        if i == 0 or r.fingerprint_changed:
            segments.append([])
        segments[-1].append(i)
    for name, colour, getter in (("recall", "#0969da", lambda m: m.recall),
                                 ("blocker recall", "#cf222e", lambda m: m.blocker)):
        ys, lo, hi = series(getter)
        for k, seg in enumerate(segments):
            sx = [xs[i] for i in seg]
            top.fill_between(sx, [lo[i] for i in seg], [hi[i] for i in seg], color=colour, alpha=0.15,
                             linewidth=0, label=f"{name} 95% CI" if k == 0 else None)
            top.plot(sx, [ys[i] for i in seg], color=colour, marker=marker, markersize=3, linewidth=1.4,
                     label=name if k == 0 else None)
            alone = _isolated(ys, seg)
            if alone and marker is None:
                top.plot([xs[i] for i in alone], [ys[i] for i in alone], color=colour, marker="o",
                         markersize=3, linestyle="none")
            if alone:  # a band needs two points; a lone measurement gets an interval bar
                top.vlines([xs[i] for i in alone], [lo[i] for i in alone], [hi[i] for i in alone],
                           color=colour, alpha=0.35, linewidth=3)
    top.set_ylim(-0.03, 1.08)
    top.set_ylabel("rate (Wilson 95% band)")

    cfp: list[float] = []
    for r in runs:
        c = r.clean
        cfp.append(float(c.clean_false_positives)
                   if c is not None and c.scored and c.clean_false_positives is not None else nan)
    for k, seg in enumerate(segments):
        bottom.plot([xs[i] for i in seg], [cfp[i] for i in seg], color="#8250df", marker="s" if marker else None,
                    markersize=3, linewidth=1.2, label="clean false positives" if k == 0 else None)
        alone = _isolated(cfp, seg)
        if alone and marker is None:
            bottom.plot([xs[i] for i in alone], [cfp[i] for i in alone], color="#8250df", marker="s",
                        markersize=3, linestyle="none")
    bottom.set_ylabel("clean FPs")
    finite = [v for v in cfp if v == v]
    bottom.set_ylim(-0.3, max([*finite, 1.0]) * 1.25 + 0.3)

    gaps = _gap_runs(runs)
    if gaps:
        spans = [(date2num(xs[i] - half), date2num(xs[i] + half))  # type: ignore[no-untyped-call]
                 for i, _ in gaps]
        for ax in (top, bottom):
            ax.add_collection(PolyCollection(
                [[(a, 0), (a, 1), (b, 1), (b, 0)] for a, b in spans], transform=ax.get_xaxis_transform(),
                facecolor=_GAP_COLOUR, alpha=0.35, edgecolor="none"), autolim=False)
        if len(gaps) <= 30:
            for i, what in gaps:
                top.text(xs[i], 1.06, _label(what), rotation=90, ha="center", va="top", fontsize=7, color="#57606a")
    for i, r in enumerate(runs):
        if r.fingerprint_changed:
            x = xs[i - 1] + (xs[i] - xs[i - 1]) / 2
            for ax in (top, bottom):
                ax.axvline(x, color="#1f2328", linestyle="--", linewidth=1)
            top.text(x, 0.02, _label(f" corpus → {r.fingerprint[:8]}"), rotation=90, ha="right", va="bottom",
                     fontsize=7)
    handles, labels = top.get_legend_handles_labels()
    if gaps:
        handles.append(Patch(facecolor=_GAP_COLOUR, alpha=0.35))
        labels.append(_label("not measured: " + ", ".join(f"{k} × {v}" for k, v in sorted(t.gaps.items()))))
    if any(r.fingerprint_changed for r in runs):
        handles.append(Line2D([], [], color="#1f2328", linestyle="--"))
        labels.append("corpus changed (not comparable across)")
    top.legend(handles, labels, loc="lower left", fontsize=7, ncols=3, framealpha=0.9)
    bottom.legend(loc="upper left", fontsize=7)
    locator = AutoDateLocator(maxticks=12)  # type: ignore[no-untyped-call]
    bottom.xaxis.set_major_locator(locator)
    bottom.xaxis.set_major_formatter(ConciseDateFormatter(locator))  # type: ignore[no-untyped-call]
    # Explicit limits: autoscaling ignores NaN, so a gap as the first or last run would
    # otherwise fall outside the chart.
    pad = max(half * 2, dt.timedelta(days=1))
    top.set_xlim(xs[0] - pad, xs[-1] + pad)
    for ax in (top, bottom):
        ax.grid(True, alpha=0.3)
    return fig


def _heatmap_figure(t: TargetReport) -> Figure:
    from matplotlib.colors import BoundaryNorm, ListedColormap
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    runs = t.seeded_runs
    rows = t.seeds
    height = 1.7 + 0.2 * len(rows)
    fig = Figure(figsize=(11, height))
    ax: Axes = fig.subplots()
    fig.subplots_adjust(left=2.9 / 11, right=1 - 1.0 / 11, top=1 - 0.4 / height, bottom=1.15 / height)
    matrix = [[_STATE_CODE[c] for c in row.cells] for row in rows]
    cmap = ListedColormap(_STATE_COLOURS)
    ax.imshow(matrix, aspect="auto", interpolation="nearest", cmap=cmap,
              norm=BoundaryNorm([-0.5, 0.5, 1.5, 2.5, 3.5], cmap.N))
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([_label(f"#{r.seed.n} {r.seed.severity} {r.seed.path}"[:48]) for r in rows], fontsize=7)
    for y, row in enumerate(rows):  # plain texts: a secondary axis cost as much as the image
        ax.text(1.01, y, _label(row.seed_class), transform=ax.get_yaxis_transform(), fontsize=7, va="center")
    step = max(1, len(runs) // 12)
    ticks = list(range(0, len(runs), step))
    ax.set_xticks(ticks)
    ax.set_xticklabels([_label(runs[i].date) for i in ticks], fontsize=7, rotation=30, ha="right")
    for i, r in enumerate(runs):
        if i and r.fingerprint != runs[i - 1].fingerprint:
            ax.axvline(i - 0.5, color="#1f2328", linestyle="--", linewidth=1.2)
    fig.text(2.9 / 11, 1 - 0.08 / height, _label(f"{t.label}: seeds × seeded runs (oldest → newest)"), fontsize=10,
             va="top")
    legend = [Patch(facecolor=c, label=label) for c, label in zip(
        _STATE_COLOURS, ("not measured (gap / not in corpus)", "missed", "undercalled", "caught"),
        strict=True)]
    fig.legend(handles=legend, loc="lower center", ncols=4, fontsize=7, frameon=False)
    return fig


def _comparison_figure(c: Comparison) -> Figure:
    from matplotlib.figure import Figure

    numbers = sorted({n for s in c.reviewers for n in s.seed_counts})
    height = 1.5 + 0.2 * len(numbers)
    fig = Figure(figsize=(11, height))
    ax: Axes = fig.subplots()
    fig.subplots_adjust(left=0.9 / 11, right=0.8, top=1 - 0.4 / height, bottom=0.6 / height)
    offsets = len(c.reviewers)
    for k, s in enumerate(c.reviewers):
        ys, xs = [], []
        for row, n in enumerate(numbers):
            if n in s.seed_counts:
                caught, seen = s.seed_counts[n]
                ys.append(row + (k - (offsets - 1) / 2) * 0.18)
                xs.append(caught / seen)
        ax.scatter(xs, ys, s=18, label=_label(f"{s.reviewer} ({s.runs} runs)"))
    ax.set_yticks(range(len(numbers)))
    ax.set_yticklabels([f"SEED {n}" for n in numbers], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlim(-0.05, 1.05)
    ax.set_xlabel("per-seed catch rate (caught / scored runs on this corpus)")
    ax.grid(True, axis="x", alpha=0.3)
    fig.text(0.9 / 11, 1 - 0.08 / height, _label(f"{c.stack} · corpus {c.fingerprint}"), fontsize=10, va="top")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return fig


def _save(fig: Figure, path: Path) -> None:
    fig.savefig(path, format="svg", metadata={"Date": None})


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


def _draw(job: tuple[str, Any, str]) -> None:
    """Render one chart to one file (runs in a worker process when there are many)."""
    import matplotlib

    kind, data, path = job
    figures: dict[str, Callable[[Any], Figure]] = {
        "trend": _trend_figure, "seeds": _heatmap_figure, "compare": _comparison_figure}
    figure = figures[kind]
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "redline-canary",
                                "font.family": "sans-serif", "hatch.linewidth": 0.5}):
        _save(figure(data), Path(path))


def _draw_all(jobs: Sequence[tuple[str, Any, str]]) -> None:
    """Charts are independent, so with many of them and several cores they render in
    parallel (a 20-target, 5-year history otherwise takes ~10 s). Any trouble starting
    workers falls back to drawing in this process: same files, just slower."""
    workers = min(os.cpu_count() or 1, 8, len(jobs) // 4)
    if workers > 1 and "fork" in multiprocessing.get_all_start_methods():
        try:
            with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
                list(pool.map(_draw, jobs, chunksize=max(1, len(jobs) // (workers * 4))))
            return
        except (OSError, BrokenProcessPool):
            pass
    for job in jobs:
        _draw(job)


def render_html(report: Report, out_dir: Path | str) -> list[Path]:
    """Write ``index.html`` and ``charts/*.svg`` under ``out_dir``; returns the files.

    Old ``charts/*.svg`` files are removed first so a target that left the window does
    not leave a stale chart behind; nothing else in ``out_dir`` is touched.
    """
    _matplotlib()
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
    _draw_all(jobs)
    index = out / "index.html"
    try:
        index.write_text(_page(report, anchors, body, compare_parts), encoding="utf-8")
    except OSError as exc:
        raise BadInput(f"{index}: cannot write the HTML report ({exc.strerror})") from None
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
        parts += ["<h2>Public vs private, canonical vs variant</h2>",
                  "<p class=note>Per reviewer, final seeded runs pooled; n and the Wilson 95% interval beside each "
                  "number. A gap is stated only when the two intervals do not overlap.</p>",
                  _table(GAP_HEAD, [("", [_e(c) for c in cells]) for cells in gap_rows(found)]),
                  "<ul>" + "".join(f"<li>{_e(s)}</li>" for s in gap_sentences(found)) + "</ul>"]
    per_variant = variant_rows(report.observations)
    if per_variant:
        parts += ["<h3>Recall per variant</h3>",
                  _table(VARIANT_HEAD, [("", [_e(c) for c in cells]) for cells in per_variant])]
    return parts


def _legacy(report: Report) -> list[str]:
    """The imported Redline history, last and apart (legacy_model)."""
    if not report.legacy:
        return []
    return [f"<h2>{_e(LEGACY_HEADING)}</h2>", f"<p class=note>{_e(LEGACY_EXPLAINER)}</p>",
            _table(LEGACY_HEAD, [("", [_e(c) for c in row]) for row in report.legacy])]
