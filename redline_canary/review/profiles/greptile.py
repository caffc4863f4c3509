"""Greptile (docs/dialects.md §7).

Inline comments open with an ``<img alt="P1">`` badge; the 2025 format used a category
prefix (``**logic:**``) instead and no priority. The summary comment's confidence score
and "Last reviewed commit" say the pass finished; "No P0 or P1 issues found" in it is a
verdict, not a severity. Legacy out-of-diff findings sit in the review body as
`` `path`, line 24-26 ``. A comment marked ``<!-- greptile-status -->`` is Greptile
declining to review (too many files, no reviewable files, excluded author or label), and
trial-credit notices arrive as reviews: both mean the reviewer did not review.
"""

from __future__ import annotations

import re

from redline_canary.corpus.severity import Severity
from redline_canary.review.comments import Comment
from redline_canary.review.profiles.base import PlainHooks, Profile, rule
from redline_canary.review.profiles.citations import SummaryLocation, clean_path, line_span
from redline_canary.review.profiles.dialect import compile_table, itemized_locations, p_labels, p_scale

_PROMPT_LINE = re.compile(r"^\s*Line:\s*(?P<a>\d+)(?:\s*-\s*(?P<b>\d+))?", re.MULTILINE)
_PROMPT_PATH = re.compile(r"^\s*Path:\s*`?(?P<path>[^\s`]+)`?", re.MULTILINE)


class GreptileHooks(PlainHooks):
    """Legacy out-of-diff findings sit in the review body; prompts name a moved line."""

    def summary_locations(self, profile: Profile, comment: Comment) -> list[SummaryLocation]:
        if comment.channel != "review":
            return []  # the summary comment lists inline threads, not new places
        return itemized_locations(comment.body, ("path_comma_line", "blob"), profile.severity)

    def body_location(self, profile: Profile, comment: Comment) -> SummaryLocation | None:
        line = _PROMPT_LINE.search(comment.body)
        if line is None:
            return None
        where = _PROMPT_PATH.search(comment.body)
        path = clean_path(where["path"]) if where else comment.path
        if not path:
            return None
        return SummaryLocation(path, *line_span(line["a"], line["b"]))


GREPTILE = Profile(
    name="greptile",
    reads_reactions=True,  # 👍 on the PR means "reviewed"
    description="Greptile; P0-P3 badges (legacy logic/syntax/style/info prefixes)",
    logins=frozenset({"greptile-apps[bot]"}),
    any_bot=False,
    trigger_phrases=("@greptileai", "@greptile"),
    mine_summaries=True,
    discussion_links=True,
    severity_patterns=(
        *p_scale(r"""<img\b[^>]*\balt=["']P<n>["']""", r"badges/p<n>\.svg"),
        *compile_table([
            (r"\*\*(?:logic|syntax):\*\*|\A\s*(?:logic|syntax):", Severity.MAJOR),
            (r"\*\*style:\*\*|\A\s*style:", Severity.MINOR),
            (r"\*\*info:\*\*|\A\s*info:", Severity.INFO),
        ]),
    ),
    signal_rules=(
        # Every `<!-- greptile-status -->` comment is Greptile declining a review:
        # "Too many files changed for review. (`3000 files found`, `500 file limit`)"
        # (shepherdjerred/monorepo#1229), "No reviewable files after applying ignore
        # patterns.", "PR author is in the excluded authors list.", "PR label `release`
        # disables reviews." (index refs 56173096738, 56236272914, 70355237392).
        rule("skipped", r"<!--\s*greptile-status\s*-->|Too many files changed for review|No reviewable files"
                        r"|excluded authors list|disables reviews"),
        # "`elkaix` has reached the 50-credit limit for trial accounts." posted as a review
        # (PyModel/pythinker-code#83).
        rule("skipped", r"reached the [\d,]+-credit limit|credit limit for trial accounts"),
        rule("error", r"^\s*😕\s*$|Greptile encountered an error"),
        rule("progress", r"^\s*👀\s*$", placeholder=True),
        rule("clean", r"Confidence Score[^0-9]{0,60}5\s*/\s*5", unless=r"""alt=["']P[01]["']"""),
        rule("clean", r"files? reviewed, 0 comments"),
        rule("done", r"Last reviewed commit|Confidence Score|files? reviewed, \d+ comments?|^\s*👍\s*$"
                     r"|greptile_summary|Greptile Summary|Greptile Overview"),
    ),
    labels=(
        *p_labels('<img alt="P<n>"> badge'),
        (Severity.MAJOR, "legacy **logic:**, **syntax:**"),
        (Severity.MINOR, "legacy **style:**"),
        (Severity.INFO, "legacy **info:**"),
        (None, "no badge: INFO"),
    ),
    hooks=GreptileHooks(),
)
