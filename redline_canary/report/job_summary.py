"""The job summary (``$GITHUB_STEP_SUMMARY``) of one run: verdict, one row per PR, missed seeds. Pure.

A step's summary must stay under 1 MiB or its upload fails: the table is cut at a line
boundary if it must be, and per-PR detail sections that do not fit are counted, not cut.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from redline_canary.corpus.model import CANONICAL, PACKAGED
from redline_canary.errors import EXIT_MEANINGS, outcome_word
from redline_canary.report.action_outputs import totals
from redline_canary.report.annotations import corpus_file
from redline_canary.report.gap import Observation
from redline_canary.report.markdown import gap_lines
from redline_canary.report.markdown_fit import SUMMARY_LIMIT, cut_at_line, size
from redline_canary.report.text import blockers_found, fmt_rate, md_code, md_seed_line, md_text
from redline_canary.score.record import Record
from redline_canary.score.verdict import final_attempts


def md(text: object) -> str:
    """Text from records (descriptions, notices, GitHub messages) inside Markdown: no HTML,
    no link, image or autolink, no table break, no line break (:func:`render.md_text`)."""
    return md_text(text)


def _cells(r: Record) -> list[str]:
    scored = r.outcome == "scored"
    seeded = r.kind == "seeded"
    dash = "–"
    b = r.blocker
    blocker = recall = under = cfp = dash
    if scored and seeded:
        if b.markers:
            blocker = (f"found {blockers_found(r)}/{b.markers} · rated BLOCKER "
                       f"{fmt_rate(b.caught, b.markers, r.blocker_recall_ci95)}")
        recall = fmt_rate(r.caught, r.markers, r.recall_ci95)
        under = f"{r.undercalled} of {r.markers}"
    elif scored:
        cfp = str(r.clean_false_positives or 0)
        if r.findings is not None:
            cfp += f" (of {r.findings} finding(s)"
            if r.clean_findings_below_floor:
                cfp += f"; {r.clean_findings_below_floor} below the floor"
            cfp += ")"
    gate = "✅ PASS" if r.gate.passed else "❌ FAIL"
    target = f"{r.repo} {r.stack} · {r.reviewer} · {r.kind}"
    if r.attempt > 1:
        target += f" (attempt {r.attempt})"
    pr = f"#{md(r.pr)}" if r.pr else dash
    return [md(target), pr, md(r.outcome), blocker, recall, under, cfp, gate]


def _details(r: Record, corpus_prefix: str) -> str:
    pr = f" PR #{md(r.pr)}" if r.pr else ""
    lines = [f"### {md(r.repo)} {md(r.stack)} — {md(r.kind)}{pr}", ""]
    published = "".join(f", {what} {md_code(value)}" for what, value, usual in (
        ("layer", r.layer, PACKAGED), ("variant", r.variant, CANONICAL)) if value != usual)
    lines.append(f"Reviewer {md_code(r.reviewer)}, mode {md(r.mode)}, corpus "
                 f"{md_code(r.corpus_fingerprint)}{published}, outcome **{md(r.outcome)}**"
                 + (f" — {md(r.notice)}" if r.notice else ""))
    gate = r.gate
    reasons = "; ".join(gate.reasons)
    lines.append("")
    lines.append("Gate: " + ("PASS" if gate.passed else "FAIL") + (f" — {md(reasons)}" if reasons else ""))
    if gate.blocker_gate == "found":
        lines.append("(blocker gate: found — a BLOCKER located at any severity at or above the floor counts)")
    for note in gate.warnings:
        lines.append(f"- ⚠️ {md(note)}")
    for title, seeds in (("Missed seeds", r.missed_seeds), ("Undercalled seeds", r.undercalled_seeds)):
        if not seeds:
            continue
        lines += ["", f"**{title} ({len(seeds)})**", ""]
        for s in seeds:
            where = corpus_file(corpus_prefix, "seeded", r.stack, s.path)
            lines.append(f"- SEED {md(s.n)} · {md_seed_line(replace(s, path=where))}")
    return "\n".join(lines) + "\n"


def observations(records: Sequence[Record]) -> list[Observation]:
    """The run's final scored seeded records, as the gap pools them (report.gap)."""
    return [Observation(r.reviewer, r.stack, r.layer, r.variant, r.markers, r.caught, r.blocker.markers,
                        blockers_found(r))
            for r in records if r.kind == "seeded" and r.outcome == "scored"]


def job_summary(records: Sequence[Record], exit_code: int, *, corpus_prefix: str = "seeds",
                notes: Sequence[str] = (), limit: int = SUMMARY_LIMIT) -> str:
    """Markdown for ``$GITHUB_STEP_SUMMARY``: the verdict, one table row per PR with the
    four numbers (blockers found and rated BLOCKER, recall with n and 95 % interval, undercalls, clean false
    positives), then per PR its missed and undercalled seeds. Never above ``limit`` bytes:
    details that do not fit are counted, not cut mid-line."""
    final = final_attempts(records)
    word = outcome_word(exit_code).upper()
    meaning = EXIT_MEANINGS.get(exit_code, "unexpected exit code")
    head = [f"## redline-canary: {word} (exit {exit_code}: {meaning})", ""]
    run_ids = sorted({r.run_id for r in final})
    if run_ids:
        head.append(f"Run {', '.join(md_code(x) for x in run_ids)} · {len(final)} PR(s) scored or attempted")
        head.append("")
    head += [f"> {md(n)}" for n in notes]
    if notes:
        head.append("")
    if not final:
        head.append("No records were written: nothing was measured. The step log says why.")
        return cut_at_line("\n".join(head) + "\n", limit)
    t = totals(final)
    if t.markers or t.clean_false_positives is not None:
        pooled = []
        if t.markers:
            pooled.append(f"blockers found {sum(blockers_found(r) for r in final if r.outcome == 'scored')}"
                          f"/{t.blocker_markers} · rated BLOCKER {t.blocker_caught}/{t.blocker_markers}")
            pooled.append(f"recall {fmt_rate(t.caught, t.markers, None)}")
            pooled.append(f"undercalls {t.undercalled}")
        if t.clean_false_positives is not None:
            pooled.append(f"clean false positives {t.clean_false_positives}")
        head += ["All targets: " + " · ".join(pooled), ""]
    table = ["| target | PR | outcome | blockers | recall | undercalls | clean false positives | gate |",
             "|---|---|---|---|---|---|---|---|"]
    table += ["| " + " | ".join(_cells(r)) + " |" for r in final]
    gap = [line for section in gap_lines(observations(final), "###") for line in section]
    reserve = 256  # room for the "left out" note below, whatever else was cut
    text = cut_at_line("\n".join(head + table + gap) + "\n", limit - reserve)
    omitted = 0
    for r in final:
        if omitted:  # once one is left out, the rest are too: count them, render none
            omitted += 1
            continue
        part = "\n" + _details(r, corpus_prefix)
        if size(text) + size(part) > limit - reserve:
            omitted += 1
            continue
        text += part
    if omitted:
        text += (f"\n_{omitted} PR detail section(s) left out to stay under GitHub's 1 MiB summary "
                 "limit; the records artifact has every seed._\n")
    return text
