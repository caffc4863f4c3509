"""The one severity scale every profile maps onto (docs/corpus.md, docs/matching.md#findings)."""

from __future__ import annotations

import enum


class Severity(enum.IntEnum):
    """Ordered so that ``a >= b`` means "a is at least as severe as b"."""

    INFO = 1
    MINOR = 2
    MAJOR = 3
    CRITICAL = 4
    BLOCKER = 5

    @classmethod
    def parse(cls, word: str) -> Severity:
        """Exact scale word, case-insensitive; ValueError names the bad word."""
        try:
            return cls[word.strip().upper()]
        except KeyError:
            names = ", ".join(s.name for s in SCALE)
            raise ValueError(f"unknown severity {word!r} (expected one of {names})") from None


# Most severe first: the order reports and the matching objective use.
SCALE: tuple[Severity, ...] = tuple(sorted(Severity, reverse=True))
SEVERITY_NAMES: tuple[str, ...] = tuple(s.name for s in SCALE)


def at_or_above(name: object, floor: str) -> bool:
    """Whether a severity name read from a record is at or above ``floor``; None (an unrated
    profile, docs/matching.md#findings) always is, anything that is not a scale word never is."""
    if name is None:
        return True
    return isinstance(name, str) and name in SEVERITY_NAMES and Severity[name] >= Severity[floor]
