"""Markdown under GitHub's job-summary limit, cut only where a reader can tell. Pure.

GitHub drops a step's summary above 1 MiB entirely, so both the action's job summary
(:mod:`actions_summary`) and the scoreboard (:mod:`report_markdown`) must fit, and say
what they left out. The two ways of fitting live here: cut at a line boundary (a
pathologically long table), or leave out whole sections from the end.
"""

from __future__ import annotations

from collections.abc import Sequence

# GitHub fails a step's summary upload above 1 MiB; keep a margin for a header or a
# second writer in the same step.
SUMMARY_LIMIT = 1_000_000


def size(text: str) -> int:
    """What GitHub counts: UTF-8 bytes, not characters."""
    return len(text.encode("utf-8"))


def cut_at_line(text: str, limit: int) -> str:
    """Cut at a line boundary below ``limit`` bytes (only a pathological table needs it)."""
    if size(text) <= limit:
        return text
    note = "\n_…summary cut at GitHub's size limit._\n"
    room = limit - size(note)
    kept: list[str] = []
    used = 0
    for line in text.splitlines(keepends=True):
        if used + size(line) > room:
            break
        kept.append(line)
        used += size(line)
    return "".join(kept) + note


def drop_sections(sections: Sequence[Sequence[str]], limit: int) -> str:
    """The sections (lists of lines) joined, leaving out whole sections from the end when
    they do not fit under ``limit`` bytes, with a closing line saying how many."""
    note_room = 200
    kept: list[str] = []
    used = 0
    for i, sec in enumerate(sections):
        chunk = "\n".join(sec) + "\n"
        n = size(chunk)
        if used + n > limit - note_room:
            kept.append(f"\n_{len(sections) - i} section(s) left out to stay under "
                        f"{limit} bytes; render with --html for the full report._\n")
            break
        kept.append(chunk)
        used += n
    text = "".join(kept)
    return text if size(text) <= limit else text.encode("utf-8")[:limit].decode("utf-8", "ignore")
