"""The canonical dialect (DESIGN §5) and the generic one for home-grown bots."""

from __future__ import annotations

import re

from redline_canary.profiles.base import Profile
from redline_canary.severity import Severity

_SCALE_TAG = [
    (re.compile(rf"\[{s.name}\]", re.IGNORECASE), s) for s in Severity
]
_REDLINE_PREFIX = [
    (re.compile(r"Redline/BLOCKER\b"), Severity.BLOCKER),
    (re.compile(r"Redline/HIGH\b"), Severity.CRITICAL),
    (re.compile(r"Redline/SUGGESTION\b"), Severity.MINOR),
]


def _word_forms(word: str) -> str:
    """Forms that *assign* a level, not prose that merely mentions it."""
    return (
        rf"\[{word}\]|\*\*{word}\*\*|severity\s*[:=]\s*\**{word}\b|(?m:^\W{{0,4}}{word}\s*[:—-])"
        rf"|\b{word}[ -](?:severity|priority)\b"
    )


_GENERIC_WORDS = [
    (re.compile(_word_forms(word), re.IGNORECASE), level)
    for word, level in (
        ("critical", Severity.BLOCKER),
        ("high", Severity.CRITICAL),
        ("medium", Severity.MAJOR),
        ("low", Severity.MINOR),
    )
]


class RedlineProfile(Profile):
    name = "redline"
    description = "[SEVERITY] tags and Redline/BLOCKER|HIGH|SUGGESTION prefixes; any bot"
    severity_patterns = tuple(_SCALE_TAG + _REDLINE_PREFIX)
    review_signal = "progress"  # home-grown bots may stream reviews: wait for stability


class GenericProfile(Profile):
    name = "generic"
    description = "redline tags plus critical/high/medium/low words; any bot"
    severity_patterns = tuple(_SCALE_TAG + _REDLINE_PREFIX + _GENERIC_WORDS)
    review_signal = "progress"
