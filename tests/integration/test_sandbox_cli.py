"""``redline-canary sandbox serve`` as a user runs it: a process, a URL, Ctrl-C."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from redline_canary.cli import main
from tests.helpers.clirun import cli, cli_main
from tests.helpers.sandboxing import open_canary_over_http


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_serve_prints_url_serves_and_stops_cleanly(sig: signal.Signals) -> None:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "redline_canary",
            "sandbox",
            "serve",
            "--json",
            "--reviewer-kind",
            "silent",
            "--repo",
            "acme/one",
            "--repo",
            "acme/two",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        info = json.loads(proc.stdout.readline())
        assert info["repos"] == ["acme/one", "acme/two"]
        assert info["url"].startswith("http://127.0.0.1:")
        r = httpx.get(f"{info['url']}/repos/acme/two", headers={"Authorization": "token x"})
        assert r.status_code == 200 and r.json()["full_name"] == "acme/two"
        proc.send_signal(sig)
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_serve_rejects_bad_repo_names(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sandbox", "serve", "--repo", "no-slash"]) == 2
    assert "--repo" in capsys.readouterr().err
    assert main(["sandbox"]) == 2


def test_banner_commands_work_as_printed(tmp_path: Path) -> None:
    """The journey the banner promises: export its token, paste its doctor and run lines,
    then the gate line the run prints, and nothing is left open."""
    proc = subprocess.Popen([sys.executable, "-m", "redline_canary", "sandbox", "serve", "--latency", "0.2"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline().rstrip("\n") for _ in range(7)]
        url = lines[0].removeprefix("sandbox listening on ")
        assert url.startswith("http://127.0.0.1:")
        export = next(ln.strip() for ln in lines if ln.strip().startswith("export "))
        exported = dict(pair.split("=", 1) for pair in shlex.split(export)[1:])
        assert exported["REDLINE_CANARY_API_URL"] == url
        commands = {ln.split()[1]: shlex.split(ln)[1:] for ln in lines if ln.strip().startswith("redline-canary ")}
        env = {k: v for k, v in os.environ.items()
           if k not in ("REDLINE_CANARY_TOKEN", "GITHUB_TOKEN", "REDLINE_CANARY_API_URL")}

        # the URL exported, the token forgotten: doctor says any token works, and which
        env["REDLINE_CANARY_API_URL"] = url
        bare = cli(*commands["doctor"], env=env, cwd=tmp_path)
        assert bare.returncode == 2
        assert "no token" in bare.stderr and "accepts any token" in bare.stderr
        assert "export REDLINE_CANARY_TOKEN=" in bare.stderr  # the line to type next

        env.update(exported)
        doctor = cli(*commands["doctor"], env=env, cwd=tmp_path)
        assert doctor.returncode == 0, doctor.stdout + doctor.stderr
        assert "no blocking problem" in doctor.stdout

        run = cli(*commands["run"], env=env, cwd=tmp_path, timeout=300)
        assert run.returncode == 1, run.stderr  # bandit misses the BLOCKERs: the gate fails
        assert "hint:" not in run.stderr  # the banner's flags are already the fast ones
        gate_line = next(ln.strip() for ln in run.stderr.splitlines() if "redline-canary gate" in ln)
        gate = cli(*shlex.split(gate_line.removeprefix("next:").strip())[1:], env=env, cwd=tmp_path)
        assert gate.returncode == 1 and "FAIL" in gate.stdout + gate.stderr
        assert open_canary_over_http(url, "acme/canary-python") == ([], [])
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=10)


def test_run_against_a_local_api_at_githubs_pace_hints_the_fast_flags() -> None:
    base = ["run", "--dry-run", "--repo", "acme/canary-python", "--stack", "python"]
    slow = cli_main(*base, "--api-url", "http://127.0.0.1:9")
    assert slow.returncode == 0
    assert "hint: polling every 30 s" in slow.stderr and "--poll-interval 1" in slow.stderr
    from_env = cli_main(*base, env={"REDLINE_CANARY_API_URL": "http://127.0.0.1:9"})
    assert "hint: polling every 30 s" in from_env.stderr  # the banner's export counts as --api-url
    fast = cli_main(*base, "--api-url", "http://127.0.0.1:9", "--poll-interval", "1")
    assert "hint" not in fast.stderr
    enterprise = cli_main(*base, "--api-url", "https://ghe.example.com/api/v3")
    assert "hint" not in enterprise.stderr  # never a sandbox hint against a real server


def test_sandbox_reviewer_is_a_deprecated_alias_of_reviewer_kind(tmp_path: Path) -> None:
    old = cli_main("sandbox", "verify", "--reviewer", "none", str(tmp_path / "missing"))
    assert "--reviewer is deprecated" in old.stderr and "--reviewer-kind" in old.stderr
    both = cli_main("sandbox", "verify", "--reviewer", "none", "--reviewer-kind", "bandit", str(tmp_path))
    assert both.returncode == 2 and "disagree" in both.stderr


def test_api_url_from_the_environment_is_checked_and_only_where_an_api_is_used(tmp_path: Path) -> None:
    bad = cli_main("doctor", "--repo", "acme/canary-python", env={"REDLINE_CANARY_API_URL": "ftp://host"})
    assert bad.returncode == 2 and "REDLINE_CANARY_API_URL" in bad.stderr  # named, not "--api-url"
    capture = Path(__file__).resolve().parents[1] / "data" / "captures" / "python-bandit-seeded.json"
    scored = cli_main("score", "--capture", str(capture), env={"REDLINE_CANARY_API_URL": "http://127.0.0.1:9"})
    assert scored.returncode == 1, scored.stderr  # a capture needs no API: the variable is not in the way
