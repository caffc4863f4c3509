"""The canonical dialect (docs/matching.md#findings) and the generic one for home-grown bots."""

from __future__ import annotations

import re

from redline_canary.corpus.redline_scale import SEVERITY_MAP
from redline_canary.corpus.severity import Severity
from redline_canary.review.profiles.base import Profile

_SCALE_TAG = [
    (re.compile(rf"\[{s.name}\]", re.IGNORECASE), s) for s in Severity
]
# Redline's own finding prefix, read as its scorer reads it (redline_scale.FINDING): at a
# line start after optional emphasis, in any case, each level through the one mapping table.
_REDLINE_PREFIX = [
    (re.compile(rf"(?:^|\n)[ \t]*(?:[*_`>-]*[ \t]*)?Redline/{word}\b", re.IGNORECASE), mapped.level)
    for word, mapped in SEVERITY_MAP.items()
]
# With no prefix, Redline takes the first bare level word (upper case only, as it does).
_REDLINE_BARE = [(re.compile(rf"\b{word}\b"), mapped.level) for word, mapped in SEVERITY_MAP.items()]


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


# The canonical dialect, and Redline's: ``Redline/<SEVERITY> [rule-id]`` in any case, else a
# bare BLOCKER/HIGH/SUGGESTION word. An untagged comment is INFO unless the profile is
# configured with ``untagged: lowest`` (Redline's SUGGESTION, as its scorer counts it).
REDLINE = Profile(
    name="redline",
    description="[SEVERITY] tags, Redline/BLOCKER|HIGH|SUGGESTION prefixes and bare levels; any bot",
    severity_patterns=tuple(_REDLINE_PREFIX + _SCALE_TAG),
    severity_fallbacks=tuple(_REDLINE_BARE),
    lowest_level=SEVERITY_MAP["SUGGESTION"].level,
    review_signal="progress",  # home-grown bots may stream reviews: wait for stability
    labels=(
        *((mapped.level, f"Redline/{word} [rule-id] (or a bare {word})") for word, mapped in SEVERITY_MAP.items()),
        *((s, f"[{s.name}]") for s in Severity),
    ),
)

GENERIC = Profile(
    name="generic",
    description="redline tags plus critical/high/medium/low words; any bot",
    severity_patterns=tuple(_SCALE_TAG + _REDLINE_PREFIX + _GENERIC_WORDS),
    review_signal="progress",
)
