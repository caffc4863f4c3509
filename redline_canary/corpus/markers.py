"""Marker parsing and anchors (docs/corpus.md): the corpus's answer key, read from source text.

Pure: takes a file's relative path and text, never touches the disk. Comment syntax is
chosen by file name so that a `#` inside a JavaScript string is not taken for a comment
opener, and `--` only means a comment in SQL.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from redline_canary.corpus.rule_ids import RULE_ID
from redline_canary.corpus.severity import Severity

_LINE = ("//",)
_BLOCK = ("/*",)
_HASH = ("#",)
_HTML = ("<!--",)
_JSX = ("{/*",)
_SQL = ("--",)

# Openers by file suffix. Templates mix HTML comments with script comments.
_OPENERS_BY_SUFFIX: dict[str, tuple[str, ...]] = {
    ".py": _HASH, ".pyi": _HASH, ".rb": _HASH, ".sh": _HASH,
    ".yml": _HASH, ".yaml": _HASH, ".toml": _HASH, ".cfg": _HASH, ".ini": _HASH,
    ".conf": _HASH, ".env": _HASH, ".properties": _HASH,
    ".js": _LINE + _BLOCK, ".mjs": _LINE + _BLOCK, ".cjs": _LINE + _BLOCK,
    ".ts": _LINE + _BLOCK, ".mts": _LINE + _BLOCK, ".cts": _LINE + _BLOCK,
    ".jsx": _JSX + _LINE + _BLOCK, ".tsx": _JSX + _LINE + _BLOCK,
    ".go": _LINE + _BLOCK, ".java": _LINE + _BLOCK, ".kt": _LINE + _BLOCK,
    ".kts": _LINE + _BLOCK, ".swift": _LINE + _BLOCK, ".cs": _LINE + _BLOCK,
    ".scala": _LINE + _BLOCK, ".rs": _LINE + _BLOCK, ".c": _LINE + _BLOCK,
    ".h": _LINE + _BLOCK, ".cpp": _LINE + _BLOCK, ".css": _BLOCK, ".scss": _LINE + _BLOCK,
    ".html": _HTML + _JSX + _LINE + _BLOCK, ".htm": _HTML + _LINE + _BLOCK,
    ".vue": _HTML + _JSX + _LINE + _BLOCK, ".svelte": _HTML + _JSX + _LINE + _BLOCK,
    ".xml": _HTML, ".md": _HTML, ".cshtml": _HTML + _LINE + _BLOCK, ".razor": _HTML + _LINE + _BLOCK,
    ".tf": _HASH + _LINE + _BLOCK, ".hcl": _HASH + _LINE + _BLOCK, ".tfvars": _HASH + _LINE + _BLOCK,
    ".sql": _SQL + _BLOCK,
    # Further languages a migrated corpus (issue 15) brings along.
    ".markdown": _HTML, ".mdx": _HTML + _JSX, ".astro": _HTML + _JSX + _LINE + _BLOCK,
    ".lua": _SQL, ".hs": _SQL, ".dart": _LINE + _BLOCK, ".php": _LINE + _HASH + _BLOCK,
    ".bash": _HASH, ".zsh": _HASH, ".ps1": _HASH, ".r": _HASH, ".pl": _HASH, ".ex": _HASH, ".exs": _HASH,
    ".graphql": _HASH, ".gql": _HASH, ".jsonc": _LINE + _BLOCK, ".proto": _LINE + _BLOCK,
    ".groovy": _LINE + _BLOCK, ".gradle": _LINE + _BLOCK, ".less": _LINE + _BLOCK, ".sass": _LINE + _BLOCK,
    ".prisma": _LINE, ".mk": _HASH, ".nix": _HASH + _BLOCK,
}
_OPENERS_BY_NAME: dict[str, tuple[str, ...]] = {
    "dockerfile": _HASH, "makefile": _HASH, "procfile": _HASH, ".env": _HASH,
    "containerfile": _HASH,
}
_CLOSERS = {"/*": "*/", "<!--": "-->", "{/*": "*/}"}
_DEFAULT_OPENERS = _HASH + _LINE + _BLOCK

_SEED = re.compile(
    r"^SEED\s+(?P<n>\d+)\s+\[(?P<sev>[A-Za-z]+)\]\s+\((?P<rule>[^()\s]+)\)"
    r"(?:\s+\{symbol:\s*(?P<symbol>[A-Za-z_$][\w$.]*)\s*\})?"
    r"(?:\s+\{lines:\s*(?P<lines>\d+)\s*\})?"
    r"\s+(?P<desc>\S.*)$"
)
MAX_EXTENT = 60  # a defect longer than this is a structural one: name its symbol instead
_BORDERLINE = re.compile(r"^BORDERLINE\s+(?P<n>\d+)\s+(?P<reason>\S.*)$")
# Another place the defect of SEED <n> shows (docs/corpus.md#sites): same anchor rule.
_SITE = re.compile(r"^SITE\s+(?P<n>\d+)\s+(?P<reason>\S.*)$")
# Where a clean twin mined from real code fixed SEED <n> (docs/corpus.md#fixed-places): the
# twin is claimed clean at these places only.
_FIXED = re.compile(r"^FIXED\s+(?P<n>\d+)(?:\s+\{lines:\s*(?P<lines>\d+)\s*\})?\s+(?P<reason>\S.*)$")
_KEYWORD = re.compile(r"^(SEED|BORDERLINE|SITE|FIXED)\b")
# Text shaped like a marker anywhere on a line: if it is not a marker comment this file's
# language has (an HTML comment inside a TypeScript template string, say), blind mode
# would push it to the reviewer verbatim and leak the answer key.
MARKER_SHAPED = re.compile(r"\b(?:SEED|BORDERLINE|SITE|FIXED)\s+\d+")


def openers_for(path: str) -> tuple[str, ...]:
    """The comment openers of the language a file name implies."""
    name = path.rsplit("/", 1)[-1].lower()
    if name in _OPENERS_BY_NAME or name.startswith("dockerfile"):
        return _OPENERS_BY_NAME.get(name, _HASH)
    suffix = "." + name.rsplit(".", 1)[-1] if "." in name.lstrip(".") else ""
    return _OPENERS_BY_SUFFIX.get(suffix, _DEFAULT_OPENERS)


@dataclass(frozen=True)
class Marker:
    """One SEED, BORDERLINE, SITE or FIXED line; lines are 1-based in the file it was read
    from. A site is not a marker of its own: it is another place of SEED ``n``'s defect; a
    FIXED line marks where a clean twin fixed SEED ``n``."""

    kind: str  # "seed" | "borderline" | "site" | "fixed"
    n: int
    path: str
    marker_line: int
    anchor_line: int
    severity: Severity = Severity.INFO
    rule: str = ""
    symbol: str | None = None
    description: str = ""
    lines: int = 1  # the extent: the anchor line and the lines - 1 below it

    @property
    def last_line(self) -> int:
        """The corpus line the extent ends on."""
        return self.anchor_line + self.lines - 1

    @property
    def structural(self) -> bool:
        return self.symbol is not None


@dataclass(frozen=True)
class Problem:
    """A lint problem, printed as ``path:line: message``."""

    path: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


@dataclass(frozen=True)
class CommentSpan:
    """Where a marker comment sits on its line, so publication can cut exactly it."""

    start: int
    end: int  # exclusive; end of line when the comment has no closer


@dataclass
class ParsedFile:
    path: str
    lines: list[str]
    markers: list[Marker] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    # line number -> span of the marker comment on it, and whether code precedes it
    marker_spans: dict[int, tuple[CommentSpan, bool]] = field(default_factory=dict)
    code_lines: frozenset[int] = frozenset()
    leaks: set[int] = field(default_factory=set)  # lines with marker-shaped text no marker comment holds

    def sites(self) -> list[Marker]:
        return [m for m in self.markers if m.kind == "site"]

    def seeds_only(self) -> list[Marker]:
        return [m for m in self.markers if m.kind == "seed"]


def _find_marker_comment(line: str, openers: tuple[str, ...]) -> tuple[str, CommentSpan, str] | None:
    """The first comment on ``line`` whose text starts with SEED/BORDERLINE/SITE."""
    best: tuple[str, CommentSpan, str] | None = None
    for opener in openers:
        start = line.find(opener)
        while start != -1:
            body_start = start + len(opener)
            text = line[body_start:].lstrip()
            if _KEYWORD.match(text):
                closer = _CLOSERS.get(opener)
                end = len(line)
                if closer:
                    close_at = line.find(closer, body_start)
                    if close_at != -1:
                        end = close_at + len(closer)
                        text = line[body_start:close_at].strip()
                # "{/*" also contains "/*": prefer the wider, earlier opener.
                if best is None or start < best[1].start:
                    best = (opener, CommentSpan(start, end), text.rstrip())
                break
            start = line.find(opener, start + 1)
    return best


def _code_lines(lines: list[str], openers: tuple[str, ...]) -> frozenset[int]:
    """1-based numbers of lines holding something other than blanks and comments."""
    line_openers = [o for o in openers if o not in _CLOSERS]
    block_openers = [o for o in openers if o in _CLOSERS]
    code: set[int] = set()
    in_block: str | None = None
    for number, raw in enumerate(lines, start=1):
        rest = raw.strip()
        has_code = False
        while rest:
            if in_block is not None:
                close_at = rest.find(in_block)
                if close_at == -1:
                    rest = ""
                    break
                rest = rest[close_at + len(in_block):].strip()
                in_block = None
                continue
            opened = next((o for o in sorted(block_openers, key=len, reverse=True)
                           if rest.startswith(o)), None)
            if opened is not None:
                in_block = _CLOSERS[opened]
                rest = rest[len(opened):]
                continue
            if any(rest.startswith(o) for o in line_openers):
                break
            has_code = True
            break
        if has_code:
            code.add(number)
    return frozenset(code)


def parse_file(path: str, text: str) -> ParsedFile:
    """Markers of one file with their anchors, plus grammar problems (not catalog checks)."""
    lines = text.splitlines()
    openers = openers_for(path)
    parsed = ParsedFile(path=path, lines=lines, code_lines=_code_lines(lines, openers))
    pending: list[tuple[int, re.Match[str], str]] = []
    for number, line in enumerate(lines, start=1):
        found = _find_marker_comment(line, openers)
        rest = line if found is None else line[: found[1].start] + line[found[1].end:]
        leak = MARKER_SHAPED.search(rest)
        if leak:
            parsed.leaks.add(number)
            parsed.problems.append(Problem(
                path, number,
                f"text shaped like a marker ({leak.group(0)!r}) is not a marker comment of this file's language "
                f"(comments here open with {' '.join(openers)}): blind mode would push it to the reviewer",
            ))
        if found is None:
            continue
        _opener, span, text_ = found
        trailing = bool(line[: span.start].strip())
        parsed.marker_spans[number] = (span, trailing)
        seed = _SEED.match(text_)
        borderline = _BORDERLINE.match(text_)
        site = _SITE.match(text_)
        fixed = _FIXED.match(text_)
        match = seed or borderline or site or fixed
        if match is None:
            parsed.problems.append(Problem(
                path, number,
                "bad marker grammar: expected 'SEED <n> [<SEVERITY>] (<rule-id>) "
                "[{symbol: <Name>}] [{lines: <k>}] <description>', 'BORDERLINE <n> <reason>' or "
                "'SITE <n> <why>' or 'FIXED <n> [{lines: <k>}] <why>'",
            ))
            continue
        pending.append((number, match, "seed" if seed else "borderline" if borderline else "site" if site else "fixed"))
    for number, match, kind in pending:
        marker = _marker_fields(path, number, match, kind, parsed.problems)
        if marker is None:
            continue
        _span, trailing = parsed.marker_spans[number]
        anchor = number if trailing else next(
            (n for n in range(number + 1, len(lines) + 1) if n in parsed.code_lines), None)
        if anchor is None:
            parsed.problems.append(Problem(path, number, "marker has no code below it to anchor to"))
            continue
        marker = replace(marker, anchor_line=anchor)
        if not _extent_fits(marker, parsed, number):
            continue
        parsed.markers.append(marker)
    return parsed


def _extent_fits(marker: Marker, parsed: ParsedFile, number: int) -> bool:
    """An extent stays inside the file and does not run over another marker's comment line."""
    if marker.lines == 1:
        return True
    if marker.last_line > len(parsed.lines):
        parsed.problems.append(Problem(
            parsed.path, number,
            f"{{lines: {marker.lines}}} runs past the end of the file (anchor line {marker.anchor_line}, "
            f"{len(parsed.lines)} lines)"))
        return False
    for line in range(marker.anchor_line + 1, marker.last_line + 1):
        if line in parsed.marker_spans:
            parsed.problems.append(Problem(
                parsed.path, number,
                f"{{lines: {marker.lines}}} runs into the marker comment on line {line}: end the extent "
                "before it or move that marker"))
            return False
    return True


def _marker_fields(
    path: str, number: int, match: re.Match[str], kind: str, problems: list[Problem]
) -> Marker | None:
    """Validate one grammatical marker's fields; anchor is filled in by the caller."""
    n = int(match["n"])
    if n < 1:
        problems.append(Problem(path, number, "marker number must be positive"))
        return None
    if kind in ("borderline", "site"):
        return Marker(kind, n, path, number, 0, description=match["reason"])
    extent = int(match["lines"]) if match["lines"] is not None else 1
    if extent < 1:
        problems.append(Problem(path, number, "{lines: k} needs k >= 1"))
        return None
    if extent > MAX_EXTENT:
        problems.append(Problem(path, number, f"{{lines: {extent}}} is more than {MAX_EXTENT} lines: "
                                              "mark the lines the defect occupies, not a whole file"))
        return None
    if kind == "fixed":
        return Marker(kind, n, path, number, 0, description=match["reason"], lines=extent)
    word = match["sev"]
    try:
        severity = Severity.parse(word)
    except ValueError as exc:
        problems.append(Problem(path, number, str(exc)))
        return None
    if word != word.upper():
        problems.append(Problem(path, number, f"severity must be upper case: {word}"))
        return None
    rule = match["rule"]
    if not RULE_ID.match(rule):
        problems.append(Problem(path, number, f"malformed rule id {rule!r}"))
        return None
    return Marker("seed", n, path, number, 0, severity, rule, match["symbol"],
                  match["desc"].strip(), extent)
