"""The scoreboard's charts look right in a real browser: one run, ten runs, five years.

Each history is rendered with ``report --html`` and opened from disk in headless Chromium
(Debian's, as ``test_report_browser.py`` uses; ``.ci/install-checkers`` installs it). A
probe copy of the page reports where each chart is laid out; a screenshot of the page as
published is cut at those places and its pixels are checked: the chart spans the page's
width, the drawing spans the chart, the lone run is a dot, ten heat-map columns are ten
separate columns, five years of lines reach both ends. The axis labels are read from the
SVG. Screenshots stay in pytest's tmp dir (the test names them on failure).

Without Chromium these tests skip locally, naming the reason, and fail under CI (``CI``
set, as on every CI runner), where a missing browser must not pass silently.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import subprocess
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.clirun import cli_main
from tests.unit.test_report_model import make_record

CHROMIUM = Path("/usr/bin/chromium")
if not CHROMIUM.exists():
    if os.environ.get("CI"):
        pytest.fail("chromium is missing on CI: .ci/install-checkers must install it (apt-get install chromium)",
                    pytrace=False)
    pytest.skip("chromium not installed (.ci/install-checkers installs it with apt-get)", allow_module_level=True)
Image = pytest.importorskip("PIL.Image", reason="pillow is in the [test] extra: it reads the screenshots")

WINDOW = 1280
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars", "--force-device-scale-factor=1"]
PROBE = """<script>
window.addEventListener("load", () => {
  const out = [];
  for (const img of document.images) {
    const r = img.getBoundingClientRect();
    out.push([img.getAttribute("src"), r.left + scrollX, r.top + scrollY, r.width, r.height]);
  }
  document.body.setAttribute("data-layout", JSON.stringify(out));
  document.body.setAttribute("data-height", String(document.documentElement.scrollHeight));
});
</script></body>"""
RECALL = (9, 105, 218)
CELLS = {"caught": (44, 160, 44), "missed": (214, 39, 40), "undercalled": (242, 176, 30)}
NS = "{http://www.w3.org/2000/svg}"


def _chromium(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    profile = tmp / f"profile-{len(list(tmp.glob('profile-*')))}"
    return subprocess.run([str(CHROMIUM), *FLAGS, f"--user-data-dir={profile}", *args],
                          capture_output=True, text=True, timeout=120, check=False)


def history(path: Path, times: list[str], *, seeds: int = 5, gaps: frozenset[int] = frozenset()) -> Path:
    """One target (python, redline) with a seeded and a clean record per run at ``times``."""
    lines = []
    for i, when in enumerate(times):
        states = {n: ("caught", "missed", "undercalled")[(n + i) % 3] for n in range(1, seeds + 1)}
        common: dict[str, Any] = {"run_id": f"run-{i}", "day": 0, "repo": "acme/canary-py", "stack": "python",
                                  "reviewer": "redline", "fingerprint": "aaaaaaaaaaaaaaaa",
                                  "outcome": "silent" if i in gaps else "scored"}
        for kind in ("seeded", "clean"):
            rec = make_record(kind=kind, states=states if kind == "seeded" else {}, **common)
            rec["recorded_at"] = when
            lines.append(json.dumps(rec))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


class Shot:
    """A screenshot of the published page, and where each chart was laid out on it."""

    def __init__(self, site: Path, tmp: Path) -> None:
        page = (site / "index.html").read_text(encoding="utf-8")
        (site / "probe.html").write_text(page.replace("</body>", PROBE), encoding="utf-8")
        dom = _chromium(tmp, "--dump-dom", f"--window-size={WINDOW},4000", (site / "probe.html").as_uri())
        layout = re.search(r'data-layout="([^"]*)"', dom.stdout)
        height = re.search(r'data-height="(\d+)"', dom.stdout)
        assert layout and height, dom.stderr[-2000:]
        self.charts: dict[str, tuple[int, int, int, int]] = {
            src: (round(x), round(y), round(w), round(h))
            for src, x, y, w, h in json.loads(layout.group(1).replace("&quot;", '"'))}
        self.path = tmp / f"{site.name}.png"
        res = _chromium(tmp, f"--screenshot={self.path}", f"--window-size={WINDOW},{height.group(1)}",
                        (site / "index.html").as_uri())
        assert res.returncode == 0 and self.path.exists(), res.stderr[-2000:]
        self.image = Image.open(self.path).convert("RGB")

    def chart(self, suffix: str) -> Any:
        src = next(s for s in self.charts if s.endswith(suffix))
        x, y, w, h = self.charts[src]
        return self.image.crop((x, y, x + w, y + h))


def _columns(img: Any, test: Callable[[tuple[int, int, int]], bool]) -> list[int]:
    """The x of every column holding at least one pixel that passes ``test``."""
    px = img.load()
    return [x for x in range(img.width) if any(test(px[x, y]) for y in range(img.height))]


def _near(colour: tuple[int, int, int], target: tuple[int, int, int], tolerance: int = 40) -> bool:
    return all(abs(a - b) <= tolerance for a, b in zip(colour, target, strict=True))


def _ink(c: tuple[int, int, int]) -> bool:
    return min(c) < 200  # drawing, not the white background or the faintest grid


def _render(tmp: Path, name: str, hist: Path) -> tuple[Path, Shot]:
    site = tmp / name
    res = cli_main("report", str(hist), "--html", str(site))
    assert res.returncode == 0, res.stderr
    return site, Shot(site, tmp)


def _tick_labels(site: Path) -> list[str]:
    svg = ET.parse(next((site / "charts").glob("*-trend.svg"))).getroot()
    return [el.text or "" for el in svg.iter(f"{NS}text") if el.get("text-anchor") == "middle"
            and re.fullmatch(r"[\d:]+|[A-Z][a-z]{2} \d+|\d{4}", el.text or "")]


def _spans_the_page(shot: Shot, suffix: str) -> Any:
    chart = shot.chart(suffix)
    assert chart.width >= 0.85 * WINDOW, f"{suffix}: {chart.width}px of {WINDOW} ({shot.path})"
    ink = _columns(chart, _ink)
    assert ink[-1] - ink[0] >= 0.93 * chart.width, f"{suffix}: the drawing leaves a wide margin ({shot.path})"
    return chart


def test_one_run_is_a_visible_dot_on_an_axis_of_minutes(tmp_path: Path) -> None:
    site, shot = _render(tmp_path, "one", history(tmp_path / "one.jsonl", ["2026-12-07T10:00:00Z"]))
    trend = _spans_the_page(shot, "-trend.svg")
    dot = [x for x in _columns(trend, lambda c: _near(c, RECALL)) if 0.3 * trend.width < x < 0.7 * trend.width]
    assert len(dot) >= 6, f"no recall dot in the middle of the chart ({shot.path})"
    labels = _tick_labels(site)
    assert labels and all(re.fullmatch(r"\d\d:\d\d:\d\d", t) for t in labels), labels  # not a two-day axis
    _spans_the_page(shot, "-seeds.svg")


def test_ten_runs_seconds_apart_are_ten_dots_and_ten_heat_map_columns(tmp_path: Path) -> None:
    times = [f"2026-12-07T10:00:{2 * i:02d}Z" for i in range(10)]
    site, shot = _render(tmp_path, "ten", history(tmp_path / "ten.jsonl", times))
    trend = _spans_the_page(shot, "-trend.svg")
    blue = _columns(trend.crop((0, 0, trend.width, int(trend.height * 0.7))), lambda c: _near(c, RECALL))
    assert blue[0] < 0.15 * trend.width and blue[-1] > 0.85 * trend.width, f"runs bunched up ({shot.path})"
    labels = _tick_labels(site)
    assert labels and all(re.fullmatch(r"\d\d:\d\d:\d\d", t) for t in labels), labels
    heat = _spans_the_page(shot, "-seeds.svg")
    px = heat.load()
    row = max(range(heat.height), key=lambda y: sum(any(_near(px[x, y], c, 20) for c in CELLS.values())
                                                    for x in range(heat.width)))
    segments, inside = 0, False
    for x in range(heat.width):
        cell = any(_near(px[x, row], c, 20) for c in CELLS.values())
        segments += cell and not inside
        inside = cell
    assert segments == 10, f"{segments} heat-map columns for 10 runs ({shot.path})"


def test_five_years_of_weekly_runs_get_year_ticks_and_fill_the_width(tmp_path: Path) -> None:
    import datetime as dt

    start = dt.datetime(2021, 1, 4, 6, tzinfo=dt.timezone.utc)
    times = [(start + dt.timedelta(weeks=w)).strftime("%Y-%m-%dT%H:%M:%SZ") for w in range(260)]
    site, shot = _render(tmp_path, "five", history(tmp_path / "five.jsonl", times,
                                                    gaps=frozenset({40, 41, 200})))
    trend = _spans_the_page(shot, "-trend.svg")
    blue = _columns(trend.crop((0, 0, trend.width, int(trend.height * 0.7))), lambda c: _near(c, RECALL))
    assert blue[0] < 0.1 * trend.width and blue[-1] > 0.9 * trend.width, shot.path
    # No empty band inside the data: every stretch of 2% of the width has a recall pixel.
    gaps = [b - a for a, b in itertools.pairwise(blue)]
    assert max(gaps) < 0.02 * trend.width, f"an empty band of {max(gaps)}px ({shot.path})"
    labels = _tick_labels(site)
    assert labels == ["2021", "2022", "2023", "2024", "2025", "2026"], labels  # years, not months
    heat = _spans_the_page(shot, "-seeds.svg")
    cells = _columns(heat, lambda c: any(_near(c, v, 20) for v in CELLS.values()))
    assert cells[-1] - cells[0] >= 0.55 * heat.width, shot.path  # 260 columns across the plot area
