"""OpenAI Codex cloud review, the ChatGPT Codex Connector (docs/dialects.md §3).

Severity is the ``![P1 Badge](...)`` shield; the alt text is the stable key. Codex says
"clean" with a 👍 reaction or a "Didn't find any major issues" comment, and files some
findings as issue comments anchored by blob permalinks instead of inline threads.
Account, environment and usage-limit notices are issue comments too: never verdicts. A
review body lists findings as bare paragraphs (badge, title, permalink), so each
permalink takes its own item's badge.
"""

from __future__ import annotations

import re

from redline_canary.review.comments import Comment
from redline_canary.review.profiles.base import PlainHooks, Profile, Trigger, rule
from redline_canary.review.profiles.citations import SummaryLocation
from redline_canary.review.profiles.dialect import itemized_locations, p_labels, p_scale

LOGIN = "chatgpt-codex-connector[bot]"


class CodexHooks(PlainHooks):
    """Review bodies list findings as bare paragraphs: each permalink takes its own item's badge."""

    def summary_locations(self, profile: Profile, comment: Comment) -> list[SummaryLocation]:
        # Items are bare paragraphs (permalink, badge, title), so each citation takes the
        # badge of its own item (paired_levels), never the first item's.
        return itemized_locations(comment.body, ("blob",), profile.severity, marks=profile.severity_marks)


CODEX = Profile(
    name="codex",
    description="OpenAI Codex review; P0-P3 badges, blob-permalink findings in issue comments",
    logins=frozenset({LOGIN}),
    bot_ids=frozenset({199175422}),
    any_bot=False,
    trigger=Trigger("comment", "@codex review"),
    acknowledges=True,  # Codex reacts 👀 on the trigger comment or the PR, then posts (docs/dialects.md, Codex)
    reads_reactions=True,
    trigger_phrases=("@codex",),
    mine_summaries=True,
    severity_patterns=p_scale(r"!\[P<n> Badge\]"),
    signal_rules=(
        # Notices are issue comments; the review body's help text must never read as one.
        # docs/dialects.md §3 (mryfmo/dotfiles comment 5992141625; ejc3/fcvm#902:
        # "You have reached your Codex usage limits for code reviews.").
        rule("skipped", r"To use Codex here|reached your Codex usage limits|Codex usage limits have been reached"
                        r"|Codex usage limits for code reviews",
             channels=("issue",)),
        rule("error", r"Codex Review: Something went wrong|\bSomething went wrong\b.{0,40}@codex review",
             channels=("issue",)),
        # The summary table's status cell (docs/dialects.md §3): a row that did not complete.
        rule("error", r"codex-pull-request-review-summary[\s\S]*\*\*(?:Failed|Errored|Error|Timed out)\*\*"),
        rule("skipped", r"codex-pull-request-review-summary[\s\S]*\*\*(?:Skipped|Cancell?ed)\*\*"),
        rule("progress", r"\*\*(?:Running|Queued|Pending)\*\*|^\s*👀\s*$", placeholder=True),
        rule("clean", r"Didn't find any major issues|^\s*(?:👍|:\+1:|\+1)\s*$"),
        rule("done", r"\*\*Completed\*\*|\*\*Reviewed commit:\*\*"),
        # The fixed review header (docs/dialects.md §3): a submitted Codex review.
        rule("done", r"^#+\s*💡\s*Codex Review\b", channels=("review",)),
        # A Codex cloud task's answer to "@codex <do something>": "### Summary … **Testing** …
        # [View task →](https://chatgpt.com/s/…)". Its links cite the files it read or
        # changed; it is no review and no verdict (fresh set: zeta#355).
        rule("none", r"\[View task\s*→\]\(https://chatgpt\.com/"),
        # The summary comment's table without a row we know: not a verdict, not a review.
        rule("progress", r"codex-pull-request-review-summary", placeholder=True),
    ),
    # The review's help block names usage limits and environments as a matter of course.
    notice_exempt=(
        re.compile(r"<summary>\s*\W*\s*About Codex in GitHub.*?(?:</details>|\Z)", re.IGNORECASE | re.DOTALL),
    ),
    labels=(*p_labels("![P<n> Badge]"), (None, "no badge: INFO")),
    hooks=CodexHooks(),
)
