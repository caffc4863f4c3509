"""The scoreboard's statistics across runs and reviewers: calibration and paired comparison. Pure.

Why apart from building: these are the numbers a reader may want to argue with (an exact
sign test, a catch rate per seed), so they sit in one small room with nothing else.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from redline_canary.corpus.severity import SEVERITY_NAMES
from redline_canary.report.model import (
    UNRECORDED,
    Comparison,
    PairedDiff,
    ReviewerSummary,
    RunPoint,
    SeedDiff,
    SeedRef,
    TargetReport,
)

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
    """Per reviewer, how its levels met the markers' (docs/matching.md found vs rated): counts of
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


def sign_test(wins: int, losses: int) -> float | None:
    """Exact two-sided sign test (binomial, p = ½); None when there is nothing to test."""
    total = wins + losses
    if not total:
        return None
    tail = sum(math.comb(total, i) for i in range(min(wins, losses) + 1))
    return min(1.0, float(2 * tail / 2**total))


def comparisons(targets: Sequence[TargetReport],
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
        latest_recall=latest.recall, latest_blocker=latest.blocker, latest_found=latest.found,
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
