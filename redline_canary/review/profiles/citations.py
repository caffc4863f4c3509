"""The one grammar of a reviewer citing a place in the code (docs/matching.md#findings). Pure.

Vendors cite code in a handful of shapes (``path:12``, ``path#L3-L7``, blob permalinks,
"around lines X - Y", Qodo's ``path[R155-170]``). Every shape is one entry of
:data:`FORMS`, each with the groups ``path``, ``a`` and (optionally) ``b``; a profile
picks the shapes its bot writes, so prose in a walkthrough that merely names a file is
never read as a finding. :func:`cited` reads one form verbatim; :func:`citations` is the
vendor reading (paths cleaned, a span read once, repeats dropped).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from redline_canary.corpus.severity import Severity

_ZW = "\u200b\u200c\u200d\u2060\ufeff"
_ZERO_WIDTH = re.compile(f"[{_ZW}]")
# A repository path with an extension; zero-width spaces appear after `/` in Copilot v2.
# A segment may hold a bracketed name (Next.js `app/[id]/route.ts`, `[...slug]`); a bracket
# that does not close inside the segment is Markdown, not path.
_BRACKETED = r"\[[\w.\-]+\]"
_PATH = rf"(?:[\w.\-/@{_ZW}]|{_BRACKETED})*[\w{_ZW}]\.[A-Za-z0-9]+"
# The same shape without the zero-width characters: what `profile learn` prints into a
# user's YAML, where an invisible character has no place.
PATH_PLAIN = rf"(?:[\w.\-/@]|{_BRACKETED})*\w\.[A-Za-z0-9]+"
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
    # ### path (164-165), `path` (lines 12-15), path (line 7), path (L12-L15): a heading or item
    # that names the file, then its lines in parentheses (Gemini's review-body fallback)
    "paren": re.compile(
        rf"(?<![\w/.@-])`?(?P<path>{_PATH})`?[ \t]*\((?:lines?[ \t]+|L)?(?P<a>\d+)(?:[ \t]*[-–][ \t]*L?(?P<b>\d+))?\)",
        re.IGNORECASE,
    ),
    # | `path` | 12-15 | High | : a table row whose first cells are the file and its lines
    "table": re.compile(
        rf"^[ \t>]*\|[ \t]*`?(?P<path>{_PATH})`?[ \t]*\|[ \t]*(?:lines?[ \t]+|L)?(?P<a>\d+)"
        rf"(?:[ \t]*[-–][ \t]*L?(?P<b>\d+))?[ \t]*\|",
        re.IGNORECASE | re.MULTILINE,
    ),
    # <violation number="1" location="path:96"> (cubic)
    "violation": re.compile(rf"location=[\"'](?P<path>{_PATH}):{_RANGE}[\"']"),
    # `path/to/file.ext:12`, `:12-15` or `#L12-L15` anywhere in a summary: what a custom
    # profile with ``mine_summaries`` reads (the generic profile's form since the start).
    "generic": re.compile(
        r"(?P<path>[\w.\-/]+\.[A-Za-z0-9]+)(?:(?P<colon>:)|#L)(?P<a>\d+)"
        r"(?:(?(colon)\s*[-–]\s*|-L)(?P<b>\d+))?"
    ),
}


@dataclass(frozen=True)
class Citation:
    pos: int
    path: str
    start: int
    end: int


@dataclass(frozen=True)
class SummaryLocation:
    """A place a finding points at when it is not an inline thread's own line, and the
    severity its own item gives it."""

    path: str
    start: int
    end: int
    severity: Severity | None = None


def line_span(a: str, b: str | None) -> tuple[int, int]:
    """(first, last) of a cited range, in order whichever way round it was written."""
    first = int(a)
    last = int(b) if b else first
    return min(first, last), max(first, last)


def clean_path(path: str) -> str:
    """The repository path a citation means: no zero-width spaces, ``@``, ``./`` or ``/``."""
    path = _ZERO_WIDTH.sub("", path).strip().strip("`*\"'")
    path = path.lstrip("@")
    while path.startswith(("./", "/")):
        path = path[2:] if path.startswith("./") else path[1:]
    return path


def cited(text: str, form: str) -> Iterator[tuple[re.Match[str], Citation]]:
    """Every citation of one form, verbatim (the path as written), with its match."""
    for m in FORMS[form].finditer(text):
        start, end = line_span(m["a"], m["b"])
        yield m, Citation(m.start(), m["path"], start, end)


def citations(text: str, forms: Sequence[str]) -> list[Citation]:
    """Citations of the given forms, in text order; a span claimed by an earlier form
    (a blob URL) is not read again by a later one (its ``path#L`` tail)."""
    taken: list[tuple[int, int]] = []
    found: list[Citation] = []
    seen: set[tuple[str, int, int]] = set()
    for form in forms:
        for m, c in cited(text, form):
            if any(a < m.end() and m.start() < b for a, b in taken):
                continue
            taken.append(m.span())
            path = clean_path(c.path)
            if path and (path, c.start, c.end) not in seen:
                seen.add((path, c.start, c.end))
                found.append(Citation(c.pos, path, c.start, c.end))
    return sorted(found, key=lambda c: c.pos)


__all__ = ["FORMS", "Citation", "SummaryLocation", "citations", "cited", "clean_path", "line_span"]
