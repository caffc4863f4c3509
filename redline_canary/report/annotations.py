"""The run's annotations: ``::error`` / ``::warning`` commands pointing at corpus lines. Pure.

A step shows at most 10 error and 10 warning annotations, so the most urgent come first
and the rest are counted in one notice; every field is record text, made one inert line.
"""

from __future__ import annotations

from collections.abc import Sequence

from redline_canary.errors import EXIT_MEANINGS, outcome_word
from redline_canary.report.text import terminal_safe
from redline_canary.report.workflow_commands import workflow_command
from redline_canary.score.record import PRKind, Record
from redline_canary.score.verdict import final_attempts

ANNOTATIONS_PER_LEVEL = 10


def corpus_file(corpus_prefix: str, kind: PRKind, stack: str, path: str) -> str:
    """Where a seed lives in the corpus, relative to the workspace: what ``file=`` names."""
    prefix = corpus_prefix.strip().removeprefix("./").rstrip("/") or "seeds"
    return f"{prefix}/{kind}/{stack}/{path}"


def annotation_commands(records: Sequence[Record], corpus_prefix: str = "seeds",
                limit: int = ANNOTATIONS_PER_LEVEL, exit_code: int | None = None) -> list[str]:
    """Errors for what fails a gate (an uncaught BLOCKER, clean false positives, silence,
    an error), warnings for the rest (other misses and undercalls). Most severe first;
    past ``limit`` per level one notice says how many more the summary lists. A failed run
    with no record at all (bad targets, no token) still gets one error naming its exit code."""
    errors: list[tuple[int, str]] = []
    warnings: list[tuple[int, str]] = []
    final = final_attempts(records)
    if not final and exit_code:
        errors.append((0, workflow_command(
            "error", f"exit {exit_code} ({EXIT_MEANINGS.get(exit_code, 'unexpected exit code')}) and no record "
            "was written: nothing was measured; the run's log names the cause",
            title=f"redline-canary: {outcome_word(exit_code)}")))
    t = terminal_safe  # every field below is record text: one line, no control characters
    for r in final:
        who = t(r.reviewer)
        where = t(f"{r.repo} {r.stack}/{r.kind}")
        pr = t(f" PR #{r.pr}") if r.pr else ""
        outcome = r.outcome
        if outcome == "silent":
            errors.append((0, workflow_command(
                "error", f"{who} said nothing on {where}{pr} before the timeout: nothing was measured "
                "(never a recall of 0, never a clean pass)", title="Reviewer silent")))
            continue
        if outcome in ("error", "cancelled"):
            bucket = errors if outcome == "error" else warnings
            notice = f": {t(r.notice)}" if r.notice else ""
            bucket.append((0, workflow_command(
                "error" if outcome == "error" else "warning", f"{where}{pr} was not scored{notice}",
                title=f"Canary {outcome}")))
            continue
        if outcome != "scored":
            continue
        if r.kind == "clean":
            cfp = r.clean_false_positives or 0
            if cfp:
                errors.append((1, workflow_command(
                    "error", f"{who} raised {cfp} finding(s) at or above the floor on the clean twin "
                    f"({where}{pr})", title="Clean false positives")))
            continue
        stack = t(r.stack)
        gate = r.gate
        acknowledged = set(gate.acknowledged)
        for state, seeds in (("missed", r.missed_seeds), ("undercalled", r.undercalled_seeds)):
            for s in seeds:
                sev = t(s.severity)
                text = f"SEED {t(s.n)} [{sev}] {state} by {who}"
                if state == "undercalled":
                    ev = s.evidence
                    given = ev.severity if ev is not None else None
                    word = t((ev.word if ev is not None else None) or given or "a lower level")
                    text += f": found at {word}" + (f" ({t(given)})" if given else "") + f", marked {sev}"
                text += f" on {t(r.repo)}{pr} — {t(s.rule)}: {t(s.description or '')}".rstrip(": ")
                # The gate says which BLOCKERs fail it (older records: every one not acknowledged).
                fails = sev == "BLOCKER" and (s.n in gate.failing_seeds if gate.has("failing_seeds")
                                              else s.n not in acknowledged)
                if sev == "BLOCKER" and s.n in acknowledged:
                    text += " (acknowledged: does not fail the gate)"
                cmd = workflow_command("error" if fails else "warning", text,
                                       file=corpus_file(corpus_prefix, "seeded", stack, t(s.path)),
                                       line=s.line, title=f"{sev} seed {state}")
                (errors if fails else warnings).append((_SEV_RANK.get(sev, 9), cmd))
        for note in gate.warnings:
            if "acknowledged by" in str(note):
                continue  # already said on the seed's own annotation
            warnings.append((1, workflow_command("warning", f"{where}: {t(note)}", title="Gate warning")))
    out: list[str] = []
    for kind, items in (("error", errors), ("warning", warnings)):
        items.sort(key=lambda item: item[0])
        out.extend(cmd for _, cmd in items[:limit])
        if len(items) > limit:
            out.append(workflow_command(
                "notice", f"{len(items) - limit} more {kind}(s) not annotated: the job summary lists them all",
                title="More findings"))
    return out


_SEV_RANK = {"BLOCKER": 2, "CRITICAL": 3, "MAJOR": 4, "MINOR": 5, "INFO": 6}
