"""``redline-canary profile classify|list`` and ``score --profiles``, through the installed
console script."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.factories import capture, inline, user

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "profiles"
_VENV = ROOT / ".venv" / "bin" / "redline-canary"
EXE = str(_VENV if _VENV.exists() else Path(sys.executable).parent / "redline-canary")


def cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([EXE, *args], capture_output=True, text=True, input=stdin, timeout=60, cwd=ROOT)


def classify(reviewer: str, channel: str, body_file: Path, *extra: str) -> dict[str, Any]:
    proc = cli("profile", "classify", "--reviewer", reviewer, "--channel", channel,
               "--body-file", str(body_file), "--json", *extra)
    assert proc.returncode == 0, proc.stderr
    out: dict[str, Any] = json.loads(proc.stdout)
    return out


def test_classify_inline_gives_one_finding_with_severity_and_null_location(tmp_path: Path) -> None:
    body = tmp_path / "b.md"
    body.write_text("_⚠️ Potential issue_ | _🔴 Critical_\n\n**SQL injection.** No critical issues elsewhere.")
    assert classify("coderabbit", "inline", body) == {
        "signal": "finding", "notice": None,
        "findings": [{"severity": "BLOCKER", "path": None, "line": None, "end_line": None, "source": "inline"}],
    }


def test_classify_no_p1_issues_found_is_not_p1(tmp_path: Path) -> None:
    body = tmp_path / "b.md"
    body.write_text("No P1 issues found in this file.")
    out = classify("codex", "inline", body)
    assert out["findings"][0]["severity"] == "INFO"


def test_classify_copilot_unrated_inline_is_null(tmp_path: Path) -> None:
    body = tmp_path / "b.md"
    body.write_text("This query is built from user input.")
    assert classify("copilot", "inline", body)["findings"][0]["severity"] is None


def test_classify_summary_findings_from_a_review_body() -> None:
    out = classify("copilot", "review", DATA / "copilot" / "v2_review.md")
    assert out == {"signal": "done", "notice": None, "findings": [
        {"severity": "MAJOR", "path": "p/app.py", "line": 15, "end_line": 15, "source": "summary"}]}


@pytest.mark.parametrize(("reviewer", "channel", "fixture", "signal"), [
    ("coderabbit", "issue", "coderabbit/skip.md", "skipped"),
    ("coderabbit", "issue", "coderabbit/walkthrough.md", "progress"),
    ("codex", "issue", "codex/clean.md", "clean"),
    ("copilot", "review", "copilot/v2_clean.md", "clean"),
])
def test_classify_signals(reviewer: str, channel: str, fixture: str, signal: str) -> None:
    out = classify(reviewer, channel, DATA / fixture)
    assert out["signal"] == signal and out["findings"] == []


def test_classify_trigger_comment_and_foreign_login(tmp_path: Path) -> None:
    body = tmp_path / "b.md"
    body.write_text("@codex review")
    assert classify("codex", "issue", body) == {"signal": "none", "notice": None, "findings": []}
    body.write_text("![P0 Badge](x) token")
    out = classify("codex", "inline", body, "--login", "octocat")
    assert out["signal"] == "none" and out["findings"] == []
    out = classify("copilot", "inline", body, "--login", "COPILOT")
    assert out["signal"] == "finding"


def test_classify_reads_stdin_and_prints_text() -> None:
    proc = cli("profile", "classify", "--reviewer", "bugbot", "--channel", "inline", "--body-file", "-",
               stdin=(DATA / "bugbot" / "inline.md").read_text())
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "signal: finding",
        "finding: BLOCKER at p/app.py:5 (inline)",
        "finding: BLOCKER at p/app.py:40-41 (summary)",
        "finding: BLOCKER at p/web/Profile.tsx:30-31 (summary)",
    ]


def test_classify_with_custom_profiles_file(tmp_path: Path) -> None:
    body = tmp_path / "b.md"
    body.write_text("SEV-1: token in source")
    out = classify("house-bot", "inline", body, "--profiles", str(DATA / "custom_profiles.yml"))
    assert out["findings"][0]["severity"] == "BLOCKER"


@pytest.mark.parametrize(("args", "message"), [
    (("--reviewer", "nope", "--channel", "inline", "--body-file", "{body}"), "unknown reviewer profile 'nope'"),
    (("--reviewer", "codex", "--channel", "inline", "--body-file", "{missing}"), "file not found"),
    (("--reviewer", "codex", "--channel", "sideways", "--body-file", "{body}"), "invalid choice"),
    (("--reviewer", "codex", "--channel", "inline", "--body-file", "{body}", "--profiles", "{bad}"),
     "profiles.x.unrated"),
])
def test_bad_input_exits_2_with_one_line(tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    body = tmp_path / "b.md"
    body.write_text("x")
    bad = tmp_path / "bad.yml"
    bad.write_text("profiles:\n  x:\n    unrated: maybe\n")
    values = {"body": str(body), "missing": str(tmp_path / "missing.md"), "bad": str(bad)}
    proc = cli("profile", "classify", *(a.format(**values) for a in args))
    assert proc.returncode == 2
    assert message in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_list_shows_every_profile_and_its_mapping() -> None:
    proc = cli("profile", "list", "--json")
    assert proc.returncode == 0, proc.stderr
    rows = {r["name"]: r for r in json.loads(proc.stdout)}
    assert set(rows) == {"redline", "generic", "copilot", "coderabbit", "codex", "gemini", "claude", "bugbot",
                         "greptile", "sourcery", "qodo", "cubic"}
    assert rows["codex"]["severity"]["BLOCKER"] == ["![P0 Badge]"]
    assert rows["gemini"]["severity"]["CRITICAL"] == ["![high] high-priority badge"]
    assert rows["copilot"]["logins"] == ["Copilot", "copilot-pull-request-reviewer[bot]"]
    assert rows["copilot"]["trigger"] == {"kind": "request", "value": "copilot-pull-request-reviewer[bot]"}
    assert rows["claude"]["unrated"] == "location" and rows["redline"]["severity"]["BLOCKER"]
    text = cli("profile", "list").stdout
    assert "| MAJOR | _🟠 Major_; a bare \"⚠️ Potential issue\" |" in text
    assert "qodo-code-review[bot]" in text


def test_score_accepts_profiles_file(tmp_path: Path) -> None:
    who = user("house-bot[bot]", 7)
    doc = capture([inline("p/app.py", 5, "SEV-1 token in source", who=who),
                   inline("p/app.py", 15, "SEV-2 slice drops an item", who=who)],
                  stack="mini", kind="seeded", prefix="p", reviewer="house-bot")
    cap = tmp_path / "capture.json"
    cap.write_text(json.dumps(doc))
    proc = cli("score", "--capture", str(cap), "--corpus", "tests/data/corpus", "--profiles",
               str(DATA / "custom_profiles.yml"), "--json")
    record = json.loads(proc.stdout)
    assert record["reviewer"] == "house-bot" and record["caught"] == 2 and record["undercalled"] == 0
    assert proc.returncode == 1  # blocker recall 1/3 fails the gate
    bad = cli("score", "--capture", str(cap), "--corpus", "tests/data/corpus", "--profiles",
              str(tmp_path / "none.yml"))
    assert bad.returncode == 2 and "profiles file not found" in bad.stderr


def test_classify_text_output_quotes_the_notice() -> None:
    proc = cli("profile", "classify", "--reviewer", "claude", "--channel", "issue", "--body-file",
               str(DATA / "claude" / "overage_skipped.md"))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "signal: skipped"
    assert lines[1].startswith("notice: ⚠️ Code review skipped — your organization's overage spend limit")
