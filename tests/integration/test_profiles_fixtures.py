"""Every vendor body under ``tests/data/profiles/<vendor>/`` read as its side file says.

Adding a vendor form is adding two files: ``name.md`` (the body, verbatim) and
``name.expect.json``::

    {"channel": "review",                 # inline | review | issue | reaction
     "source": "https://github.com/...",  # where the body was seen, or "synthetic": true
     "signal": "skipped",                 # what the profile must read
     "notice": "Code review skipped",     # for skipped/error: text the quoted notice holds
     "findings": [{"path": "a.py", "line": 3, "end_line": 5, "severity": "MAJOR"}]}

``findings`` is optional; when present the findings must be exactly those (order aside).
A skip notice read as "done" would make a reviewer that did not review look like one
that found nothing, so every skip-type fixture is also scored end to end and run
through the installed ``profile classify --json``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from redline_canary.commands.profile import classify
from redline_canary.review.profiles import PROFILES, get_profile
from redline_canary.review.profiles.base import SIGNALS
from redline_canary.run.corpus_files import load_corpus
from redline_canary.score.evaluate import ScoreSettings, evaluate
from redline_canary.score.scoring import RecordMeta
from tests.helpers.factories import capture, issue_comment, review, user

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "profiles"
_VENV = ROOT / ".venv" / "bin" / "redline-canary"
EXE = str(_VENV if _VENV.exists() else Path(sys.executable).parent / "redline-canary")
NOTICES = ("skipped", "error")
META = RecordMeta(run_id="r1", recorded_at="2026-11-30T10:00:00Z", repo="acme/canary", pr=7, tool_version="test")


def _cases() -> list[tuple[str, Path]]:
    return sorted((p.parent.name, p) for p in DATA.glob("*/*.expect.json"))


CASES = _cases()
IDS = [f"{vendor}/{path.name.removesuffix('.expect.json')}" for vendor, path in CASES]
NOTICE_CASES = [(v, p) for v, p in CASES if json.loads(p.read_text())["signal"] in NOTICES]
NOTICE_IDS = [f"{v}/{p.name.removesuffix('.expect.json')}" for v, p in NOTICE_CASES]


def _load(path: Path) -> tuple[dict[str, Any], str]:
    expect: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    body = path.with_name(path.name.removesuffix(".expect.json") + ".md").read_text(encoding="utf-8")
    return expect, body


def _found(result: dict[str, Any]) -> list[tuple[Any, ...]]:
    return sorted((f["path"] or "", f["line"] or 0, f["end_line"] or 0, f["severity"] or "")
                  for f in result["findings"])


@pytest.mark.parametrize(("vendor", "path"), CASES, ids=IDS)
def test_fixture_reads_as_its_side_file_says(vendor: str, path: Path) -> None:
    expect, body = _load(path)
    result = classify(get_profile(vendor), expect["channel"], body, expect.get("login"))
    assert result["signal"] == expect["signal"], result
    if expect["signal"] in NOTICES:
        assert result["notice"] and expect["notice"] in result["notice"], result
    else:
        assert result["notice"] is None
    if "findings" in expect:
        assert _found(result) == _found({"findings": expect["findings"]})


@pytest.mark.parametrize(("vendor", "path"), NOTICE_CASES, ids=NOTICE_IDS)
@pytest.mark.parametrize("kind", ["seeded", "clean"])
def test_skip_type_fixture_is_silent_or_error_never_recall_zero(
        mini_corpus: Path, vendor: str, path: Path, kind: str) -> None:
    expect, body = _load(path)
    if expect["channel"] not in ("review", "issue"):
        pytest.skip("scored end to end through review bodies and issue comments")
    who = user(expect.get("login") or get_profile(vendor).login_for(expect["channel"]), 1)
    doc = capture(reviews=[review(body, who=who)] if expect["channel"] == "review" else [],
                  issue_comments=[issue_comment(body, who=who)] if expect["channel"] == "issue" else [])
    settings = ScoreSettings(stack="mini", kind=kind, prefix="p")
    r = evaluate(doc, load_corpus(mini_corpus), settings, get_profile(vendor), META)[1].to_json()
    assert r["outcome"] == ("error" if expect["signal"] == "error" else "silent")
    assert expect["notice"] in (r["notice"] or "")
    assert r["recall"] is None and r["clean_false_positives"] is None
    assert r["gate"]["passed"] is False


@pytest.mark.parametrize(("vendor", "path"), NOTICE_CASES, ids=NOTICE_IDS)
def test_profile_classify_json_reports_the_notice(vendor: str, path: Path) -> None:
    expect, _ = _load(path)
    body = path.with_name(path.name.removesuffix(".expect.json") + ".md")
    args = ["profile", "classify", "--reviewer", vendor, "--channel", expect["channel"],
            "--body-file", str(body), "--json"]
    if expect.get("login"):
        args += ["--login", expect["login"]]
    proc = subprocess.run([EXE, *args], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["signal"] == expect["signal"] and expect["notice"] in (out["notice"] or "")


def test_fixture_folders_are_well_formed() -> None:
    """Each body has a side file and each side file a body, a known vendor, a valid signal,
    and a source: a public URL, or an explicit ``synthetic: true``."""
    bodies = {p.with_suffix("") for p in DATA.glob("*/*.md")}
    sides = {p.with_name(p.name.removesuffix(".expect.json")) for p in DATA.glob("*/*.expect.json")}
    assert bodies == sides
    for vendor, path in CASES:
        expect, _ = _load(path)
        assert vendor in PROFILES, path
        assert expect["signal"] in SIGNALS, path
        assert expect["channel"] in ("inline", "review", "issue", "reaction"), path
        real = str(expect.get("source", "")).startswith("https://")
        assert real != bool(expect.get("synthetic")), f"{path}: a source URL xor synthetic: true"
        if expect["signal"] in NOTICES:
            assert expect.get("notice"), f"{path}: a notice fixture names the text to quote"


def test_every_vendor_has_notice_and_non_notice_fixtures() -> None:
    seen: dict[str, set[bool]] = {}
    for vendor, path in CASES:
        seen.setdefault(vendor, set()).add(json.loads(path.read_text())["signal"] in NOTICES)
    vendors = set(PROFILES) - {"redline", "generic"}
    assert set(seen) == vendors
    assert all(kinds == {True, False} for kinds in seen.values()), seen
