"""Validate user-facing option values once, with messages naming the flag or key."""

from __future__ import annotations

from collections.abc import Sequence

from redline_canary.errors import BadInput
from redline_canary.profile_config import load_profiles_file
from redline_canary.profiles import Profile, get_profile
from redline_canary.publication import MODES
from redline_canary.scoring import DEFAULT_FLOOR, KINDS
from redline_canary.severity import Severity


def parse_kind(value: str, where: str) -> str:
    if value not in KINDS:
        raise BadInput(f"{where}: --kind/manifest.kind must be seeded or clean, got {value!r}")
    return value


def parse_mode(value: str, where: str) -> str:
    if value not in MODES:
        raise BadInput(f"{where}: --mode/manifest.mode must be blind or marked, got {value!r}")
    return value


def parse_floor(value: str | None) -> Severity:
    if value is None:
        return DEFAULT_FLOOR
    try:
        return Severity.parse(value)
    except ValueError as exc:
        raise BadInput(f"--floor: {exc}") from None


def load_profile(name: str, logins: Sequence[str] = (), profiles_file: str | None = None) -> Profile:
    """The reviewer profile; ``profiles_file`` (``--profiles``) adds or overrides profiles."""
    extra = load_profiles_file(profiles_file) if profiles_file else None
    try:
        profile = get_profile(name, extra)
    except KeyError as exc:
        raise BadInput(f"--reviewer: {exc.args[0]}") from None
    return profile.with_logins(logins) if logins else profile
