"""``history import --from redline``: Redline's seed-scores.jsonl as a legacy series the scoreboard
shows apart, and that no gate or baseline ever reads (issue 15)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from redline_canary.report.legacy import LEGACY_SCHEMA, LegacyError, parse_redline
from redline_canary.run.history import read_history
from tests.helpers.clirun import ROOT, cli_main
from tests.helpers.records import append_records, record

SCORES = ROOT / "tests" / "data" / "redline" / "data" / "seed-scores.jsonl"


def imported(tmp_path: Path) -> Path:
    out = tmp_path / "history" / "redline-legacy.jsonl"
    done = cli_main("history", "import", "--from", "redline", str(SCORES), "--out", str(out), "--json")
    assert done.returncode == 2, done.stderr  # two corrupt source lines were left out, and named
    assert json.loads(done.stdout) == {
        "out": str(out), "appended": 3, "already_present": 0,
        "corrupt": [{"line": 4, "why": "not valid JSON (Unterminated string starting at)"},
                    {"line": 5, "why": "not valid JSON (Expecting value)"}]}
    assert f"{SCORES}:4: not imported" in done.stderr and f"{SCORES}:5: not imported" in done.stderr
    return out


def test_import_tags_every_line_as_the_legacy_series_and_is_idempotent(tmp_path: Path) -> None:
    out = imported(tmp_path)
    lines = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert [(x["schema"], x["repo"], x["pr"]) for x in lines] == [
        (LEGACY_SCHEMA, "acme/pilot-web", 12), (LEGACY_SCHEMA, "acme/pilot-web", 15),
        (LEGACY_SCHEMA, "acme/pilot-api", 3)]
    first = lines[0]
    assert (first["seeded"], first["caught"], first["blocker_seeded"], first["blocker_caught"]) == (24, 18, 11, 10)
    assert first["rule_matched"] == 12 and first["source"] == "seed-scores.jsonl:1"
    assert lines[2]["silent"] is True  # no reviewer comment at all: Redline wrote recall 0
    before = out.read_bytes()
    again = cli_main("history", "import", "--from", "redline", str(SCORES), "--out", str(out))
    assert "appended 0 Redline score(s) as the legacy series, already present 3, corrupt 2" in again.stdout
    assert out.read_bytes() == before


def test_legacy_lines_are_never_records_for_gate_or_baseline(tmp_path: Path) -> None:
    out = imported(tmp_path)
    # even pasted into a real history, a legacy line is skipped as no record
    hist = tmp_path / "seed-scores.jsonl"
    append_records(hist, [record("r1"), record("r1", kind="clean")])
    with hist.open("a", encoding="utf-8") as fh:
        fh.write(out.read_text(encoding="utf-8"))
    read = read_history(hist)
    assert len(read.records) == 2 and [n for n, _ in read.corrupt] == [3, 4, 5]
    gate = cli_main("gate", str(out), "--run-id", "r1")
    assert gate.returncode == 2 and "no records with run_id 'r1'" in gate.stderr


def test_report_shows_the_legacy_series_apart(tmp_path: Path) -> None:
    out = imported(tmp_path)
    hist = tmp_path / "seed-scores.jsonl"
    append_records(hist, [record("r1"), record("r1", kind="clean")])
    done = cli_main("report", str(hist), "--legacy", str(out))
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert "2 records · 1 targets" in text  # the legacy runs are not records of the scoreboard
    section = text[text.index("## Imported Redline history (legacy series)"):]
    assert "never gated, never a baseline" in section
    assert "| 2026-03-02 | acme/pilot-web | `#12` |" in section  # a PR number of another repo: never a live link here
    assert "0.91 (10/11, 95% CI 0.62–0.98)" in section and "0.67 (12/18)" in section
    pilot_api = next(line for line in section.splitlines() if "acme/pilot-api" in line)
    assert "Redline recorded 0, this product would record silent" in pilot_api and "0.00" not in pilot_api
    since = cli_main("report", str(hist), "--legacy", str(out), "--since", "2026-03-05")
    assert "#12" not in since.stdout and "#15" in since.stdout


def test_report_html_and_json_carry_the_legacy_section(tmp_path: Path) -> None:
    out = imported(tmp_path)
    site = tmp_path / "site"
    done = cli_main("report", str(tmp_path / "none.jsonl"), "--legacy", str(out), "--html", str(site))
    assert done.returncode == 0, done.stderr
    page = (site / "index.html").read_text(encoding="utf-8")
    assert "<h2>Imported Redline history (legacy series)</h2>" in page and "acme/pilot-api" in page
    data = json.loads(cli_main("report", str(tmp_path / "none.jsonl"), "--legacy", str(out), "--json").stdout)
    assert len(data["legacy"]) == 3


def test_bad_input_names_the_file_and_key(tmp_path: Path) -> None:
    with pytest.raises(LegacyError, match=r"totals\.caught: expected a count"):
        parse_redline({"repo": "a/b", "scored_at": "2026-03-02T09:15:00Z", "totals": {"seeded": 3, "caught": "x"}})
    with pytest.raises(LegacyError, match="repo: expected owner/name"):
        parse_redline({"scored_at": "2026-03-02T09:15:00Z", "totals": {}})
    folder = tmp_path / "hist"
    folder.mkdir()
    done = cli_main("history", "import", "--from", "redline", str(SCORES), "--out", str(folder))
    assert done.returncode == 2 and "is a folder; the legacy series is one file of its own" in done.stderr
    junk = tmp_path / "junk.jsonl"
    junk.write_text("[1]\n", encoding="utf-8")
    done = cli_main("history", "import", "--from", "redline", str(junk), "--out", str(tmp_path / "l.jsonl"))
    assert done.returncode == 2 and f"{junk}:1: no Redline score could be read (not a JSON object)" in done.stderr
    assert not (tmp_path / "l.jsonl").exists()
