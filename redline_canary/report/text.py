"""Text a person reads: the score table, seed lists, baseline diffs. Pure.

Also the sanitisers every sink uses for text that did not come from this program
(reviewer comments, notices quoted from them, and every field of a history record, which
anyone with write access to the history can forge):

* :func:`terminal_safe` — for a terminal or a CI log: no ANSI CSI/OSC/other escape
  sequences, no C0/C1 control characters (``\n`` and ``\t`` only where the layout asks
  for them), no bidirectional overrides.
* :func:`md_text` / :func:`md_code` — for Markdown (job summaries, ``report``, the
  regression issue): no raw HTML, no link or image syntax, no live autolink, no table
  break, and no mention or issue/commit reference GitHub would link or notify from.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

from redline_canary.corpus.severity import SCALE

if TYPE_CHECKING:  # record imports this module (inert_line); the types are only named here
    from redline_canary.score.record import Record, Seed

__all__ = [
    "blockers_found", "blockers_text", "fmt_rate", "inert_line", "json_inert", "json_text", "md_code",
    "md_seed_line", "md_text", "render_baseline", "render_record", "seed_line", "terminal_safe",
]

# --- sanitisers ----------------------------------------------------------------------------

# Escape sequences as terminals read them: CSI (ESC [ or the 8-bit CSI 0x9b) up to its
# final byte; OSC/DCS/SOS/PM/APC strings (ESC ] P X ^ _, or 0x9d 0x90 0x98 0x9e 0x9f) up to
# BEL or ST (ESC \ or 0x9c) — or to the end of the text when the string is never
# terminated, since a terminal would swallow it all; any other two-byte ESC sequence.
_ESCAPES = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])(?:[^\x07\x1b\x9c]|\x1b(?!\\))*(?:\x07|\x1b\\|\x9c|$)"
    r"|\x1b[ -~]?"
)
# What is left after the sequences are gone: C0 (but tab and newline), DEL, C1, and the
# Unicode bidirectional embeddings/overrides/isolates that reorder what a reader sees.
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_SURROGATES = re.compile(r"[\ud800-\udfff]")
_LINE_BREAKS = re.compile(r"\r\n|[\r\n\t\v\f\u2028\u2029\x85]")


def terminal_safe(text: object, *, multiline: bool = False) -> str:
    """``text`` with nothing a terminal (or a CI log viewer) would act on.

    Escape sequences (colours, cursor moves, screen clears, OSC 8 hyperlinks, OSC 52
    clipboard writes, window titles) are removed whole, then every remaining control
    character. ``multiline=False`` (the default, for a field shown on one line): line
    breaks and tabs become single spaces, so a field can neither add a line nor, with a
    bare CR, overwrite the one it is on. ``multiline=True`` keeps ``\n`` and ``\t``
    (``\r\n`` becomes ``\n``; a lone CR is removed).
    """
    # A lone surrogate (JSON's "\\ud800" decodes to one) cannot be written as UTF-8 at all:
    # shown as U+FFFD instead of failing the write.
    s = _SURROGATES.sub("\ufffd", _ESCAPES.sub("", str(text)))
    if multiline:
        s = s.replace("\r\n", "\n").replace("\u2028", "\n").replace("\u2029", "\n")
        s = _CONTROLS.sub("", s.replace("\r", ""))
        return s
    return _CONTROLS.sub("", _LINE_BREAKS.sub(" ", s))


# Whatever GitHub (cmark-gfm's autolink extension, or an HTML autolink filter) would turn
# into a live link: a scheme followed by ``//`` or one of the schemes linked without it, and
# ``www.`` not preceded by a letter or digit. Each is shown as a code span, which no
# autolinker touches; the span's content can hold no backtick, space, pipe, backslash or
# angle bracket (the match stops there).
_URLISH = re.compile(
    r"[A-Za-z][A-Za-z0-9+.-]*:(?://|(?<=mailto:)|(?<=xmpp:))[^\s<>`|\\]*"
    r"|(?<![A-Za-z0-9])www\.[^\s<>`|\\]*",
    re.IGNORECASE,
)
# GitHub's references, which it links (and, for a mention, notifies) server-side from the
# rendered text, never from inside a code span: ``@user``, ``@org/team``, ``#N``, ``GH-N``,
# ``owner/repo#N``, ``user@sha``, ``owner/repo@sha`` and a bare commit SHA (7 to 40 hex
# digits). Each is made of the characters of ``_WORDISH`` (which also covers an e-mail
# address, which an autolinker links, and any ``x@y``, to which a neighbouring field could
# supply a ``mailto:``); a run of them that holds a trigger of ``_REFERENCE`` is shown
# whole as a code span. The triggers are broader than GitHub's rules on purpose: any
# ``@``, any ``#`` or ``GH-`` before a digit, any run of 7 or more hex digits, whatever
# precedes them (a backtick, a bracket, an entity's ``&``).
_WORDISH = re.compile(r"[A-Za-z0-9_.%+/@#-]+")
_REFERENCE = re.compile(r"@|#[0-9]|GH-[0-9]|(?<![A-Za-z0-9])[0-9A-F]{7,}(?![A-Za-z0-9])", re.IGNORECASE)
# Backslash-escaped: code spans, emphasis, strike-through, math, link and image brackets
# (with ``[`` and ``]`` escaped no inline link, image or reference can form, so ``(``, ``)``
# and ``!`` need nothing), and the table pipe.
_MD_SPECIAL = {c: "\\" + c for c in "\\`*_[]|~$"}
_MD_SPECIAL.update({"&": "&amp;", "<": "&lt;", ">": "&gt;"})
_MD_TABLE = str.maketrans(_MD_SPECIAL)
_CODE_SAFE = re.compile(r"[A-Za-z0-9._:/@+=-]+")


def _md_plain(text: str) -> str:
    return text.translate(_MD_TABLE)


def _live_spans(text: str) -> list[tuple[int, int]]:
    """Where ``text`` holds a URL or a GitHub reference (see ``_URLISH``, ``_REFERENCE``),
    overlapping or touching spans merged into one: two code spans that touch would read as
    one longer fence. A URL whose scheme starts inside a ``_WORDISH`` run takes the whole
    run: a span's edge inside a run would end a text node there, and GitHub would read the
    run's first half on its own (``0123456789`` of ``0123456789abcdef…https://`` is a SHA)."""
    spans = []
    for m in _URLISH.finditer(text):
        start = m.start()
        while start and _WORDISH.match(text, start - 1, start):
            start -= 1
        spans.append((start, m.end()))
    spans += [m.span() for m in _WORDISH.finditer(text) if _REFERENCE.search(m.group(0))]
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def md_text(text: object) -> str:
    """Outside text as inert inline Markdown, safe in a table cell and in anything GitHub
    renders (an issue, a comment, a job summary).

    One line (control characters stripped, line breaks to spaces); ``&``, ``<``, ``>``
    as entities, so no HTML tag can form — not even across two fields printed side by
    side; every character with a Markdown meaning (links, images, emphasis, code,
    pipes) backslash-escaped; anything an autolinker would link, and every GitHub
    reference (a mention, a team, an issue, a commit: ``_REFERENCE``), shown as a code
    span, from which GitHub neither links nor notifies. This is the one reference
    defuser: every Markdown sink passes outside text through here (or :func:`md_code`).
    Put at least one character between two results: two code spans that touch would
    read as one longer fence.
    """
    s = terminal_safe(text)
    out: list[str] = []
    pos = 0
    for start, end in _live_spans(s):
        out.append(_md_plain(s[pos:start]))
        out.append(f"`{s[start:end]}`")
        pos = end
    out.append(_md_plain(s[pos:]))
    return "".join(out)


def md_code(text: object) -> str:
    """A code span for identifier-like outside text (fingerprints, run ids); anything
    with other characters falls back to :func:`md_text`."""
    s = terminal_safe(text)
    return f"`{s}`" if _CODE_SAFE.fullmatch(s) else md_text(s)


def inert_line(text: object) -> str:
    """Outside text as one log line the runner will not read as a workflow command.

    The runner acts on a line that starts with ``::`` once leading blanks are trimmed, and
    on the legacy ``##[name]`` form anywhere in a line; it reads stderr as well as stdout.
    So: one line with no control characters (:func:`terminal_safe`), a leading
    ``::`` broken as ``: :``, and every ``##[`` as ``## [``. Output that carries several
    such lines is also wrapped in ``::stop-commands::`` by the edge (``actions.py``).
    """
    line = terminal_safe(text).replace("##[", "## [")
    stripped = line.lstrip()
    if stripped.startswith("::"):
        line = line[: len(line) - len(stripped)] + ": " + stripped[1:]
    return line


_JSON_UNSAFE = re.compile(r"[\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def json_inert(text: str) -> str:
    """Serialised JSON with every character a terminal could act on as a ``\\u`` escape
    (json already escapes C0; this adds DEL, C1, the bidirectional controls and lone
    surrogates, which could not even be written as UTF-8) and every
    ``##[`` (the runner's legacy command form, honoured anywhere in a line) as
    ``##\\u005b``. Both can only occur inside strings, so the value is unchanged."""
    text = _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)
    return text.replace("##[", "##\\u005b")


def json_text(data: Any, indent: int | None = 2) -> str:
    """JSON for stdout: readable non-ASCII text, nothing a terminal or the Actions runner
    acts on (:func:`json_inert`). Indented lines start with a blank, a bracket or a quote,
    never with ``::``."""
    return json_inert(json.dumps(data, indent=indent, ensure_ascii=False))


# --- text for a person ------------------------------------------------------------------


def fmt_rate(successes: int, n: int, ci: Sequence[float] | None) -> str:
    """``0.75 (3/4, 95% CI 0.30–0.95)``; every rate is printed with its n."""
    if not n:
        return "n/a (n=0)"
    text = f"{successes / n:.2f} ({successes}/{n}"
    if ci:
        text += f", 95% CI {ci[0]:.2f}–{ci[1]:.2f}"
    return text + ")"


class SeedText(Protocol):
    """What a seed line shows: a record's :class:`~redline_canary.score.record.Seed`, or the
    report's ``SeedRef``."""

    @property
    def path(self) -> str: ...
    @property
    def line(self) -> int: ...
    @property
    def severity(self) -> str: ...
    @property
    def rule(self) -> str: ...
    @property
    def description(self) -> str | None: ...


def seed_line(seed: SeedText) -> str:
    """``path:line [SEVERITY] rule — description``, on one line with no control
    characters (the fields come from a record); the Markdown and HTML sinks escape the
    result for their own syntax."""
    t = terminal_safe
    return (f"{t(seed.path)}:{t(seed.line)} [{t(seed.severity)}] {t(seed.rule)} — "
            f"{t(seed.description or '')}").rstrip(" —")


def md_seed_line(seed: SeedText) -> str:
    """:func:`seed_line` in Markdown: each field escaped (:func:`md_text`), the
    ``[SEVERITY]`` brackets kept as this module's own text."""
    m = md_text
    return (f"{m(seed.path)}:{m(seed.line)} [{m(seed.severity)}] {m(seed.rule)} — "
            f"{m(seed.description or '')}").rstrip(" —")


def blockers_found(record: Record) -> int:
    """How many BLOCKER seeds the record counts as found (its ``blocker_found`` rate times
    its BLOCKER markers: the rate is that exact ratio)."""
    n = record.blocker.markers
    return round(record.blocker_found * n) if record.blocker_found is not None else 0


def blockers_text(record: Record) -> str:
    """"found 6/6 · rated BLOCKER 4/6": the gate's number first, the marked-severity one beside it."""
    b = record.blocker
    # Before schema 3, found counted a BLOCKER located at any severity, on topic or not:
    # such a record is read as it was written, and says so.
    how = f" (schema {record.schema}: located at any severity)" if record.schema < 3 else ""
    return f"found {blockers_found(record)}/{b.markers}{how} · rated BLOCKER {b.caught}/{b.markers}"


def render_record(record: Record) -> str:
    """The compact human table for one scored PR."""
    findings = record.findings if record.findings is not None else "?"
    head = (f"{record.repo} #{record.pr or '-'}  {record.stack}/{record.kind}  "
            f"reviewer={record.reviewer}  mode={record.mode}  "
            f"corpus={record.corpus_fingerprint}")
    lines = [head, f"outcome: {record.outcome}" + (f" — {record.notice}" if record.notice else "")]
    if record.outcome == "scored":
        if record.kind == "seeded":
            b = record.by_severity["BLOCKER"]
            lines.append("blockers:       " + blockers_text(record)
                         + (f"  (rated BLOCKER: {fmt_rate(b.caught, b.markers, record.blocker_recall_ci95)})"
                            if b.markers else ""))
            lines.append("recall:         " + fmt_rate(record.caught, record.markers, record.recall_ci95))
            lines.append(
                f"caught {record.caught} · undercalled {record.undercalled} · "
                f"missed {record.missed} · cited {record.cited} · duplicates "
                f"{record.duplicates} · borderline {record.borderline} · noise "
                f"{record.noise} (of {findings} findings)")
            lines.append("by severity:    " + "  ".join(
                f"{s.name} {record.by_severity[s.name].caught}/{record.by_severity[s.name].markers}"
                for s in SCALE if record.by_severity[s.name].markers))
        else:
            below = record.clean_findings_below_floor if record.has("clean_findings_below_floor") else 0
            lines.append(
                f"clean false positives: {record.clean_false_positives} "
                f"(below floor, reported only: {below}; "
                f"borderline {record.borderline}; "
                + (f"outside the fixed places, reported only: {record.clean_findings_outside_fix}; "
                   if record.clean_findings_outside_fix is not None else "")
                + f"of {findings} findings)")
    gate = record.gate
    lines.append("gate: " + ("PASS" if gate.passed else "FAIL")
                 + ("" if gate.passed else " — " + "; ".join(gate.reasons)))
    for title, seeds in (("missed", record.missed_seeds), ("undercalled", record.undercalled_seeds)):
        if seeds:
            lines.append(f"{title} seeds ({len(seeds)}):")
            lines.extend("  " + seed_line(s) for s in seeds)
    # Every field is outside text (the reviewer's notice, the record's strings): each
    # line is made terminal-safe whole, so no field can add a line or an escape.
    return "\n".join(terminal_safe(line) for line in lines)


def render_baseline(newly_missed: Sequence[Seed], newly_caught: Sequence[Seed],
                    baseline: Record | None) -> str:
    if baseline is None:
        return "baseline: none (no earlier record with this repo, stack, kind, reviewer and corpus)"
    lines = [f"baseline: run {baseline.run_id} at {baseline.recorded_at}"]
    lines += [f"  newly missed: {seed_line(s)}" for s in newly_missed]
    lines += [f"  newly caught: {seed_line(s)}" for s in newly_caught]
    if not newly_missed and not newly_caught:
        lines.append("  no change in caught seeds")
    return "\n".join(terminal_safe(line) for line in lines)
