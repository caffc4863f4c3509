"""``redline-canary report``: outputs, corrupt lines, bad input, the HTML folder's contents."""

from __future__ import annotations

import json
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from redline_canary import cli as cli_module
from redline_canary.report.charts import GAP_COLOUR, RECALL, trend_svg
from redline_canary.report.html import render_html, write_file
from redline_canary.run.history import read_history
from tests.helpers.clirun import cli_main
from tests.unit.test_report_model import FP_GO_NEW, build_report, synthetic_history, write_history


def test_markdown_goes_to_stdout_and_corrupt_lines_to_stderr(tmp_path: Path) -> None:
    hist = write_history(tmp_path / "h.jsonl", corrupt_after=5)
    res = cli_main("report", str(hist))
    assert res.returncode == 0, res.stderr
    assert f"{hist}:6: corrupt record skipped (not valid JSON" in res.stderr
    assert res.stdout.startswith("# redline-canary scoreboard")
    assert "27 records · 3 targets" in res.stdout  # 28 lines, the torn one left out
    assert "- line 6: not valid JSON" in res.stdout
    assert "## Latest run" in res.stdout and "## Cross-reviewer" in res.stdout


def test_markdown_file_and_json(tmp_path: Path) -> None:
    hist = write_history(tmp_path / "h.jsonl")
    out = tmp_path / "summary.md"
    res = cli_main("report", str(hist), "--markdown", str(out))
    assert res.returncode == 0 and res.stdout == ""
    assert out.read_text(encoding="utf-8") == cli_main("report", str(hist)).stdout
    res = cli_main("report", str(hist), "--json", "--since", "2026-01-17")
    data = json.loads(res.stdout)
    assert data["since"] == "2026-01-17"
    go = next(t for t in data["targets"] if t["stack"] == "go")
    assert [r["run_id"] for r in go["runs"]] == ["go-r2", "go-r3"]
    assert go["runs"][0]["fingerprint"] == FP_GO_NEW


@pytest.mark.parametrize(("args", "message"), [
    (["--since", "last week"], "--since: 'last week' is not a date (expected YYYY-MM-DD)"),
    (["--since", "2026-02-30"], "--since: '2026-02-30' is not a date"),
])
def test_bad_since_is_bad_input(tmp_path: Path, args: list[str], message: str) -> None:
    hist = write_history(tmp_path / "h.jsonl")
    res = cli_main("report", str(hist), *args)
    assert res.returncode == 2 and message in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and res.stdout == ""


def test_missing_history_is_bad_input(tmp_path: Path) -> None:
    res = cli_main("report", str(tmp_path / "nope.jsonl"))
    assert res.returncode == 2
    assert res.stderr.strip() == f"redline-canary: {tmp_path / 'nope.jsonl'}: history file not found"


def test_record_with_a_bad_value_is_named_on_stderr_and_skipped(tmp_path: Path) -> None:
    records = synthetic_history()
    records[0]["by_severity"] = "broken"
    hist = tmp_path / "h.jsonl"
    hist.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    res = cli_main("report", str(hist))
    assert res.returncode == 0
    assert f"{hist}:1: corrupt record skipped (by_severity: expected an object, got \"broken\")" in res.stderr
    assert f"{len(records) - 1} records" in res.stdout


def test_html_folder_is_complete_and_self_contained(tmp_path: Path) -> None:
    hist = write_history(tmp_path / "h.jsonl")
    site = tmp_path / "site"
    (site / "charts").mkdir(parents=True)
    (site / "charts" / "stale.svg").write_text("<svg/>")
    (site / "keep.txt").write_text("mine")
    res = cli_main("report", str(hist), "--html", str(site))
    assert res.returncode == 0, res.stderr
    assert res.stdout == ""  # --html alone prints no Markdown
    assert not (site / "charts" / "stale.svg").exists() and (site / "keep.txt").read_text() == "mine"
    page = (site / "index.html").read_text(encoding="utf-8")
    sources = re.findall(r'<img src="([^"]+)"', page)
    # 3 trend charts, 3 heat maps, 1 cross-reviewer chart
    assert len(sources) == 7 and all((site / s).is_file() for s in sources)
    assert sorted(p.name for p in (site / "charts").iterdir()) == sorted(Path(s).name for s in sources)
    # latest, 3 run tables, 3 seed tables, 2 calibration tables (one per reviewer), reviewers, paired diffs
    assert page.count("<table>") == 11
    assert page.count("<h2>Calibration</h2>") == 1
    for text in [page, *((site / s).read_text() for s in sources)]:
        assert not re.search(r'(src|href)="(https?:)?//', text), "the report must open with no network"
        assert "<script" not in text
    assert "newly missed" in page and "silent" in page and FP_GO_NEW in page
    assert "0.50 (1/2, 95% CI 0.09–0.91)" in page


def test_html_is_deterministic(tmp_path: Path) -> None:
    report = build_report(synthetic_history())
    render_html(report, tmp_path / "a", write=write_file)
    render_html(report, tmp_path / "b", write=write_file)
    for f in sorted((tmp_path / "a").rglob("*")):
        if f.is_file():
            assert f.read_bytes() == (tmp_path / "b" / f.relative_to(tmp_path / "a")).read_bytes(), f.name


def test_trend_chart_draws_gaps_as_holes_not_zeros() -> None:
    py = next(t for t in build_report(synthetic_history()).targets if t.reviewer == "redline"
              and t.stack == "python")
    svg = ET.fromstring(trend_svg(py))
    ns = "{http://www.w3.org/2000/svg}"
    # Six runs, the fourth silent: the recall line breaks there into two lines (3 + 2 runs),
    # five recall dots, and a grey band in each panel where the silent run is.
    lines = [el.get("points", "").split() for el in svg.iter(f"{ns}polyline") if el.get("stroke") == RECALL]
    assert sorted(len(points) for points in lines) == [2, 3]
    dots = [el for el in svg.iter(f"{ns}circle") if el.get("fill") == RECALL]
    assert len(dots) == 5
    bands = [el for el in svg.iter(f"{ns}rect") if el.get("fill") == GAP_COLOUR and el.get("fill-opacity")]
    assert len(bands) == 2 and len({b.get("x") for b in bands}) == 1
    gap_x = float(bands[0].get("x", "0")) + float(bands[0].get("width", "0")) / 2
    assert all(abs(float(d.get("cx", "0")) - gap_x) > 5 for d in dots)  # no dot (no zero) at the gap
    assert "not measured: silent × 1" in "".join(svg.itertext())


def test_the_html_report_needs_no_plotting_library(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # makes `import matplotlib` raise ImportError
    hist = write_history(tmp_path / "h.jsonl")
    code = cli_module.main(["report", str(hist), "--html", str(tmp_path / "site")])
    assert code == 0, capsys.readouterr().err
    assert len(list((tmp_path / "site" / "charts").glob("*.svg"))) == 7


def test_the_report_leaves_the_cycle_collector_as_it_found_it(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    import gc

    hist = write_history(tmp_path / "h.jsonl")
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n", encoding="utf-8")
    assert gc.isenabled()
    assert cli_module.main(["report", str(hist), "--html", str(tmp_path / "site")]) == 0
    assert gc.isenabled() and gc.get_freeze_count() == 0
    assert cli_module.main(["report", str(bad)]) == 2  # refused mid-read: still put back
    assert gc.isenabled() and gc.get_freeze_count() == 0
    assert len(read_history(hist).records) == 27  # the reader alone, too
    assert gc.isenabled() and gc.get_freeze_count() == 0
    gc.disable()
    try:
        assert cli_module.main(["report", str(hist)]) == 0
        assert not gc.isenabled()  # off before, off after
    finally:
        gc.enable()
    capsys.readouterr()
