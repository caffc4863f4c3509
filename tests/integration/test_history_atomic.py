"""History writes are all-or-nothing; readers read only regular files.

A full disk is simulated portably: the writer runs in a subprocess whose file-size limit
(``RLIMIT_FSIZE``) sits a few bytes past the history's current size, with ``SIGXFSZ``
ignored, so the kernel cuts the write short or fails it with ``EFBIG`` exactly as a full
disk would (``ENOSPC``). The history must come out byte for byte as it went in.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from test_workflow_flow import DEV_CLI, RUN_ID, WORKFLOW, origin_history, record_job

from redline_canary.cli import main
from redline_canary.errors import BadInput
from redline_canary.run import history
from redline_canary.run.history import read_history
from tests.helpers.actionrunner import load_yaml
from tests.helpers.clirun import ROOT, cli, cli_main
from tests.helpers.records import append_records, record

LIMITED = """
import resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
limit = int(sys.argv[1])
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
from redline_canary.cli import main
sys.exit(main(sys.argv[2:]))
"""


def limited(limit: int, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", LIMITED, str(limit), *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=120, check=False, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})


def jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.mark.parametrize("room", [0, 1, 200])
def test_a_merge_that_hits_the_file_size_limit_leaves_the_history_exactly_as_it_was(tmp_path: Path,
                                                                                    room: int) -> None:
    out = tmp_path / "history.jsonl"
    append_records(out, [record("old-1"), record("old-2")])
    before = out.read_bytes()
    frag = jsonl(tmp_path / "frag.jsonl", [record(f"new-{i}") for i in range(20)])
    res = limited(len(before) + room, "history", "merge", "--into", str(out), str(frag))
    assert res.returncode == 2, res.stdout + res.stderr
    assert res.stderr.count("\n") == 1 and "Traceback" not in res.stderr, res.stderr
    assert res.stderr.startswith(f"redline-canary: {out}: cannot append to history (")
    assert "the file is unchanged" in res.stderr
    assert res.stdout == ""  # no summary: the workflow reads that as "nothing merged"
    assert out.read_bytes() == before
    # With room, the same merge goes through whole.
    assert cli_main("history", "merge", "--into", str(out), str(frag)).returncode == 0
    assert len(read_history(out).records) == 22 and read_history(out).corrupt == []


def test_a_failed_merge_leaves_a_torn_tail_byte_for_byte_and_the_next_one_repairs_it(tmp_path: Path) -> None:
    out = tmp_path / "history.jsonl"
    append_records(out, [record("old")])
    with out.open("a") as fh:
        fh.write('{"torn')  # a writer died mid-line
    before = out.read_bytes()
    frag = jsonl(tmp_path / "frag.jsonl", [record("new")])
    assert limited(len(before) + 1, "history", "merge", "--into", str(out), str(frag)).returncode == 2
    assert out.read_bytes() == before  # neither the repair nor a byte of the batch stayed
    res = cli_main("history", "merge", "--into", str(out), str(frag))
    assert res.returncode == 0, res.stderr
    assert f"{out}:2: torn last line removed (6 bytes" in res.stderr
    read = read_history(out)
    assert [r.run_id for r in read.records] == ["old", "new"] and read.corrupt == []


# --------------------------------------------------------------------------- a killed writer


def _torn(run_id: str, keep: int) -> bytes:
    """The first ``keep`` bytes of a record's line: what a writer SIGKILLed mid-line leaves."""
    return (json.dumps(record(run_id), separators=(",", ":")) + "\n").encode()[:keep]


def _assert_clean_for_readers(out: Path, run_id: str) -> None:
    """``gate`` and ``report`` see every record and no corrupt line."""
    gate = cli_main("gate", str(out), "--run-id", run_id)
    assert gate.returncode == 0 and "corrupt" not in gate.stderr, gate.stdout + gate.stderr
    report = cli_main("report", str(out), "--json")
    assert report.returncode == 0 and report.stderr == "", report.stderr
    assert json.loads(report.stdout)["skipped"] == []


def test_a_torn_tail_a_killed_merge_left_is_cut_off_named_and_counted_by_the_next_merge(tmp_path: Path) -> None:
    out = tmp_path / "history.jsonl"
    append_records(out, [record("old-1"), record("old-2")])
    whole = out.read_bytes()
    torn = _torn("killed", 57)
    with out.open("ab") as fh:
        fh.write(torn)
    frag = jsonl(tmp_path / "frag.jsonl", [record("killed"), record("new")])
    res = cli("history", "merge", "--into", str(out), str(frag), timeout=60)
    assert res.returncode == 0, res.stdout + res.stderr
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{out}:3: torn last line removed (57 bytes"), res.stderr
    assert res.stdout == f"{out}: appended 2, already present 0, corrupt 0, torn tails removed 1\n"
    assert out.read_bytes().startswith(whole)  # no complete line was touched
    read = read_history(out)
    assert [r.run_id for r in read.records] == ["old-1", "old-2", "killed", "new"] and read.corrupt == []
    _assert_clean_for_readers(out, "new")
    # Repaired once: the next merge has nothing to repair or add.
    again = cli("history", "merge", "--json", "--into", str(out), str(frag), timeout=60)
    assert again.returncode == 0 and again.stderr == "", again.stderr
    assert json.loads(again.stdout)["torn_tails"] == []


def test_the_json_summary_names_the_torn_tail_and_a_merge_with_nothing_new_still_repairs(tmp_path: Path) -> None:
    out = tmp_path / "history.jsonl"
    append_records(out, [record("old")])
    whole = out.read_bytes()
    with out.open("ab") as fh:
        fh.write(_torn("old", 300))
    frag = jsonl(tmp_path / "frag.jsonl", [record("old")])  # already present: nothing to append
    res = cli_main("history", "merge", "--json", "--into", str(out), str(frag))
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert (doc["appended"], doc["already_present"]) == (0, 1)
    assert doc["torn_tails"] == [{"file": str(out), "line": 2, "bytes": 300}]
    assert f"{out}:2: torn last line removed (300 bytes" in res.stderr
    assert out.read_bytes() == whole


def test_a_complete_last_line_without_its_newline_is_kept(tmp_path: Path) -> None:
    """Only an incomplete line is cut: a whole record missing just its newline (a hand
    edit) is kept and gets the newline."""
    out = tmp_path / "history.jsonl"
    append_records(out, [record("old")])
    out.write_bytes(out.read_bytes() + _torn("last", 10_000).rstrip(b"\n"))
    frag = jsonl(tmp_path / "frag.jsonl", [record("new")])
    res = cli_main("history", "merge", "--into", str(out), str(frag))
    assert res.returncode == 0 and res.stderr == "", res.stderr
    assert "torn" not in res.stdout
    read = read_history(out)
    assert [r.run_id for r in read.records] == ["old", "last", "new"] and read.corrupt == []


def test_a_score_appending_to_a_torn_history_repairs_and_names_the_tail(tmp_path: Path, mini_corpus: Path) -> None:
    from tests.helpers.factories import capture, inline

    out = tmp_path / "history.jsonl"
    append_records(out, [record("old")])
    with out.open("ab") as fh:
        fh.write(_torn("killed", 120))
    cap = tmp_path / "cap.json"
    cap.write_text(json.dumps(capture([inline("p/app.py", 5, "[BLOCKER] secret")])))
    res = cli_main("score", "--capture", str(cap), "--corpus", str(mini_corpus), "--stack", "mini", "--prefix", "p",
                   "--kind", "seeded", "--history", str(out), "--run-id", "scored")
    assert f"{out}:2: torn last line removed (120 bytes" in res.stderr, res.stderr
    read = read_history(out)
    assert [r.run_id for r in read.records] == ["old", "scored"] and read.corrupt == []


KILLED_MID_WRITE = """
import os, signal, sys
real_write = os.write

def write(fd, data):
    if len(data) > 1 << 20:  # the merge's batch: half of it reaches the file, then SIGKILL
        real_write(fd, data[: len(data) // 2])
        os.kill(os.getpid(), signal.SIGKILL)
    return real_write(fd, data)

os.write = write
from redline_canary.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_a_merge_sigkilled_mid_write_is_completed_by_the_next_merge_without_losing_a_record(tmp_path: Path) -> None:
    out = tmp_path / "history.jsonl"
    append_records(out, [record("old-1"), record("old-2")])
    whole = out.read_bytes()
    frag = jsonl(tmp_path / "frag.jsonl", [record(f"k-{i}") for i in range(20_000)])
    killed = subprocess.run([sys.executable, "-c", KILLED_MID_WRITE, "history", "merge", "--into", str(out), str(frag)],
                            capture_output=True, text=True, cwd=ROOT, timeout=120, check=False)
    assert killed.returncode == -9, killed.stderr
    torn = out.read_bytes()
    assert torn.startswith(whole) and not torn.endswith(b"\n")  # half a batch, half a line
    kept = torn.count(b"\n")
    res = cli("history", "merge", "--into", str(out), str(frag), timeout=120)
    assert res.returncode == 0, res.stderr
    dropped = len(torn) - torn.rindex(b"\n") - 1
    assert res.stderr.count("\n") == 1, res.stderr
    assert res.stderr.startswith(f"{out}:{kept + 1}: torn last line removed ({dropped} bytes"), res.stderr
    assert "torn tails removed 1" in res.stdout
    after = out.read_bytes()
    assert after.startswith(torn[: len(torn) - dropped])  # every complete line the killed merge wrote stays
    read = read_history(out)
    assert read.corrupt == [] and len(read.records) == 20_002
    assert len({r.run_id for r in read.records}) == 20_002
    gate = cli_main("gate", str(out), "--run-id", "k-19999")
    assert gate.returncode == 0 and gate.stderr == "", gate.stderr


def test_score_appending_to_a_full_history_fails_in_one_line_and_changes_nothing(
        tmp_path: Path, mini_corpus: Path) -> None:
    from tests.helpers.factories import capture, inline

    out = tmp_path / "history.jsonl"
    append_records(out, [record("old")])
    before = out.read_bytes()
    cap = tmp_path / "cap.json"
    cap.write_text(json.dumps(capture([inline("p/app.py", 5, "[BLOCKER] secret")])))
    res = limited(len(before) + 10, "score", "--capture", str(cap), "--corpus", str(mini_corpus),
                  "--stack", "mini", "--prefix", "p", "--kind", "seeded", "--history", str(out))
    assert res.returncode == 2 and res.stderr.count("\n") == 1 and "Traceback" not in res.stderr, res.stderr
    assert out.read_bytes() == before


def test_a_short_write_is_rolled_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "h.jsonl"
    append_records(out, [record("old")])
    before = out.read_bytes()
    real_write = os.write

    def half(fd: int, data: bytes) -> int:
        return real_write(fd, data[: len(data) // 2])

    monkeypatch.setattr(history.os, "write", half)
    with pytest.raises(BadInput, match=r"short write: \d+ of \d+ bytes.*the file is unchanged"):
        append_records(out, [record("new-1"), record("new-2")])
    assert out.read_bytes() == before


def test_an_interrupt_between_write_and_fsync_is_rolled_back_and_still_interrupts(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "h.jsonl"
    append_records(out, [record("old")])
    before = out.read_bytes()
    frag = jsonl(tmp_path / "f.jsonl", [record("new")])
    real_fsync = os.fsync
    calls = {"n": 0}

    def interrupted(fd: int) -> None:
        calls["n"] += 1
        if calls["n"] == 1:
            raise KeyboardInterrupt
        real_fsync(fd)

    monkeypatch.setattr(history.os, "fsync", interrupted)
    assert main(["history", "merge", "--into", str(out), str(frag)]) == 130  # the CLI's "interrupted"
    assert out.read_bytes() == before
    assert capsys.readouterr().err == "redline-canary: interrupted\n"


# --------------------------------------------------------------------------- not a regular file


def _fifo(tmp_path: Path) -> Path:
    path = tmp_path / "fifo.jsonl"
    os.mkfifo(path)
    return path




# A directory is a history too (a folder of JSONL files, docs/record.md): see test_history_folder.py.
SPECIALS = {"/dev/zero": lambda tmp: Path("/dev/zero"), "a FIFO": _fifo}
KINDS = {"/dev/zero": "a character device", "a FIFO": "a FIFO"}


@pytest.mark.parametrize("special", list(SPECIALS))
@pytest.mark.parametrize("command", ["gate", "report", "actions-report", "merge-fragment", "merge-out"])
def test_readers_refuse_anything_but_a_regular_file_at_once(tmp_path: Path, special: str, command: str) -> None:
    target = SPECIALS[special](tmp_path)
    frag = jsonl(tmp_path / "frag.jsonl", [record("r1")])
    args = {
        "gate": ["gate", str(target), "--run-id", "r1"],
        "report": ["report", str(target)],
        "actions-report": ["actions-report", str(target), "--exit-code", "0", "--summary", str(tmp_path / "s.md")],
        "merge-fragment": ["history", "merge", str(tmp_path / "out.jsonl"), str(target)],
        "merge-out": ["history", "merge", str(target), str(frag)],
    }[command]
    res = cli(*args, env={"GITHUB_ACTIONS": "", "GITHUB_OUTPUT": ""}, timeout=30)  # /dev/zero used to eat memory
    assert res.returncode == 2, res.stdout + res.stderr
    assert res.stderr.count("\n") == 1 and "Traceback" not in res.stderr, res.stderr
    assert str(target) in res.stderr
    assert f"is not a regular file ({KINDS[special]})" in res.stderr
    assert not (tmp_path / "out.jsonl").exists()
    if command == "actions-report":  # the action's report step still says what happened
        assert "is not a regular file" in (tmp_path / "s.md").read_text(encoding="utf-8")


# --------------------------------------------------------------------------- the workflow


FAILING_MERGE = """#!/usr/bin/env bash
# A redline-canary whose `history merge` dies half way (a crash, a full disk in an older
# version): half a record is left in the history and it exits {code} without a summary.
if [ "$1" = history ] && [ "$2" = merge ]; then
  for a in "$@"; do case "$a" in *.jsonl) out="$a"; break ;; esac; done
  printf '%s' '{{"schema": 1, "run_id": "half' >> "$out"
  echo "redline-canary: $out: cannot append to history (No space left on device)" >&2
  exit {code}
fi
exec {cli} "$@"
"""


@pytest.mark.parametrize("code", [2, 4, 5])
def test_record_job_commits_and_pushes_nothing_after_a_failed_merge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                    code: int) -> None:
    art = tmp_path / "artifacts" / "redline-canary-records-a"
    art.mkdir(parents=True)
    jsonl(art / "records.jsonl", [record(run_id=RUN_ID, kind=k) for k in ("seeded", "clean")])
    fake = tmp_path / "bin" / "redline-canary"
    fake.parent.mkdir()
    fake.write_text(FAILING_MERGE.format(code=code, cli=DEV_CLI))
    fake.chmod(0o755)
    monkeypatch.setattr("test_workflow_flow.DEV_CLI", str(fake))
    older = record(run_id="4100-1")
    run, origin, runner = record_job(tmp_path, [older])
    merge = run.step("merge")
    assert merge.outcome == "failure" and merge.returncode == code, merge.stdout + merge.stderr
    assert any(a.props.get("title") == "History not merged" for a in run.annotations("error"))
    assert [r["run_id"] for r in origin_history(origin, tmp_path)] == ["4100-1"]  # nothing pushed
    log = subprocess.run(["git", "--git-dir", str(origin), "log", "--format=%s", "main"], capture_output=True,
                         text=True, check=True).stdout.splitlines()
    assert log == ["start"]
    status = subprocess.run(["git", "status", "--porcelain"], cwd=runner.workspace, capture_output=True, text=True,
                            check=True).stdout
    assert status == ""  # the half line was dropped from the checkout too


def test_every_run_step_that_writes_history_fails_on_errors() -> None:
    """The record job's merge step runs under ``set -euo pipefail`` and reads the merge's
    status explicitly; the action's merge of ``history-file`` turns a failure into the
    step's exit code instead of a warning."""
    merge = next(s for s in WORKFLOW["jobs"]["record"]["steps"] if s.get("id") == "merge")
    script = merge["run"]
    assert script.lstrip().startswith("set -euo pipefail")
    assert '|| status=$?' in script and 'grep -q \'"appended":\' "$report"' in script
    action = load_yaml(ROOT / "action.yml")
    run = next(s for s in action["runs"]["steps"] if s.get("id") == "run")["run"]
    assert "|| echo" not in run.split('history merge')[1].split("\n")[0]
    assert '|| merged=$?' in run
