"""The answer-key audit's worklist as a Markdown document (``corpus audit --markdown``).
Pure: every field that came from a review goes through :func:`md_text` (or :func:`md_code`,
never inside a code span of its own: ``md_text`` may write code spans)."""

from __future__ import annotations

from redline_canary.report.text import md_code, md_text
from redline_canary.score.audit import CATEGORIES, Worklist


def worklist_markdown(w: Worklist) -> str:
    """The worklist as a Markdown document, one section per stack and kind."""
    lines = ["# Corpus audit worklist", "",
             f"{len(w.entries)} entries from {w.reviews} scored review(s), "
             f"{len({e.group for e in w.entries})} place(s).", ""]
    for warning in w.warnings:
        lines.append(f"- warning: {md_text(warning)}")
    if w.warnings:
        lines.append("")
    for (stack, kind), entries in sorted(w.by_stack().items()):
        counts = {c: sum(e.category == c for e in entries) for c in CATEGORIES}
        lines += [f"## {md_text(stack)} / {kind}", "",
                  " · ".join(f"{c}: {n}" for c, n in counts.items() if n), "",
                  "| place | category | severity | seed | corpus | reviewer | finding |",
                  "|---|---|---|---|---|---|---|"]
        for e in sorted(entries, key=lambda e: (e.group, e.category, e.reviewer)):
            seed = f"SEED {e.seed} [{e.marked}] d={e.distance}" if e.seed is not None else ""
            corpus = f"{e.corpus_path}:{e.corpus_line}" if e.corpus_path else ""
            text = " ".join(e.excerpt.split())[:200]
            lines.append(
                f"| {md_text(e.group)} {md_code(f'{e.pushed_path}:{e.pushed_line}')} | {e.category} | "
                f"{e.severity or 'unrated'} ({md_text(e.word)}) | {seed} | {md_code(corpus) if corpus else ''} | "
                f"{md_text(e.reviewer)} | {md_text(text)} |")
        lines.append("")
    return "\n".join(lines)
