"""Qodo: Qodo Merge / PR-Agent and the 2026 "Code Review by Qodo" (docs/dialects.md §9).

PR-Agent rates suggestions "Suggestion importance[1-10]: N"; the 2026 format sorts
findings under "Action required" and "Remediation recommended" headings, so a finding's
severity is the last heading above it. Its inline comments repeat the numbered title
without the heading, so their severity is looked up by title in the summary comment.
Code is cited as ``path[R155-170]``; focus-area links that name a file only by the hash
of its path cannot be resolved from the comment alone and are not mined. A finding table
row carries its own actionability cell. PR-Agent's temporary "Preparing review..." and
"Generating PR code suggestions" comments are placeholders; its "Incremental Review
Skipped" and account/quota notices mean no review.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from redline_canary.corpus.severity import Severity
from redline_canary.review.comments import Comment
from redline_canary.review.profiles.base import PlainHooks, Profile, rule
from redline_canary.review.profiles.citations import SummaryLocation, citations
from redline_canary.review.profiles.dialect import compile_table, items
from redline_canary.review.profiles.spec import SeverityTable

_IMPORTANCE = r"importance\s*\[1-10\]\s*:\s*\**\s*(?:{digits})\b"
_HEADING = r"""(?:alt=["']|\*\*|#+\s*|<h\d>\s*)"""
_SECTIONS = compile_table([
    (_HEADING + r"Action required", Severity.BLOCKER),
    (_HEADING + r"(?:Remediation|Review) recommended", Severity.MAJOR),
])
# A finding table's row names its own actionability in a cell (docs.qodo.ai "code review":
# "Action required, review recommended or other").
_ROW_LEVELS = compile_table([
    (r"(?:<td[^>]*>|\|)\s*(?:\W{0,3}\s*)?Action required\b", Severity.BLOCKER),
    (r"(?:<td[^>]*>|\|)\s*(?:\W{0,3}\s*)?(?:Remediation|Review) recommended\b", Severity.MAJOR),
])
# One finding per numbered item, table row (HTML or markdown) or suggestion <details>.
_ROW = re.compile(r"^\s*(?:\d+\.\s|\|(?!\s*:?-{3}))|<tr\b", re.MULTILINE | re.IGNORECASE)
_IMPORTANCES = compile_table([
    (_IMPORTANCE.format(digits="9|10"), Severity.BLOCKER),
    (_IMPORTANCE.format(digits="7|8"), Severity.CRITICAL),
    (_IMPORTANCE.format(digits="5|6"), Severity.MAJOR),
    (_IMPORTANCE.format(digits="3|4"), Severity.MINOR),
    (_IMPORTANCE.format(digits="1|2"), Severity.INFO),
])
_FINDING = re.compile(r"^\s*\d+\.\s*(?P<title>[^<\n]+?)\s*<code>", re.MULTILINE)
_WORDS = re.compile(r"[^\w]+")


def _first(table: SeverityTable, text: str) -> Severity | None:
    hits = [(m.start(), level) for pattern, level in table if (m := pattern.search(text))]
    return min(hits)[1] if hits else None


def _norm(text: str) -> str:
    return _WORDS.sub(" ", re.sub(r"<[^>]+>", " ", text)).strip().lower()


class QodoHooks(PlainHooks):
    """Severity is the section heading above a finding; inline threads borrow it by title."""

    @staticmethod
    def _section_level(body: str, pos: int) -> Severity | None:
        """The severity heading in force at ``pos`` (the last one above it)."""
        best: tuple[int, Severity] | None = None
        for pattern, level in _SECTIONS:
            for m in pattern.finditer(body, 0, pos):
                if best is None or m.start() > best[0]:
                    best = (m.start(), level)
        return best[1] if best else None

    def summary_locations(self, profile: Profile, comment: Comment) -> list[SummaryLocation]:
        out: list[SummaryLocation] = []
        for pos, chunk in items(comment.body, _ROW):
            found = citations(chunk, ("bracket_range", "blob"))
            if not found:
                continue
            rated = _first(_IMPORTANCES, chunk) or _first(_ROW_LEVELS, chunk)
            out.extend(
                SummaryLocation(c.path, c.start, c.end,
                                rated or self._section_level(comment.body, pos + c.pos))
                for c in found
            )
        return out

    def inline_severities(self, profile: Profile, comments: Sequence[Comment]) -> dict[int, Severity]:
        titles: dict[str, Severity] = {}
        for c in sorted(comments, key=lambda c: (c.created_at, c.id)):
            if c.channel == "inline":
                continue
            for m in _FINDING.finditer(c.body):
                level = self._section_level(c.body, m.start())
                title = _norm(m["title"])
                if level is not None and len(title) >= 8:
                    titles[title] = level
        found = super().inline_severities(profile, comments)
        for c in comments:
            if c.channel == "inline" and c.id not in found and profile.severity(c.body) is None:
                head = _norm(c.body[:400])
                for title, level in titles.items():
                    if title in head:
                        found[c.id] = level
                        break
        return found


QODO = Profile(
    name="qodo",
    description="Qodo Merge / PR-Agent; importance 1-10, Action required / Remediation recommended",
    logins=frozenset({
        "qodo-merge-pro[bot]", "qodo-merge[bot]", "codium-pr-agent[bot]",
        "qodo-merge-pro-for-open-source[bot]", "qodo-code-review[bot]",
    }),
    any_bot=False,
    trigger_phrases=("/review", "/improve", "/describe"),
    mine_summaries=True,
    severity_patterns=(*_SECTIONS, *_IMPORTANCES),
    signal_rules=(
        # Notices first: a quota or account notice is never hidden by a review marker.
        # "Qodo Merge was enabled for this repository, but no eligible user found. Please
        # link your Git account with your Qodo account" (The-PR-Agent/pr-agent#1526).
        rule("skipped", r"(?:reached|exceeded|used up) your (?:\w+ )?quota|no eligible user found"
                        r"|link your Git account with your Qodo account"),
        # "Incremental Review Skipped / No files were changed since the previous PR Review"
        # (qodo-ai/pr-agent pr_agent/tools/pr_reviewer.py).
        rule("skipped", r"Incremental Review Skipped"),
        # PR-Agent's temporary comments (qodo-ai/pr-agent pr_reviewer.py, pr_code_suggestions.py),
        # before the review markers they contain: "Preparing review...", "## Generating PR
        # code suggestions / Work in progress ...".
        rule("progress", r"^\W*Preparing (?:review|PR description|suggestions|answer)\b"
                         r"|Generating PR code suggestions|Work in progress \.\.\.", placeholder=True),
        rule("clean", r"No code suggestions found"),
        rule("clean", r"No major issues detected", unless=r"Recommended focus areas"),
        rule("done", r"PR Reviewer Guide|PR Code Suggestions|Code Review by Qodo|PR Compliance Guide"),
        # "ⓘ You are approaching your monthly quota for Qodo." (docs/dialects.md §9): a
        # warning, no verdict; the review may still come.
        rule("progress", r"approaching your monthly quota", placeholder=True),
        # The paired description comment: a walkthrough, not a review.
        rule("progress", r"PR Summary by Qodo|^#+\s*(?:PR Description|User description)\b", placeholder=True),
    ),
    labels=(
        (Severity.BLOCKER, '"Action required"; importance 9-10'),
        (Severity.CRITICAL, "importance 7-8"),
        (Severity.MAJOR, '"Remediation recommended"; importance 5-6'),
        (Severity.MINOR, "importance 3-4"),
        (Severity.INFO, "importance 1-2"),
        (None, "no rating: INFO"),
    ),
    hooks=QodoHooks(),
)
