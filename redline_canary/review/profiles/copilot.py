"""GitHub Copilot code review (docs/dialects.md §1).

Copilot writes no severity into its inline comments; the v2 review overview does, as a
badge next to each thread's ``#discussion_r<id>`` link, so the inline severity is read
from the latest overview (``discussion_links``). Without an overview a finding is
unrated and counts by location (docs/matching.md#findings). Findings without an inline thread ("Previously
missed", the legacy and 2026 "Suppressed comments" blocks) are mined from the review
body, each item with its own badge. "Copilot wasn't able to review", "reviewed 0 out of N
changed files" and the quota notice mean it did not review; they arrive as ordinary
COMMENTED reviews, so they must never read as a finished one.
"""

from __future__ import annotations

import re

from redline_canary.corpus.severity import Severity
from redline_canary.review.comments import Comment
from redline_canary.review.profiles.base import PlainHooks, Profile, Trigger, rule
from redline_canary.review.profiles.citations import SummaryLocation
from redline_canary.review.profiles.dialect import ITEM_START, compile_table, itemized_locations, sections

REVIEW_LOGIN = "copilot-pull-request-reviewer[bot]"
INLINE_LOGIN = "Copilot"

_BADGE = r"""(?:alt=["']|!\[)\s*{word}\s+severity\b"""
# A finding of a body-only list starts at a nested <details>, a bullet, or a line that
# opens with its own `path:line` (the legacy and transitional `**path:line**` items).
_ITEM = re.compile(ITEM_START.pattern + r"|^[ \t>]*(?:\*\*|`){1,2}[^\s*`]+:\d+", re.MULTILINE | re.IGNORECASE)
_SECTIONS = {
    "missed": re.compile(r"^Previously missed\b", re.IGNORECASE),
    "suppressed": re.compile(r"^(?:Comments suppressed due to low confidence|Suppressed comments)\b",
                             re.IGNORECASE),
    "other": re.compile(r"^(?:Open|Resolved since last review|What changed in this PR|Files not reviewed"
                        r"|Pull request overview)\b", re.IGNORECASE),
}


class CopilotHooks(PlainHooks):
    """Findings without an inline thread sit in the overview's missed and suppressed sections."""

    def summary_locations(self, profile: Profile, comment: Comment) -> list[SummaryLocation]:
        out: list[SummaryLocation] = []
        for name, text in sections(comment.body, _SECTIONS, headings=True):
            if name != "other":
                out.extend(itemized_locations(text, ("path_line",), profile.severity, _ITEM,
                                              marks=profile.severity_marks))
        return out


COPILOT = Profile(
    name="copilot",
    description="GitHub Copilot code review; severity from the v2 overview badges",
    logins=frozenset({REVIEW_LOGIN, INLINE_LOGIN}),
    inline_login=INLINE_LOGIN,
    bot_ids=frozenset({175728472}),
    any_bot=False,
    unrated="location",
    trigger=Trigger("request", REVIEW_LOGIN),
    mine_summaries=True,
    discussion_links=True,
    severity_patterns=compile_table([
        (_BADGE.format(word="High"), Severity.BLOCKER),
        (_BADGE.format(word="Medium"), Severity.MAJOR),
        (_BADGE.format(word="Low"), Severity.MINOR),
        (r"\A\s*\[nitpick\]", Severity.INFO),
    ]),
    signal_rules=(
        # docs/dialects.md §1 (refs 66614687849, 55491438493): quota notices.
        rule("skipped", r"unable to review this pull request because .{0,120}quota"
                        r"|reached (?:their|your) quota limit"),
        # github/github-mcp-server#1853 (quoting jarlungoodoo73/wsl---installbidahs#29,
        # review 3684730931): "Copilot wasn't able to review any files in this pull request."
        # BrowserWorks/waterfox#4269 (quoting #4268, review 4538839416): "Copilot wasn't able
        # to review this pull request because it exceeds the maximum number of files (300)."
        rule("skipped", r"Copilot (?:wasn't|was not|isn't|is not) able to review"
                        r"|exceeds the maximum number of files"),
        # "Copilot reviewed 0 out of 2 changed files … and generated no comments." with every
        # file under "Files not reviewed" (language not supported): nothing was reviewed.
        rule("skipped", r"Copilot reviewed 0 out of \d+ changed files"),
        # docs/dialects.md §1: "Copilot encountered an error and was unable to review…".
        rule("error", r"Copilot encountered an error|Copilot was unable to review"),
        rule("clean", r"generated no (?:new )?comments|\*\*Findings:\*\*\s*None\b"),
        # The review layouts themselves (legacy overview, the transitional verdict heading
        # of NVIDIA/NVFlare#5274, v2 `ccr-overview-v2`): a submitted overview is the finish.
        rule("done", r"ccr-overview-v2|Copilot review overview|^\W*Pull request overview\b"
                     r"|Copilot reviewed \d+ out of \d+ changed files|\*\*(?:Files reviewed|Comments generated):\*\*"
                     r"|^#+\s*\W*\s*(?:Changes recommended|Approval recommended|Needs a closer look)\b",
             channels=("review",)),
    ),
    # "Files not reviewed (N)" and the low-confidence block are routine parts of a review.
    notice_exempt=(
        re.compile(r"<summary>\s*Files not reviewed.*?</details>", re.IGNORECASE | re.DOTALL),
    ),
    labels=(
        (Severity.BLOCKER, 'v2 overview badge "High severity" (via #discussion_r<id>)'),
        (Severity.MAJOR, '"Medium severity" badge'),
        (Severity.MINOR, '"Low severity" badge'),
        (Severity.INFO, "[nitpick] prefix"),
        (None, "no badge: by location"),
    ),
    hooks=CopilotHooks(),
)
