"""Redline's standards as this corpus's rules catalogue, and Redline's rule ids and severity
words as this corpus's. Pure.

What it owns: reading the standards Markdown the way Redline's catalogue loader does
(:func:`parse_standard`, :func:`read_rules`, the manifest's list in
:func:`standards_sources`), the mapping of one marker's rule id (:func:`rule_for`) and
severity word (:func:`severity_of`, through ``redline_scale.SEVERITY_MAP``), and the
``rules.yml`` catalogue written from both (:func:`rules_catalog`). Why apart: these are the
decisions about *meaning* (which rule, which severity) that every marker of every file
shares; reading and rewriting marker text is :mod:`redline_markers`'s.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from redline_canary.corpus.redline_report import Note
from redline_canary.corpus.redline_scale import SEVERITY_MAP, UNCATALOGUED_RULE
from redline_canary.corpus.rule_ids import RULE_ID, is_segment, normalise_rule
from redline_canary.corpus.severity import Severity
from redline_canary.errors import BadInput

# --------------------------------------------------------------------------- the standards

_ANY_HEADING = re.compile(r"^\s{0,3}#{1,6}\s")
_LEVEL_IN_HEADING = re.compile(r"\b(BLOCKER|HIGH|SUGGESTION)\b", re.IGNORECASE)
_TOPIC_HEADING = re.compile(
    r"^\s{0,3}#{2,4}\s+(?:Security|Type safety|Error handling|General correctness|Scope discipline)\b",
    re.IGNORECASE)
# Liberal on purpose (``Py/SQL_Injection`` in a catalogue): normalise_rule and RULE_ID
# (rule_ids, the one grammar) decide what the id is.
_RULE_BULLET = re.compile(
    r"^\s*[-*+]\s+(?:\*\*)?`(?P<id>[A-Za-z0-9][A-Za-z0-9_-]*(?:/[A-Za-z0-9][A-Za-z0-9_-]*)+)`(?:\*\*)?"
    r"\s*(?:—|–|--|-|:)\s*(?P<text>.*)$")
_CONTINUATION = re.compile(r"^\s{2,}(?![-*+]\s)(?!\d+\.\s)\S")
_FENCE = re.compile(r"^\s*(```|~~~)")
_CWE = re.compile(r"\bCWE[- ]?(\d{1,5})\b", re.IGNORECASE)


@dataclass(frozen=True)
class StandardRule:
    id: str
    word: str  # BLOCKER | HIGH | SUGGESTION
    text: str
    source: str
    line: int


def parse_standard(source: str, text: str) -> list[StandardRule]:
    """Rules of one standards Markdown file, the way Redline's catalogue loader reads them.

    A heading naming a level sets it for the bullets below; Redline's core topic headings
    (Security, Type safety, ...) default to HIGH unless they say BLOCKER; any other heading
    ends the section. Fenced code is skipped. A bullet wrapped over indented lines is one rule.
    """
    rules: list[StandardRule] = []
    lines = text.splitlines()
    level: str | None = None
    fenced = False
    for i, line in enumerate(lines):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            continue
        if _ANY_HEADING.match(line):
            word = _LEVEL_IN_HEADING.search(line)
            if word:
                level = word[1].upper()
            elif _TOPIC_HEADING.match(line):
                level = "HIGH"
            else:
                level = None
            continue
        if level is None:
            continue
        m = _RULE_BULLET.match(line)
        if m is None:
            continue
        parts = [m["text"]]
        for nxt in lines[i + 1:]:
            if not _CONTINUATION.match(nxt):
                break
            parts.append(nxt.strip())
        body = re.sub(r"\s+", " ", " ".join(parts).replace("**", "")).strip()
        rules.append(StandardRule(normalise_rule(m["id"]), level, body, source, i + 1))
    return rules


def _title(text: str, rule: str) -> str:
    text = text.strip()
    if not text:
        return rule
    first = re.split(r"(?<=[.!?])\s", text, maxsplit=1)[0].strip()
    first = first.rstrip(".") or text
    return first if len(first) <= 120 else first[:117].rstrip() + "..."


def standards_sources(files: Mapping[str, bytes], notes: list[Note]) -> tuple[list[str], str | None]:
    """The standards files to read: the manifest's list, else every ``standards/**/*.md``."""
    manifest_path = "standards/manifest.json"
    every = sorted(p for p in files if p.startswith("standards/") and p.lower().endswith(".md"))
    if manifest_path not in files:
        if every:
            notes.append(Note("standards", 0, f"no {manifest_path}: read every standards/**/*.md"))
        return every, None
    try:
        doc = json.loads(files[manifest_path].decode("utf-8"))
    except RecursionError:  # not a manifest anyone wrote: refuse rather than guess
        raise BadInput(f"{manifest_path}: nested too deeply to be a manifest") from None
    except (UnicodeDecodeError, ValueError):
        notes.append(Note(manifest_path, 0, "not valid JSON: read every standards/**/*.md instead"))
        return every, None
    listed: list[str] = []
    version = None
    if isinstance(doc, Mapping):
        version = str(doc["version"]) if isinstance(doc.get("version"), (str, int, float)) else None
        entries: list[Any] = [doc.get("core")]
        stacks = doc.get("stacks")
        if isinstance(stacks, Mapping):
            entries += list(stacks.values())
        elif isinstance(stacks, list):
            entries += stacks
        for entry in entries:
            src = entry.get("source") if isinstance(entry, Mapping) else entry
            if isinstance(src, str) and src.strip():
                listed.append(src.strip().lstrip("./"))
    missing = [p for p in listed if p not in files]
    for p in missing:
        notes.append(Note(manifest_path, 0, f"lists {p}, which is not in the checkout"))
    present = [p for p in listed if p in files]
    if not present:
        return every, version
    return present, version


def read_rules(files: Mapping[str, bytes], notes: list[Note]) -> tuple[dict[str, StandardRule], str | None]:
    sources, version = standards_sources(files, notes)
    found: dict[str, StandardRule] = {}
    for src in sources:
        try:
            text = files[src].decode("utf-8")
        except UnicodeDecodeError:
            notes.append(Note(src, 0, "not UTF-8: no rules read from it"))
            continue
        for r in parse_standard(src, text):
            if r.id in found and found[r.id].word != r.word:
                notes.append(Note(src, r.line, f"rule {r.id} also defined at {found[r.id].source}:"
                                               f"{found[r.id].line}; the first definition is kept"))
                continue
            found.setdefault(r.id, r)
    return found, version


# --------------------------------------------------------------------------- one marker's rule and severity

def severity_of(word: str) -> Severity | None:
    if word in SEVERITY_MAP:
        return SEVERITY_MAP[word].level
    try:
        return Severity.parse(word)
    except ValueError:
        return None


def rule_for(raw: str | None, stack: str, catalog: Mapping[str, StandardRule]) -> tuple[str, str | None, str]:
    """(rule id, rejection reason or None, note)."""
    if raw is None or not raw.strip():
        return UNCATALOGUED_RULE, None, f"no rule id: filed under {UNCATALOGUED_RULE}"
    rule = normalise_rule(raw)
    note = "" if rule == raw else f"rule id {raw!r} read as {rule!r}"
    if RULE_ID.match(rule):
        return rule, None, note
    if "/" not in rule and is_segment(rule):
        owners = sorted(r for r in catalog if r.split("/")[-1] == rule)
        if len(owners) == 1:
            return owners[0], None, f"rule id {raw!r} read as {owners[0]!r} (the only rule with that name)"
        candidate = f"{stack}/{rule}"
        if RULE_ID.match(candidate):
            return candidate, None, f"rule id {raw!r} has no stack: read as {candidate!r}"
    return "", f"malformed rule id {raw!r} (expected stack/rule)", ""


# --------------------------------------------------------------------------- rules.yml

def rules_catalog(catalog: Mapping[str, StandardRule], cited: Mapping[str, Severity], notes: list[Note]
                  ) -> dict[str, dict[str, Any]]:
    """rules.yml: every rule of the standards, plus any a marker cites that they lack; a rule
    whose markers claim more than its heading's level is raised to the highest they claim."""
    rules: dict[str, dict[str, Any]] = {}
    for rid, r in sorted(catalog.items()):
        level = SEVERITY_MAP[r.word].level
        if not RULE_ID.match(rid):
            notes.append(Note(r.source, r.line, f"rule id {rid!r} does not fit stack/rule: left out"))
            continue
        if rid in cited and cited[rid] > level:
            notes.append(Note(r.source, r.line, f"rule {rid}: raised from {level.name} ({r.word}) to "
                                                f"{cited[rid].name}, the severity its markers claim"))
            level = cited[rid]
        cwe = _CWE.search(r.text)
        rules[rid] = {"title": _title(r.text, rid), "severity": level.name,
                      **({"cwe": int(cwe[1])} if cwe else {})}
    for rid, level in sorted(cited.items()):
        if rid in rules:
            continue
        if rid == UNCATALOGUED_RULE:
            rules[rid] = {"title": "A defect no catalogued rule names (Redline's reserved id)", "severity": "BLOCKER"}
            continue
        notes.append(Note("standards", 0, f"rule {rid} is cited by markers but not in the standards: added at "
                                          f"{level.name}"))
        rules[rid] = {"title": f"{rid} (cited by the Redline corpus, not in its standards)", "severity": level.name}
    return rules
