"""Validate user-facing option values once, with messages naming the flag or key."""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from redline_canary.commands import _validate as validate
from redline_canary.commands._profiles_file import load_profiles_file
from redline_canary.corpus.severity import Severity
from redline_canary.errors import BadInput
from redline_canary.review.profiles import Profile, get_profile
from redline_canary.score.acknowledgements import Acknowledgement
from redline_canary.score.defaults import BY_FLAG, default
from redline_canary.score.record import KINDS, MODES, Mode, PRKind
from redline_canary.score.scoring import DEFAULT_FLOOR
from redline_canary.score.verdict import BLOCKER_GATES, GateOptions, parse_baseline


def parse_kind(value: str, where: str) -> PRKind:
    if value not in KINDS:
        raise BadInput(f"{where}: --kind/manifest.kind must be seeded or clean, got {value!r}")
    return value


def parse_mode(value: str, where: str) -> Mode:
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


def gate_options(*, floor: Severity, min_recall: float | None, require_citation: bool, blocker_gate: str | None,
                 baseline: str | None, acknowledgements: tuple[Acknowledgement, ...],
                 where: str | None = None) -> GateOptions:
    """One GateOptions from flags or a target's keys, each checked under its own name: the
    flag (``--baseline``), or with ``where`` the target's key (``targets: [0].baseline``)."""
    def name(key: str) -> str:
        return f"--{key}" if where is None else f"{where}{key}"

    gate = blocker_gate or str(default("--blocker-gate"))
    if gate not in BLOCKER_GATES:
        raise BadInput(f"{name('blocker-gate')}: expected caught or found, got {validate.show(gate)}")
    spec = None
    if baseline:
        try:
            spec = parse_baseline(baseline, name("baseline"))
        except ValueError as exc:
            raise BadInput(str(exc)) from None
    if min_recall is not None:
        validate.number(min_recall, name("min-recall"), low=0, high=1)
    return GateOptions(min_recall=min_recall, require_citation=require_citation, blocker_gate=gate,
                       floor=floor.name, baseline=spec, acknowledgements=acknowledgements)


def add_default_flag(p: Any, flag: str, kind: type = str) -> None:
    """A flag whose default comes from the one table (:mod:`redline_canary.score.defaults`), with
    the help saying what it is: ``%(default)s``, or the manifest first for ``score``."""
    d = BY_FLAG[flag]
    if d.after_manifest:
        p.add_argument(flag, type=kind, default=None,
                       help=f"{d.help} (default: the capture's manifest, else {d.value})")
    else:
        p.add_argument(flag, type=kind, default=d.value, help=f"{d.help} (default: %(default)s)")


# Every command that reads the corpus takes --corpus the same way (docs/corpus.md#layers).
CORPUS_HELP = ("corpus folder; repeat to add private layers (default: the packaged seeds/, which stays the "
               "first layer unless the first folder holds its own rules.yml)")


def add_scoring_options(p: Any) -> None:
    """The scoring and gate flags ``run`` and ``score`` share (docs/matching.md): declared once,
    here, so the two commands cannot spell, default or explain them differently."""
    p.add_argument("--corpus", action="append", help=CORPUS_HELP)
    add_default_flag(p, "--window", int)
    add_default_flag(p, "--floor")
    p.add_argument("--profiles", help="YAML file of custom reviewer profiles or overrides")
    p.add_argument("--min-recall", type=float, help="gate: fail below this recall")
    p.add_argument("--require-citation", action="store_true",
                   help="gate: every caught seed's comment must name its rule id")
    add_gate_options(p)


def add_gate_options(p: Any) -> None:
    """The gate flags ``run`` and ``score`` share (docs/matching.md), defaults from the one table."""
    p.add_argument("--blocker-gate", choices=BLOCKER_GATES, default=BY_FLAG["--blocker-gate"].value,
                   help=f"{BY_FLAG['--blocker-gate'].help} (default: %(default)s)")
    p.add_argument("--baseline", nargs="?", const="previous", default=None, metavar="previous|window:N",
                   help="gate on regressions: against the previous comparable record, or a rolling "
                   "window of the last N (newly missed BLOCKER fails, intermittent warns)")
    p.add_argument("--acknowledgements", metavar="FILE",
                   help="YAML list of acknowledged gaps {reviewer, stack, seed|rule, reason, until, by}")


# What the sandbox's banner and `run`'s hint suggest against a local API: the sandbox's
# reviewers answer in about a second, so GitHub's 30 s polls and 40-minute wait would make
# a two-PR run take minutes for nothing (docs/sandbox.md#from-the-command-line).
SANDBOX_POLL_FLAGS = ("--poll-interval", "1", "--timeout-minutes", "1")
SANDBOX_TOKEN = "sandbox-any-token"  # the sandbox accepts any token; this one says so
API_URL_VAR = "REDLINE_CANARY_API_URL"  # --api-url's default, read once in cli.main


def is_local_api(url: str | None) -> bool:
    """Whether ``--api-url`` points at this machine (the sandbox, in practice): GitHub and
    GitHub Enterprise are never on a loopback address, so a hint keyed on it cannot
    mislead anyone running against a real server."""
    if not url:
        return False
    try:
        host = (urlsplit(url).hostname or "").lower()
    except ValueError:
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a name other than localhost
        return False
