"""Open the HTML report in a real browser (Debian's headless chromium), from disk.

Nothing is installed here: ``.ci/install-checkers`` installs chromium best-effort and
these tests skip, naming the reason, when it is absent. The page is checked twice: a
screenshot of ``index.html`` as published (console must stay silent), and ``--dump-dom``
of a probe copy that adds one script reporting every image that failed to load (a
missing image is not a console message by itself). A deliberately broken page proves
the probe can fail.
"""

from __future__ import annotations

import re
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.unit.test_report_model import build_report, synthetic_history

CHROMIUM = Path("/usr/bin/chromium")
pytestmark = pytest.mark.skipif(not CHROMIUM.exists(),
                                reason="chromium not installed (.ci/install-checkers installs it with apt-get)")
from redline_canary.report.html import render_html, write_file  # noqa: E402

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--enable-logging=stderr", "--v=0"]
PROBE = """<script>
window.addEventListener("load", () => {
  let ok = 0;
  for (const img of document.images) {
    if (img.complete && img.naturalWidth > 0) ok++;
    else console.error("image failed to load: " + img.getAttribute("src"));
  }
  document.body.setAttribute("data-images-ok", String(ok));
});
</script></body>"""


def chromium(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    profile = tmp / f"profile-{len(list(tmp.glob('profile-*')))}"
    return subprocess.run([str(CHROMIUM), *FLAGS, f"--user-data-dir={profile}", *args],
                          capture_output=True, text=True, timeout=120, check=False)


def console_messages(stderr: str) -> list[str]:
    """Page console output as chromium logs it: ``[...:INFO:CONSOLE:1] "text", source: ...``."""
    return [line for line in stderr.splitlines() if ":CONSOLE" in line]


class Elements(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: dict[str, int] = {}
        self.images: list[str] = []
        self.body: dict[str, str | None] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags[tag] = self.tags.get(tag, 0) + 1
        if tag == "img":
            self.images.append(dict(attrs).get("src") or "")
        if tag == "body":
            self.body = dict(attrs)


def probe(site: Path, tmp: Path) -> tuple[Elements, list[str], subprocess.CompletedProcess[str]]:
    page = (site / "index.html").read_text(encoding="utf-8")
    (site / "probe.html").write_text(page.replace("</body>", PROBE), encoding="utf-8")
    res = chromium(tmp, "--dump-dom", (site / "probe.html").as_uri())
    dom = Elements()
    dom.feed(res.stdout)
    return dom, console_messages(res.stderr), res


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report") / "site"
    render_html(build_report(synthetic_history()), out, write=write_file)
    return out


def test_screenshot_with_a_silent_console(site: Path, tmp_path: Path) -> None:
    shot = tmp_path / "scoreboard.png"
    res = chromium(tmp_path, f"--screenshot={shot}", "--window-size=1280,2000", (site / "index.html").as_uri())
    assert res.returncode == 0, res.stderr[-2000:]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert shot.stat().st_size > 50_000  # a blank 1280x2000 page compresses to a few KiB
    assert console_messages(res.stderr) == []


def test_every_chart_loads_and_every_table_is_there(site: Path, tmp_path: Path) -> None:
    dom, console, res = probe(site, tmp_path)
    assert res.returncode == 0, res.stderr[-2000:]
    report = build_report(synthetic_history())
    charts = 2 * len(report.targets) + len({c.stack for c in report.comparisons})
    assert len(dom.images) == charts == 7
    assert dom.body.get("data-images-ok") == str(charts)  # the probe ran, and every image decoded
    assert console == []
    differing = sum(1 for c in report.comparisons for p in c.pairs if p.differing)
    tables = 1 + 2 * len(report.targets) + len(report.comparisons) + differing + len(report.calibration)
    assert dom.tags.get("table") == tables == 11
    assert dom.tags.get("section") == len(report.targets)
    assert re.search(r"<h2>Cross-reviewer</h2>", res.stdout)


def test_the_probe_catches_a_broken_page(tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "index.html").write_text(
        '<!DOCTYPE html><html><body><img src="charts/missing.svg"><table><tr><td>x</td></tr></table>'
        "<script>undefinedFunction()</script></body></html>", encoding="utf-8")
    dom, console, _ = probe(broken, tmp_path)
    assert dom.body.get("data-images-ok") == "0"
    assert any("image failed to load: charts/missing.svg" in line for line in console)
    assert any("undefinedFunction is not defined" in line for line in console)
