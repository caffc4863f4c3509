"""cubic (docs/dialects.md §10; thin evidence).

Priorities P0–P3 as a ``P2:`` prefix; the review body's "Prompt for AI agents" block
re-lists every finding as ``<violation location="path:96">P2: …</violation>``, which is
where findings without an inline thread are read from. No cubic notice was seen in public
material: its skips are left to the vendor-neutral notice vocabulary (profiles.notices).
"""

from __future__ import annotations

from redline_canary.review.comments import Comment
from redline_canary.review.profiles.base import PlainHooks, Profile, rule
from redline_canary.review.profiles.citations import SummaryLocation
from redline_canary.review.profiles.dialect import itemized_locations, p_labels, p_scale


class CubicHooks(PlainHooks):
    """The prompt block re-lists every finding as a ``<violation location=...>``."""

    def summary_locations(self, profile: Profile, comment: Comment) -> list[SummaryLocation]:
        return itemized_locations(comment.body, ("violation",), profile.severity)


CUBIC = Profile(
    name="cubic",
    description="cubic; P0-P3 prefixes, <violation location=...> lists mined",
    logins=frozenset({"cubic-dev-ai[bot]"}),
    any_bot=False,
    trigger_phrases=("@cubic-dev-ai",),
    mine_summaries=True,
    severity_patterns=p_scale(r"^\W{0,8}P<n>\s*:", r"<violation\b[^>]*>\s*P<n>\b"),
    signal_rules=(
        rule("clean", r"\*\*(?:0|No) issues found\*\*"),
        rule("done", r"\*\*\d+ issues? found\*\*|cubic:attribution"),
        # cubic reviews up to 75 files (docs/dialects.md §10); any other notice of its is
        # read by the vendor-neutral notice vocabulary.
    ),
    labels=(*p_labels("P<n>: prefix"), (None, "no prefix: INFO")),
    hooks=CubicHooks(),
)
