"""Profile registry: name -> profile. Vendor profiles register here."""

from __future__ import annotations

from redline_canary.review.profiles.base import Extraction, Profile, Trigger
from redline_canary.review.profiles.bugbot import BUGBOT
from redline_canary.review.profiles.claude import CLAUDE
from redline_canary.review.profiles.coderabbit import CODERABBIT
from redline_canary.review.profiles.codex import CODEX
from redline_canary.review.profiles.copilot import COPILOT
from redline_canary.review.profiles.cubic import CUBIC
from redline_canary.review.profiles.gemini import GEMINI
from redline_canary.review.profiles.greptile import GREPTILE
from redline_canary.review.profiles.qodo import QODO
from redline_canary.review.profiles.redline import GENERIC, REDLINE
from redline_canary.review.profiles.sourcery import SOURCERY

PROFILES: dict[str, Profile] = {p.name: p for p in (
    REDLINE, GENERIC, COPILOT, CODERABBIT, CODEX, GEMINI, CLAUDE, BUGBOT, GREPTILE, SOURCERY, QODO, CUBIC,
)}


def get_profile(name: str, extra: dict[str, Profile] | None = None) -> Profile:
    """Raises KeyError with the known names when ``name`` is unknown.

    ``extra`` holds profiles from a ``--profiles`` file; they shadow built-ins of the
    same name.
    """
    known = {**PROFILES, **(extra or {})}
    try:
        return known[name]
    except KeyError:
        raise KeyError(
            f"unknown reviewer profile {name!r} (known: {', '.join(sorted(known))})"
        ) from None


__all__ = ["PROFILES", "Extraction", "Profile", "Trigger", "get_profile"]
