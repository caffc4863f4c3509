"""The scoreboard's data, and its Markdown form, built from history records. Pure.

Why a separate core: the same numbers feed the Markdown job summary, the static HTML
folder and ``report --json``. Keeping them here, with no I/O, clock or plotting, means one
place decides what a "run", a "gap", a "fingerprint change" or a "newly missed" seed is,
and the tests can check those decisions on plain records.

Vocabulary used below:

* **target** — one (repo, stack, reviewer): the unit a canary measures (DESIGN §1).
* **run** — every record of one target that shares a ``run_id``; per kind only the
  highest ``attempt`` counts (a confirmation re-run supersedes, as ``gate`` decides).
* **gap** — a run whose outcome is ``silent``, ``error`` or ``cancelled``. Nothing was
  measured, so it is drawn as a labelled hole, never as a zero.
* **window** — the records given to :func:`build_report` (after ``since``). Seed
  classes are computed over the window only.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from redline_canary.record import Record, Seed
from redline_canary.render import fmt_rate, md_seed_line, seed_line, terminal_safe
from redline_canary.scoring import wilson
from redline_canary.severity import SEVERITY_NAMES

# The seed classes are the gate's (a rolling baseline fails on "newly missed"): one definition.
from redline_canary.verdict import ALWAYS_CAUGHT as ALWAYS_CAUGHT
from redline_canary.verdict import INTERMITTENT as INTERMITTENT
from redline_canary.verdict import NEVER_CAUGHT as NEVER_CAUGHT
from redline_canary.verdict import NEWLY_MISSED as NEWLY_MISSED
from redline_canary.verdict import SEED_CLASSES as SEED_CLASSES
from redline_canary.verdict import classify as classify

GAP_OUTCOMES = ("silent", "error", "cancelled")
SEED_STATES = ("caught", "undercalled", "missed")
NONE = "none"  # the seed was not measured in that run (gap, or not in that corpus)


# GitHub rejects a job summary above 1 MiB; keep a margin for whatever else the step adds.



class RecordError(ValueError):
    """A record that has every required key but a value of the wrong shape."""


# --------------------------------------------------------------------------- data


@dataclass(frozen=True)
class Rate:
    """A proportion that always travels with its n (and its Wilson 95 % interval)."""

    successes: int
    n: int
    ci: tuple[float, float] | None

    @property
    def value(self) -> float | None:
        return self.successes / self.n if self.n else None

    def text(self) -> str:
        return fmt_rate(self.successes, self.n, self.ci)


@dataclass(frozen=True)
class SeedRef:
    """One seed, identified by (stack, n); path/line/severity/rule from its newest record."""

    stack: str
    n: int
    path: str
    line: int
    severity: str
    rule: str
    description: str

    def text(self) -> str:
        return seed_line(self)

    def markdown(self) -> str:
        return md_seed_line(self)


@dataclass(frozen=True)
class Measurement:
    """The final attempt of one kind (seeded or clean) within one run."""

    kind: str
    outcome: str
    recorded_at: str
    attempt: int
    notice: str | None
    recall: Rate | None            # seeded and scored only
    blocker: Rate | None           # seeded and scored only
    undercalled: int
    clean_false_positives: int | None  # clean and scored only
    gate_passed: bool
    gate_reasons: tuple[str, ...]
    seed_states: Mapping[int, str]  # n -> caught | undercalled | missed
    # n -> (the marker's severity, the severity the reviewer gave it, or "missed")
    seed_levels: Mapping[int, tuple[str, str]] = field(default_factory=dict)
    acknowledged: tuple[int, ...] = ()  # BLOCKERs missed but acknowledged (they did not fail the gate)

    @property
    def scored(self) -> bool:
        return self.outcome == "scored"


@dataclass(frozen=True)
class RunPoint:
    """One run of one target: its seeded and clean measurements side by side."""

    run_id: str
    recorded_at: str  # the earlier of its records: when the run happened
    fingerprint: str
    fingerprint_changed: bool  # differs from the previous run of the same target
    seeded: Measurement | None
    clean: Measurement | None

    @property
    def date(self) -> str:
        return self.recorded_at[:10]

    @property
    def gap(self) -> str | None:
        """``silent``, ``error``, ``cancelled`` (joined with ``/`` when the two PRs differ)
        when any PR of the run measured nothing; None for a fully scored run."""
        outcomes = sorted({m.outcome for m in (self.seeded, self.clean) if m is not None and not m.scored})
        return "/".join(outcomes) or None

    @property
    def gate_passed(self) -> bool:
        return all(m.gate_passed for m in (self.seeded, self.clean) if m is not None)

    @property
    def acknowledged(self) -> tuple[int, ...]:
        return self.seeded.acknowledged if self.seeded is not None else ()

    @property
    def gate_reasons(self) -> tuple[str, ...]:
        out: list[str] = []
        for m in (self.seeded, self.clean):
            if m is not None and not m.gate_passed:
                out += [f"{m.kind}: {r}" for r in m.gate_reasons] or [f"{m.kind}: failed"]
        return tuple(out)


@dataclass(frozen=True)
class SeedRow:
    """One heat-map row: a seed's state in every seeded run of its target."""

    seed: SeedRef
    cells: tuple[str, ...]  # aligned with TargetReport.seeded_runs
    seed_class: str
    caught: int
    undercalled: int
    missed: int

    @property
    def observed(self) -> int:
        return self.caught + self.undercalled + self.missed


@dataclass
class TargetReport:
    repo: str
    stack: str
    reviewer: str
    runs: list[RunPoint]
    seeds: list[SeedRow] = field(default_factory=list)

    @property
    def label(self) -> str:
        return f"{self.repo} · {self.stack} · {self.reviewer}"

    @property
    def latest(self) -> RunPoint:
        return self.runs[-1]

    @property
    def seeded_runs(self) -> list[RunPoint]:
        return [r for r in self.runs if r.seeded is not None]

    @property
    def gaps(self) -> dict[str, int]:
        """How many runs of each gap kind the window holds (see :attr:`RunPoint.gap`)."""
        out: dict[str, int] = {}
        for r in self.runs:
            if r.gap:
                out[r.gap] = out.get(r.gap, 0) + 1
        return out


@dataclass(frozen=True)
class ReviewerSummary:
    """One reviewer's seeded runs on one (stack, corpus fingerprint)."""

    reviewer: str
    repos: tuple[str, ...]
    runs: int                       # scored seeded runs
    gaps: int                       # silent / error / cancelled seeded runs
    latest_run_id: str
    latest_at: str
    latest_recall: Rate
    latest_blocker: Rate
    seed_counts: Mapping[int, tuple[int, int]]  # n -> (caught, observed) over all runs


@dataclass(frozen=True)
class SeedDiff:
    seed: SeedRef
    a: tuple[int, int]  # (caught, observed) for reviewer a
    b: tuple[int, int]
    diff: float         # catch rate a − catch rate b


@dataclass(frozen=True)
class PairedDiff:
    """Two reviewers compared seed by seed on the same corpus.

    Each seed is a pair of observations (its catch rate under ``a`` and under ``b``), so
    the comparison is paired: differences in which seeds a corpus contains cancel out.
    ``sign_test_p`` is the exact two-sided sign test over the seeds where the two rates
    differ: a small p says the difference is unlikely to be a coin toss per seed.
    """

    a: str
    b: str
    seeds_compared: int
    a_better: int
    b_better: int
    tied: int
    mean_diff: float | None
    sign_test_p: float | None
    differing: tuple[SeedDiff, ...]


@dataclass
class Comparison:
    """Several reviewers measured on the same stack and corpus fingerprint."""

    stack: str
    fingerprint: str
    reviewers: list[ReviewerSummary]
    pairs: list[PairedDiff]

    @property
    def latest_at(self) -> str:
        return max(s.latest_at for s in self.reviewers)


@dataclass
class Report:
    targets: list[TargetReport]
    comparisons: list[Comparison]
    records_used: int
    skipped: list[str]
    since: str | None
    first: str | None
    last: str | None
    calibration: Mapping[str, Mapping[str, Mapping[str, int]]] = field(default_factory=dict)
    # Rows of an imported Redline history (legacy_model.legacy_rows): a separate series, shown apart.
    legacy: list[list[str]] = field(default_factory=list)


# --------------------------------------------------------------------------- reading

# ``Record.from_json`` has checked every type; what is left is what the scoreboard needs
# beyond the schema: text it can name a row by, and places it can point to.


def _text(value: str, key: str) -> str:
    if not value:
        raise RecordError(f"{key} is not a non-empty string")
    return value


def _seed(s: Seed, stack: str, key: str) -> SeedRef:
    try:
        if s.line < 0:
            raise RecordError(f"{key}[].line is not a non-negative integer")
        return SeedRef(stack, s.n, _text(s.path, "path"), s.line, _text(s.severity, "severity"),
                       _text(s.rule, "rule"), s.description or "")
    except RecordError as exc:
        raise RecordError(f"{key}[]: {exc}") from None


UNRECORDED = "not recorded"  # schema 1 records kept no evidence of the level given


def _level_given(seed: Seed, state: str) -> str:
    if state == "missed":
        return "missed"
    evidence = seed.evidence
    level = evidence.severity if evidence is not None else None
    return level if level is not None and level in SEVERITY_NAMES else (
        "unrated" if evidence is not None else UNRECORDED)


CALIBRATION_COLUMNS = (*SEVERITY_NAMES, "unrated", UNRECORDED, "missed")


def calibration_view(table: Mapping[str, Mapping[str, int]]) -> tuple[list[str], list[list[str]]]:
    """One reviewer's calibration as (header, rows of cells): the marker severities that occur,
    the columns that hold a count, "·" for none, and n; both renderers draw this."""
    rows = [(sev, [int(table[sev].get(col, 0)) for col in CALIBRATION_COLUMNS])
            for sev in SEVERITY_NAMES if sev in table]
    used = [i for i, _ in enumerate(CALIBRATION_COLUMNS) if any(r[1][i] for r in rows)]
    head = ["marked \\ given", *(CALIBRATION_COLUMNS[i] for i in used), "n"]
    cells = [[sev, *(str(counts[i]) if counts[i] else "·" for i in used), str(sum(counts))]
             for sev, counts in rows]
    return head, cells


def calibration(targets: Sequence[TargetReport]) -> dict[str, dict[str, dict[str, int]]]:
    """Per reviewer, how its levels met the markers' (DESIGN §6 found vs rated): counts of
    (marker severity, severity given or missed) over every final seeded run in the window."""
    table: dict[str, dict[str, dict[str, int]]] = {}
    for t in targets:
        for run in t.seeded_runs:
            m = run.seeded
            if m is None or not m.scored:
                continue
            rows = table.setdefault(t.reviewer, {})
            for marked, given in m.seed_levels.values():
                row = rows.setdefault(marked, {})
                row[given] = row.get(given, 0) + 1
    return table


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
    recall = blocker = None
    scored = outcome == "scored"
    if kind == "seeded" and scored:
        recall = Rate(r.caught, r.markers, r.recall_ci95 or wilson(r.caught, r.markers))
        b = r.blocker
        blocker = Rate(b.caught, b.markers, r.blocker_recall_ci95 or wilson(b.caught, b.markers))
    cfp = None
    if kind == "clean" and scored:
        if r.clean_false_positives is None:
            raise RecordError("clean_false_positives is not a non-negative integer")
        cfp = r.clean_false_positives
    m = Measurement(
        kind=kind, outcome=outcome, recorded_at=_text(r.recorded_at, "recorded_at"),
        attempt=r.attempt, notice=r.notice or None,
        recall=recall, blocker=blocker,
        undercalled=r.undercalled if scored else 0,
        clean_false_positives=cfp, gate_passed=r.gate.passed,
        gate_reasons=r.gate.reasons,
        acknowledged=r.gate.acknowledged,
        seed_states=states if scored else {},
        seed_levels=levels if scored and kind == "seeded" else {},
    )
    return m, seeds


def describe(record: Record) -> str:
    """How a skipped record is named when it has no line number to hand (one line, no
    control characters: the values are the record's own)."""
    keys = ("run_id", "repo", "stack", "kind", "reviewer")
    return "record " + " ".join(f"{k}={terminal_safe(getattr(record, k))[:80]}" for k in keys)


# --------------------------------------------------------------------------- building


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
        except RecordError as exc:
            skipped.append(f"{describe(r)}: {exc}")
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
        targets=targets, comparisons=_comparisons(targets, refs), records_used=used,
        skipped=skipped, since=since, first=min(stamps, default=None), last=max(stamps, default=None),
        calibration=calibration(targets),
    )


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


def sign_test(wins: int, losses: int) -> float | None:
    """Exact two-sided sign test (binomial, p = ½); None when there is nothing to test."""
    total = wins + losses
    if not total:
        return None
    tail = sum(math.comb(total, i) for i in range(min(wins, losses) + 1))
    return min(1.0, float(2 * tail / 2**total))


def _comparisons(targets: Sequence[TargetReport],
                 refs: Mapping[tuple[str, int], SeedRef]) -> list[Comparison]:
    by_corpus: dict[tuple[str, str], dict[str, list[tuple[str, RunPoint]]]] = {}
    for t in targets:
        for run in t.seeded_runs:
            by_corpus.setdefault((t.stack, run.fingerprint), {}).setdefault(t.reviewer, []).append(
                (t.repo, run))
    out: list[Comparison] = []
    for (stack, fp), reviewers in sorted(by_corpus.items()):
        summaries = [s for s in (_summary(name, runs) for name, runs in sorted(reviewers.items()))
                     if s is not None]
        if len(summaries) < 2:
            continue
        pairs = [_paired(a, b, stack, refs) for i, a in enumerate(summaries) for b in summaries[i + 1:]]
        out.append(Comparison(stack, fp, summaries, pairs))
    # Per stack, the corpus measured most recently first: that is the one people act on.
    out.sort(key=lambda c: c.latest_at, reverse=True)
    out.sort(key=lambda c: c.stack)
    return out


def _summary(reviewer: str, runs: Sequence[tuple[str, RunPoint]]) -> ReviewerSummary | None:
    scored = sorted(((repo, r) for repo, r in runs if r.seeded is not None and r.seeded.scored),
                    key=lambda x: (x[1].recorded_at, x[1].run_id))
    if not scored:
        return None
    counts: dict[int, list[int]] = {}
    for _, run in scored:
        assert run.seeded is not None
        for n, state in run.seeded.seed_states.items():
            c = counts.setdefault(n, [0, 0])
            c[0] += state == "caught"
            c[1] += 1
    latest = scored[-1][1].seeded
    assert latest is not None and latest.recall is not None and latest.blocker is not None
    return ReviewerSummary(
        reviewer=reviewer, repos=tuple(sorted({repo for repo, _ in runs})), runs=len(scored),
        gaps=sum(1 for _, r in runs if r.seeded is not None and not r.seeded.scored),
        latest_run_id=scored[-1][1].run_id, latest_at=scored[-1][1].recorded_at,
        latest_recall=latest.recall, latest_blocker=latest.blocker,
        seed_counts={n: (c[0], c[1]) for n, c in sorted(counts.items())},
    )


def _paired(a: ReviewerSummary, b: ReviewerSummary, stack: str,
            refs: Mapping[tuple[str, int], SeedRef]) -> PairedDiff:
    common = sorted(set(a.seed_counts) & set(b.seed_counts))
    diffs = []
    for n in common:
        ca, cb = a.seed_counts[n], b.seed_counts[n]
        diffs.append(SeedDiff(refs[(stack, n)], ca, cb, ca[0] / ca[1] - cb[0] / cb[1]))
    a_better = sum(d.diff > 0 for d in diffs)
    b_better = sum(d.diff < 0 for d in diffs)
    return PairedDiff(
        a=a.reviewer, b=b.reviewer, seeds_compared=len(diffs), a_better=a_better, b_better=b_better,
        tied=len(diffs) - a_better - b_better,
        mean_diff=sum(d.diff for d in diffs) / len(diffs) if diffs else None,
        sign_test_p=sign_test(a_better, b_better),
        differing=tuple(sorted((d for d in diffs if d.diff), key=lambda d: (-abs(d.diff), d.seed.n))),
    )


def to_json(report: Report) -> dict[str, Any]:
    """The report as plain JSON data (``report --json``); derived values made explicit."""
    data = asdict(report)
    for t_json, t in zip(data["targets"], report.targets, strict=True):
        t_json["label"] = t.label
        t_json["gaps"] = t.gaps
        t_json["seeded_run_ids"] = [r.run_id for r in t.seeded_runs]
        for run_json, run in zip(t_json["runs"], t.runs, strict=True):
            run_json["gap"] = run.gap
            run_json["gate_passed"] = run.gate_passed
    return data
