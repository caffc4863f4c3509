"""From history records to the scoreboard's runs, targets and seed rows. Pure.

What is decided here, once: the final attempt of each kind within a run (a confirmation
re-run supersedes), what a record must hold beyond the schema to be drawn (a name for its
row, places to point at), and each seed's class over the window. Records that cannot be
drawn are skipped and named, never guessed at.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from redline_canary.corpus.severity import SEVERITY_NAMES
from redline_canary.report.gap import Observation
from redline_canary.report.model import (
    NONE,
    SEED_STATES,
    UNRECORDED,
    Measurement,
    Rate,
    Report,
    RunPoint,
    SeedRef,
    SeedRow,
    TargetReport,
    classify,
)
from redline_canary.report.stats import calibration, comparisons
from redline_canary.report.text import blockers_found, terminal_safe
from redline_canary.score.record import Record, Seed
from redline_canary.score.record_schema import RecordProblem
from redline_canary.score.scoring import wilson

# ``Record.from_json`` has checked every type; what is left is what the scoreboard needs
# beyond the schema: text it can name a row by, and places it can point to.


def _text(value: str, key: str) -> str:
    if not value:
        raise RecordProblem(f"{key} is not a non-empty string", key)
    return value


def _seed(s: Seed, stack: str, key: str) -> SeedRef:
    try:
        if s.line < 0:
            raise RecordProblem(f"{key}[].line is not a non-negative integer", "line")
        return SeedRef(stack, s.n, _text(s.path, "path"), s.line, _text(s.severity, "severity"),
                       _text(s.rule, "rule"), s.description or "")
    except RecordProblem as exc:
        raise RecordProblem(f"{key}[]: {exc.why}", f"{key}[].{exc.key}") from None


def _level_given(seed: Seed, state: str) -> str:
    if state == "missed":
        return "missed"
    evidence = seed.evidence
    level = evidence.severity if evidence is not None else None
    return level if level is not None and level in SEVERITY_NAMES else (
        "unrated" if evidence is not None else UNRECORDED)


def _measurement(r: Record) -> tuple[Measurement, list[SeedRef]]:
    kind, outcome = r.kind, r.outcome
    stack = _text(r.stack, "stack")
    seeds: list[SeedRef] = []
    states: dict[int, str] = {}
    levels: dict[int, tuple[str, str]] = {}
    for state in SEED_STATES:
        for s in r.seeds(f"{state}_seeds"):
            ref = _seed(s, stack, f"{state}_seeds")
            seeds.append(ref)
            states[ref.n] = state
            levels[ref.n] = (ref.severity, _level_given(s, state))
    recall = blocker = found = None
    scored = outcome == "scored"
    if kind == "seeded" and scored:
        recall = Rate(r.caught, r.markers, r.recall_ci95 or wilson(r.caught, r.markers))
        b = r.blocker
        blocker = Rate(b.caught, b.markers, r.blocker_recall_ci95 or wilson(b.caught, b.markers))
        k = blockers_found(r)
        found = Rate(k, b.markers, r.blocker_found_ci95 or wilson(k, b.markers))
    cfp = None
    if kind == "clean" and scored:
        if r.clean_false_positives is None:
            raise RecordProblem("clean_false_positives is not a non-negative integer", "clean_false_positives")
        cfp = r.clean_false_positives
    m = Measurement(
        kind=kind, outcome=outcome, recorded_at=_text(r.recorded_at, "recorded_at"),
        attempt=r.attempt, notice=r.notice or None,
        recall=recall, blocker=blocker, found=found,
        undercalled=r.undercalled if scored else 0,
        clean_false_positives=cfp, gate_passed=r.gate.passed,
        gate_reasons=r.gate.reasons,
        acknowledged=r.gate.acknowledged,
        seed_states=states if scored else {},
        seed_levels=levels if scored and kind == "seeded" else {},
        layer=r.layer, variant=r.variant,
    )
    return m, seeds


def describe(record: Record) -> str:
    """How a skipped record is named when it has no line number to hand (one line, no
    control characters: the values are the record's own)."""
    keys = ("run_id", "repo", "stack", "kind", "reviewer")
    return "record " + " ".join(f"{k}={terminal_safe(getattr(record, k))[:80]}" for k in keys)


def build_report(records: Iterable[Record], since: str | None = None,
                 corrupt: Sequence[tuple[int, str]] = ()) -> Report:
    """Group, order and classify the records; nothing here reads a file or the clock.

    ``since`` is an ISO date (``YYYY-MM-DD``): records recorded before it are left out,
    and the seed classes describe only what remains. ``corrupt`` are the (line, why)
    pairs the history reader skipped; they are carried into the report so a reader of the
    summary knows the numbers rest on fewer lines than the file holds.
    """
    skipped = [f"line {n}: {why}" for n, why in corrupt]
    finals: dict[tuple[str, str, str, str, str], tuple[Measurement, str]] = {}
    seed_refs: dict[tuple[str, int], tuple[str, SeedRef]] = {}
    used = 0
    for r in records:
        if since is not None and r.recorded_at < since:
            continue
        try:
            repo, stack, reviewer = _text(r.repo, "repo"), _text(r.stack, "stack"), _text(r.reviewer, "reviewer")
            run_id, fp = _text(r.run_id, "run_id"), _text(r.corpus_fingerprint, "corpus_fingerprint")
            m, seeds = _measurement(r)
        except RecordProblem as exc:
            skipped.append(f"{describe(r)}: {exc.why}")
            continue
        used += 1
        key = (repo, stack, reviewer, run_id, m.kind)
        held = finals.get(key)
        if held is None or (m.attempt, m.recorded_at) >= (held[0].attempt, held[0].recorded_at):
            finals[key] = (m, fp)
        for ref in seeds:
            prev = seed_refs.get((stack, ref.n))
            if prev is None or m.recorded_at >= prev[0]:
                seed_refs[(stack, ref.n)] = (m.recorded_at, ref)

    grouped: dict[tuple[str, str, str], dict[str, dict[str, tuple[Measurement, str]]]] = {}
    for (repo, stack, reviewer, run_id, kind), value in finals.items():
        grouped.setdefault((repo, stack, reviewer), {}).setdefault(run_id, {})[kind] = value

    refs = {k: v[1] for k, v in seed_refs.items()}
    targets = [_target(key, runs, refs) for key, runs in sorted(grouped.items())]
    stamps = [run.recorded_at for t in targets for run in t.runs]
    return Report(
        targets=targets, comparisons=comparisons(targets, refs), records_used=used,
        skipped=skipped, since=since, first=min(stamps, default=None), last=max(stamps, default=None),
        calibration=calibration(targets), observations=observations(targets),
    )


def observations(targets: Sequence[TargetReport]) -> list[Observation]:
    """Every final scored seeded run, as the gap pools it (report.gap)."""
    out = []
    for t in targets:
        for run in t.seeded_runs:
            m = run.seeded
            if m is None or not m.scored or m.recall is None or m.found is None:
                continue
            out.append(Observation(t.reviewer, t.stack, m.layer, m.variant, m.recall.n, m.recall.successes,
                                   m.found.n, m.found.successes))
    return out


def _target(key: tuple[str, str, str], runs: Mapping[str, Mapping[str, tuple[Measurement, str]]],
            refs: Mapping[tuple[str, int], SeedRef]) -> TargetReport:
    repo, stack, reviewer = key
    points: list[RunPoint] = []
    ordered = sorted(runs.items(), key=lambda kv: (min(m.recorded_at for m, _ in kv[1].values()), kv[0]))
    previous: str | None = None
    for run_id, kinds in ordered:
        seeded, clean = kinds.get("seeded"), kinds.get("clean")
        fp = (kinds["seeded"] if seeded else kinds["clean"])[1]
        points.append(RunPoint(
            run_id=run_id, recorded_at=min(m.recorded_at for m, _ in kinds.values()),
            fingerprint=fp, fingerprint_changed=previous is not None and fp != previous,
            seeded=seeded[0] if seeded else None, clean=clean[0] if clean else None,
        ))
        previous = fp
    target = TargetReport(repo, stack, reviewer, points)
    target.seeds = _seed_rows(target, refs)
    return target


def _seed_rows(target: TargetReport, refs: Mapping[tuple[str, int], SeedRef]) -> list[SeedRow]:
    runs = [r.seeded for r in target.seeded_runs if r.seeded is not None]
    numbers = sorted({n for m in runs for n in m.seed_states})
    rows = []
    for n in numbers:
        cells = tuple(m.seed_states.get(n, NONE) for m in runs)
        rows.append(SeedRow(
            seed=refs[(target.stack, n)], cells=cells, seed_class=classify(cells),
            caught=cells.count("caught"), undercalled=cells.count("undercalled"),
            missed=cells.count("missed"),
        ))
    return rows
