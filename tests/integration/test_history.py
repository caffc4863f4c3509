"""History: locked appends, corrupt lines reported not lost, idempotent merge, gate."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema

from redline_canary.run.history import merge, read_history
from tests.helpers.clirun import ROOT, cli_main
from tests.helpers.records import append_records, record

SCHEMA = json.loads((ROOT / "history" / "schema.json").read_text())


WRITER = """
import sys
sys.path.insert(0, {tests!r})
from tests.helpers.records import append_records, record
for i in range(1000):
    append_records(sys.argv[1], [record(run_id=f"{{sys.argv[2]}}-{{i}}")])
"""


def test_two_processes_appending_1000_records_each_yield_2000_valid_lines(tmp_path: Path) -> None:
    hist = tmp_path / "h.jsonl"
    code = WRITER.format(tests=str(ROOT))
    procs = [subprocess.Popen([sys.executable, "-c", code, str(hist), name], cwd=ROOT)
             for name in ("a", "b")]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    read = read_history(hist)
    assert read.corrupt == [] and len(read.records) == 2000
    assert len({r.run_id for r in read.records}) == 2000


def test_corrupt_lines_are_reported_with_numbers_and_never_rewritten(tmp_path: Path) -> None:
    """A complete line, corrupt or not, is never touched; only the unfinished last line a
    killed writer left (no newline, not JSON) is cut off, and named, by the next append."""
    hist = tmp_path / "h.jsonl"
    append_records(hist, [record("r1")])
    with hist.open("a") as fh:
        fh.write('{"half": \n')
        fh.write(json.dumps({"schema": 1}) + "\n")
    complete = hist.read_bytes()
    with hist.open("a") as fh:
        fh.write('{"truncated')  # a crash mid-write: no newline
    warned: list[str] = []
    append_records(hist, [record("r2")], warn=warned.append)
    assert hist.read_bytes().startswith(complete)
    assert len(warned) == 1 and warned[0].startswith(f"{hist}:4: torn last line removed (11 bytes"), warned
    read = read_history(hist)
    assert [r.run_id for r in read.records] == ["r1", "r2"]
    assert [n for n, _ in read.corrupt] == [2, 3]
    assert "missing keys" in read.corrupt[1][1]


def test_merge_is_idempotent_and_reports_corrupt_fragments(tmp_path: Path) -> None:
    out = tmp_path / "history.jsonl"
    frag_a, frag_b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    append_records(frag_a, [record("r1", "seeded"), record("r1", "clean")])
    append_records(frag_b, [record("r1", "seeded"), record("r1", "seeded", attempt=2)])
    with frag_b.open("a") as fh:
        fh.write("garbage\n")
    first = merge(out, [frag_a, frag_b])
    assert (first.appended, first.already_present, len(first.corrupt)) == (3, 1, 1)
    again = merge(out, [frag_a, frag_b])
    assert again.appended == 0 and len(read_history(out).records) == 3


def test_history_merge_and_gate_commands(tmp_path: Path) -> None:
    out = tmp_path / "history.jsonl"
    frag = tmp_path / "f.jsonl"
    append_records(frag, [record("run-9", "seeded", passed=False), record("run-9", "clean"),
                          record("run-8", "seeded")])
    res = cli_main("history", "merge", str(out), str(frag))
    assert res.returncode == 0 and "appended 3" in res.stdout
    again = json.loads(cli_main("history", "merge", str(out), str(frag), "--json").stdout)
    assert (again["appended"], again["already_present"], again["corrupt"]) == (0, 3, [])
    for r in read_history(out).records:
        jsonschema.validate(r.to_json(), SCHEMA)
    res = cli_main("gate", str(out), "--run-id", "run-9", "--json")
    assert res.returncode == 1 and json.loads(res.stdout)["exit_code"] == 1
    assert cli_main("gate", str(out), "--run-id", "run-8").returncode == 0
    res = cli_main("gate", str(out), "--run-id", "nope")
    assert res.returncode == 2 and "no records with run_id 'nope'" in res.stderr


def test_gate_priority_and_confirmation_attempts(tmp_path: Path) -> None:
    out = tmp_path / "history.jsonl"
    append_records(out, [
        record("r", "seeded", stack="a", passed=False),
        record("r", "seeded", stack="a", passed=True, attempt=2),  # confirmation re-run passed
        record("r", "clean", stack="b", outcome="silent", passed=False),
        record("r", "seeded", stack="c", passed=False),
    ])
    assert cli_main("gate", str(out), "--run-id", "r").returncode == 3  # silent (3) beats gate (1)


def test_gate_on_unreadable_history_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "h.jsonl"
    bad.write_bytes(b"\xff\xfe\x00garbage")
    res = cli_main("gate", str(bad), "--run-id", "x")
    assert res.returncode == 2 and "h.jsonl" in res.stderr
