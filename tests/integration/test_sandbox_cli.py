"""``redline-canary sandbox serve`` as a user runs it: a process, a URL, Ctrl-C."""

from __future__ import annotations

import json
import signal
import subprocess
import sys

import httpx
import pytest

from redline_canary.cli import main


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
            "--reviewer",
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
