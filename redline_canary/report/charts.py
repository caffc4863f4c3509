"""The scoreboard's charts as SVG text: trend, per-seed heat map, cross-reviewer. Pure.

Why drawn here and not with a plotting library: a 20-target, 5-year history has some fifty
charts, and matplotlib took ~150 ms each (the HTML report ran 30-40× as long as parsing
the history, against a goal of 8×); string building takes a few milliseconds. And every
choice that makes a chart readable is ours to make and to test (docs/scoreboard.md#charts):
every measured point is a dot (a lone one too), the time axis fits the runs (seconds,
days or years), a heat-map column is never merged with its neighbour, and the drawing
spans the page's width. Record text is escaped for XML once, here (:func:`_e`).
"""

from __future__ import annotations

import html
import itertools
import re
from collections.abc import Callable, Sequence

from redline_canary.report.model import NONE, Comparison, Rate, RunPoint, TargetReport
from redline_canary.report.text import terminal_safe
from redline_canary.report.time_axis import seconds, time_axis

WIDTH = 1100  # the viewBox width; the page shows every chart at its full width
STATE_COLOURS = {NONE: "#eeeeee", "missed": "#d62728", "undercalled": "#f2b01e", "caught": "#2ca02c"}
GAP_COLOUR = "#9e9e9e"
RECALL, BLOCKER, CFP = "#0969da", "#cf222e", "#8250df"
REVIEWER_COLOURS = ("#0969da", "#cf222e", "#2ca02c", "#8250df", "#f2b01e", "#1b7c83")
_NOT_XML = re.compile(r"[\ufffe\uffff]")
_FONT = 'font-family="system-ui,-apple-system,Segoe UI,Roboto,sans-serif"'


def _e(text: object) -> str:
    """Record text as SVG text or attribute: one line, no control character (XML rejects
    them), ``& < > " '`` escaped."""
    return html.escape(_NOT_XML.sub("", terminal_safe(text)), quote=True)


def _n(x: float) -> str:
    return f"{x:.1f}".rstrip("0").rstrip(".")


def _svg(height: float, body: list[str], title: str) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {_n(height)}" width="{WIDTH}" '
            f'height="{_n(height)}" {_FONT} font-size="12">\n<title>{_e(title)}</title>\n'
            f'<rect width="{WIDTH}" height="{_n(height)}" fill="#ffffff"/>\n' + "\n".join(body) + "\n</svg>\n")


def _text(x: float, y: float, text: str, *, size: int = 12, anchor: str = "start", colour: str = "#1f2328",
          extra: str = "") -> str:
    return (f'<text x="{_n(x)}" y="{_n(y)}" font-size="{size}" text-anchor="{anchor}" fill="{colour}"{extra}>'
            f"{_e(text)}</text>")


def _legend(x: float, y: float, items: Sequence[tuple[str, str]]) -> list[str]:
    out = []
    for colour, label in items:
        out.append(f'<rect x="{_n(x)}" y="{_n(y - 9)}" width="12" height="10" fill="{colour}"/>')
        out.append(_text(x + 16, y, label, size=11))
        x += 28 + 6.3 * len(label)
    return out


# --------------------------------------------------------------------------- trend


class _Panel:
    """One plotting area: pixel box and value range."""

    def __init__(self, left: float, top: float, width: float, height: float, lo: float, hi: float) -> None:
        self.left, self.top, self.width, self.height, self.lo, self.hi = left, top, width, height, lo, hi

    def y(self, value: float) -> float:
        return self.top + self.height * (1 - (value - self.lo) / (self.hi - self.lo))

    def frame(self, ticks: Sequence[float], fmt: Callable[[float], str]) -> list[str]:
        out = [f'<rect x="{_n(self.left)}" y="{_n(self.top)}" width="{_n(self.width)}" height="{_n(self.height)}" '
               'fill="none" stroke="#d0d7de"/>']
        for v in ticks:
            y = self.y(v)
            out.append(f'<line x1="{_n(self.left)}" x2="{_n(self.left + self.width)}" y1="{_n(y)}" y2="{_n(y)}" '
                       'stroke="#eaeef2"/>')
            out.append(_text(self.left - 6, y + 4, fmt(v), size=11, anchor="end", colour="#57606a"))
        return out


Layers = tuple[list[str], list[str], list[str]]  # bands, lines, dots: drawn in that order


def _series(points: Sequence[tuple[float, float | None]], colour: str, panel: _Panel,
            band: Sequence[tuple[float, float] | None] | None = None) -> Layers:
    """A line through runs in a row that were measured, a dot on every measured run (a lone
    run is a larger dot), and the interval band under runs in a row. Each in its own layer,
    so no band of one series is drawn over a dot of another."""
    out: list[str] = []
    lines: list[str] = []
    dots: list[str] = []
    runs: list[list[int]] = [[]]
    for i, (_, v) in enumerate(points):
        if v is None:
            runs.append([])
        else:
            runs[-1].append(i)
    for run in (r for r in runs if r):
        if band is not None:
            spans = [band[i] for i in run]
            if all(s is not None for s in spans) and len(run) > 1:
                upper = " ".join(f"{_n(points[i][0])},{_n(panel.y(s[1]))}" for i, s in zip(run, spans, strict=True)
                                 if s is not None)
                lower = " ".join(f"{_n(points[i][0])},{_n(panel.y(s[0]))}"
                                 for i, s in reversed(list(zip(run, spans, strict=True))) if s is not None)
                out.append(f'<polygon points="{upper} {lower}" fill="{colour}" fill-opacity="0.15"/>')
            elif len(run) == 1 and spans[0] is not None:
                lo, hi = spans[0]
                x = points[run[0]][0]
                out.append(f'<line x1="{_n(x)}" x2="{_n(x)}" y1="{_n(panel.y(lo))}" y2="{_n(panel.y(hi))}" '
                           f'stroke="{colour}" stroke-opacity="0.35" stroke-width="6"/>')
        if len(run) > 1:
            path = " ".join(f"{_n(points[i][0])},{_n(panel.y(points[i][1] or 0.0))}" for i in run)
            lines.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="1.6"/>')
        radius = 6 if len(run) == 1 else 3.5 if len(points) <= 120 else 2
        dots += [f'<circle cx="{_n(points[i][0])}" cy="{_n(panel.y(points[i][1] or 0.0))}" r="{radius}" '
                 f'fill="{colour}" stroke="#ffffff" stroke-width="{1 if radius > 2 else 0}"/>' for i in run]
    return out, lines, dots


def _rate(r: RunPoint, of: str) -> Rate | None:
    m = r.seeded
    if m is None or not m.scored:
        return None
    return m.recall if of == "recall" else m.blocker


def trend_svg(t: TargetReport) -> str:
    """Recall and blocker recall with their Wilson bands (top), clean false positives
    (bottom); grey bands where nothing was measured, a dashed line at a corpus change."""
    runs = t.runs
    times = [seconds(r.recorded_at) for r in runs]
    axis = time_axis(times)
    left, right = 58, 16
    plot_w = WIDTH - left - right
    top = _Panel(left, 34, plot_w, 230, 0.0, 1.0)
    cfps = [r.clean.clean_false_positives if r.clean is not None and r.clean.scored else None for r in runs]
    most = max([c for c in cfps if c is not None] + [1])
    bottom = _Panel(left, 290, plot_w, 90, 0.0, most * 1.15)
    xs = [left + plot_w * axis.fraction(s) for s in times]
    body = [_text(left, 20, t.label, size=14)]
    # Gap bands: as wide as half the usual spacing between runs, never thinner than 4 px.
    steps = sorted(b - a for a, b in itertools.pairwise(xs) if b > a)
    half = max(4.0, min(40.0, (steps[len(steps) // 2] if steps else 40.0) / 2))
    for panel in (top, bottom):
        body += [f'<rect x="{_n(x - half / 2)}" y="{_n(panel.top)}" width="{_n(half)}" height="{_n(panel.height)}" '
                 f'fill="{GAP_COLOUR}" fill-opacity="0.45"/>' for x, r in zip(xs, runs, strict=True) if r.gap]
    body += top.frame([0, 0.25, 0.5, 0.75, 1.0], lambda v: f"{v:.2f}")
    step = max(1, -(-int(most) // 4))
    body += bottom.frame(list(range(0, int(most) + 1, step)), lambda v: str(int(v)))
    body.append(_text(14, top.top + top.height / 2, "rate (Wilson 95% band)", size=11, anchor="middle",
                      extra=f' transform="rotate(-90 14 {_n(top.top + top.height / 2)})"'))
    body.append(_text(14, bottom.top + bottom.height / 2, "clean FPs", size=11, anchor="middle",
                      extra=f' transform="rotate(-90 14 {_n(bottom.top + bottom.height / 2)})"'))
    for i, r in enumerate(runs):
        if r.fingerprint_changed:
            x = (xs[i - 1] + xs[i]) / 2
            body.append(f'<line x1="{_n(x)}" x2="{_n(x)}" y1="{top.top}" y2="{_n(bottom.top + bottom.height)}" '
                        'stroke="#1f2328" stroke-dasharray="5,4"/>')
            body.append(_text(x + 4, top.top + top.height - 6, f"corpus → {r.fingerprint[:8]}", size=10))
    segments: list[list[int]] = []
    for i, r in enumerate(runs):
        if i == 0 or r.fingerprint_changed:
            segments.append([])
        segments[-1].append(i)
    layers: Layers = ([], [], [])
    for seg in segments:  # a line never joins numbers of two corpora
        drawn = []
        for of, colour in (("blocker", BLOCKER), ("recall", RECALL)):
            rates = [_rate(runs[i], of) for i in seg]
            pts = [(xs[i], rate.value if rate is not None else None) for i, rate in zip(seg, rates, strict=True)]
            drawn.append(_series(pts, colour, top, [rate.ci if rate is not None else None for rate in rates]))
        drawn.append(_series([(xs[i], float(c) if (c := cfps[i]) is not None else None) for i in seg], CFP, bottom))
        for layer, *parts in zip(layers, *drawn, strict=True):
            for part in parts:
                layer += part
    body += [*layers[0], *layers[1], *layers[2]]
    for when, label in axis.ticks:
        x = left + plot_w * axis.fraction(when)
        body.append(f'<line x1="{_n(x)}" x2="{_n(x)}" y1="{top.top}" y2="{_n(bottom.top + bottom.height)}" '
                    'stroke="#eaeef2"/>')
        anchor = "end" if x > WIDTH - 40 else "middle"  # the last label stays inside the chart
        body.append(_text(x, bottom.top + bottom.height + 16, label, size=11, anchor=anchor, colour="#57606a"))
    if axis.caption:
        body.append(_text(left + plot_w, bottom.top + bottom.height + 32, axis.caption, size=11, anchor="end",
                          colour="#57606a"))
    legend = [(RECALL, "recall"), (BLOCKER, "blocker recall"), (CFP, "clean false positives")]
    if t.gaps:
        legend.append((GAP_COLOUR, "not measured: " + ", ".join(f"{k} × {v}" for k, v in sorted(t.gaps.items()))))
    body += _legend(left, bottom.top + bottom.height + 34, legend)
    return _svg(bottom.top + bottom.height + 46, body, f"trend: {t.label}")


# --------------------------------------------------------------------------- heat map


def heatmap_svg(t: TargetReport) -> str:
    """One row per seed, one column per seeded run (oldest left). Columns are separated by
    a white line whenever they are wide enough to show one, so no two runs merge."""
    runs, rows = t.seeded_runs, t.seeds
    names = [f"#{row.seed.n} {row.seed.severity} {row.seed.path}"[:44] for row in rows]
    # The labels' column is as wide as the longest label, so the cells take the rest.
    left, right, top, row_h = min(300, max(120, 20 + 6.7 * max(map(len, names), default=0))), 120, 34, 16
    plot_w = WIDTH - left - right
    cell = plot_w / max(1, len(runs))
    gap = 1.0 if cell >= 4 else 0.0
    body = [_text(12, 20, f"{t.label}: seeds × seeded runs (oldest → newest)", size=14)]
    for y, row in enumerate(rows):
        y0 = top + y * row_h
        body.append(_text(left - 8, y0 + 12, names[y], size=11, anchor="end"))
        body.append(_text(left + plot_w + 8, y0 + 12, row.seed_class, size=11))
        i = 0
        while i < len(row.cells):  # a run of equal cells is one rectangle when no gap separates them
            j = i + 1
            while not gap and j < len(row.cells) and row.cells[j] == row.cells[i]:
                j += 1
            body.append(f'<rect x="{_n(left + i * cell)}" y="{_n(y0 + 1)}" width="{_n((j - i) * cell - gap)}" '
                        f'height="{row_h - 2}" fill="{STATE_COLOURS.get(row.cells[i], STATE_COLOURS[NONE])}"/>')
            i = j
    bottom = top + len(rows) * row_h
    for i, r in enumerate(runs):
        if i and r.fingerprint != runs[i - 1].fingerprint:
            x = left + i * cell - gap / 2
            body.append(f'<line x1="{_n(x)}" x2="{_n(x)}" y1="{top - 4}" y2="{bottom + 4}" stroke="#1f2328" '
                        'stroke-width="2" stroke-dasharray="4,3"/>')
    every = max(1, -(-len(runs) // 10))
    one_day = bool(runs) and runs[0].date == runs[-1].date  # then the time tells runs apart, the date goes last
    for i in range(0, len(runs), every):
        label = runs[i].recorded_at[11:19] if one_day else runs[i].date
        body.append(_text(left + (i + 0.5) * cell, bottom + 16, label, size=11, anchor="middle", colour="#57606a"))
    if one_day:
        body.append(_text(left + plot_w, bottom + 32, runs[0].date, size=11, anchor="end", colour="#57606a"))
    labels = {NONE: "not measured (gap / not in corpus)", "missed": "missed", "undercalled": "undercalled",
              "caught": "caught"}
    body += _legend(left, bottom + 38, [(STATE_COLOURS[k], labels[k]) for k in labels])
    return _svg(bottom + 50, body, f"seeds: {t.label}")


# --------------------------------------------------------------------------- comparison


def comparison_svg(c: Comparison) -> str:
    """Per seed, each reviewer's catch rate on this corpus as a dot."""
    numbers = sorted({n for s in c.reviewers for n in s.seed_counts})
    left, right, top, row_h = 90, 230, 40, 18
    plot_w = WIDTH - left - right
    bottom = top + max(1, len(numbers)) * row_h
    body = [_text(left, 20, f"{c.stack} · corpus {c.fingerprint}", size=14)]
    body.append(f'<rect x="{left}" y="{top}" width="{plot_w}" height="{_n(bottom - top)}" fill="none" '
                'stroke="#d0d7de"/>')
    for v in (0, 0.25, 0.5, 0.75, 1.0):
        x = left + plot_w * v
        body.append(f'<line x1="{_n(x)}" x2="{_n(x)}" y1="{top}" y2="{_n(bottom)}" stroke="#eaeef2"/>')
        body.append(_text(x, bottom + 16, f"{v:.2f}", size=11, anchor="middle", colour="#57606a"))
    body.append(_text(left + plot_w / 2, bottom + 34, "per-seed catch rate (caught / scored runs on this corpus)",
                      size=11, anchor="middle"))
    k = len(c.reviewers)
    for row, n in enumerate(numbers):
        y = top + (row + 0.5) * row_h
        body.append(_text(left - 8, y + 4, f"SEED {n}", size=11, anchor="end"))
        for j, s in enumerate(c.reviewers):
            if n in s.seed_counts:
                caught, seen = s.seed_counts[n]
                x = left + plot_w * (caught / seen)
                body.append(f'<circle cx="{_n(x)}" cy="{_n(y + (j - (k - 1) / 2) * 4)}" r="4.5" '
                            f'fill="{REVIEWER_COLOURS[j % len(REVIEWER_COLOURS)]}"/>')
    for j, s in enumerate(c.reviewers):
        y = top + 12 + j * 18
        body.append(f'<circle cx="{left + plot_w + 16}" cy="{y - 4}" r="5" '
                    f'fill="{REVIEWER_COLOURS[j % len(REVIEWER_COLOURS)]}"/>')
        body.append(_text(left + plot_w + 26, y, f"{s.reviewer} ({s.runs} runs)"[:30], size=11))
    return _svg(bottom + 46, body, f"cross-reviewer: {c.stack}")
