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


def _at(day: int, *records: dict[str, object]) -> list[dict[str, object]]:
    return [{**r, "recorded_at": f"2026-11-{day:02d}T10:00:00Z"} for r in records]


def _history_of_three_runs(path: Path) -> None:
    append_records(path, [r for day, run in ((1, "run-1"), (2, "run-2"), (3, "run-3"))
                          for r in _at(day, record(run, "seeded"), record(run, "clean"))])


def test_history_merge_with_history_and_fragment_swapped_is_refused_and_writes_nothing(tmp_path: Path) -> None:
    """``history merge FRAGMENT HISTORY`` (the two swapped) used to append the whole history
    to the fragment. The positional form now refuses what looks swapped, writes nothing and
    says how to say which file is which; ``--into`` says it explicitly."""
    history, frag = tmp_path / "seed-scores.jsonl", tmp_path / "records.jsonl"
    _history_of_three_runs(history)
    append_records(frag, _at(4, record("run-4", "seeded"), record("run-4", "clean")))  # today's run
    before = (history.read_bytes(), frag.read_bytes())
    res = cli_main("history", "merge", str(frag), str(history))
    assert res.returncode == 2 and res.stdout == ""
    assert len(res.stderr.strip().splitlines()) == 1, res.stderr
    assert "look swapped" in res.stderr and f"--into {history}" in res.stderr
    assert (history.read_bytes(), frag.read_bytes()) == before
    # Said explicitly, the same merge goes the right way; the positional form still works, with a warning.
    res = cli_main("history", "merge", "--into", str(history), str(frag))
    assert res.returncode == 0 and f"{history}: appended 2" in res.stdout and res.stderr == "", res.stderr
    assert len(read_history(history).records) == 8 and frag.read_bytes() == before[1]
    append_records(frag, _at(5, record("run-5", "seeded")))
    res = cli_main("history", "merge", str(history), str(frag))
    assert res.returncode == 0 and "appended 1" in res.stdout
    assert "--into" in res.stderr and len(res.stderr.strip().splitlines()) == 1
    help_text = cli_main("history", "merge", "--help").stdout
    assert "--into HISTORY" in help_text and "FRAGMENT" in help_text


def test_history_merge_into_a_new_or_small_history_is_never_refused(tmp_path: Path) -> None:
    history, frag = tmp_path / "h.jsonl", tmp_path / "f.jsonl"
    append_records(frag, [record("run-1", "seeded"), record("run-1", "clean")])
    assert cli_main("history", "merge", str(history), str(frag)).returncode == 0  # new
    frag2 = tmp_path / "f2.jsonl"
    append_records(frag2, [record("run-2", "seeded"), record("run-2", "clean"), record("run-2", "seeded", attempt=2)])
    assert cli_main("history", "merge", str(history), str(frag2)).returncode == 0  # one run, a bigger fragment
    assert len(read_history(history).records) == 5
    # --into takes the user's word for it, even where the positional form would ask.
    small = tmp_path / "small.jsonl"
    append_records(small, [record("run-9", "seeded")])
    res = cli_main("history", "merge", "--into", str(small), str(history))
    assert res.returncode == 0 and "appended 5" in res.stdout
