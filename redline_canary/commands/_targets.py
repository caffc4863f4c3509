"""Targets from flags, a file, inline JSON/YAML or ``CANARY_TARGETS``, and the
acknowledgements file: read and checked before any request is sent, so a typo fails in a
second with the key that is wrong, not after a PR has been opened."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Collection
from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml

from redline_canary.commands import _validate as validate
from redline_canary.commands._options import gate_options
from redline_canary.corpus.model import CorpusData
from redline_canary.corpus.severity import SEVERITY_NAMES, Severity
from redline_canary.corpus.variants import AUTO, NONE, choose_variant, parse_variants
from redline_canary.errors import BadInput
from redline_canary.report.text import inert_line
from redline_canary.review.profiles import PROFILES
from redline_canary.run.history import open_regular
from redline_canary.run.targets import Target
from redline_canary.score.acknowledgements import Acknowledgement, AcknowledgementError
from redline_canary.score.acknowledgements import parse as parse_acknowledgements
from redline_canary.score.record import MODES
from redline_canary.score.verdict import GateOptions

_KEYS = {"repo", "stack", "reviewer", "base", "mode", "prefix", "login", "variant", "corpus"}
MAX_FOLDER = 1024  # a corpus folder's path, as a target names it
# Gate options a target may set for itself (the action inputs and `run` flags of the same names).
GATE_KEYS = ("floor", "min-recall", "require-citation", "blocker-gate", "baseline", "acknowledgements")


def with_gate(target: Target, run_gate: GateOptions, today: str) -> Target:
    """The target with its gate options: the run's, overridden by its own keys."""
    keys = dict(target.gate_keys)
    if not keys:
        return replace(target, gate=run_gate)
    where = f"{target.where}."
    floor = keys.get("floor")
    if floor is not None and (not isinstance(floor, str) or floor.upper() not in SEVERITY_NAMES):
        raise BadInput(f"{where}floor: expected one of {', '.join(SEVERITY_NAMES)}")
    min_recall = keys.get("min-recall", run_gate.min_recall)
    if min_recall is not None and (isinstance(min_recall, bool) or not isinstance(min_recall, (int, float))):
        raise BadInput(f"{where}min-recall: expected a number from 0 to 1")
    citation = keys.get("require-citation", run_gate.require_citation)
    if not isinstance(citation, bool):
        raise BadInput(f"{where}require-citation: expected true or false")
    for key in ("blocker-gate", "baseline", "acknowledgements"):
        if key in keys and not isinstance(keys[key], str):
            raise BadInput(f"{where}{key}: expected a string")
    acks = run_gate.acknowledgements
    if "acknowledgements" in keys:
        acks = load_acknowledgements(keys["acknowledgements"], today, f"{where}acknowledgements")
    gate = gate_options(
        floor=Severity.parse(floor) if isinstance(floor, str) else Severity.parse(run_gate.floor),
        min_recall=float(min_recall) if min_recall is not None else None, require_citation=citation,
        blocker_gate=keys.get("blocker-gate", run_gate.blocker_gate),
        baseline=keys.get("baseline", run_gate.baseline), acknowledgements=acks, where=where)
    return replace(target, gate=gate)


def load_acknowledgements(path: str | None, today: str,
                          where: str = "--acknowledgements") -> tuple[Acknowledgement, ...]:
    """The acknowledgements file (YAML or JSON); BadInput naming the file and entry."""
    if not path:
        return ()
    try:
        with open_regular(path, "acknowledgements file") as fh:
            raw = fh.read(1 << 20)
        doc = yaml.safe_load(raw.decode("utf-8"))
        doc = _dates_as_text(doc)
    except RecursionError:
        raise BadInput(f"{path}: {where}: nested too deeply to read") from None
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        line = getattr(getattr(exc, "problem_mark", None), "line", 0) + 1
        raise BadInput(f"{path}:{line}: {where}: not valid YAML") from None
    try:
        return parse_acknowledgements(doc, today)
    except AcknowledgementError as exc:
        raise BadInput(inert_line(f"{path}: {exc}")) from None


def _dates_as_text(value: Any) -> Any:
    """YAML reads 2027-03-01 as a date; the pure core takes ISO text."""
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()[:10]
    if isinstance(value, dict):
        return {k: _dates_as_text(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_dates_as_text(v) for v in value]
    return value


def load_targets_text(text: str, source: str) -> list[Any]:
    """A JSON or YAML list (a single object is a list of one)."""
    try:
        doc = json.loads(text)
    except RecursionError:
        raise BadInput(f"{source}: nested too deeply to be a list of targets") from None
    except json.JSONDecodeError as json_exc:
        try:
            doc = yaml.safe_load(text)
        except RecursionError:
            raise BadInput(f"{source}: nested too deeply to be a list of targets") from None
        except yaml.YAMLError:
            raise BadInput(f"{source}: not valid JSON ({json_exc.msg} at line {json_exc.lineno}) "
                           "or YAML") from None
        if isinstance(doc, str) or doc is None:
            raise BadInput(f"{source}: not valid JSON ({json_exc.msg} at line {json_exc.lineno})") from None
    if isinstance(doc, dict) and "targets" in doc:
        doc = doc["targets"]
    if isinstance(doc, dict):
        doc = [doc]
    if not isinstance(doc, list) or not doc:
        raise BadInput(f"{source}: expected a non-empty list of targets")
    return doc


def read_targets_arg(value: str) -> tuple[str, str]:
    """``--targets`` is a file path or an inline JSON string; returns (text, source name)."""
    stripped = value.strip()
    if stripped.startswith(("[", "{")):
        return stripped, "--targets"
    path = Path(value)
    try:
        return path.read_text(encoding="utf-8"), str(path)
    except FileNotFoundError:
        raise BadInput(f"{value}: targets file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInput(f"{value}: cannot read targets ({exc.__class__.__name__})") from None


def check_variant(corpus: CorpusData, stack: str, value: str, where: str) -> None:
    """``auto``, ``none`` or one of the stack's variant ids (docs/corpus.md#variants)."""
    variants, _problems = parse_variants(corpus, stack)
    try:
        choose_variant(value, variants, "check", stack)
    except ValueError:
        known = ", ".join([AUTO, NONE, *sorted(variants)])
        raise BadInput(f"{where}: stack {stack} has no variant {validate.show(value)} (known: {known})") from None


def _target_folders(item: Any, where: str) -> tuple[str, ...]:
    """A target's ``corpus`` key: one folder or a list of folders (the layers it adds)."""
    if not isinstance(item, dict) or item.get("corpus") is None:
        return ()
    value = item["corpus"]
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list) or not names or not all(
            isinstance(x, str) and x.strip() and len(x) <= MAX_FOLDER and "\0" not in x for x in names):
        raise BadInput(f"{where}.corpus: expected a folder or a list of folders")
    return tuple(x.strip() for x in names)


def corpus_layers(folders: list[str] | None, items: list[Any], source: str) -> list[str]:
    """The run's ``--corpus`` folders, then every folder a target's ``corpus`` key adds, each
    once: one corpus for the run, in which every target finds its stack (stack names are
    unique across layers, so a stack has one home whichever target named the folder)."""
    out = list(folders or [])
    for i, item in enumerate(items):
        for name in _target_folders(item, f"{source}: [{i}]"):
            if name not in out:
                out.append(name)
    return out


def parse_targets(items: list[Any], source: str, corpus: CorpusData,
                  known_profiles: Collection[str] | None = None) -> list[Target]:
    """Validate every target (key paths in errors); ``known_profiles`` adds --profiles names."""
    profiles = set(PROFILES) | set(known_profiles or ())
    targets: list[Target] = []
    for i, item in enumerate(items):
        where = f"{source}: [{i}]"
        if not isinstance(item, dict):
            raise BadInput(f"{where}: expected an object with repo and stack")
        unknown = sorted(str(k) for k in set(item) - _KEYS - set(GATE_KEYS))
        if unknown:
            allowed = ", ".join(sorted(_KEYS | set(GATE_KEYS)))
            raise BadInput(f"{where}.{unknown[0]}: unknown key (allowed: {allowed})")
        for key in ("repo", "stack"):
            if not isinstance(item.get(key), str) or not item[key].strip():
                raise BadInput(f"{where}.{key}: required string")
        validate.repo(item["repo"], f"{where}.repo")
        if item["stack"] not in corpus.files:
            raise BadInput(f"{where}.stack: unknown stack {validate.show(item['stack'])} "
                           f"(known: {', '.join(corpus.stacks)}; a private stack's folder is added with --corpus "
                           "or the target's corpus key)")
        reviewer = validate.optional_choice_string(item.get("reviewer"), f"{where}.reviewer") or "redline"
        if reviewer not in profiles:
            raise BadInput(f"{where}.reviewer: unknown profile {validate.show(reviewer)} "
                           f"(known: {', '.join(sorted(profiles))})")
        mode = validate.optional_choice_string(item.get("mode"), f"{where}.mode") or "blind"
        if mode not in MODES:
            raise BadInput(f"{where}.mode: must be blind or marked, got {validate.show(mode)}")
        base = item.get("base")
        if base is not None and base != "":  # "" = the default branch, as a matrix passes it
            validate.ref_name(base, f"{where}.base")
        prefix = item.get("prefix")
        if prefix is not None:
            validate.prefix(prefix, f"{where}.prefix")
        logins = item.get("login") or []
        if isinstance(logins, str):
            logins = [logins]
        if not isinstance(logins, list) or not all(isinstance(x, str) for x in logins):
            raise BadInput(f"{where}.login: must be a string or a list of strings")
        for j, name in enumerate(logins):
            validate.login(name, f"{where}.login[{j}]")
        gate_keys = tuple((k, item[k]) for k in GATE_KEYS if k in item)
        raw = item.get("variant")  # "" = the run's --variant, as a matrix passes an unset key
        variant = validate.optional_choice_string(None if raw == "" else raw, f"{where}.variant")
        if variant is not None:
            check_variant(corpus, item["stack"], variant, f"{where}.variant")
        targets.append(Target(item["repo"], item["stack"], reviewer, base or None,
                              mode, prefix or "", tuple(logins), gate_keys, where, variant=variant,
                              corpus=_target_folders(item, where)))
    # One repo and stack per run: branch names, gate keys and the history identity are
    # (run, repo, stack, kind, attempt), so a second reviewer there would collide.
    seen: dict[tuple[str, str], int] = {}
    for i, t in enumerate(targets):
        if (t.repo, t.stack) in seen:
            raise BadInput(f"{source}: [{i}]: {t.repo} {t.stack} is already target [{seen[(t.repo, t.stack)]}] "
                           "(one reviewer per repo and stack; use another canary repo)")
        seen[(t.repo, t.stack)] = i
    return targets
