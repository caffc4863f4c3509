"""Redline's vocabulary on this product's scale: the one mapping table, and its finding grammar. Pure.

Redline (a seed canary many teams run before this one) grades on three levels, BLOCKER, HIGH
and SUGGESTION, and writes findings as ``Redline/<SEVERITY> [rule-id]: ...``. The corpus
importer, the ``redline`` profile and the legacy-history import all read that vocabulary;
they read it through this module so that a HIGH marker imported from a Redline corpus is
caught by exactly the findings Redline's own scorer would have counted (a finding catches a
marker iff its Redline level is at least the marker's, on both sides of the same table).
The README section "Coming from Redline" prints :data:`SEVERITY_MAP` with its reasons.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from redline_canary.corpus.rule_ids import REDLINE_RULE
from redline_canary.corpus.severity import Severity


@dataclass(frozen=True)
class Mapped:
    """One Redline level on this scale, and why it lands there."""

    level: Severity
    reason: str


SEVERITY_MAP: dict[str, Mapped] = {
    "BLOCKER": Mapped(Severity.BLOCKER, "the top level on both scales: must not merge, and the gate keys on it"),
    "HIGH": Mapped(Severity.MAJOR, "a real defect to fix before merge that does not block it; the rubric's "
                                   "CRITICAL is narrower (a severe security or integrity failure), and when in "
                                   "doubt a label takes the lower level"),
    "SUGGESTION": Mapped(Severity.MINOR, "worth a comment, not a defect that must be fixed: below the clean "
                                         "floor (MAJOR), so a suggestion on a clean twin is reported, not counted"),
}
REDLINE_LEVELS = tuple(SEVERITY_MAP)  # most severe first
LOWEST = SEVERITY_MAP["SUGGESTION"].level  # what Redline gives a comment with no level at all
UNCATALOGUED_RULE = "core/uncatalogued"  # Redline's reserved id for a defect no rule names

# A finding's first line as Redline's scorer reads it: at the start of a line, after optional
# Markdown emphasis or quoting, case-insensitive, the rule id optional (pre-2.1 bots omit it).
FINDING = re.compile(
    r"(?:^|\n)[ \t]*(?:[*_`>-]*[ \t]*)?Redline/(BLOCKER|HIGH|SUGGESTION)\b[ \t]*"
    rf"(?:\[[ \t]*`?({REDLINE_RULE})`?[ \t]*\])?",
    re.IGNORECASE,
)
# With no prefix, Redline takes the first bare level word, upper case only.
BARE = re.compile(r"\b(BLOCKER|HIGH|SUGGESTION)\b")


def to_scale(word: str) -> Severity:
    """A Redline level word (any case) on this scale; ValueError names an unknown word."""
    try:
        return SEVERITY_MAP[word.strip().upper()].level
    except KeyError:
        raise ValueError(f"unknown Redline severity {word!r} (expected one of {', '.join(REDLINE_LEVELS)})") from None


def prefix_rule(body: str) -> str | None:
    """The rule id a ``Redline/<SEVERITY> [rule-id]`` prefix names, lower-cased, or None.

    This is Redline's rule attribution: only the id in the prefix counts, not a mention of
    the id further down the body (which this product's ``cited`` also accepts).
    """
    m = FINDING.search(body)
    return m[2].lower() if m and m[2] else None
