"""What a GitHub Actions run shows of a canary: job summary, annotations, step outputs. Pure.

Why a core module: the action's last step renders everything from the history records
alone (the fragment the run wrote), so a live run, a re-run of that step and a test all
produce the same text. ``actions.py`` is the edge that writes it where the runner reads
it. Nothing here touches a file, the environment or the clock.

Runner facts this follows (``shared/reference/github-api.md`` §10): workflow-command
message data escapes ``%``, CR and LF; property values additionally ``:`` and ``,``; a
step's summary must stay under 1 MiB or its upload fails; a step shows at most 10 error
and 10 warning annotations, so the most urgent come first and the rest are counted.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from redline_canary.record import Record
from redline_canary.render import fmt_rate, md_code, md_seed_line, md_text, terminal_safe
from redline_canary.verdict import EXIT_MEANINGS, final_attempts, outcome_word

# GitHub fails a step's summary upload above 1 MiB; keep a margin for a header or a
# second writer in the same step.
SUMMARY_LIMIT = 1_000_000
ANNOTATIONS_PER_LEVEL = 10

# --- workflow commands -------------------------------------------------------------------

def escape_data(text: str) -> str:
    """A command's message: a newline in reviewer or corpus text must not start a new
    command, so CR/LF (and the escape character itself) are percent-encoded."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def workflow_command(name: str, message: str, **props: str | int | None) -> str:
    """``::name k=v,k=v::message`` with the runner's escaping; ``None`` props are left out."""
    given = [(k, v) for k, v in props.items() if v is not None and v != ""]
    head = f"::{name}"
    if given:
        head += " " + ",".join(f"{k}={escape_property(str(v))}" for k, v in given)
    return f"{head}::{escape_data(message)}"


def output_entry(name: str, value: str, delimiter: str) -> str:
    """One ``$GITHUB_OUTPUT`` entry. Single-line values use ``name=value``; anything with a
    newline uses the heredoc form, whose delimiter (chosen by the caller, random) must not
    occur as a line of the value."""
    if "\n" not in value and "\r" not in value:
        return f"{name}={value}\n"
    if delimiter in value.splitlines():
        raise ValueError("output delimiter occurs in the value")
    return f"{name}<<{delimiter}\n{value}\n{delimiter}\n"


# --- which records count ------------------------------------------------------------------

@dataclass(frozen=True)
class Totals:
    """Pooled over the final attempts of every scored PR (the action's headline numbers)."""

    blocker_caught: int = 0
    blocker_markers: int = 0
    caught: int = 0
    markers: int = 0
    undercalled: int = 0
    clean_false_positives: int | None = None  # None: no clean PR was scored

    @property
    def blocker_recall(self) -> float | None:
        return self.blocker_caught / self.blocker_markers if self.blocker_markers else None

    @property
    def recall(self) -> float | None:
        return self.caught / self.markers if self.markers else None


def totals(records: Iterable[Record]) -> Totals:
    b_caught = b_n = caught = markers = under = 0
    cfp: int | None = None
    for r in final_attempts(records):
        if r.outcome != "scored":
            continue  # silent/error/cancelled measured nothing: never a zero
        if r.kind == "seeded":
            b_caught += r.blocker.caught
            b_n += r.blocker.markers
            caught += r.caught
            markers += r.markers
            under += r.undercalled
        elif r.clean_false_positives is not None:
            cfp = (cfp or 0) + r.clean_false_positives
    return Totals(b_caught, b_n, caught, markers, under, cfp)


def _rate_text(value: float | None) -> str:
    return "" if value is None else f"{value:.4f}".rstrip("0").rstrip(".") if value else "0"


def action_outputs(records: Sequence[Record], exit_code: int,
                   records_path: str = "") -> dict[str, str]:
    """The action's outputs. Rates are pooled fractions (``0.8``); empty when nothing of
    that kind was scored, so a caller never reads silence as a 0."""
    t = totals(records)
    run_ids = sorted({r.run_id for r in records})
    return {
        "outcome": outcome_word(exit_code),
        "exit-code": str(exit_code),
        "blocker-recall": _rate_text(t.blocker_recall),
        "recall": _rate_text(t.recall),
        "clean-false-positives": "" if t.clean_false_positives is None else str(t.clean_false_positives),
        "records": records_path,
        "run-id": run_ids[0] if len(run_ids) == 1 else ",".join(run_ids),
    }


# --- annotations --------------------------------------------------------------------------

def corpus_file(corpus_prefix: str, kind: str, stack: str, path: str) -> str:
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


# --- job summary --------------------------------------------------------------------------

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
        blocker = fmt_rate(b.caught, b.markers, r.blocker_recall_ci95)
        found = b.caught + b.undercalled
        if b.markers and found != b.caught:
            blocker += f"; found {found}/{b.markers}"
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
    lines.append(f"Reviewer {md_code(r.reviewer)}, mode {md(r.mode)}, corpus "
                 f"{md_code(r.corpus_fingerprint)}, outcome **{md(r.outcome)}**"
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


def job_summary(records: Sequence[Record], exit_code: int, *, corpus_prefix: str = "seeds",
                notes: Sequence[str] = (), limit: int = SUMMARY_LIMIT) -> str:
    """Markdown for ``$GITHUB_STEP_SUMMARY``: the verdict, one table row per PR with the
    four numbers (blocker recall, recall with n and 95 % interval, undercalls, clean false
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
        return _fit("\n".join(head) + "\n", limit)
    t = totals(final)
    if t.markers or t.clean_false_positives is not None:
        pooled = []
        if t.markers:
            pooled.append(f"blocker recall {fmt_rate(t.blocker_caught, t.blocker_markers, None)}")
            pooled.append(f"recall {fmt_rate(t.caught, t.markers, None)}")
            pooled.append(f"undercalls {t.undercalled}")
        if t.clean_false_positives is not None:
            pooled.append(f"clean false positives {t.clean_false_positives}")
        head += ["All targets: " + " · ".join(pooled), ""]
    table = ["| target | PR | outcome | blocker recall | recall | undercalls | clean false positives | gate |",
             "|---|---|---|---|---|---|---|---|"]
    table += ["| " + " | ".join(_cells(r)) + " |" for r in final]
    reserve = 256  # room for the "left out" note below, whatever else was cut
    text = _fit("\n".join(head + table) + "\n", limit - reserve)
    omitted = 0
    for r in final:
        part = "\n" + _details(r, corpus_prefix)
        if omitted or _size(text) + _size(part) > limit - reserve:
            omitted += 1
            continue
        text += part
    if omitted:
        text += (f"\n_{omitted} PR detail section(s) left out to stay under GitHub's 1 MiB summary "
                 "limit; the records artifact has every seed._\n")
    return text


def _size(text: str) -> int:
    return len(text.encode("utf-8"))


def _fit(text: str, limit: int) -> str:
    """Cut at a line boundary below ``limit`` bytes (only a pathological table needs it)."""
    if _size(text) <= limit:
        return text
    note = "\n_…summary cut at GitHub's size limit._\n"
    room = limit - _size(note)
    kept: list[str] = []
    used = 0
    for line in text.splitlines(keepends=True):
        if used + _size(line) > room:
            break
        kept.append(line)
        used += _size(line)
    return "".join(kept) + note


def matrix_entry(target: Mapping[str, Any]) -> dict[str, str]:
    """One ``strategy.matrix.include`` entry: the display fields, an artifact-safe slug,
    and the whole target as compact JSON (``targets:`` input of the action), so keys such
    as ``base``, ``prefix`` and ``login`` reach the job unchanged."""
    repo, stack, reviewer = str(target["repo"]), str(target["stack"]), str(target.get("reviewer") or "redline")
    slug = "-".join(_slug(x) for x in (repo.replace("/", "--"), stack, reviewer))
    return {
        "name": f"{repo} {stack} ({reviewer})",
        "slug": slug,
        "repo": repo,
        "stack": stack,
        "reviewer": reviewer,
        "mode": str(target.get("mode") or "blind"),
        "target": json.dumps(dict(target), separators=(",", ":"), sort_keys=True),
    }


def _slug(text: str) -> str:
    """Artifact names may not hold ``"  : < > | * ? \\ /`` or CR/LF; keep a readable subset."""
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in text)
