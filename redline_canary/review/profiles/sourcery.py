"""Sourcery (docs/dialects.md §8).

Inline comments open with a bold type tag ``**issue (bug_risk):**`` /
``**suggestion (testing):**``; ``issue`` vs ``suggestion`` is the closest thing to a
severity and a security issue is the top of the scale. The "Reviewer's Guide" comment
and the PR-description summary are walkthroughs. The review body's "Prompt for AI
Agents" block re-lists every finding as ``### Comment N`` with a ``<location>``; that is
where findings without an inline thread are read from, each with its own tag.
"""

from __future__ import annotations

import re

from redline_canary.corpus.severity import Severity
from redline_canary.review.comments import Comment
from redline_canary.review.profiles.base import PlainHooks, Profile, rule
from redline_canary.review.profiles.citations import SummaryLocation, clean_path, line_span
from redline_canary.review.profiles.dialect import compile_table

# An emoji may lead the tag: "**🚨 issue (security):**" (fresh set: agents-prompt).
_TAG = r"\*\*(?:[^\w*\s]{{1,4}}\s*)?{kind}\s*(?:\((?P<area>[^)]*)\))?\s*:\*\*"
# `### Comment 3` opens one finding of the prompt block (docs/dialects.md §8).
_COMMENT = re.compile(r"^[ \t>]*#{2,4}\s*Comment\s+\d+\b", re.MULTILINE | re.IGNORECASE)
# <location path="src/a.py" line_range="72-74" /> (2026) and <location> `src/a.py:72` </location>.
_LOCATION = re.compile(
    r"<location\b(?=[^>]*?\bpath=[\"'](?P<path>[^\"']+)[\"'])"
    r"(?=[^>]*?\bline_range=[\"'](?P<a>\d+)(?:\s*[-–]\s*(?P<b>\d+))?[\"'])[^>]*>"
    r"|<location>\s*`?(?P<path2>[^\s`<:]+):(?P<a2>\d+)(?:\s*[-–]\s*(?P<b2>\d+))?`?\s*</location>",
    re.IGNORECASE,
)
_CODE_CONTEXT = re.compile(r"<code_context>.*?(?:</code_context>|\Z)", re.DOTALL | re.IGNORECASE)


class SourceryHooks(PlainHooks):
    """The review body's prompt block re-lists every finding with its own tag."""

    def summary_locations(self, profile: Profile, comment: Comment) -> list[SummaryLocation]:
        """``### Comment N`` items of the prompt block, each with its own tag's severity."""
        body = comment.body
        cuts = [m.start() for m in _COMMENT.finditer(body)]
        out: list[SummaryLocation] = []
        for pos, end in zip(cuts, [*cuts[1:], len(body)][: len(cuts)], strict=True):
            chunk = body[pos:end]
            m = _LOCATION.search(chunk)
            if m is None:
                continue
            path = m["path"] or m["path2"]
            level = profile.severity(_CODE_CONTEXT.sub(" ", chunk))
            out.append(SummaryLocation(clean_path(path), *line_span(m["a"] or m["a2"], m["b"] or m["b2"]), level))
        return out


SOURCERY = Profile(
    name="sourcery",
    description="Sourcery; **issue (area):** / **suggestion:** / **nitpick:** tags",
    logins=frozenset({"sourcery-ai[bot]"}),
    any_bot=False,
    trigger_phrases=("@sourcery-ai",),
    mine_summaries=True,
    severity_patterns=compile_table([
        (r"\*\*(?:[^\w*\s]{1,4}\s*)?issue\s*\(\s*security\s*\)\s*:\*\*", Severity.BLOCKER),
        (_TAG.format(kind="issue"), Severity.MAJOR),
        (_TAG.format(kind="suggestion"), Severity.MINOR),
        (_TAG.format(kind="nitpick"), Severity.INFO),
    ]),
    signal_rules=(
        # "Sorry @TenSt, your pull request is larger than the review limit of 150000 diff
        # characters" (saforem2/ezpz#240; index refs 55113773968, 60068301423).
        rule("skipped", r"larger than the review limit\b"),
        # "Sorry @blooop, you have reached your weekly rate limit of 500000 diff characters.
        # Please try again later or [upgrade](…)" (index ref 60068301423, verbatim).
        rule("skipped", r"reached your (?:\w+ )?rate limit\b|Sourcery was unable to review"),
        # "Sorry @x, this account has used its review budget of 1,500,000 diff characters for
        # the last 7 days." (held-out set, reposted).
        rule("skipped", r"used (?:its|your) review budget\b"),
        # The bot's status comment while it works, edited to "has finished reviewing"
        # (docs/dialects.md §8, settlemint/docs#167).
        rule("progress", r"Sourcery is reviewing your pull request", placeholder=True),
        rule("clean", r"reviewed your changes and they look great"),
        # The short re-check after a push: "### Sourcery assessment\n\n**Approved.**".
        rule("clean", r"^#+\s*Sourcery assessment\s*\n\s*\*\*Approved\.?\*\*"),
        rule("done", r"Sourcery has finished reviewing|I've found \d+ issues?|I've reviewed your changes"
                     r"|^#+\s*Individual Comments\b"),
        # The guide comment and the description summary come before the review: alone,
        # they are not one.
        rule("progress", r"^#+\s*Reviewer's Guide\b|Summary by Sourcery", placeholder=True),
    ),
    labels=(
        (Severity.BLOCKER, "**issue (security):**"),
        (Severity.MAJOR, "**issue (any other area):**"),
        (Severity.MINOR, "**suggestion (...):**"),
        (Severity.INFO, "**nitpick:**"),
        (None, "no tag: INFO"),
    ),
    hooks=SourceryHooks(),
)
