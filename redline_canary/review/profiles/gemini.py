"""Gemini Code Assist, the consumer GitHub app (docs/dialects.md §4; sunset July 2026).

Severity is the badge image on the first line of an inline comment, keyed on its alt
text or file stem (``codereviewagent/high-priority.svg``). The "Summary of Changes"
comment and the help text are walkthroughs, never findings, and come before the review:
alone they are a placeholder. "## Code Review" opens every finished review body.
"""

from __future__ import annotations

from redline_canary.corpus.severity import Severity
from redline_canary.review.comments import Comment
from redline_canary.review.profiles.base import PlainHooks, Profile, rule
from redline_canary.review.profiles.citations import SummaryLocation
from redline_canary.review.profiles.dialect import compile_table, itemized_locations


class GeminiHooks(PlainHooks):
    """When Gemini cannot post inline comments it lists them in the review body ("I am
    having trouble creating individual review comments"): one ``### path (a-b)`` heading
    per finding, its badge under it (fresh set: a review body listing 9 findings)."""

    def summary_locations(self, profile: Profile, comment: Comment) -> list[SummaryLocation]:
        if comment.channel != "review":
            return []  # the summary-of-changes comment names files, it reports nothing
        return itemized_locations(comment.body, ("paren",), profile.severity)


def _badge(*stems: str) -> str:
    names = "|".join(stems)
    return rf"!\[(?:{names})\]|codereviewagent/(?:{names})\.svg"


GEMINI = Profile(
    name="gemini",
    description="Gemini Code Assist; critical/high/medium/low priority badges",
    logins=frozenset({"gemini-code-assist[bot]"}),
    any_bot=False,
    trigger_phrases=("/gemini", "@gemini-code-assist"),
    mine_summaries=True,
    severity_patterns=compile_table([
        (_badge("critical", "security-critical"), Severity.BLOCKER),
        (_badge("high", "high-priority"), Severity.CRITICAL),
        (_badge("medium", "medium-priority"), Severity.MAJOR),
        (_badge("low", "low-priority"), Severity.MINOR),
    ]),
    signal_rules=(
        # docs/dialects.md §4 (refs 39673545358, 38860890989): unsupported file types;
        # quota wording from tool authors (ref 69379069987).
        rule("skipped", r"unable to generate a review|daily quota|reached your daily quota"),
        # After the July 2026 sunset (docs/dialects.md §4): any "no longer available".
        rule("skipped", r"Gemini Code Assist (?:is|has been) (?:no longer|discontinued|shut down)"
                        r"|code review activity has (?:officially )?ceased"),
        rule("error", r"Gemini encountered an error"),
        # The banner under reviews before the sunset ("The consumer version of Gemini Code
        # Assist on GitHub is being sunset. Starting June 18, 2026, …"): on a review body it is
        # Gemini's review, whatever the overview above it says about the PR's "errors".
        rule("done", r"Gemini Code Assist on GitHub is being sunset", channels=("review",)),
        rule("clean", r"I have no (?:additional )?feedback to provide"),
        # "## Code Review" opens every review body (docs/dialects.md §4).
        rule("done", r"^#+\s*Code Review\b", channels=("review",)),
        # The summary comment ("I'm currently reviewing this pull request and will post my
        # feedback shortly") comes before the review: alone, it is not one.
        rule("progress", r"^#+\s*Summary of Changes\b|Using Gemini Code Assist|^#+\s*Gemini Code Assist\b",
             placeholder=True),
    ),
    labels=(
        (Severity.BLOCKER, "![critical] badge (also ![security-critical])"),
        (Severity.CRITICAL, "![high] high-priority badge"),
        (Severity.MAJOR, "![medium] medium-priority badge"),
        (Severity.MINOR, "![low] low-priority badge"),
        (None, "no badge: INFO"),
    ),
    hooks=GeminiHooks(),
)
