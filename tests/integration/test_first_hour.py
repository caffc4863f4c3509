"""A newcomer's first hour, end to end through the CLI (issue 25): the demo, then the
sandbox served in a real process and driven as its banner says (doctor, run, gate,
report), a run killed mid-way and swept by the janitor, a fragment merged into a history,
a review's ``score --json`` audited, a comment classified. Every step is judged by what a
newcomer reads: does its output say what to do next? It ends with no canary PR or branch
left in the sandbox.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.helpers.clirun import cli
from tests.helpers.sandboxing import open_canary_over_http

REPO = "acme/canary-python"
CAPTURE = Path(__file__).resolve().parents[1] / "data" / "captures" / "python-bandit-seeded.json"


def _next_line(text: str, command: str) -> list[str]:
    """The argv of the first ``redline-canary COMMAND ...`` line the output suggests."""
    for line in text.splitlines():
        words = line.replace("next:", "").strip()
        if words.startswith(f"redline-canary {command} "):
            return shlex.split(words)[1:]
    raise AssertionError(f"no 'redline-canary {command}' line to type next in:\n{text}")


def test_first_hour(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items()
           if k not in ("REDLINE_CANARY_TOKEN", "GITHUB_TOKEN", "REDLINE_CANARY_API_URL")}

    # 1. The demo: exit 3 by design, and it says so; it ends with the gate command to type.
    demo = cli("demo", cwd=tmp_path, env=env, timeout=300)
    assert demo.returncode == 3, demo.stderr
    assert "expected here" in demo.stdout  # exit 3 explained, not left to look like a crash
    gate_argv = _next_line(demo.stderr, "gate")
    demo_gate = cli(*gate_argv, cwd=tmp_path, env=env)
    assert demo_gate.returncode == 3  # the same verdict, from the history the demo wrote

    # 2. The sandbox, served as a user serves it; the banner is the next step.
    serve = subprocess.Popen([sys.executable, "-m", "redline_canary", "sandbox", "serve", "--latency", "0.2"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        assert serve.stdout is not None
        banner = "\n".join(serve.stdout.readline() for _ in range(7))
        url = banner.split()[3]
        export = next(ln.strip() for ln in banner.splitlines() if ln.strip().startswith("export "))
        exported = dict(pair.split("=", 1) for pair in shlex.split(export)[1:])

        # 3. doctor with the URL but no token: the hint names the line to type.
        bare = cli(*_next_line(banner, "doctor"), "--api-url", url, cwd=tmp_path, env=env)
        assert bare.returncode == 2 and "export REDLINE_CANARY_TOKEN=" in bare.stderr
        env.update(exported)
        doctor = cli(*_next_line(banner, "doctor"), cwd=tmp_path, env=env)
        assert doctor.returncode == 0 and doctor.stdout.splitlines()[-1] == "no blocking problem"

        # 4. run without the banner's flags is told them; the banner's run ends with its run id.
        slow = cli("run", "--dry-run", "--repo", REPO, "--stack", "python", cwd=tmp_path, env=env)
        assert "--poll-interval 1" in slow.stderr
        run = cli(*_next_line(banner, "run"), cwd=tmp_path, env=env, timeout=300)
        assert run.returncode == 1, run.stderr  # bandit misses the BLOCKERs: the gate fails
        assert "run id: " in run.stderr

        # 5. gate with the printed run id, then the scoreboard of the same history.
        gate = cli(*_next_line(run.stderr, "gate"), cwd=tmp_path, env=env)
        assert gate.returncode == 1 and "FAIL" in gate.stdout + gate.stderr
        history = tmp_path / "sandbox-history.jsonl"
        report = cli("report", str(history), cwd=tmp_path, env=env)
        assert report.returncode == 0 and REPO in report.stdout

        # 6. A run killed after it opened its PRs: the janitor's dry run says what it left
        #    and how to remove it now; that command removes it.
        killed = subprocess.Popen(
            [sys.executable, "-m", "redline_canary", *_next_line(banner, "run"), "--run-id", "killed-1",
             "--history", str(tmp_path / "killed.jsonl")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=tmp_path)
        deadline = time.monotonic() + 120
        while not open_canary_over_http(url, REPO)[0] and time.monotonic() < deadline and killed.poll() is None:
            time.sleep(0.2)
        killed.send_signal(signal.SIGKILL)
        killed.wait()
        assert open_canary_over_http(url, REPO)[0], "the killed run opened no PR"
        dry = cli("janitor", "--repo", REPO, "--dry-run", cwd=tmp_path, env=env)
        assert dry.returncode == 0, dry.stderr
        assert "killed-1" in dry.stdout and "--run-id" in dry.stdout  # the next command, not "0 PR(s)"
        sweep = cli("janitor", "--repo", REPO, "--run-id", "killed-1", cwd=tmp_path, env=env)
        assert sweep.returncode == 0, sweep.stdout + sweep.stderr
        assert open_canary_over_http(url, REPO) == ([], [])
    finally:
        serve.send_signal(signal.SIGINT)
        serve.wait(timeout=10)

    # 7. A fragment merged into the history: the summary counts, a rerun doubles nothing.
    merged = tmp_path / "seed-scores.jsonl"
    first = cli("history", "merge", "--into", str(merged), str(history), cwd=tmp_path, env=env)
    again = cli("history", "merge", "--into", str(merged), str(history), cwd=tmp_path, env=env)
    assert first.returncode == 0 and "appended 3" in first.stdout, first.stdout + first.stderr
    assert again.returncode == 0 and "appended 0" in again.stdout

    # 8. A captured review scored to JSON, then audited: the worklist, not "not valid JSON".
    scored = cli("score", "--capture", str(CAPTURE), "--json", cwd=tmp_path, env=env)
    (tmp_path / "record.json").write_text(scored.stdout)
    audit = cli("corpus", "audit", str(tmp_path / "record.json"), cwd=tmp_path, env=env)
    assert audit.returncode == 0, audit.stderr
    assert "not valid JSON" not in audit.stdout + audit.stderr and "undercall" in audit.stdout

    # 9. How a profile reads one comment.
    body = tmp_path / "comment.md"
    body.write_text("_⚠️ Potential issue_ | _🟠 Major_\n\n**SQL injection**: the sort key is interpolated.\n")
    classify = cli("profile", "classify", "--reviewer", "coderabbit", "--channel", "inline",
                   "--body-file", str(body), cwd=tmp_path, env=env)
    assert classify.returncode == 0, classify.stderr
    assert "finding: MAJOR" in classify.stdout  # CodeRabbit's own severity segment, read
