"""The scoreboard's data: the types :mod:`report_build` fills from history records. Pure.

Why a separate core: the same numbers feed the Markdown job summary, the static HTML
folder and ``report --json``. The rooms: this module holds the types (and their JSON);
:mod:`report_build` reads records into them and groups runs; :mod:`report_stats` holds
the statistics across runs and reviewers (calibration, paired comparison);
:mod:`report_markdown` and :mod:`report_html` draw them. None does I/O.

Vocabulary used below:

* **target** — one (repo, stack, reviewer): the unit a canary measures (docs/architecture.md).
* **run** — every record of one target that shares a ``run_id``; per kind only the
  highest ``attempt`` counts (a confirmation re-run supersedes, as ``gate`` decides).
* **gap** — a run whose outcome is ``silent``, ``error`` or ``cancelled``. Nothing was
  measured, so it is drawn as a labelled hole, never as a zero.
* **window** — the records given to :func:`report_build.build_report` (after ``since``). Seed
  classes are computed over the window only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from redline_canary.corpus.model import CANONICAL, PACKAGED
from redline_canary.report.gap import Observation
from redline_canary.report.text import fmt_rate, md_seed_line, seed_line
from redline_canary.score.record import Outcome, PRKind

# The seed classes are the gate's (a rolling baseline fails on "newly missed"): one definition.
from redline_canary.score.verdict import ALWAYS_CAUGHT as ALWAYS_CAUGHT
from redline_canary.score.verdict import INTERMITTENT as INTERMITTENT
from redline_canary.score.verdict import NEVER_CAUGHT as NEVER_CAUGHT
from redline_canary.score.verdict import NEWLY_MISSED as NEWLY_MISSED
from redline_canary.score.verdict import SEED_CLASSES as SEED_CLASSES
from redline_canary.score.verdict import classify as classify

GAP_OUTCOMES: tuple[Outcome, ...] = ("silent", "error", "cancelled")
SEED_STATES = ("caught", "undercalled", "missed")
NONE = "none"  # the seed was not measured in that run (gap, or not in that corpus)
UNRECORDED = "not recorded"  # schema 1 records kept no evidence of the level given


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

    kind: PRKind
    outcome: Outcome
    recorded_at: str
    attempt: int
    notice: str | None
    recall: Rate | None            # seeded and scored only
    blocker: Rate | None           # seeded and scored only: rated BLOCKER
    undercalled: int
    clean_false_positives: int | None  # clean and scored only
    gate_passed: bool
    gate_reasons: tuple[str, ...]
    seed_states: Mapping[int, str]  # n -> caught | undercalled | missed
    # n -> (the marker's severity, the severity the reviewer gave it, or "missed")
    seed_levels: Mapping[int, tuple[str, str]] = field(default_factory=dict)
    acknowledged: tuple[int, ...] = ()  # BLOCKERs missed but acknowledged (they did not fail the gate)
    found: Rate | None = None  # seeded and scored only: BLOCKERs found (the gate's number)
    layer: str = PACKAGED  # the corpus layer and the variant the PR was measured on (written when used)
    variant: str = CANONICAL

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
    latest_found: Rate | None = None  # BLOCKERs found in the latest run

    def blockers_text(self) -> str:
        """"found 6/6 · rated BLOCKER 4/6 (...)": the gate's number beside the marked-severity one."""
        found = f"found {self.latest_found.successes}/{self.latest_found.n} · " if self.latest_found else ""
        return f"{found}rated BLOCKER {self.latest_blocker.text()}"


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
    # Every final scored seeded run, for the public/private and canonical/variant gap (report.gap).
    observations: list[Observation] = field(default_factory=list)


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
