"""The fresh reviewer-dialect set (``tests/data/dialects-fresh/``): load it, read each item
through the real profile code, and judge the reading against the item's expected reading.

Shared by ``benchmarks/bench_dialects.py`` (the figures) and the notice test, so the two
can never disagree on what "read right" means. The expectations were written from each
vendor's conventions before the tool read the bodies; see the set's README for the format.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from redline_canary.review.comments import Comment
from redline_canary.review.extraction import Signal
from redline_canary.review.profiles import get_profile

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "dialects-fresh"
HELDOUT = ROOT / "tests" / "data" / "dialects-heldout"  # collected after the fixes, by someone who made none

Kind = Literal["finding", "summary", "notice", "progress", "nothing"]
KINDS: tuple[Kind, ...] = ("finding", "summary", "notice", "progress", "nothing")
# What each notice class must read as. A notice the reviewer posts instead of a review is
# "skipped" (it declined) or "error" (it broke); a busy placeholder is progress; a completion
# with nothing to say is the clean verdict that ends the wait at once.
NOTICE_SIGNALS: dict[str, Signal] = {
    "timed_out": "error",
    "failed": "error",
    "busy": "progress",
    "rate_limited": "skipped",
    "paused": "skipped",
    "skipped_size": "skipped",
    "skipped_draft": "skipped",
    "skipped_bot_author": "skipped",
    "skipped_branch": "skipped",
    "skipped_ignored_files": "skipped",
    "skipped_other": "skipped",
    "quota": "skipped",
    "not_enabled": "skipped",
    "declined_rereview": "skipped",
    "clean": "clean",
}
# Signals that let a run count the reviewer as having reviewed (a pass or a verdict).
PASSING: frozenset[Signal] = frozenset({"clean", "done", "finding"})
_KIND_SIGNALS: dict[str, frozenset[Signal]] = {
    "finding": frozenset({"finding", "done"}),
    "summary": frozenset({"finding", "done"}),
    "progress": frozenset({"progress"}),
    "nothing": frozenset({"none"}),
}


@dataclass(frozen=True)
class Reading:
    """What the profile read from one item."""

    signal: Signal
    notice: str | None
    findings: tuple[tuple[str, int, int, str], ...]


@dataclass(frozen=True)
class Verdict:
    item: dict[str, Any]
    reading: Reading
    right: bool
    why: str


def load_items(vendors: tuple[str, ...] = (), data: Path = DATA) -> list[dict[str, Any]]:
    """Every item of the set in ``data`` (or of ``vendors``), in file order."""
    items: list[dict[str, Any]] = []
    for path in sorted(data.glob("*.jsonl")):
        if vendors and path.stem not in vendors:
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if line.strip():
                item = json.loads(line)
                item["_where"] = f"{path.name}:{n}"
                items.append(item)
    return items


def expected_signals(item: dict[str, Any]) -> frozenset[Signal]:
    expect = item["expect"]
    if expect["kind"] == "notice":
        return frozenset({NOTICE_SIGNALS[expect["class"]]})
    return _KIND_SIGNALS[expect["kind"]]


def _key(path: str | None, line: int | None, end: int | None, severity: str | None) -> tuple[str, int, int, str]:
    start = line or 0
    return (path or "", start, end if end is not None else start, severity or "")


def expected_findings(item: dict[str, Any]) -> tuple[tuple[str, int, int, str], ...]:
    return tuple(sorted(_key(f.get("path"), f.get("line"), f.get("end_line"), f.get("severity"))
                        for f in item["expect"].get("findings", [])))


def read(item: dict[str, Any]) -> Reading:
    """The item through its vendor's shipped profile, as ``profile classify`` reads it, plus the
    location fields GitHub gives an inline comment (which ``classify`` has no flag for)."""
    profile = get_profile(item["vendor"])
    channel = item["channel"]
    comment = Comment(
        channel=channel, id=1, login=item.get("login") or profile.login_for(channel), user_id=None,
        user_type="Bot", body=item["body"], state="COMMENTED" if channel == "review" else None,
        path=item.get("path"), line=item.get("line"), start_line=item.get("start_line"),
        in_reply_to_id=7 if item.get("reply") else None,
    )
    if not profile.is_reviewer(comment):
        return Reading("none", None, ())
    extraction = profile.extract([comment])
    signal: Signal = extraction.signals[0][0] if extraction.signals else "none"
    notice = extraction.notice("skipped", "error") if signal in ("skipped", "error") else None
    found = tuple(sorted(_key(f.path, f.start, f.end, f.severity.name if f.severity is not None else None)
                         for f in extraction.findings))
    return Reading(signal, notice, found)


def judge(item: dict[str, Any]) -> Verdict:
    """Read right = the expected signal, a quoted notice for a skip or error, and exactly the
    expected findings (path, first and last line, severity) for a finding or a summary."""
    reading = read(item)
    want = expected_signals(item)
    kind = item["expect"]["kind"]
    if reading.signal not in want:
        return Verdict(item, reading, False, f"read as {reading.signal}, expected {'/'.join(sorted(want))}")
    if reading.signal in ("skipped", "error") and not reading.notice:
        return Verdict(item, reading, False, f"{reading.signal} without a quoted notice")
    if kind in ("finding", "summary"):
        expected = expected_findings(item)
        if reading.findings != expected:
            missing = sorted(set(expected) - set(reading.findings))
            extra = sorted(set(reading.findings) - set(expected))
            return Verdict(item, reading, False, f"findings differ: missing {_show(missing)}; extra {_show(extra)}")
    return Verdict(item, reading, True, "")


def _show(keys: list[tuple[str, int, int, str]]) -> str:
    if not keys:
        return "-"
    return ", ".join(f"{p}:{a}" + (f"-{b}" if b != a else "") + f" {s or 'unrated'}" for p, a, b, s in keys)


def looks_like_notice(item: dict[str, Any]) -> bool:
    """Items whose author posted a notice instead of a review (not a clean completion): the
    fail-safe rule (docs/matching.md#the-fail-safe-notice-rule) says they never read as a pass."""
    expect = item["expect"]
    return expect["kind"] == "notice" and NOTICE_SIGNALS[expect["class"]] != "clean"
