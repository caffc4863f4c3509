"""Gemini Code Assist, the consumer GitHub app (reviewer-dialects §4; sunset July 2026).

Severity is the badge image on the first line of an inline comment, keyed on its alt
text or file stem (``codereviewagent/high-priority.svg``). The "Summary of Changes"
comment and the help text are walkthroughs, never findings.
"""

from __future__ import annotations

from redline_canary.profiles.base import Profile, rule
from redline_canary.profiles.dialect import compile_table
from redline_canary.severity import Severity


def _badge(*stems: str) -> str:
    names = "|".join(stems)
    return rf"!\[(?:{names})\]|codereviewagent/(?:{names})\.svg"


class GeminiProfile(Profile):
    name = "gemini"
    description = "Gemini Code Assist; critical/high/medium/low priority badges"
    logins = frozenset({"gemini-code-assist[bot]"})
    any_bot = False
    trigger_phrases = ("/gemini", "@gemini-code-assist")
    severity_patterns = compile_table([
        (_badge("critical", "security-critical"), Severity.BLOCKER),
        (_badge("high", "high-priority"), Severity.CRITICAL),
        (_badge("medium", "medium-priority"), Severity.MAJOR),
        (_badge("low", "low-priority"), Severity.MINOR),
    ])
    signal_rules = (
        rule("skipped", r"unable to generate a review|daily quota"),
        rule("clean", r"I have no (?:additional )?feedback to provide"),
    )
    labels = (
        (Severity.BLOCKER, "![critical] badge (also ![security-critical])"),
        (Severity.CRITICAL, "![high] high-priority badge"),
        (Severity.MAJOR, "![medium] medium-priority badge"),
        (Severity.MINOR, "![low] low-priority badge"),
        (None, "no badge: INFO"),
    )
