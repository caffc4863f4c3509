"""``redline-canary profile learn`` through the installed console script: a user pastes one
comment the profile misreads and what it means, gets YAML, and the YAML fed back through
``--profiles`` makes ``profile classify`` read it right while every shipped example of the
profile reads as before (docs/dialects.md#teaching-a-profile-a-new-phrasing)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "profiles"
_VENV = ROOT / ".venv" / "bin" / "redline-canary"
EXE = str(_VENV if _VENV.exists() else Path(sys.executable).parent / "redline-canary")


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([EXE, *args], capture_output=True, text=True, timeout=120, cwd=ROOT)


def classify(reviewer: str, channel: str, body: Path, *extra: str) -> dict[str, Any]:
    proc = cli("profile", "classify", "--reviewer", reviewer, "--channel", channel, "--body-file", str(body),
               "--json", *extra)
    assert proc.returncode == 0, proc.stderr
    out: dict[str, Any] = json.loads(proc.stdout)
    return out


def learn(tmp_path: Path, reviewer: str, body: str, *args: str) -> tuple[subprocess.CompletedProcess[str], Path, Path]:
    body_file = tmp_path / "body.md"
    body_file.write_text(body, encoding="utf-8")
    proc = cli("profile", "learn", "--reviewer", reviewer, "--body-file", str(body_file), *args)
    learned = tmp_path / "learned.yml"
    learned.write_text(proc.stdout, encoding="utf-8")
    return proc, body_file, learned


def shipped_read_the_same(reviewer: str, learned: Path) -> None:
    for side in sorted((DATA / reviewer).glob("*.expect.json")):
        channel = json.loads(side.read_text(encoding="utf-8"))["channel"]
        body = side.with_name(side.name.removesuffix(".expect.json") + ".md")
        assert classify(reviewer, channel, body, "--profiles", str(learned)) == classify(reviewer, channel, body), body


def test_a_new_severity_tag_is_learned_and_the_yaml_reads_it_right(tmp_path: Path) -> None:
    body = "**[SEV-0] Hard-coded API key**\n\nThe Stripe secret key is committed in `config.py`.\n"
    proc, body_file, learned = learn(tmp_path, "codex", body, "--expect", "severity=BLOCKER")
    assert proc.returncode == 0, proc.stderr
    assert classify("codex", "inline", body_file)["findings"][0]["severity"] == "INFO"  # the misread
    doc = yaml.safe_load(proc.stdout)
    assert list(doc["profiles"]) == ["codex"] and list(doc["profiles"]["codex"]) == ["severity"]
    assert "shipped example(s) of codex: none reads differently" in proc.stdout
    assert classify("codex", "inline", body_file, "--profiles", str(learned))["findings"][0]["severity"] == "BLOCKER"
    shipped_read_the_same("codex", learned)


def test_a_reworded_timeout_notice_is_learned_as_an_error_with_the_notice_quoted(tmp_path: Path) -> None:
    body = "Greptile gave up after 10 minutes on this PR. Comment @greptileai to retry.\n"
    proc, body_file, learned = learn(tmp_path, "greptile", body, "--channel", "issue", "--expect", "notice=timed-out")
    assert proc.returncode == 0, proc.stderr
    assert classify("greptile", "issue", body_file)["signal"] == "none"  # the misread: a timeout read as nothing
    read = classify("greptile", "issue", body_file, "--profiles", str(learned))
    assert read["signal"] == "error" and "gave up after 10 minutes" in read["notice"]
    rule = yaml.safe_load(proc.stdout)["profiles"]["greptile"]["signals"][0]
    assert rule["signal"] == "error" and "Greptile" not in rule["pattern"]  # keyed on "gave up", not the name
    shipped_read_the_same("greptile", learned)


def test_a_new_location_form_is_learned_with_its_items_severity(tmp_path: Path) -> None:
    body = ("## Review\n\nFound these problems:\n\n- **High** - unescaped HTML rendered: p/web/Profile.tsx @ line 7\n"
            "- **Low** - naming: p/app.py @ line 40\n")
    proc, body_file, learned = learn(tmp_path, "generic", body, "--expect",
                                     "location=p/web/Profile.tsx:7 severity=CRITICAL")
    assert proc.returncode == 0, proc.stderr
    assert classify("generic", "review", body_file)["findings"] == []
    found = {(f["path"], f["line"], f["severity"])
             for f in classify("generic", "review", body_file, "--profiles", str(learned))["findings"]}
    assert found == {("p/web/Profile.tsx", 7, "CRITICAL"), ("p/app.py", 40, "MINOR")}


def test_learning_on_top_of_your_own_profiles_file_keeps_what_it_has(tmp_path: Path) -> None:
    mine = tmp_path / "mine.yml"
    mine.write_text("profiles:\n  codex:\n    logins: ['chatgpt-codex-connector[bot]', 'my-codex[bot]']\n")
    proc, body_file, learned = learn(tmp_path, "codex", "**[SEV-0] Key committed**\n", "--expect",
                                     "severity=BLOCKER", "--profiles", str(mine))
    assert proc.returncode == 0, proc.stderr
    entry = yaml.safe_load(proc.stdout)["profiles"]["codex"]
    assert entry["logins"] == ["chatgpt-codex-connector[bot]", "my-codex[bot]"] and entry["severity"]
    read = classify("codex", "inline", body_file, "--profiles", str(learned), "--login", "my-codex[bot]")
    assert read["findings"][0]["severity"] == "BLOCKER"


def test_a_body_already_read_right_needs_no_override(tmp_path: Path) -> None:
    proc, _, _ = learn(tmp_path, "coderabbit", "_⚠️ Potential issue_ | _🔴 Critical_\n\n**SQL injection.**\n",
                       "--expect", "severity=BLOCKER")
    assert proc.returncode == 0 and "already reads this body as expected" in proc.stdout
    assert yaml.safe_load(proc.stdout) is None  # only a comment: nothing to paste


def test_no_override_that_would_change_a_shipped_example_is_printed(tmp_path: Path) -> None:
    # The shipped Codex clean comment, claimed to be an error: any phrase of it that reads
    # it as one would also change the shipped example, so there is nothing safe to print.
    body = (DATA / "codex" / "clean.md").read_text(encoding="utf-8")
    proc, _, _ = learn(tmp_path, "codex", body, "--channel", "issue", "--expect", "signal=error")
    assert proc.returncode == 1 and proc.stdout == ""
    assert "without changing how a shipped example reads" in proc.stderr


@pytest.mark.parametrize(("args", "message"), [
    (["--expect", "severity=HUGE"], "--expect 'severity=HUGE': severity:"),
    (["--expect", "blocker"], "expected key=value"),
    (["--expect", "colour=red"], "colour: unknown key"),
    (["--expect", "notice=exploded"], "notice: expected one of"),
    (["--expect", "location=p/app.py"], "location: expected path:line"),
    (["--expect", "location=p/app.py:3", "--channel", "inline"], "an inline comment's place comes from GitHub"),
    (["--expect", "signal=clean", "--reviewer", "nobody"], "unknown profile 'nobody'"),
])
def test_bad_expectations_are_one_line_errors_with_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    body = tmp_path / "b.md"
    body.write_text("anything")
    reviewer = [] if "--reviewer" in args else ["--reviewer", "codex"]
    proc = cli("profile", "learn", *reviewer, "--body-file", str(body), *args)
    assert proc.returncode == 2 and message in proc.stderr and proc.stdout == ""
    assert len(proc.stderr.strip().splitlines()) == 1


def test_a_missing_body_file_is_exit_2_naming_it(tmp_path: Path) -> None:
    proc = cli("profile", "learn", "--reviewer", "codex", "--body-file", str(tmp_path / "nope.md"),
               "--expect", "severity=MAJOR")
    assert proc.returncode == 2 and "nope.md: file not found" in proc.stderr


def test_learned_yaml_carries_no_terminal_control_or_bidi_text_from_the_comment(tmp_path: Path) -> None:
    body = "\x1b]0;pwned\x07 \u202e[SEV-0]\u202c **[SEV-0] Key committed**\n"
    proc, body_file, learned = learn(tmp_path, "codex", body, "--expect", "severity=BLOCKER")
    assert proc.returncode == 0, proc.stderr
    assert "\x1b" not in proc.stdout and "\u202e" not in proc.stdout and "\x07" not in proc.stdout
    assert classify("codex", "inline", body_file, "--profiles", str(learned))["findings"][0]["severity"] == "BLOCKER"
