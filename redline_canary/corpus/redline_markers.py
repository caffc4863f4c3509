"""One Redline seeded file's markers, read liberally and rewritten in this corpus's grammar. Pure.

What it owns: Redline's marker text (``SEED n [LEVEL] (rule-id) text`` in every comment
syntax and spelling its regular expression tolerates: :data:`REDLINE_MARKER`), where a
marker sat in its line, and the rewrite of one file (:func:`convert_lines`): each marker
placed so it keeps its anchor, numbered, written and re-read by :func:`markers.parse_file`
until every marker kept parses to itself (:func:`settle`), and marker-shaped text that is
no marker dropped from comments (:func:`drop_leaks`). Why apart: this is the text
surgery, line by line; what a marker's rule and severity mean is :mod:`redline_rules`'s,
and walking the checkout is :mod:`redline_import`'s.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from redline_canary.corpus.markers import _CLOSERS, MARKER_SHAPED, openers_for, parse_file
from redline_canary.corpus.redline_report import Note, Rejection
from redline_canary.corpus.redline_rules import StandardRule, rule_for, severity_of
from redline_canary.corpus.severity import Severity

SLOT = "\ue000"  # where a marker comment goes in a line being written (a private-use character)

# --------------------------------------------------------------------------- reading markers

_LEVEL_WORDS = "BLOCKER|HIGH|SUGGESTION|CRITICAL|MAJOR|MINOR|INFO"
# Liberal: "SEED 3 [HIGH] (rule) text", "seed #3: [high] (rule) text", "SEED 3 HIGH (rule) text",
# "SEED3 [ HIGH ] ( `rule` ) - text", the rule in (), [] or backticks, or no rule at all.
REDLINE_MARKER = re.compile(
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
    m = REDLINE_MARKER.search(line)
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
class ConvertedMarker:
    origin: int
    orig_n: int
    severity: Severity
    word: str
    rule: str
    desc: str
    opener: str | None
    n: int = 0


@dataclass
class FileResult:
    lines: list[_Out]
    markers: list[ConvertedMarker]
    rejected: list[Rejection]
    notes: list[Note]
    read: int


def convert_lines(src: str, out_path: str, text: str, stack: str, catalog: Mapping[str, StandardRule]
                  ) -> FileResult:
    """One seeded file's lines with every readable marker rewritten in this grammar."""
    lines = text.split("\n")
    language = openers_for(src)
    out: list[_Out] = []
    markers: list[ConvertedMarker] = []
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
        level = severity_of(r.word)
        reason = None
        rule = ""
        if level is None:
            reason = f"unknown severity {r.word!r} (Redline: BLOCKER, HIGH, SUGGESTION)"
        else:
            rule, reason, note = rule_for(r.rule, stack, catalog)
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
        markers.append(ConvertedMarker(number, r.n, level, r.word, rule, desc, r.opener))
        out.extend(stacked)
        out.extend(_placed(out_path, line, r, after, idx, number))
        i = next_i
    return FileResult(out, markers, rejected, notes, read)


def _extra_marker(src: str, segment: str, number: int, stack: str, catalog: Mapping[str, StandardRule],
                  notes: list[Note]) -> ConvertedMarker | Rejection:
    """A further marker of a line, read from its own stretch of the line."""
    m = REDLINE_MARKER.search(segment)
    if m is None:
        return Rejection(src, number, "a further marker on the line could not be read", stack)
    word = (m["sev"] or m["psev"] or m["bare"] or "").upper()
    level = severity_of(word)
    if level is None:
        return Rejection(src, number, f"unknown severity {word!r} (Redline: BLOCKER, HIGH, SUGGESTION)", stack)
    rule, reason, note = rule_for(m["rule"] or m["brule"] or m["trule"], stack, catalog)
    if reason is not None:
        return Rejection(src, number, reason, stack)
    if note:
        notes.append(Note(src, number, note))
    desc = _clean_desc(m["desc"]) or (catalog[rule].text[:120] if rule in catalog else "(no description)")
    return ConvertedMarker(number, int(m["n"]), level, word, rule, desc, None)


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


def render_marker(m: ConvertedMarker) -> str:
    return f"SEED {m.n} [{m.severity.name}] ({m.rule}) {m.desc}"


def _render(out_path: str, result: FileResult, openers: dict[int, str | None]) -> list[str]:
    lines: list[str] = []
    for o in result.lines:
        if o.marker is None:
            lines.append(o.text)
            continue
        m = result.markers[o.marker]
        opener = openers[o.marker] or openers_for(out_path)[0]
        lines.append(o.text.replace(SLOT, _wrap(render_marker(m), opener), 1))
    return lines


def _openers(out_path: str, result: FileResult) -> dict[int, str | None]:
    chosen: dict[int, str | None] = {}
    for o in result.lines:
        if o.marker is None:
            continue
        before, _, after = o.text.partition(SLOT)
        needs_closer = bool(before.strip()) and bool(after.strip())
        chosen[o.marker] = _choose_opener(out_path, result.markers[o.marker].opener, needs_closer)
    return chosen


def drop_leaks(src: str, out_path: str, lines: list[str], origins: list[int]) -> tuple[list[str], list[Note]]:
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


def settle(src: str, out_rel: str, result: FileResult, stack: str, start: int
           ) -> tuple[list[str], list[int], list[ConvertedMarker]]:
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


def _remove_marker(result: FileResult, idx: int) -> None:
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
