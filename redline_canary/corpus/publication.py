"""What the reviewer sees (docs/publication.md): the pushed files and an exact line map.

In blind mode nothing in the pushed text may hint at the answer key: marker lines go,
trailing marker comments are cut, and a leading header that says "seed", "DO NOT MERGE"
or names a severity goes too. The line map is what lets a comment on pushed line 40 be
matched to a marker written on corpus line 47.
"""

from __future__ import annotations

import re
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from redline_canary.corpus.markers import Marker, ParsedFile

_HEADER_WORDS = re.compile(
    r"(?i)\bseed(s|ed)?\b|do not merge|redline|\b(BLOCKER|CRITICAL|MAJOR|MINOR)\b"
)


@dataclass(frozen=True)
class Place:
    """Where a defect shows in what the reviewer sees: a pushed path and lines."""

    path: str
    line: int
    end_line: int
    corpus_path: str = ""  # where the SITE line is written in the corpus, for the record
    corpus_line: int = 0


@dataclass(frozen=True)
class PublishedMarker:
    """A marker located where the reviewer sees it, with the other places (``SITE`` lines)
    where the same defect shows."""

    marker: Marker
    path: str  # pushed path
    line: int  # pushed line of the anchor
    end_line: int = 0  # pushed line of the extent's last kept line (0: same as line)
    sites: tuple[Place, ...] = ()

    @property
    def places(self) -> tuple[Place, ...]:
        """The extent first, then every site: distances are measured to the nearest."""
        return (Place(self.path, self.line, self.end_line), *self.sites)

    def __post_init__(self) -> None:
        if self.end_line < self.line:
            object.__setattr__(self, "end_line", self.line)


@dataclass(frozen=True)
class PublishedFile:
    corpus_path: str
    path: str
    text: str
    line_map: dict[int, int]  # corpus line -> pushed line, for every kept line


def pushed_path(prefix: str, relative: str) -> str:
    """``prefix`` is a folder in the canary repo; "" pushes at the root."""
    prefix = prefix.strip("/")
    return f"{prefix}/{relative}" if prefix else relative


def _header_lines(parsed: ParsedFile) -> set[int]:
    """Leading comment-only lines that would tell the reviewer this is a test."""
    dropped: set[int] = set()
    for number, line in enumerate(parsed.lines, start=1):
        if number == 1 and line.startswith("#!"):
            continue
        if not line.strip():
            continue
        if number in parsed.code_lines:
            break
        if _HEADER_WORDS.search(line):
            dropped.add(number)
    return dropped


def publish_file(parsed: ParsedFile, mode: str, prefix: str, trailing_newline: bool) -> PublishedFile:
    """Render one corpus file for pushing, with its corpus→pushed line map."""
    path = pushed_path(prefix, parsed.path)
    if mode == "marked":
        text = "\n".join(parsed.lines) + ("\n" if trailing_newline else "")
        return PublishedFile(parsed.path, path, text, {n: n for n in range(1, len(parsed.lines) + 1)})
    if mode != "blind":
        raise ValueError(f"unknown mode {mode!r} (expected blind or marked)")
    if parsed.leaks:  # lint refuses such a corpus first; this keeps blind mode blind regardless
        raise ValueError(f"{parsed.path}:{min(parsed.leaks)}: marker-shaped text that is not a marker comment "
                         "would reach the reviewer in blind mode (run `redline-canary corpus lint`)")
    out, line_map = without_markers(parsed, _header_lines(parsed))
    text = "\n".join(out) + ("\n" if trailing_newline and out else "")
    return PublishedFile(parsed.path, path, text, line_map)


def without_markers(parsed: ParsedFile, dropped: AbstractSet[int] = frozenset()) -> tuple[list[str], dict[int, int]]:
    """The file's lines with every marker comment removed (a marker line goes, a trailing
    marker is cut from its code line) and the ``dropped`` lines left out, with the map from
    corpus line to output line. Blind publication and the Redline importer's skeleton twins
    both strip markers this way."""
    out: list[str] = []
    line_map: dict[int, int] = {}
    for number, line in enumerate(parsed.lines, start=1):
        if number in dropped:
            continue
        spanned = parsed.marker_spans.get(number)
        if spanned is not None:
            span, trailing = spanned
            if not trailing:
                continue
            line = (line[: span.start].rstrip() + " " + line[span.end :].strip()).rstrip()
        out.append(line)
        line_map[number] = len(out)
    return out, line_map


def publish_markers(parsed: ParsedFile, published: PublishedFile) -> list[PublishedMarker]:
    """Every marker of the file at its pushed anchor line."""
    return [
        PublishedMarker(m, published.path, published.line_map[m.anchor_line], _pushed_end(m, published))
        for m in parsed.markers
    ]


def _pushed_end(marker: Marker, published: PublishedFile) -> int:
    """The pushed line of the last line of the extent that survives publication."""
    kept = [published.line_map[n] for n in range(marker.anchor_line, marker.last_line + 1)
            if n in published.line_map]
    return max(kept)
