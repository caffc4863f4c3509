"""The README's code blocks, read as tests: which run, with what, and what they must print.

Each fenced block in README.md is preceded by one HTML comment (invisible on GitHub) that
says what the suite does with it:

``<!-- readme-test: run [exits=3,0] [files=SRC[:DEST],...] [stub=pip,pytest] [output] -->``
    a shell block, run as a newcomer would type it: one bash session in a scratch folder
    holding only the ``files`` copied from the checkout, every command's exit status held
    to ``exits`` (in order; default all 0). ``output``: the next fenced block is what the
    block prints on stdout. ``stub``: commands replaced because the suite already runs in
    that install (``pip install`` checks the extra it names exists; ``pytest`` collects
    the suite, which must find tests, instead of running it inside itself).
``<!-- readme-test: checked-by=NAME -->``
    checked by ``test_NAME`` in tests/integration/test_readme.py (a doctor transcript, a
    scenario or targets file: a block that is not a command but still has to be true).
``<!-- readme-test: skip="REASON" -->``
    not run, and the reason is on the page: it needs a real GitHub, a GitHub App, Actions.

Why our own collector rather than pytest-codeblocks (the maintained one): its shell blocks
must all exit 0 (the README's demo exits 3 and its score example 1 by design), run in
pytest's folder with pytest's environment (these need a scratch folder, copied fixtures,
stubs), compare output exactly (the README elides lines with ``...``), and its markers are
``eval``-ed from the Markdown. Parsing fences is the small part; the runner is the point.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
SHELL = ("bash", "sh", "shell", "console")
DIRECTIVE = re.compile(r"^\s*<!--\s*readme-test:\s*(.*?)\s*-->\s*$")
FENCE = re.compile(r"^(\s*)(`{3,})(\S*)\s*$")
HEREDOC = re.compile(r"<<-?\s*'?\"?(\w+)'?\"?")


@dataclass
class Block:
    """One fenced block: where, its language and text, and what the suite does with it."""

    line: int  # 1-based line of the opening fence
    lang: str
    text: str
    directive: dict[str, str] | None = None
    output: Block | None = None  # the block that shows what this one prints
    is_output: bool = False
    problems: list[str] = field(default_factory=list)

    @property
    def action(self) -> str:
        if self.is_output:
            return "output"
        d = self.directive or {}
        return next((k for k in ("run", "skip", "checked-by") if k in d), "none")

    @property
    def exits(self) -> list[int]:
        raw = (self.directive or {}).get("exits", "")
        return [int(x) for x in raw.split(",") if x.strip()] if raw else [0] * len(commands(self.text))

    def files(self) -> list[tuple[str, str]]:
        raw = (self.directive or {}).get("files", "")
        pairs = []
        for item in filter(None, (x.strip() for x in raw.split(","))):
            src, _, dest = item.partition(":")
            pairs.append((src, dest or src))
        return pairs

    @property
    def stubs(self) -> list[str]:
        return [x for x in (self.directive or {}).get("stub", "").split(",") if x]

    @property
    def id(self) -> str:
        return f"README.md:{self.line}"


def _parse_directive(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for token in shlex.split(text):
        key, _, value = token.partition("=")
        out[key] = value
    return out


def blocks(text: str | None = None) -> list[Block]:
    """Every fenced block of the README, each with the directive just above it (blank lines
    between are allowed), and output blocks tied to the run block they follow."""
    lines = (README.read_text(encoding="utf-8") if text is None else text).splitlines()
    found: list[Block] = []
    pending: dict[str, str] | None = None
    i = 0
    while i < len(lines):
        m = DIRECTIVE.match(lines[i])
        if m:
            pending = _parse_directive(m.group(1))
            i += 1
            continue
        fence = FENCE.match(lines[i])
        if not fence:
            if lines[i].strip():
                pending = None  # a directive applies to the very next block only
            i += 1
            continue
        indent, ticks, lang = fence.groups()
        body: list[str] = []
        j = i + 1
        while j < len(lines) and not (lines[j].strip().startswith(ticks) and lines[j].strip().strip("`") == ""):
            body.append(lines[j][len(indent):] if lines[j].startswith(indent) else lines[j].lstrip())
            j += 1
        block = Block(i + 1, lang, "\n".join(body) + "\n", pending)
        previous = found[-1] if found else None
        if (pending is None and previous is not None and previous.action == "run"
                and "output" in (previous.directive or {}) and previous.output is None):
            previous.output, block.is_output = block, True
        found.append(block)
        pending = None
        i = j + 1
    return found


def commands(script: str) -> list[str]:
    """The commands of a shell block as typed: continuation lines joined, comments and blank
    lines dropped, a here-document kept with the command that opens it."""
    out: list[str] = []
    lines = script.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        cmd = line
        while cmd.endswith("\\") and i < len(lines):
            cmd += "\n" + lines[i]
            i += 1
        heredoc = HEREDOC.search(cmd)
        if heredoc:
            while i < len(lines):
                cmd += "\n" + lines[i]
                i += 1
                if lines[i - 1].strip() == heredoc.group(1):
                    break
        out.append(cmd)
    return out


def output_matches(expected: str, actual: str) -> bool:
    """Whether ``actual`` is what the README shows: every line as shown (trailing spaces
    aside), where a line that is only ``...`` stands for any number of lines and a line
    ending in ``...`` for any line that begins with the text before it."""
    parts = []
    for line in expected.rstrip("\n").splitlines():
        if line.strip() == "...":
            parts.append(r"(?:[^\n]*\n)*?")
        elif line.rstrip().endswith("..."):
            parts.append(re.escape(line.rstrip()[:-3]) + r"[^\n]*\n")
        else:
            parts.append(re.escape(line.rstrip()) + r"[ \t]*\n")
    body = "\n".join(x.rstrip() for x in actual.rstrip("\n").splitlines()) + "\n"
    return re.fullmatch("".join(parts), body) is not None
