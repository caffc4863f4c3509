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


def itemized_locations(
    text: str,
    forms: Sequence[str],
    severity: Callable[[str], Severity | None],
    start: re.Pattern[str] = ITEM_START,
) -> list[SummaryLocation]:
    """Each cited location with the severity written in its own item."""
    out: list[SummaryLocation] = []
    for _, chunk in items(text, start):
        found = citations(chunk, forms)
        if not found:
            continue
        level = severity(chunk)
        out.extend(SummaryLocation(c.path, c.start, c.end, level) for c in found)
    return out


def sections(body: str, titles: Mapping[str, re.Pattern[str]]) -> list[tuple[str, str]]:
    """Split a body at ``<summary>`` headings whose text matches a known title.

    Vendors nest per-file and per-item ``<details>`` inside their top-level sections;
    only the known titles start a new section, so nesting depth does not matter.
    """
    marks: list[tuple[int, str]] = []
    for m in _SUMMARY_TAG.finditer(body):
        heading = _TAG.sub("", m[1]).strip()
        for name, pattern in titles.items():
            if pattern.search(heading):
                marks.append((m.start(), name))
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
    "itemized_locations", "items", "p_labels", "p_scale", "sections",
]
