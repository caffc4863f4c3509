"""A history may be a folder of JSONL files, one per year (docs/record.md): no file nears GitHub's
50 MB warning or 100 MB limit, and every reader and writer takes the folder as it takes a file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.helpers.clirun import cli_main
from tests.helpers.records import record


def _rec(run: str, year: int, kind: str = "seeded", passed: bool = True) -> dict[str, Any]:
    r = record(run, kind=kind, passed=passed)
    r["recorded_at"] = f"{year}-06-01T10:00:00Z"
    return r


def _write(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_merge_into_a_folder_files_each_record_under_its_year_and_stays_idempotent(tmp_path: Path) -> None:
    folder = tmp_path / "history"
    folder.mkdir()
    frag = tmp_path / "frag.jsonl"
    _write(frag, [_rec("r2026", 2026), _rec("r2026", 2026, "clean"), _rec("r2027", 2027)])
    assert cli_main("history", "merge", str(folder), str(frag)).returncode == 0
    assert sorted(p.name for p in folder.iterdir()) == ["2026.jsonl", "2027.jsonl"]
    assert len((folder / "2026.jsonl").read_text().splitlines()) == 2
    before = {p.name: p.read_text() for p in folder.iterdir()}
    assert cli_main("history", "merge", str(folder), str(frag)).returncode == 0  # nothing twice
    assert {p.name: p.read_text() for p in folder.iterdir()} == before


def test_every_reader_takes_the_folder(tmp_path: Path) -> None:
    folder = tmp_path / "history"
    folder.mkdir()
    _write(folder / "2026.jsonl", [_rec("old", 2026)])
    _write(folder / "2027.jsonl", [_rec("new", 2027, passed=False), _rec("new", 2027, "clean")])
    (folder / "notes.txt").write_text("not a history file")
    (folder / "2027.jsonl").open("a").write("{broken\n")
    gate = cli_main("gate", str(folder), "--run-id", "new")
    assert gate.returncode == 1 and "2027.jsonl: not valid JSON" in gate.stderr
    assert cli_main("gate", str(folder), "--run-id", "old").returncode == 0
    report = cli_main("report", str(folder))
    assert report.returncode == 0 and "3 records" in report.stdout


def test_score_appends_into_the_folder(tmp_path: Path, mini_corpus: Path) -> None:
    folder = tmp_path / "history"
    folder.mkdir()
    findings = tmp_path / "f.json"
    findings.write_text("[]")
    res = cli_main("score", "--findings", str(findings), "--corpus", str(mini_corpus), "--stack", "mini",
              "--kind", "clean", "--history", str(folder))
    assert res.returncode == 0, res.stderr
    files = list(folder.iterdir())
    assert len(files) == 1 and files[0].name.endswith(".jsonl") and files[0].name[:4].isdigit()


def test_a_history_file_nearing_githubs_limit_draws_a_warning_in_the_job_summary(tmp_path: Path) -> None:
    history = tmp_path / "seed-scores.jsonl"
    rows = []
    for i in range(42):  # 42 records of about 1 MB each: over the 40 MB warning, far under 100 MB
        r = _rec(f"big-{i}", 2026)
        r["pad"] = "x" * 1_000_000  # an unknown key is carried, as a newer writer's field would be
        rows.append(r)
    _write(history, rows)
    frag = tmp_path / "frag.jsonl"
    _write(frag, [_rec("new", 2026)])
    summary = tmp_path / "summary.md"
    done = cli_main("history", "merge", "--json", str(history), str(frag),
               env={"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)})
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.splitlines()[-1])
    assert report["appended"] == 1 and len(report["warnings"]) == 1
    assert "42.0 MB" in report["warnings"][0] and "folder" in report["warnings"][0]
    assert "::warning title=History file large::" in done.stdout
    assert "42.0 MB" in summary.read_text() and "100 MB" in summary.read_text()


def test_a_small_history_draws_no_warning(tmp_path: Path) -> None:
    folder = tmp_path / "history"
    folder.mkdir()
    frag = tmp_path / "frag.jsonl"
    _write(frag, [_rec("r", 2026)])
    done = cli_main("history", "merge", "--json", "--into", str(folder), str(frag), env={"GITHUB_ACTIONS": "true"})
    assert done.returncode == 0
    assert json.loads(done.stdout.splitlines()[-1])["warnings"] == []
    assert "::warning" not in done.stdout and "warning:" not in done.stderr
