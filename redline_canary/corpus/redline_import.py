"""Convert a Redline seed corpus into this product's corpus (issue 15). Pure.

Redline keeps ``seeded/<stack>/`` files with ``SEED n [BLOCKER|HIGH|SUGGESTION] (rule-id) text``
markers, one shared ``seeded/clean/`` folder instead of per-stack twins, and its rules as
Markdown standards (headings give the severity, bullets give `` `stack/rule` — text ``, a
``standards/manifest.json`` lists the files). Its scorer finds a marker with a regular
expression anywhere on a line, so real corpora hold every comment syntax and spelling that
regex tolerates. The importer is liberal in what it reads for that reason, and strict in
what it writes: every marker it writes is re-read by :func:`markers.parse_file` and kept
only if it parses to the same marker at the same anchor; anything it cannot convert is
rejected with ``file:line`` and a reason, never written half-converted.

The filesystem edge (``commands/corpus_import.py``) reads the checkout into a path→bytes
mapping and writes :class:`ImportResult` out; nothing here touches a disk.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from redline_canary.corpus.markers import _CLOSERS, MARKER_SHAPED, ParsedFile, openers_for, parse_file
from redline_canary.corpus.publication import without_markers
from redline_canary.corpus.redline_scale import SEVERITY_MAP, UNCATALOGUED_RULE
from redline_canary.corpus.rule_ids import RULE_ID, is_segment, normalise_rule
from redline_canary.corpus.secrets import PROVIDER_PATTERNS
from redline_canary.corpus.severity import Severity

SLOT = "\ue000"  # where a marker comment goes in a line being written (a private-use character)
SHARED_CLEAN_STACK = "shared-clean"  # Redline's seeded/clean/ becomes a precision-only stack
SIDE_TABLE = "redline-import.yml"
MAX_FILES = 5000

# --------------------------------------------------------------------------- reading markers

_LEVEL_WORDS = "BLOCKER|HIGH|SUGGESTION|CRITICAL|MAJOR|MINOR|INFO"
# Liberal: "SEED 3 [HIGH] (rule) text", "seed #3: [high] (rule) text", "SEED 3 HIGH (rule) text",
# "SEED3 [ HIGH ] ( `rule` ) - text", the rule in (), [] or backticks, or no rule at all.
_MARKER = re.compile(
    rf"\bSEED\b[ \t]*[#:]?[ \t]*(?P<n>\d+)[ \t]*[:.)\-–—]?[ \t]*"
    rf"(?:\[[ \t]*(?P<sev>[A-Za-z]+)[ \t]*\]|\((?P<psev>{_LEVEL_WORDS})\)|(?P<bare>{_LEVEL_WORDS})\b)"
    r"[ \t]*[:\-–—]?[ \t]*"
    r"(?:(?:\([ \t]*`?(?P<rule>[^()\s`]+?)`?[ \t]*\))|(?:\[[ \t]*`?(?P<brule>[^\[\]\s`]+?)`?[ \t]*\])"
    r"|(?:`(?P<trule>[^`\s]+/[^`\s]+)`))?"
    r"[ \t]*[:\-–—]?[ \t]*(?P<desc>.*)$",
    re.IGNORECASE,
)
# Where a second marker starts on the same line (its text is cut from the first's description).
_ANOTHER = re.compile(rf"\bSEED\b[ \t]*[#:]?[ \t]*\d+[ \t]*[:.)\-–—]?[ \t]*[\[(]?[ \t]*(?:{_LEVEL_WORDS})\b",
                      re.IGNORECASE)
# Openers read in any file besides its language's own: an HTML comment in a template string
# (Angular, Lit), a JSX comment, and "*", the middle line of a block comment.
_ANYWHERE = ("{/*", "<!--", "*")
_ALL_CLOSERS = {"{/*": "*/}", "<!--": "-->", "/*": "*/", "*": "*/"}


@dataclass(frozen=True)
class Rejection:
    """A marker (or marker-shaped text) the importer could not convert."""

    file: str  # path in the Redline checkout
    line: int
    reason: str
    stack: str = ""
    into: str = ""  # the corpus file the marker would have been in

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.reason}"


@dataclass(frozen=True)
class Note:
    """Something the importer changed or decided that a reader should check."""

    file: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}" if self.line else f"{self.file}: {self.message}"


@dataclass(frozen=True)
class SecretHit:
    file: str
    line: int
    provider: str
    replacement: str
    replaced: bool

    def __str__(self) -> str:
        done = "replaced with" if self.replaced else "suggested neutral replacement:"
        return f"{self.file}:{self.line}: string shaped like a real {self.provider}; {done} {self.replacement!r}"


@dataclass
class StackReport:
    read: int = 0
    converted: int = 0
    rejected: list[Rejection] = field(default_factory=list)
    files: int = 0
    skeletons: int = 0


@dataclass
class ImportResult:
    """What to write (``files`` by output path, the rules catalog and the side table) and the report."""

    files: dict[str, str]
    rules: dict[str, dict[str, Any]]
    side_table: dict[str, Any]
    stacks: dict[str, StackReport]
    notes: list[Note]
    secrets: list[SecretHit]
    standards_version: str | None

    @property
    def read(self) -> int:
        return sum(s.read for s in self.stacks.values())

    @property
    def converted(self) -> int:
        return sum(s.converted for s in self.stacks.values())

    @property
    def rejected(self) -> list[Rejection]:
        return [r for s in self.stacks.values() for r in s.rejected]

    def as_json(self) -> dict[str, Any]:
        return {
            "markers": {"read": self.read, "converted": self.converted, "rejected": len(self.rejected)},
            "stacks": {
                name: {"files": s.files, "read": s.read, "converted": s.converted, "skeleton_twins": s.skeletons,
                       "rejected": [{"file": r.file, "line": r.line, "reason": r.reason} for r in s.rejected]}
                for name, s in sorted(self.stacks.items())
            },
            "rules": len(self.rules),
            "standards_version": self.standards_version,
            "secrets": [{"file": h.file, "line": h.line, "provider": h.provider, "replacement": h.replacement,
                         "replaced": h.replaced} for h in self.secrets],
            "notes": [{"file": n.file, "line": n.line, "message": n.message} for n in self.notes],
        }


@dataclass(frozen=True)
class _Read:
    """One marker as read from a Redline line."""

    n: int
    word: str
    rule: str | None
    desc: str
    before: str  # code before the comment
    after: str  # code after the comment's closer on the same line
    opener: str | None  # the comment opener the marker sat in (None: no comment at all)
    absorbed: int  # further lines of a multi-line comment that hold the rest of the description
    tail: str  # text after the multi-line comment's closer on its last line


def _find_opener(line: str, at: int, language: tuple[str, ...]) -> tuple[str, int] | None:
    """The comment opener the text at ``at`` sits in: of the openers this file's language has
    (and the template ones), the earliest that is close enough before ``at`` to hold it."""
    head = line[:at]
    best: tuple[str, int] | None = None
    for opener in dict.fromkeys((*language, *_ANYWHERE)):
        pos = head.rfind(opener)
        if pos == -1:
            continue
        if opener == "*" and head[:pos].strip():
            continue  # a block comment's middle line starts with "*"; elsewhere it is code
        if opener == "#" and pos > 0 and head[pos - 1] not in " \t":
            continue  # "a#b", "&#39;": not a comment
        between = head[pos + len(opener):]
        if len(between) > 24 or any(c in between for c in ("*/", "-->")):
            continue
        # the earliest wins: "{/*" over the "/*" inside it, "<!--" over its "--"
        if best is None or pos < best[1]:
            best = (opener, pos)
    return best


def _read_marker(lines: list[str], index: int, language: tuple[str, ...]) -> tuple[_Read, re.Match[str]] | None:
    line = lines[index]
    m = _MARKER.search(line)
    if m is None:
        return None
    found = _find_opener(line, m.start(), language)
    opener, start = (found if found is not None else (None, m.start()))
    before = line[:start]
    desc = m["desc"]
    after = ""
    absorbed = 0
    tail = ""
    closer = _ALL_CLOSERS.get(opener or "")
    if closer is not None:
        close_at = desc.find(closer)
        if close_at != -1:
            after = desc[close_at + len(closer):]
            desc = desc[:close_at]
        elif opener != "*":
            # A block comment that goes on below: the rest of the description is in it.
            for j in range(index + 1, min(len(lines), index + 12)):
                close_at = lines[j].find(closer)
                text = lines[j] if close_at == -1 else lines[j][:close_at]
                desc += " " + text.strip().lstrip("*").strip()
                if close_at != -1:
                    absorbed = j - index
                    tail = lines[j][close_at + len(closer):]
                    break
            else:
                absorbed = 0  # never closed: read the marker line alone, as Redline does
    sev = (m["sev"] or m["psev"] or m["bare"] or "").upper()
    rule = m["rule"] or m["brule"] or m["trule"]
    return _Read(int(m["n"]), sev, rule, desc, before, after, opener, absorbed, tail), m


def _clean_desc(desc: str) -> str:
    desc = re.sub(r"\s+", " ", desc).strip()
    for closer in ("*/}", "*/", "-->"):
        desc = desc.replace(closer, "")
    return desc.strip(" -–—:").strip()


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


# --------------------------------------------------------------------------- secrets

def neutral_secret(value: str) -> str:
    """A stand-in for a provider-shaped token: as long and as random-looking, matching no
    provider's format, and the same every time for the same token (imports are repeatable)."""
    digest = hashlib.sha256(value.encode("utf-8")).hexdigest() * 4
    body = digest[: max(24, min(len(value), 64) - 5)]
    return f"live_{body}"


def _replace_secret(line: str, provider: str, pattern: re.Pattern[str]) -> tuple[str, str]:
    """(the line with the token replaced, what replaced it)."""
    shown: list[str] = []

    def swap(token: str, sep: str = "_") -> str:
        new = neutral_secret(token).replace("_", sep)
        shown.append(new)
        return new

    if provider == "private key block":
        new_line = line.replace("PRIVATE KEY", "SIGNING KEY")
        return new_line, new_line.strip()
    if provider == "Slack webhook":
        return line.replace("hooks.slack.com", "hooks.chat.example.invalid"), "hooks.chat.example.invalid"
    if provider == "credentials in a MongoDB URL":
        new_line = re.sub(r"(mongodb(?:\+srv)?://[^:\s/]+):([^@\s/]+)@", lambda m: f"{m[1]}:{swap(m[2], '-')}/@", line)
    elif provider in ("AWS secret access key", "Azure storage key"):
        new_line = re.sub(r"[A-Za-z0-9/+=]{40,}", lambda m: swap(m[0], "-"), line, count=1)
    else:
        new_line = pattern.sub(lambda m: swap(m[0]), line)
    return new_line, ", ".join(shown)


def scrub_secrets(path: str, text: str, replace: bool) -> tuple[str, list[SecretHit]]:
    """Every provider-shaped token of ``text`` with a neutral stand-in; replaced when asked.

    The stand-in keeps the defect a defect (a live-looking credential in source) while no
    push protection or provider scanner recognises it.
    """
    out: list[str] = []
    hits: list[SecretHit] = []
    for number, line in enumerate(text.split("\n"), start=1):
        new = line
        for provider, pattern in PROVIDER_PATTERNS.items():
            if not pattern.search(new):
                continue
            candidate, shown = _replace_secret(new, provider, pattern)
            safe = not any(p.search(candidate) for p in PROVIDER_PATTERNS.values())
            hits.append(SecretHit(path, number, provider, shown[:100], replace and safe))
            if replace and safe:
                new = candidate
        out.append(new)
    return "\n".join(out), hits


# --------------------------------------------------------------------------- writing markers

def _wrap(text: str, opener: str) -> str:
    closer = _CLOSERS.get(opener)
    if closer:
        text = text.replace(closer, "")
        return f"{opener} {text} {closer}"
    return f"{opener} {text}"


def _choose_opener(path: str, original: str | None, needs_closer: bool) -> str | None:
    """The comment opener to write a marker in: the original when this file's language has
    it, else the language's own (a line comment when nothing follows on the line)."""
    openers = openers_for(path)
    if original in openers and (not needs_closer or original in _CLOSERS):
        return original
    if needs_closer:
        return next((o for o in openers if o in _CLOSERS), None)
    primary = openers[0]
    if primary in _CLOSERS and original not in (None, "*"):
        return primary  # an HTML-first file (Vue, Svelte, Markdown): its own comment
    return next((o for o in openers if o not in _CLOSERS), primary)


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


@dataclass
class _Out:
    text: str
    origin: int  # the Redline line it came from
    marker: int | None = None  # index into the file's accepted markers


@dataclass
class _Marker:
    origin: int
    orig_n: int
    severity: Severity
    word: str
    rule: str
    desc: str
    opener: str | None
    n: int = 0


def _level(word: str) -> Severity | None:
    if word in SEVERITY_MAP:
        return SEVERITY_MAP[word].level
    try:
        return Severity.parse(word)
    except ValueError:
        return None


@dataclass
class _FileResult:
    lines: list[_Out]
    markers: list[_Marker]
    rejected: list[Rejection]
    notes: list[Note]
    read: int


def convert_lines(src: str, out_path: str, text: str, stack: str, catalog: Mapping[str, StandardRule]
                  ) -> _FileResult:
    """One seeded file's lines with every readable marker rewritten in this grammar."""
    lines = text.split("\n")
    language = openers_for(src)
    out: list[_Out] = []
    markers: list[_Marker] = []
    rejected: list[Rejection] = []
    notes: list[Note] = []
    read = 0
    i = 0
    while i < len(lines):
        line = lines[i]
        number = i + 1
        got = _read_marker(lines, i, language)
        if got is None:
            out.append(_Out(line, number))
            i += 1
            continue
        r, match = got
        read += 1
        extras = list(_ANOTHER.finditer(line, match.start() + 4))
        stacked: list[_Out] = []
        if extras:
            # Several markers on one line: the first stays where it is, the others go alone on
            # the lines above, where this grammar anchors them to the same code line.
            first = extras[0].start()
            opened = _find_opener(line, first, language)
            cut_at = opened[1] if opened is not None and opened[1] > match.start() else first
            r, match = _read_marker([line[:cut_at].rstrip(), *lines[i + 1:]], 0, language) or (r, match)
            ends = [e.start() for e in extras[1:]] + [len(line)]
            for e, end in zip(extras, ends, strict=True):
                read += 1
                made = _extra_marker(src, line[e.start():end], number, stack, catalog, notes)
                if isinstance(made, Rejection):
                    rejected.append(made)
                    continue
                stacked.append(_Out(_indent(line) + SLOT, number, len(markers) + len(stacked)))
                markers.append(made)
            notes.append(Note(src, number, f"{len(extras) + 1} markers on one line: each now has its own"))
        desc = r.desc
        level = _level(r.word)
        reason = None
        rule = ""
        if level is None:
            reason = f"unknown severity {r.word!r} (Redline: BLOCKER, HIGH, SUGGESTION)"
        else:
            rule, reason, note = _rule_for(r.rule, stack, catalog)
            if note:
                notes.append(Note(src, number, note))
        desc = _clean_desc(desc)
        if reason is None and not desc:
            desc = catalog[rule].text[:120] if rule in catalog and catalog[rule].text else "(no description)"
            notes.append(Note(src, number, "marker has no description: the rule's text is used"))
        next_i = i + 1 + r.absorbed
        after = (r.tail if r.absorbed else r.after)
        if reason is not None:
            rejected.append(Rejection(src, number, reason, stack))
            kept = (r.before.rstrip() + " " + after.strip()).rstrip() if r.before.strip() else after.strip()
            if kept.strip():
                out.append(_Out(_indent(line) + kept.strip() if not r.before.strip() else kept, number))
            i = next_i
            continue
        assert level is not None
        idx = len(markers)
        markers.append(_Marker(number, r.n, level, r.word, rule, desc, r.opener))
        out.extend(stacked)
        out.extend(_placed(out_path, line, r, after, idx, number))
        i = next_i
    return _FileResult(out, markers, rejected, notes, read)


def _extra_marker(src: str, segment: str, number: int, stack: str, catalog: Mapping[str, StandardRule],
                  notes: list[Note]) -> _Marker | Rejection:
    """A further marker of a line, read from its own stretch of the line."""
    m = _MARKER.search(segment)
    if m is None:
        return Rejection(src, number, "a further marker on the line could not be read", stack)
    word = (m["sev"] or m["psev"] or m["bare"] or "").upper()
    level = _level(word)
    if level is None:
        return Rejection(src, number, f"unknown severity {word!r} (Redline: BLOCKER, HIGH, SUGGESTION)", stack)
    rule, reason, note = _rule_for(m["rule"] or m["brule"] or m["trule"], stack, catalog)
    if reason is not None:
        return Rejection(src, number, reason, stack)
    if note:
        notes.append(Note(src, number, note))
    desc = _clean_desc(m["desc"]) or (catalog[rule].text[:120] if rule in catalog else "(no description)")
    return _Marker(number, int(m["n"]), level, word, rule, desc, None)


def _placed(out_path: str, line: str, r: _Read, after: str, idx: int, number: int) -> list[_Out]:
    """The output lines for one marker: trailing the code it sat on, or alone above it.

    A marker keeps its anchor: trailing markers stay on their code line (in a comment with a
    closer when code follows it), a marker with code only after it goes alone on the line
    above, where this grammar anchors it to that same code line.
    """
    before = r.before.rstrip()
    code_before = bool(before.strip())
    gap = r.before[len(before):] or " "  # keep the spacing before a trailing comment
    code_after = bool(after.strip())
    indent = _indent(line)
    if r.opener == "*" and "*/" in line[line.find("SEED"):] and not code_before:
        # the last line of a block comment: the marker, then the closer it also held
        return [_Out(indent + SLOT, number, idx), _Out(indent + " */" + (" " + after.strip() if code_after else ""),
                                                       number)]
    if code_before and code_after:
        if _choose_opener(out_path, r.opener, needs_closer=True) is not None:
            return [_Out(before + gap + SLOT + " " + after.strip(), number, idx)]
        return [_Out(indent + SLOT, number, idx), _Out(before + " " + after.strip(), number)]
    if code_before:
        if r.opener is not None:
            return [_Out(before + gap + SLOT, number, idx)]
        # marker text in code with no comment around it (a string): the marker goes above
        return [_Out(indent + SLOT, number, idx), _Out(before, number)]
    if code_after:
        return [_Out(indent + SLOT, number, idx), _Out(indent + after.strip(), number)]
    return [_Out(indent + SLOT, number, idx)]


def _rule_for(raw: str | None, stack: str, catalog: Mapping[str, StandardRule]) -> tuple[str, str | None, str]:
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


def render_marker(m: _Marker) -> str:
    return f"SEED {m.n} [{m.severity.name}] ({m.rule}) {m.desc}"


def _render(out_path: str, result: _FileResult, openers: dict[int, str | None]) -> list[str]:
    lines: list[str] = []
    for o in result.lines:
        if o.marker is None:
            lines.append(o.text)
            continue
        m = result.markers[o.marker]
        opener = openers[o.marker] or openers_for(out_path)[0]
        lines.append(o.text.replace(SLOT, _wrap(render_marker(m), opener), 1))
    return lines


def _openers(out_path: str, result: _FileResult) -> dict[int, str | None]:
    chosen: dict[int, str | None] = {}
    for o in result.lines:
        if o.marker is None:
            continue
        before, _, after = o.text.partition(SLOT)
        needs_closer = bool(before.strip()) and bool(after.strip())
        chosen[o.marker] = _choose_opener(out_path, result.markers[o.marker].opener, needs_closer)
    return chosen


def skeleton(parsed: ParsedFile, trailing_newline: bool) -> str:
    """The seeded file with its marker lines removed and trailing marker comments cut: the
    clean twin before anyone has fixed anything (lint reports every seed it still equals)."""
    out, _ = without_markers(parsed)
    return "\n".join(out) + ("\n" if trailing_newline and out else "")


def _drop_leaks(src: str, out_path: str, lines: list[str], origins: list[int]) -> tuple[list[str], list[Note]]:
    """Marker-shaped text that is no marker (``SEED 4`` with no level, which Redline does not
    read either): a comment holding it goes, since blind mode would push it to the reviewer;
    in code it stays, and lint names it."""
    parsed = parse_file(out_path, "\n".join(lines))
    rejected: list[Note] = []
    keep: list[str] = []
    for number, line in enumerate(lines, start=1):
        shaped = MARKER_SHAPED.search(line)
        if number not in parsed.leaks or number in parsed.marker_spans or shaped is None:
            keep.append(line)
            continue
        origin = origins[number - 1]
        found = _find_opener(line, shaped.start(), openers_for(out_path))
        reason = f"{shaped[0]!r} is shaped like a marker but is none (no [SEVERITY]; Redline does not read it either)"
        if found is not None and not line[: found[1]].strip():
            rejected.append(Note(src, origin, reason + ": comment removed (blind mode would push it)"))
            continue
        if found is not None:
            rejected.append(Note(src, origin, reason + ": trailing comment cut (blind mode would push it)"))
            keep.append(line[: found[1]].rstrip())
            continue
        rejected.append(Note(src, origin, reason + ", inside code: left as it is, rewrite it by hand (lint names it)"))
        keep.append(line)
    return keep, rejected


# --------------------------------------------------------------------------- the whole checkout

def _out_rel(rel: str, notes: list[Note], src: str) -> str:
    """A Redline path the corpus loader would skip (hidden, README.md) under a name it reads."""
    parts = rel.split("/")
    renamed = ["dot" + p if p.startswith(".") else p for p in parts]
    if renamed[-1] == "README.md":
        renamed[-1] = "README.markdown"
    new = "/".join(renamed)
    if new != rel:
        notes.append(Note(src, 0, f"written as {new} (the corpus loader skips hidden files and README.md)"))
    return new


def _stack_files(files: Mapping[str, bytes]) -> dict[str, dict[str, bytes]]:
    stacks: dict[str, dict[str, bytes]] = {}
    for path, data in files.items():
        parts = path.split("/")
        if len(parts) < 3 or parts[0] != "seeded":
            continue
        stacks.setdefault(parts[1], {})["/".join(parts[2:])] = data
    return stacks


def _stack_name(name: str, taken: set[str]) -> str:
    base = re.sub(r"[^a-z0-9-]+", "-", name.lower()).strip("-") or "stack"
    out = base
    k = 2
    while out in taken:
        out = f"{base}-{k}"
        k += 1
    return out


def convert(files: Mapping[str, bytes], *, replace_secrets: bool = True, source_label: str = "") -> ImportResult:
    """A Redline checkout (relative path → bytes) as this product's corpus."""
    notes: list[Note] = []
    catalog, version = read_rules(files, notes)
    out_files: dict[str, str] = {}
    reports: dict[str, StackReport] = {}
    side_markers: list[dict[str, Any]] = []
    skeletons: list[str] = []
    secrets: list[SecretHit] = []
    cited: dict[str, Severity] = {}
    by_stack = _stack_files(files)
    taken: set[str] = set()
    names: dict[str, str] = {}
    for redline_stack in sorted(s for s in by_stack if s != "clean"):
        names[redline_stack] = _stack_name(redline_stack, taken)
        taken.add(names[redline_stack])
    for redline_stack in sorted(s for s in by_stack if s != "clean"):
        stack = names[redline_stack]
        report = reports.setdefault(stack, StackReport())
        counter = 0
        for rel, data in sorted(by_stack[redline_stack].items()):
            src = f"seeded/{redline_stack}/{rel}"
            read = _read_source(src, rel, data, notes, secrets, replace_secrets)
            if read is None:
                continue
            text, out_rel = read
            result = convert_lines(src, out_rel, text, stack, catalog)
            report.read += result.read
            notes += result.notes
            if not result.markers and rel.rsplit("/", 1)[-1].lower() == "readme.md":
                notes.append(Note(src, 0, "a README with no markers: not imported (it would tell the reviewer "
                                          "what the folder is)"))
                continue
            lines, origins, accepted = _settle(src, out_rel, result, stack, counter)
            lines, leaks = _drop_leaks(src, out_rel, lines, origins)
            notes += leaks
            into = f"seeded/{stack}/{out_rel}"
            report.rejected += [replace(r, into=into) for r in result.rejected]
            for m in accepted:
                side_markers.append({"stack": stack, "n": m.n, "from": f"{src}#{m.orig_n}", "line": m.origin,
                                     "redline_severity": m.word, "severity": m.severity.name, "rule": m.rule})
                cited[m.rule] = max(cited.get(m.rule, Severity.INFO), m.severity)
            counter += len(accepted)
            report.converted += len(accepted)
            report.files += 1
            seeded_text = "\n".join(lines)
            out_files[f"seeded/{stack}/{out_rel}"] = seeded_text
            twin = skeleton(parse_file(out_rel, seeded_text), trailing_newline=seeded_text.endswith("\n"))
            out_files[f"clean/{stack}/{out_rel}"] = twin
            skeletons.append(f"clean/{stack}/{out_rel}")
            report.skeletons += 1
    if "clean" in by_stack:
        _shared_clean(by_stack["clean"], _stack_name(SHARED_CLEAN_STACK, taken), out_files, reports, notes,
                      secrets, replace_secrets)
    rules = _catalog(catalog, cited, notes)
    side_table = {
        "source": source_label,
        "standards_version": version,
        "severity_map": {w: m.level.name for w, m in SEVERITY_MAP.items()},
        "markers": side_markers,
        "skeletons": skeletons,
        "rejected": [{"stack": r.stack, "file": r.file, "line": r.line, "reason": r.reason,
                      **({"into": r.into} if r.into else {})}
                     for s in reports.values() for r in s.rejected],
    }
    return ImportResult(out_files, rules, side_table, reports, notes, secrets, version)


def _settle(src: str, out_rel: str, result: _FileResult, stack: str, start: int
            ) -> tuple[list[str], list[int], list[_Marker]]:
    """Number the markers, write them, and keep only those the parser reads back exactly."""
    for k, m in enumerate(result.markers, start=start + 1):
        m.n = k
    for _attempt in range(len(result.markers) + 1):
        lines = _render(out_rel, result, _openers(out_rel, result))
        parsed = parse_file(out_rel, "\n".join(lines))
        where = {i + 1: o.marker for i, o in enumerate(result.lines) if o.marker is not None}
        bad: dict[int, str] = {}
        got = {(m.marker_line, m.n) for m in parsed.markers}
        for line_no, idx in where.items():
            assert idx is not None
            m = result.markers[idx]
            problem = next((p.message for p in parsed.problems if p.line == line_no), None)
            if problem is None and (line_no, m.n) not in got:
                problem = "the rewritten marker does not parse"
            if problem is not None:
                bad[idx] = problem
        if not bad:
            return lines, [o.origin for o in result.lines], list(result.markers)
        idx, problem = next(iter(sorted(bad.items())))
        m = result.markers[idx]
        result.rejected.append(Rejection(src, m.origin, f"cannot be written as a marker here: {problem}", stack))
        _remove_marker(result, idx)
        for k, m2 in enumerate(result.markers, start=start + 1):
            m2.n = k
    lines = _render(out_rel, result, _openers(out_rel, result))
    return lines, [o.origin for o in result.lines], list(result.markers)


def _remove_marker(result: _FileResult, idx: int) -> None:
    kept: list[_Out] = []
    for o in result.lines:
        if o.marker == idx:
            rest = o.text.replace(SLOT, "").rstrip()
            if rest.strip():
                kept.append(_Out(rest, o.origin))
            continue
        if o.marker is not None and o.marker > idx:
            o.marker -= 1
        kept.append(o)
    result.lines = kept
    del result.markers[idx]


def _read_source(src: str, rel: str, data: bytes, notes: list[Note], secrets: list[SecretHit],
                 replace_secrets: bool) -> tuple[str, str] | None:
    """One Redline file as text with provider-shaped secrets scrubbed (each reported), and the
    path it gets in the output corpus; None when it is not text (a note says why)."""
    text = _decode(src, data, notes)
    if text is None:
        return None
    text, hits = scrub_secrets(src, text, replace_secrets)
    secrets += hits
    return text, _out_rel(rel, notes, src)


def _decode(src: str, data: bytes, notes: list[Note]) -> str | None:
    if b"\0" in data[:8192]:
        notes.append(Note(src, 0, "binary file: not imported"))
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        notes.append(Note(src, 0, "not UTF-8 text: not imported"))
        return None
    if "\r" in text:
        notes.append(Note(src, 0, "line endings normalised to LF"))
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def _shared_clean(clean: Mapping[str, bytes], stack: str, out_files: dict[str, str],
                  reports: dict[str, StackReport], notes: list[Note], secrets: list[SecretHit],
                  replace_secrets: bool) -> None:
    """Redline's shared clean folder as a precision-only stack: its seeded and clean files are
    the same clean code, with no markers, so a review of it may only count false positives."""
    report = reports.setdefault(stack, StackReport())
    for rel, data in sorted(clean.items()):
        src = f"seeded/clean/{rel}"
        read = _read_source(src, rel, data, notes, secrets, replace_secrets)
        if read is None:
            continue
        text, out_rel = read
        lines = text.split("\n")
        for i, line in enumerate(lines, start=1):
            if _MARKER.search(line):
                report.read += 1
                report.rejected.append(Rejection(src, i, "a marker in Redline's clean folder (clean code has "
                                                         "no defects): removed", stack))
        rows = [(ln, i) for i, ln in enumerate(lines, start=1) if not _MARKER.search(ln)]
        kept, leaks = _drop_leaks(src, out_rel, [r[0] for r in rows], [r[1] for r in rows])
        notes += leaks
        body = "\n".join(kept)
        out_files[f"seeded/{stack}/{out_rel}"] = body
        out_files[f"clean/{stack}/{out_rel}"] = body
        report.files += 1
    if report.files:
        notes.append(Note("seeded/clean", 0, f"Redline's shared clean folder is the precision-only stack {stack!r} "
                                             "(no markers; its clean PR counts false positives)"))


def _catalog(catalog: Mapping[str, StandardRule], cited: Mapping[str, Severity], notes: list[Note]
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
