"""The slow, obviously right optimum the matcher is cross-checked against: every one-to-one
assignment tried, the best objective kept."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from redline_canary.corpus.publication import PublishedMarker
from redline_canary.review.findings import Finding

Pairs = list[tuple[Finding, PublishedMarker]]


def brute_optimum(markers: Sequence[PublishedMarker], findings: Sequence[Finding],
                  eligible: Callable[[Finding, PublishedMarker], bool],
                  objective: Callable[[Pairs], tuple[int, ...]]) -> tuple[int, ...]:
    best: tuple[int, ...] | None = None

    def rec(i: int, used: set[int], pairs: Pairs) -> None:
        nonlocal best
        if i == len(findings):
            obj = objective(pairs)
            best = obj if best is None or obj > best else best
            return
        rec(i + 1, used, pairs)
        for j, m in enumerate(markers):
            if j not in used and eligible(findings[i], m):
                rec(i + 1, used | {j}, [*pairs, (findings[i], m)])

    rec(0, set(), [])
    assert best is not None
    return best
