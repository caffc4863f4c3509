"""Output files are never written through a link, nor onto anything that is not a plain file.

Every file a command writes for a user goes through ``run/files.py``: a target that is a
symbolic link, a FIFO, a device, a folder or a socket is refused (exit 2, one line naming
the path and why) before any work; a file created inside an output folder (``run
--record DIR``, ``run --save-captures DIR``) is never opened through a name someone else
put there. Each case plants a link to a file outside the test's folder (it must come out
untouched) or a FIFO (which must neither block the command nor be replaced); every command
runs under a timeout, so a write that blocks on a FIFO fails instead of hanging.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from redline_canary.run.history import read_history
from redline_canary.sandbox import BanditReviewer
from tests.helpers.clirun import ROOT, cli, cli_main
from tests.helpers.records import append_records, record
from tests.helpers.sandboxing import TOKEN, canary_sandbox

CAPTURE = ROOT / "tests" / "data" / "captures" / "python-bandit-seeded.json"
CORPUS = ROOT / "tests" / "data" / "corpus"
SCORES = ROOT / "tests" / "data" / "redline" / "data" / "seed-scores.jsonl"
REPO = "acme/canary-mini"
FAST = ["--poll-interval", "0.05", "--stable-polls", "2", "--timeout-minutes", "0.5", "--confirm", "0"]
# A legacy-series line: even ``history import``, which reads its --out first, would take it.
PRECIOUS = (b'{"schema":"redline-legacy/1","series":"redline","source":"seed-scores.jsonl:1",'
            b'"imported_at":"2026-03-03T00:00:00Z","scored_at":"2026-03-02T09:15:00.000Z","repo":"acme/precious",'
            b'"pr":1,"standards_version":"2.3.0","reviewers":["copilot-pull-request-reviewer[bot]"],"seeded":2,'
            b'"caught":1,"blocker_seeded":1,"blocker_caught":1,"rule_matched":1,"comments_posted":2,'
            b'"false_positives_on_clean":0,"untagged_findings":0,"invalid_rule_ids":0,"silent":false,'
            b'"by_stack":{"python":{"total":2,"caught":1,"rule_matched":1}},"regression":[]}\n')


@pytest.fixture()
def victim(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A file outside the test's folder that a planted link points at."""
    path = tmp_path_factory.mktemp("outside") / "precious.jsonl"
    path.write_bytes(PRECIOUS)
    return path


def plant(kind: str, at: Path, victim: Path) -> None:
    at.parent.mkdir(parents=True, exist_ok=True)
    if kind == "symlink":
        at.symlink_to(victim)
    else:
        os.mkfifo(at)


def still_planted(kind: str, at: Path, victim: Path) -> None:
    """The planted thing is where it was, as it was, and the link's target is untouched."""
    mode = os.lstat(at).st_mode
    assert stat.S_ISLNK(mode) if kind == "symlink" else stat.S_ISFIFO(mode), f"{at} was replaced"
    assert victim.read_bytes() == PRECIOUS


WHY = {"symlink": "is a symbolic link", "fifo": "is a FIFO"}


def _scores(tmp: Path) -> Path:
    """Redline's seed-scores without its two corrupt lines (so a good import exits 0)."""
    path = tmp / "seed-scores.jsonl"
    path.write_text("".join(SCORES.read_text(encoding="utf-8").splitlines(keepends=True)[:3]), encoding="utf-8")
    return path


def _history(tmp: Path) -> Path:
    path = tmp / "history.jsonl"
    append_records(path, [record("r1"), record("r1", "clean")])
    return path


# (argv for an output at TARGET, the exit codes a good write ends with)
WRITERS: dict[str, tuple[Callable[[Path, Path], list[str]], tuple[int, ...]]] = {
    "score --save-capture": (lambda tmp, target: ["score", "--capture", str(CAPTURE), "--save-capture", str(target)],
                             (0, 1)),  # bandit misses seeds: the gate may fail, the capture is still saved
    "corpus audit --markdown": (lambda tmp, target: ["corpus", "audit", str(CAPTURE), "--markdown", str(target)],
                                (0,)),
    "corpus export --key": (lambda tmp, target: ["corpus", "export", "--corpus", str(CORPUS), "--stack", "mini",
                                                 "--kind", "seeded", "--out", str(tmp / "kit"), "--key", str(target)],
                            (0,)),
    "history import --out": (lambda tmp, target: ["history", "import", "--from", "redline", str(_scores(tmp)),
                                                  "--out", str(target)], (0,)),
    "report --markdown": (lambda tmp, target: ["report", str(_history(tmp)), "--markdown", str(target)], (0,)),
}


@pytest.mark.parametrize("kind", ["symlink", "fifo"])
@pytest.mark.parametrize("writer", list(WRITERS))
def test_a_writer_refuses_a_link_or_a_fifo_at_its_output_path(tmp_path: Path, victim: Path, writer: str,
                                                              kind: str) -> None:
    target = tmp_path / "out" / "target.out"
    plant(kind, target, victim)
    argv = WRITERS[writer][0](tmp_path, target)
    # A FIFO runs in a real process under a timeout: a write that opened it would block forever.
    res = cli(*argv, timeout=60) if kind == "fifo" else cli_main(*argv)
    assert res.returncode == 2, res.stdout + res.stderr
    assert res.stderr.count("\n") == 1 and "Traceback" not in res.stderr, res.stderr
    assert str(target) in res.stderr and WHY[kind] in res.stderr, res.stderr
    still_planted(kind, target, victim)
    assert not (tmp_path / "kit").exists()  # refused before any work, not after


@pytest.mark.parametrize("writer", list(WRITERS))
def test_a_writer_still_writes_a_plain_file_at_a_new_path(tmp_path: Path, writer: str) -> None:
    target = tmp_path / "out" / "target.out"
    argv, ok = WRITERS[writer]
    res = cli_main(*argv(tmp_path, target))
    assert res.returncode in ok, res.stdout + res.stderr
    assert stat.S_ISREG(os.lstat(target).st_mode) and target.stat().st_size > 0
    assert [p.name for p in target.parent.iterdir()] == ["target.out"]  # no temporary left behind


def test_a_plain_file_at_the_output_path_is_replaced_whole(tmp_path: Path) -> None:
    target = tmp_path / "worklist.md"
    target.write_text("an older worklist\n")
    res = cli_main("corpus", "audit", str(CAPTURE), "--markdown", str(target))
    assert res.returncode == 0, res.stderr
    assert "older" not in target.read_text() and [p.name for p in tmp_path.iterdir()] == ["worklist.md"]


# --------------------------------------------------------------------------- files made in an output folder


def _run_argv(sb_url: str, tmp_path: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "redline_canary", "run", "--repo", REPO, "--stack", "mini", "--corpus", str(CORPUS),
            "--api-url", sb_url, "--history", str(tmp_path / "h.jsonl"), "--run-id", "rid", *FAST, *extra]


RUN_ENV = {"GITHUB_TOKEN": TOKEN, "GITHUB_ACTIONS": ""}


def _run(sb_url: str, tmp_path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    """``redline-canary run`` in a real process against the sandbox, under a timeout."""
    return cli(*_run_argv(sb_url, tmp_path, *extra)[3:], env=RUN_ENV, timeout=90)


def _both_records_kept(tmp_path: Path) -> None:
    """The measurement is not lost to a file the run could not save."""
    assert sorted(r.kind for r in read_history(tmp_path / "h.jsonl").records) == ["clean", "seeded"]


# The seeded PR's capture and the recorder's old temporary name for the run's first
# interaction (its preflight): names anyone can predict, so anyone who can write to the
# folder can plant something there first.
SEEDED_CAPTURE = "rid-acme_canary-mini-mini-seeded-1.json"
FIRST_RECORDING = "00000_get_repos-acme-canary-mini_200.json"


@pytest.mark.parametrize("kind", ["symlink", "fifo"])
def test_run_save_captures_refuses_a_link_or_a_fifo_at_a_capture_name(tmp_path: Path, victim: Path,
                                                                       kind: str) -> None:
    folder = tmp_path / "out"
    plant(kind, folder / SEEDED_CAPTURE, victim)
    for sb in canary_sandbox(REPO):  # afterwards: no canary PR or branch left
        sb.attach_reviewer(REPO, BanditReviewer(latency=0.02))
        res = _run(sb.url, tmp_path, "--save-captures", str(folder))
    assert res.returncode == 2, res.stdout + res.stderr
    refusal = [line for line in res.stderr.splitlines() if str(folder / SEEDED_CAPTURE) in line]
    assert refusal and all(WHY[kind] in line for line in refusal), res.stderr
    assert "Traceback" not in res.stderr
    still_planted(kind, folder / SEEDED_CAPTURE, victim)
    assert stat.S_ISREG(os.lstat(folder / SEEDED_CAPTURE.replace("seeded", "clean")).st_mode)  # the other one saved
    _both_records_kept(tmp_path)


def _wait_for(folder: Path, pattern: str, proc: subprocess.Popen[str], timeout: float) -> Path:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        found = sorted(folder.glob(pattern)) if folder.is_dir() else []
        if found:
            return found[0]
        time.sleep(0.01)
    raise AssertionError(f"no {pattern} in {folder} (run exited {proc.poll()})")


@pytest.mark.parametrize("kind", ["symlink", "fifo"])
def test_run_record_refuses_a_link_or_a_fifo_planted_mid_run_at_its_next_file_name(tmp_path: Path, victim: Path,
                                                                                    kind: str) -> None:
    """``--record`` refuses a folder that already holds a recording, so a plant that matters
    happens during the run: here while the seeded PR's ``POST /pulls`` is held for 3 s,
    at the name that answer's file will have."""
    folder = tmp_path / "out"
    for sb in canary_sandbox(REPO):
        sb.attach_reviewer(REPO, BanditReviewer(latency=0.02))
        sb.inject_fault("POST", "/repos/{owner}/{repo}/pulls", delay=3)
        proc = subprocess.Popen(_run_argv(sb.url, tmp_path, "--record", str(folder)), cwd=ROOT, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, **RUN_ENV})
        try:
            before = _wait_for(folder, "*_post_repos-acme-canary-mini-git-refs_201.json", proc, timeout=60)
            name = f"{int(before.name[:5]) + 1:05d}_post_repos-acme-canary-mini-pulls_201.json"
            plant(kind, folder / name, victim)
            out, err = proc.communicate(timeout=90)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert proc.returncode == 2, out + err
    assert f"--record: recording stopped: {folder / name} {WHY[kind]}" in err, err
    assert "Traceback" not in err
    still_planted(kind, folder / name, victim)
    assert not list(folder.glob(".*.tmp"))  # no temporary left behind
    _both_records_kept(tmp_path)


@pytest.mark.parametrize("kind", ["symlink", "fifo"])
def test_run_record_never_opens_a_link_or_a_fifo_at_its_old_temporary_name(tmp_path: Path, victim: Path,
                                                                           kind: str) -> None:
    """The recorder wrote each file to ``NAME.part`` first: a link planted there was written
    through and a FIFO hung the run. Its temporary files are now its own
    (O_CREAT|O_EXCL|O_NOFOLLOW, a random name), so neither is touched."""
    folder = tmp_path / "out"
    planted = folder / FIRST_RECORDING.replace(".json", ".part")
    plant(kind, planted, victim)
    for sb in canary_sandbox(REPO):
        sb.attach_reviewer(REPO, BanditReviewer(latency=0.02))
        res = _run(sb.url, tmp_path, "--record", str(folder))
    assert victim.read_bytes() == PRECIOUS
    still_planted(kind, planted, victim)
    assert stat.S_ISREG(os.lstat(folder / FIRST_RECORDING).st_mode)
    assert res.returncode == 1, res.stdout + res.stderr  # bandit misses seeds: the gate fails, the run worked
