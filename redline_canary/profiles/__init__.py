"""Profile registry: name -> profile. Vendor profiles register here."""

from __future__ import annotations

from redline_canary.profiles.base import Extraction, Profile, Trigger
from redline_canary.profiles.redline import GenericProfile, RedlineProfile

PROFILES: dict[str, Profile] = {p.name: p for p in (RedlineProfile(), GenericProfile())}


def get_profile(name: str) -> Profile:
    """Raises KeyError with the known names when ``name`` is unknown."""
    try:
        return PROFILES[name]
    except KeyError:
        raise KeyError(
            f"unknown reviewer profile {name!r} (known: {', '.join(sorted(PROFILES))})"
        ) from None


__all__ = ["PROFILES", "Extraction", "Profile", "Trigger", "get_profile"]
