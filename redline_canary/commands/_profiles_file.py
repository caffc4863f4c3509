"""Custom reviewer profiles and overrides from a YAML file (``--profiles FILE``).

Teams run home-grown bots, and vendors change their markup faster than releases ship,
so identities, trigger, severity patterns, signal patterns and the unrated policy can
be set without code. An entry named like a built-in profile overrides it; any other
name is a new profile built on ``extends`` (default ``generic``)::

    profiles:
      coderabbit:                      # override a built-in
        logins: ["coderabbitai[bot]", "my-rabbit[bot]"]   # quote: [ ] is YAML syntax
      house-bot:                       # a new profile
        extends: generic
        logins: ["house-bot[bot]"]
        trigger: {kind: comment, value: "/house review"}
        unrated: location
        untagged: lowest               # untagged findings: INFO (default), lowest, or a level
        severity:                      # tried before the built-in patterns
          - {pattern: '\\bSEV-1\\b', level: BLOCKER}
          - {pattern: '\\bSEV-2\\b', level: MAJOR}
        signals:
          - {signal: skipped, pattern: 'out of credits'}
        locations:                     # citation shapes read in summaries (groups path, a, b)
          - '(?P<path>[\\w./-]+\\.\\w+) @ line (?P<a>\\d+)'

Patterns are Python regular expressions, matched case-insensitively, ``^``/``$`` per line.
Every error is a :class:`BadInput` naming the file and the key path.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml

from redline_canary.corpus.severity import Severity
from redline_canary.errors import BadInput
from redline_canary.review.profiles import PROFILES, Profile
from redline_canary.review.profiles.spec import SIGNALS, TRIGGER_KINDS, UNRATED_POLICIES, SignalRule, Trigger

KEYS = ("extends", "description", "logins", "bot_ids", "trigger", "unrated", "untagged", "severity",
        "replace_severity", "signals", "mine_summaries", "locations")
SIGNAL_KEYS = ("signal", "pattern", "unless", "placeholder")
_NAME = re.compile(r"^[A-Za-z0-9][\w.-]*$")
_FLAGS = re.IGNORECASE | re.MULTILINE


def load_profiles_file(path: str) -> dict[str, Profile]:
    """Profiles defined or overridden by ``path``, by name."""
    return build_profiles(read_profiles_doc(path), path)


def read_profiles_doc(path: str) -> Any:
    """The profiles file parsed, not yet validated (``build_profiles`` does that)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BadInput(f"{path}: profiles file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInput(f"{path}: cannot read profiles file ({exc.__class__.__name__})") from None
    try:
        doc = yaml.safe_load(text)
    except RecursionError:
        raise BadInput(f"{path}: nested too deeply to be a profiles file") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else path
        problem = getattr(exc, "problem", None) or exc.__class__.__name__
        raise BadInput(f"{where}: not valid YAML ({problem})") from None
    return doc


def build_profiles(doc: Any, source: str) -> dict[str, Profile]:
    """Validate a parsed profiles document; ``source`` names it in error messages."""
    if not isinstance(doc, Mapping):
        raise BadInput(f"{source}: top level: expected a mapping with a 'profiles' key")
    extra = sorted(str(k) for k in doc if k != "profiles")
    if extra:
        raise BadInput(f"{source}: {extra[0]}: unknown key (expected 'profiles')")
    entries = doc.get("profiles")
    if not isinstance(entries, Mapping) or not entries:
        raise BadInput(f"{source}: profiles: expected a mapping of profile name to settings")
    built: dict[str, Profile] = {}
    for name, spec in entries.items():
        key = f"profiles.{name}"
        if not isinstance(name, str) or not _NAME.fullmatch(name):  # match() let "evil\n" through ($ before \n)
            shown = name if isinstance(name, str) and name.isprintable() else ascii(name)
            raise BadInput(f"{source}: profiles.{shown}: profile names are letters, digits, '.', '_' and '-'")
        built[name] = _build_one(name, spec, {**PROFILES, **built}, source, key)
    return built


def _fail(source: str, key: str, message: str) -> BadInput:
    return BadInput(f"{source}: {key}: {message}")


def _build_one(name: str, spec: Any, known: Mapping[str, Profile], source: str, key: str) -> Profile:
    if spec is None:
        spec = {}
    if not isinstance(spec, Mapping):
        raise _fail(source, key, "expected a mapping of settings")
    for k in spec:
        if k not in KEYS:
            raise _fail(source, f"{key}.{k}", f"unknown key (expected one of {', '.join(KEYS)})")
    base_name = spec.get("extends")
    if base_name is None:
        base_name = name if name in PROFILES else "generic"
    if not isinstance(base_name, str) or base_name not in known:
        raise _fail(source, f"{key}.extends",
                    f"unknown profile {base_name!r} (known: {', '.join(sorted(known))})")
    base = known[base_name]
    changes: dict[str, Any] = {"name": name}
    if "description" in spec:
        changes["description"] = _string(spec["description"], source, f"{key}.description")
    elif base.name != name:
        changes["description"] = f"custom, based on {base.name}"
    if "logins" in spec:
        logins = _strings(spec["logins"], source, f"{key}.logins")
        changes["logins"] = frozenset(x.lower() for x in logins)
        changes["any_bot"] = not logins
    if "bot_ids" in spec:
        ids = spec["bot_ids"]
        if not isinstance(ids, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
            raise _fail(source, f"{key}.bot_ids", "expected a list of integer user ids")
        changes["bot_ids"] = frozenset(ids)
    if "trigger" in spec:
        changes["trigger"] = _trigger(spec["trigger"], source, f"{key}.trigger")
    if "unrated" in spec:
        if spec["unrated"] not in UNRATED_POLICIES:
            raise _fail(source, f"{key}.unrated",
                        f"expected one of {', '.join(UNRATED_POLICIES)}, got {spec['unrated']!r}")
        changes["unrated"] = spec["unrated"]
    if "untagged" in spec:
        changes["untagged_level"] = _untagged(spec["untagged"], base, source, f"{key}.untagged")
    if "mine_summaries" in spec:
        changes["mine_summaries"] = _bool(spec["mine_summaries"], source, f"{key}.mine_summaries")
    only_these = _bool(spec.get("replace_severity", False), source, f"{key}.replace_severity")
    if "severity" in spec or only_these:
        table = _severity(spec.get("severity") or [], source, f"{key}.severity")
        changes["severity_overrides"] = table
        if only_these:
            changes["severity_patterns"] = ()
            changes["severity_fallbacks"] = ()
        labels = tuple((level, f"/{p.pattern}/") for p, level in table)
        changes["labels"] = labels if only_these else labels + base.labels
    if "signals" in spec:
        changes["signal_rules"] = _signals(spec["signals"], source, f"{key}.signals") + base.signal_rules
    if "locations" in spec:
        changes["citation_patterns"] = _locations(spec["locations"], source, f"{key}.locations") \
            + base.citation_patterns
    # A new frozen profile: the built-in (or ``extends``) one is never touched, and a key
    # that names no ProfileSpec field cannot get this far (KEYS above).
    return replace(base, **changes)


def _string(value: Any, source: str, key: str) -> str:
    if not isinstance(value, str):
        raise _fail(source, key, "expected a string")
    return value


def _bool(value: Any, source: str, key: str) -> bool:
    if not isinstance(value, bool):
        raise _fail(source, key, f"expected true or false, got {value!r}")
    return value


def _strings(value: Any, source: str, key: str) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise _fail(source, key, "expected a list of non-empty strings")
    return [v.strip() for v in value]


def _regex(value: Any, source: str, key: str) -> re.Pattern[str]:
    if not isinstance(value, str) or not value:
        raise _fail(source, key, "expected a non-empty regular expression string")
    try:
        return re.compile(value, _FLAGS)
    except re.error as exc:
        raise _fail(source, key, f"bad regular expression ({exc})") from None


def _level(value: Any, source: str, key: str) -> Severity:
    try:
        return Severity.parse(str(value))
    except ValueError as exc:
        raise _fail(source, key, str(exc)) from None


def _untagged(value: Any, base: Profile, source: str, key: str) -> Severity:
    """``lowest`` is the vendor's own lowest level (Redline: SUGGESTION, read as MINOR)."""
    if isinstance(value, str) and value.strip().lower() == "lowest":
        return base.lowest_level
    try:
        return Severity.parse(str(value))
    except ValueError:
        raise _fail(source, key, f"expected lowest or a severity ({', '.join(s.name for s in Severity)}), "
                                 f"got {value!r}") from None


def _trigger(value: Any, source: str, key: str) -> Trigger:
    if value == "none" or value is None:
        return Trigger()
    if not isinstance(value, Mapping):
        raise _fail(source, key, "expected 'none' or {kind: request|comment, value: ...}")
    for k in value:
        if k not in ("kind", "value"):
            raise _fail(source, f"{key}.{k}", "unknown key (expected kind, value)")
    kind = value.get("kind")
    if kind not in TRIGGER_KINDS:
        raise _fail(source, f"{key}.kind", f"expected one of {', '.join(TRIGGER_KINDS)}, got {kind!r}")
    text = value.get("value", "")
    if not isinstance(text, str) or (kind != "none" and not text.strip()):
        raise _fail(source, f"{key}.value", f"a {kind} trigger needs a non-empty string")
    return Trigger(kind, text.strip())


def _severity(value: Any, source: str, key: str) -> tuple[tuple[re.Pattern[str], Severity], ...]:
    rows: list[tuple[Any, Any, str, str]] = []  # pattern, level, their key paths
    if isinstance(value, Mapping):
        rows = [(p, level, f"{key}.{p}", f"{key}.{p}") for p, level in value.items()]
    elif isinstance(value, list):
        for i, item in enumerate(value):
            if not isinstance(item, Mapping):
                raise _fail(source, f"{key}[{i}]", "expected {pattern: ..., level: ...}")
            for k in item:
                if k not in ("pattern", "level"):
                    raise _fail(source, f"{key}[{i}].{k}", "unknown key (expected pattern, level)")
            if "level" not in item:
                raise _fail(source, f"{key}[{i}].level", "missing")
            rows.append((item.get("pattern"), item["level"], f"{key}[{i}].pattern", f"{key}[{i}].level"))
    else:
        raise _fail(source, key, "expected a list of {pattern, level} or a mapping pattern: level")
    return tuple(
        (_regex(p, source, p_key), _level(level, source, l_key)) for p, level, p_key, l_key in rows
    )


def _signals(value: Any, source: str, key: str) -> tuple[SignalRule, ...]:
    if not isinstance(value, list):
        raise _fail(source, key, "expected a list of {signal, pattern}")
    rules: list[SignalRule] = []
    for i, item in enumerate(value):
        where = f"{key}[{i}]"
        if not isinstance(item, Mapping):
            raise _fail(source, where, "expected {signal: ..., pattern: ...}")
        for k in item:
            if k not in SIGNAL_KEYS:
                raise _fail(source, f"{where}.{k}", f"unknown key (expected {', '.join(SIGNAL_KEYS)})")
        signal = item.get("signal")
        if signal not in SIGNALS or signal == "finding":
            allowed = ", ".join(s for s in SIGNALS if s != "finding")
            raise _fail(source, f"{where}.signal", f"expected one of {allowed}, got {signal!r}")
        unless = item.get("unless")
        rules.append(SignalRule(
            signal=signal,
            pattern=_regex(item.get("pattern"), source, f"{where}.pattern"),
            unless=_regex(unless, source, f"{where}.unless") if unless is not None else None,
            placeholder=_bool(item.get("placeholder", False), source, f"{where}.placeholder"),
        ))
    return tuple(rules)


def _locations(value: Any, source: str, key: str) -> tuple[re.Pattern[str], ...]:
    """Citation regexes: each names the file in group ``path`` and the first line in ``a``."""
    if not isinstance(value, list):
        raise _fail(source, key, "expected a list of regular expressions with groups path and a (b optional)")
    out: list[re.Pattern[str]] = []
    for i, item in enumerate(value):
        pattern = _regex(item, source, f"{key}[{i}]")
        missing = [g for g in ("path", "a") if g not in pattern.groupindex]
        if missing:
            raise _fail(source, f"{key}[{i}]", f"needs the named group(s) {', '.join(missing)} (and b for a range end)")
        out.append(pattern)
    return tuple(out)
