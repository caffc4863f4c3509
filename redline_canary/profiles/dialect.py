"""Pieces several vendor dialects share: citation forms, the P0–P3 scale, sections. Pure.

Vendors cite code in a handful of shapes (``path:12``, ``path#L3-L7``, blob permalinks,
"around lines X - Y", Qodo's ``path[R155-170]``); each profile picks the shapes its
bot writes, so prose in a walkthrough that merely names a file is never read as a
finding. A summary can list several findings with different severities, so severity
is read per item, never from the whole body.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from redline_canary.profiles.base import SeverityTable, SummaryLocation
from redline_canary.severity import Severity

_ZW = "\u200b\u200c\u200d\u2060\ufeff"
_ZERO_WIDTH = re.compile(f"[{_ZW}]")
# A repository path with an extension; zero-width spaces appear after `/` in Copilot v2.
_PATH = rf"[\w.\-/@{_ZW}]*[\w{_ZW}]\.[A-Za-z0-9]+"
_RANGE = r"(?P<a>\d+)(?:\s*[-–]\s*L?(?P<b>\d+))?"

FORMS: dict[str, re.Pattern[str]] = {
    # https://github.com/o/r/blob/<sha>/path#L12-L15 (Codex, Claude, Bugbot extra locations)
    "blob": re.compile(
        r"https?://[^\s/]+/[^\s/]+/[^\s/]+/blob/[^\s/]+/(?P<path>[^\s#?)\]\"'<>]+)"
        r"(?:\?[^\s#)\]]*)?#L(?P<a>\d+)(?:C\d+)?(?:-L(?P<b>\d+)(?:C\d+)?)?"
    ),
    # `path:12`, **path:12-15** (Copilot suppressed / previously missed, Claude prose)
    "path_line": re.compile(rf"(?<![\w/:.@-])(?P<path>{_PATH}):{_RANGE}\b"),
    # path#L12-L15 (Bugbot LOCATIONS)
    "path_hash": re.compile(rf"(?<![\w/.@-])(?P<path>{_PATH})#L(?P<a>\d+)(?:-L(?P<b>\d+))?"),
    # In `@path` around lines 40 - 45 / at line 12 (CodeRabbit prompts)
    "around": re.compile(
        rf"`@?(?P<path>{_PATH})`\s+(?:around|at)\s+lines?\s+{_RANGE}", re.IGNORECASE
    ),
    # `path`, line 24-26 (Greptile legacy "Additional Comments")
    "path_comma_line": re.compile(
        rf"`(?P<path>{_PATH})`,\s*lines?\s+{_RANGE}", re.IGNORECASE
    ),
    # path[R155-170], path [7-37] (Qodo code links)
    "bracket_range": re.compile(
        rf"(?<![\w/.@-])(?P<path>{_PATH})\s?\[R?(?P<a>\d+)(?:-R?(?P<b>\d+))?\]"
    ),
    # <violation number="1" location="path:96"> (cubic)
    "violation": re.compile(rf"location=[\"'](?P<path>{_PATH}):{_RANGE}[\"']"),
}

# Where one finding of a summary list ends and the next begins.
ITEM_START = re.compile(
    r"^[ \t>]*(?:<details\b|<tr\b|<violation\b|#{1,6}\s|\d+\.\s|[-*+]\s)",
    re.MULTILINE | re.IGNORECASE,
)
_SUMMARY_TAG = re.compile(r"<summary>(.*?)</summary>", re.IGNORECASE | re.DOTALL)
_TAG = re.compile(r"<[^>]+>")


def clean_path(path: str) -> str:
    """The repository path a citation means: no zero-width spaces, ``@``, ``./`` or ``/``."""
    path = _ZERO_WIDTH.sub("", path).strip().strip("`*\"'")
    path = path.lstrip("@")
    while path.startswith(("./", "/")):
        path = path[2:] if path.startswith("./") else path[1:]
    return path


@dataclass(frozen=True)
class Citation:
    pos: int
    path: str
    start: int
    end: int


def citations(text: str, forms: Sequence[str]) -> list[Citation]:
    """Citations of the given forms, in text order; a span claimed by an earlier form
    (a blob URL) is not read again by a later one (its ``path#L`` tail)."""
    taken: list[tuple[int, int]] = []
    found: list[Citation] = []
    seen: set[tuple[str, int, int]] = set()
    for form in forms:
        for m in FORMS[form].finditer(text):
            if any(a < m.end() and m.start() < b for a, b in taken):
                continue
            taken.append(m.span())
            a = int(m["a"])
            b = int(m["b"]) if m["b"] else a
            start, end = min(a, b), max(a, b)
            path = clean_path(m["path"])
            if path and (path, start, end) not in seen:
                seen.add((path, start, end))
                found.append(Citation(m.start(), path, start, end))
    return sorted(found, key=lambda c: c.pos)


def items(text: str, start: re.Pattern[str] = ITEM_START) -> list[tuple[int, str]]:
    """Split a list of findings into one ``(offset, chunk)`` per finding."""
    cuts = sorted({0, *(m.start() for m in start.finditer(text))})
    return [(a, text[a:b]) for a, b in zip(cuts, [*cuts[1:], len(text)], strict=True) if text[a:b].strip()]


Marks = Callable[[str], Sequence[tuple[int, Severity]]]


def itemized_locations(
    text: str,
    forms: Sequence[str],
    severity: Callable[[str], Severity | None],
    start: re.Pattern[str] = ITEM_START,
    marks: Marks | None = None,
) -> list[SummaryLocation]:
    """Each cited location with the severity written in its own item.

    With ``marks`` (where each severity marker sits), a citation takes the marker of its
    own item even when items are not split by list markup (Codex writes badge, title and
    permalink as bare paragraphs): see :func:`paired_levels`. A citation whose item
    carries no marker of its own falls back to its chunk's severity, never a neighbour's.
    """
    chunks = items(text, start)
    found = citations(text, forms)
    paired = paired_levels(found, marks(text)) if marks is not None else [None] * len(found)
    out: list[SummaryLocation] = []
    for c, level in zip(found, paired, strict=True):
        if level is None:
            chunk = next((t for pos, t in reversed(chunks) if pos <= c.pos), text)
            level = severity(chunk)
        out.append(SummaryLocation(c.path, c.start, c.end, level))
    return out


def paired_levels(found: Sequence[Citation], marks: Sequence[tuple[int, Severity]]) -> list[Severity | None]:
    """The severity marker that belongs to each citation of a list, by position.

    A vendor writes each item the same way round: the marker before the citation (Copilot's
    badge in the <summary>, then `path:line`) or after it (Codex's permalink, then the P1
    badge). Which way round is read from the first item; each citation then takes the
    nearest marker on its own side, up to the neighbouring citation, so the second item
    never inherits the first item's severity.
    """
    if not found or not marks:
        return [None] * len(found)
    ordered = sorted(marks)
    before = ordered[0][0] < found[0].pos
    out: list[Severity | None] = []
    for i, c in enumerate(found):
        if before:
            lo = found[i - 1].pos if i else -1
            hits = [level for pos, level in ordered if lo < pos <= c.pos]
            out.append(hits[-1] if hits else None)
        else:
            hi = found[i + 1].pos if i + 1 < len(found) else None
            hits = [level for pos, level in ordered if pos >= c.pos and (hi is None or pos < hi)]
            out.append(hits[0] if hits else None)
    return out


_HEADING_LINE = re.compile(r"^[ \t>]*(?:#{1,6}[ \t]+(?P<h>[^\n]+)|\*\*(?P<b>[^*\n]+)\*\*[ \t]*(?:\(\d+\))?[ \t]*)$",
                           re.MULTILINE)


def sections(body: str, titles: Mapping[str, re.Pattern[str]], *, headings: bool = False) -> list[tuple[str, str]]:
    """Split a body at ``<summary>`` headings whose text matches a known title.

    Vendors nest per-file and per-item ``<details>`` inside their top-level sections;
    only the known titles start a new section, so nesting depth does not matter. A
    heading's leading emoji or icon is ignored ("💬 Suppressed comments (2)"). With
    ``headings``, markdown headings and lone bold lines count too: the same section is
    written as ``<details>`` in one layout and as ``#### Suppressed comments`` in another.
    """
    found: list[tuple[int, str]] = [(m.start(), m[1]) for m in _SUMMARY_TAG.finditer(body)]
    if headings:
        found += [(m.start(), m["h"] or m["b"]) for m in _HEADING_LINE.finditer(body)]
    marks: list[tuple[int, str]] = []
    for pos, raw in sorted(found):
        heading = re.sub(r"^[^\w]+", "", _TAG.sub("", raw)).strip()
        for name, pattern in titles.items():
            if pattern.search(heading):
                marks.append((pos, name))
                break
    if not marks:
        return []
    ends = [pos for pos, _ in marks[1:]] + [len(body)]
    return [(name, body[pos:end]) for (pos, name), end in zip(marks, ends, strict=True)]


def compile_table(rows: Iterable[tuple[str, Severity]], flags: int = re.IGNORECASE) -> SeverityTable:
    return tuple((re.compile(p, flags | re.MULTILINE), level) for p, level in rows)


P_LEVELS = (Severity.BLOCKER, Severity.CRITICAL, Severity.MAJOR, Severity.MINOR)


def p_scale(*templates: str) -> SeverityTable:
    """The P0–P3 priority scale (Codex, Greptile, cubic): P0 is the vendor's top level.

    Each template holds ``<n>`` where the digit goes and describes the *markup* that
    assigns a priority (a badge, an ``alt`` text, a ``P2:`` prefix), so prose such as
    "No P1 issues found" never reads as one.
    """
    return tuple(
        (re.compile(t.replace("<n>", str(n)), re.MULTILINE), level)
        for t in templates for n, level in enumerate(P_LEVELS)
    )


def p_labels(form: str) -> tuple[tuple[Severity | None, str], ...]:
    """`profile list` rows for a P0–P3 scale written as ``form`` (``<n>`` = digit)."""
    return tuple((level, form.replace("<n>", str(n))) for n, level in enumerate(P_LEVELS))


__all__ = [
    "FORMS", "ITEM_START", "P_LEVELS", "Citation", "citations", "clean_path", "compile_table",
    "itemized_locations", "items", "p_labels", "p_scale", "paired_levels", "sections",
]
