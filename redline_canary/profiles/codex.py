"""OpenAI Codex cloud review, the ChatGPT Codex Connector (reviewer-dialects §3).

Severity is the ``![P1 Badge](...)`` shield; the alt text is the stable key. Codex says
"clean" with a 👍 reaction or a "Didn't find any major issues" comment, and files some
findings as issue comments anchored by blob permalinks instead of inline threads.
Account, environment and usage-limit notices are issue comments too: never verdicts.
"""

from __future__ import annotations

from redline_canary.comments import Comment
from redline_canary.profiles.base import Profile, SummaryLocation, Trigger, rule
from redline_canary.profiles.dialect import itemized_locations, p_labels, p_scale

LOGIN = "chatgpt-codex-connector[bot]"


class CodexProfile(Profile):
    name = "codex"
    description = "OpenAI Codex review; P0-P3 badges, blob-permalink findings in issue comments"
    logins = frozenset({LOGIN})
    bot_ids = frozenset({199175422})
    any_bot = False
    trigger = Trigger("comment", "@codex review")
    reads_reactions = True
    trigger_phrases = ("@codex",)
    mine_summaries = True
    severity_patterns = p_scale(r"!\[P<n> Badge\]")
    signal_rules = (
        # Notices are issue comments; the review body's help text must never read as one.
        rule("skipped", r"To use Codex here|reached your Codex usage limits|Codex usage limits have been reached",
             channels=("issue",)),
        rule("error", r"Codex Review: Something went wrong|\bSomething went wrong\b.{0,40}@codex review",
             channels=("issue",)),
        rule("progress", r"\*\*Running\*\*|^\s*👀\s*$", placeholder=True),
        rule("clean", r"Didn't find any major issues|^\s*(?:👍|:\+1:|\+1)\s*$"),
        rule("done", r"\*\*Completed\*\*|\*\*Reviewed commit:\*\*"),
    )
    labels = (*p_labels("![P<n> Badge]"), (None, "no badge: INFO"))

    def summary_locations(self, comment: Comment) -> list[SummaryLocation]:
        return itemized_locations(comment.body, ("blob",), self.severity)
