"""Claude: anthropics/claude-code-action and the managed Claude Code Review (§5).

The action has no built-in severity (the repo's prompt decides), so an unmarked finding
counts by location (docs/matching.md#findings); the managed review marks 🔴 Important and 🟡 Nit. The
action posts one tracking comment, edited from "working…" to "finished" or "encountered
an error", and cites code with blob permalinks or ``path:line``. With the workflow's
``GITHUB_TOKEN`` it posts as ``github-actions[bot]``, shared with every other workflow,
so that login counts only for inline comments, reviews and Claude's tracking comment.
The managed review's "Code review skipped — … overage spend limit has been reached" is a
skip, never a finished review.
"""

from __future__ import annotations

import re

from redline_canary.corpus.severity import Severity
from redline_canary.review.comments import Comment
from redline_canary.review.profiles.base import PlainHooks, Profile, Trigger, normalize_login, rule
from redline_canary.review.profiles.citations import SummaryLocation
from redline_canary.review.profiles.dialect import compile_table, itemized_locations

ACTIONS_LOGIN = "github-actions[bot]"
_TRACKING = re.compile(r"Claude Code is working|\*\*Claude (?:finished|encountered an error)\b")


class ClaudeHooks(PlainHooks):
    """github-actions[bot] counts too (see the module docstring), unless ``--login`` narrowed
    the profile to exactly its logins (``exact_logins``)."""

    def is_reviewer(self, profile: Profile, comment: Comment) -> bool:
        if profile.is_listed(comment):
            return True
        if profile.exact_logins or normalize_login(comment.login) != normalize_login(ACTIONS_LOGIN):
            return False
        if comment.channel in ("inline", "review"):
            return True
        return bool(_TRACKING.search(comment.body))

    def summary_locations(self, profile: Profile, comment: Comment) -> list[SummaryLocation]:
        return itemized_locations(comment.body, ("blob", "path_line", "path_hash", "paren", "table"), profile.severity)


CLAUDE = Profile(
    name="claude",
    description="Claude (code action and managed review); 🔴 Important / 🟡 Nit",
    logins=frozenset({"claude[bot]"}),
    any_bot=False,
    unrated="location",
    trigger=Trigger("comment", "@claude review"),
    acknowledges=True,  # Claude posts a tracking comment ("Claude Code is working…") as soon as it is mentioned
    trigger_phrases=("@claude", "/claude-review"),
    mine_summaries=True,
    severity_patterns=compile_table([
        (r"🔴\s*\**Important\b", Severity.BLOCKER),
        (r"🟡\s*\**Nit\b", Severity.INFO),
    ]),
    signal_rules=(
        # Managed Code Review: "⚠️ Code review skipped — your organization's overage spend
        # limit has been reached." (anthropics/claude-code#39678).
        rule("skipped", r"Code review skipped\b|overage spend limit"),
        # The CLI's own limit messages, which the action relays as Claude's answer: "Claude AI
        # usage limit reached|<unix time>", "You've hit your session limit · resets 7:20am",
        # "Credit balance is too low" (as public tooling records them; index refs
        # 70876539491, 58783669691, 66885798146).
        rule("skipped", r"Claude AI usage limit reached|You'?ve hit your (?:\w+ ){0,2}limit"
                        r"|Credit balance is too low"),
        rule("error", r"^\s*API Error:\s*\d{3}\b"),
        rule("error", r"\*\*Claude encountered an error\b"),
        rule("progress", r"Claude Code is working", placeholder=True),
        rule("clean", r"^\s*No issues found\b|\bno issues found\. Checked for bugs"),
        rule("done", r"\*\*Claude finished\b"),
        # The code-review plugin's body (docs/dialects.md §5a): "### Code review" then
        # "Found N issues:".
        rule("done", r"^#+\s*Code review\b[\s\S]*\bFound \d+ issues?\b"),
    ),
    labels=(
        (Severity.BLOCKER, "🔴 Important"),
        (Severity.INFO, "🟡 Nit"),
        (None, "no marker (incl. 🟣 Pre-existing): by location"),
    ),
    hooks=ClaudeHooks(),
)
