"""Cursor Bugbot (docs/dialects.md §6).

Each inline comment carries ``**High Severity**``-style levels and a machine-readable
``LOCATIONS`` block whose first entry is the commented range; later entries and the
"Additional Locations" permalinks are further places with the same bug. Bugbot re-posts
a finding under the same ``BUGBOT_BUG_ID`` on new lines, so only the latest counts. The
Cursor Approval Agent shares the login but is not Bugbot. "Bugbot is not enabled for your
account" (the free-tier upsell) and "Bugbot couldn't run" mean it did not review.
"""

from __future__ import annotations

import re

from redline_canary.corpus.severity import Severity
from redline_canary.review.comments import Comment
from redline_canary.review.profiles.base import PlainHooks, Profile, rule
from redline_canary.review.profiles.citations import SummaryLocation, citations
from redline_canary.review.profiles.dialect import compile_table

_LOCATIONS = re.compile(r"<!--\s*LOCATIONS START(?P<body>.*?)LOCATIONS END\s*-->", re.DOTALL)
_ADDITIONAL = re.compile(r"<summary>\s*Additional Locations.*?(?:</details>|\Z)", re.DOTALL | re.IGNORECASE)
_BUG_ID = re.compile(r"BUGBOT_BUG_ID:\s*([\w-]+)")
_MARKER = re.compile(r"BUGBOT_|Cursor Bugbot|\bBugbot\b", re.IGNORECASE)


class BugbotHooks(PlainHooks):
    """The Cursor Approval Agent shares the login; LOCATIONS blocks name the places."""

    def is_reviewer(self, profile: Profile, comment: Comment) -> bool:
        if not profile.is_listed(comment):
            return False
        approval = comment.channel == "review" and (comment.state or "").upper() == "APPROVED"
        return not (approval and not _MARKER.search(comment.body))

    @staticmethod
    def _locations(profile: Profile, comment: Comment) -> list[SummaryLocation]:
        block = _LOCATIONS.search(comment.body)
        found = citations(block["body"], ("path_hash", "path_line")) if block else []
        extra = _ADDITIONAL.search(comment.body)
        if extra:
            found += citations(extra.group(0), ("blob", "path_hash"))
        level = profile.severity(comment.body)
        # The LOCATIONS block and the "Additional Locations" list name the same places
        # again: one place is one finding.
        places = dict.fromkeys((c.path, c.start, c.end) for c in found)
        return [SummaryLocation(path, start, end, level) for path, start, end in places]

    def body_location(self, profile: Profile, comment: Comment) -> SummaryLocation | None:
        found = self._locations(profile, comment)
        return found[0] if found else None

    def inline_extra_locations(self, profile: Profile, comment: Comment) -> list[SummaryLocation]:
        return self._locations(profile, comment)

    def summary_locations(self, profile: Profile, comment: Comment) -> list[SummaryLocation]:
        return []  # review bodies hold a count and a "Fix All" link, no places


BUGBOT = Profile(
    name="bugbot",
    description="Cursor Bugbot; **High/Medium/Low Severity**, LOCATIONS blocks mined",
    logins=frozenset({"cursor[bot]"}),
    any_bot=False,
    trigger_phrases=("bugbot run", "cursor review"),
    mine_summaries=True,
    reads_check_runs=True,
    dedupe_id=_BUG_ID,
    severity_patterns=compile_table([
        (r"\*\*High Severity\*\*", Severity.BLOCKER),
        (r"\*\*Medium Severity\*\*", Severity.MAJOR),
        (r"\*\*Low Severity\*\*", Severity.MINOR),
    ], flags=0),
    signal_rules=(
        rule("skipped", r"BUGBOT_FREE_TIER_DISABLED_UPSELL|on the Bugbot Free tier", channels=("issue",)),
        # Verbatim from cursor[bot] on Zenvi-pro/zenvi-core#102 and #158 (as a public test
        # suite records them): "Bugbot is not enabled for your account, so this pull request
        # was not reviewed." and "<h3>Bugbot couldn't run — GitHub account mismatch</h3>".
        rule("skipped", r"Bugbot is not enabled|pull request was not reviewed|Bugbot couldn't run"
                        r"|Bugbot could not run"),
        # Size-limit skip: wording not confirmed (docs/dialects.md §6, Medium).
        rule("skipped", r"\b(?:too large|size limit)\b.{0,200}\bsplit\b|\bsplit\b.{0,200}\b(?:too large|size limit)\b",
             channels=("issue",)),
        rule("progress", r"^\s*👀\s*$", placeholder=True),
        # The `Cursor Bugbot` check run: its conclusion can be neutral even with findings,
        # so only its status and its "Final Result" sentence are read.
        rule("progress", r"\ACursor Bugbot\n(?:queued|in_progress)", channels=("check",), placeholder=True),
        rule("clean", r"\ACursor Bugbot\ncompleted\b[\s\S]*found (?:0|no) potential issues",
             channels=("check",)),
        rule("done", r"\ACursor Bugbot\ncompleted\b", channels=("check",)),
        # "Cursor Bugbot has reviewed your changes and found 0 potential issues." (fresh set:
        # bugbot-found-0-observed): the review body of a clean pass, not a "done" with findings.
        rule("clean", r"found no new issues|found no bugs|found (?:0|no) (?:new )?potential (?:issues|bugs)"),
        rule("done", r"BUGBOT_REVIEW|Bugbot has reviewed your changes|Bugbot completed review"),
        # The PR-description summary block (docs/dialects.md §6) when it reaches a comment.
        rule("progress", r"CURSOR_SUMMARY", placeholder=True),
    ),
    labels=(
        (Severity.BLOCKER, "**High Severity**"),
        (Severity.MAJOR, "**Medium Severity**"),
        (Severity.MINOR, "**Low Severity**"),
        (None, "no level: INFO"),
    ),
    hooks=BugbotHooks(),
)
