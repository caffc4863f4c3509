"""Check runs as reviewer signals (Bugbot's "finished" when its comment is switched off)."""

from __future__ import annotations

from typing import Any

from redline_canary.review.capture import comments_from_capture
from redline_canary.review.profiles import get_profile
from redline_canary.score.scoring import decide_outcome
from tests.helpers.factories import capture


def check(status: str, summary: str = "", conclusion: str | None = "neutral", slug: str = "cursor",
          name: str = "Cursor Bugbot") -> dict[str, Any]:
    return {"id": 7, "name": name, "status": status, "conclusion": conclusion if status == "completed" else None,
            "head_sha": "a" * 40, "output": {"title": name, "summary": summary}, "app": {"slug": slug}}


def outcome(*checks: dict[str, Any]) -> tuple[str, list[str]]:
    doc = capture()
    doc["check_runs"] = list(checks)
    extraction = get_profile("bugbot").extract(comments_from_capture(doc))
    return decide_outcome(extraction)[0], [s for s, _ in extraction.signals]


def test_completed_check_with_zero_issues_is_clean() -> None:
    got = outcome(check("completed", "Final Result: Bugbot completed review and found 0 potential issues."))
    assert got == ("scored", ["clean"])


def test_completed_check_with_findings_is_done_whatever_its_conclusion() -> None:
    got = outcome(check("completed", "Final Result: Bugbot completed review and found 2 potential issues.",
                        conclusion="success"))
    assert got == ("scored", ["done"])


def test_a_check_still_running_is_not_activity() -> None:
    assert outcome(check("in_progress"))[0] == "silent"


def test_another_apps_check_is_ignored() -> None:
    assert outcome(check("completed", "found 0 potential issues", slug="github-actions", name="CI"))[0] == "silent"
