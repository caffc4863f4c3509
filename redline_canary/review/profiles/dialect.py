"""Pieces several vendor dialects share: item lists, the P0–P3 scale, sections. Pure.

A summary can list several findings with different severities, so severity is read per
item, never from the whole body. Where an item cites code is the citation grammar's
business (:mod:`redline_canary.review.profiles.citations`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence

from redline_canary.corpus.severity import Severity
from redline_canary.review.profiles.citations import Citation, SummaryLocation, citations
from redline_canary.review.profiles.spec import SeverityTable

# Where one finding of a summary list ends and the next begins.
ITEM_START = re.compile(
    r"^[ \t>]*(?:<details\b|<tr\b|<violation\b|#{1,6}\s|\d+\.\s|[-*+]\s)",
    re.MULTILINE | re.IGNORECASE,
)
_SUMMARY_TAG = re.compile(r"<summary>(.*?)</summary>", re.IGNORECASE | re.DOTALL)
_TAG = re.compile(r"<[^>]+>")


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
    "ITEM_START", "P_LEVELS", "compile_table", "itemized_locations", "items", "p_labels", "p_scale",
    "paired_levels", "sections",
]
