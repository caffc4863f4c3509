"""Profile registry: name -> profile. Vendor profiles register here."""

from __future__ import annotations

from redline_canary.profiles.base import Extraction, Profile, Trigger
from redline_canary.profiles.bugbot import BugbotProfile
from redline_canary.profiles.claude import ClaudeProfile
from redline_canary.profiles.coderabbit import CodeRabbitProfile
from redline_canary.profiles.codex import CodexProfile
from redline_canary.profiles.copilot import CopilotProfile
from redline_canary.profiles.cubic import CubicProfile
from redline_canary.profiles.gemini import GeminiProfile
from redline_canary.profiles.greptile import GreptileProfile
from redline_canary.profiles.qodo import QodoProfile
from redline_canary.profiles.redline import GenericProfile, RedlineProfile
from redline_canary.profiles.sourcery import SourceryProfile

PROFILES: dict[str, Profile] = {p.name: p for p in (
    RedlineProfile(), GenericProfile(), CopilotProfile(), CodeRabbitProfile(), CodexProfile(),
    GeminiProfile(), ClaudeProfile(), BugbotProfile(), GreptileProfile(), SourceryProfile(),
    QodoProfile(), CubicProfile(),
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
