"""The one-to-one assignment of findings to markers (docs/matching.md). Pure and exact.

The objective is lexicographic: caught pairs, then caught pairs citing the marker's rule
(a citation says which defect a finding is about, so it outranks any preference between
defects), then caught pairs by marker severity (BLOCKER first), then all pairs, then least
total distance to the markers' extents.
Each level is folded into one integer weight per edge with a base larger than anything
the lower levels can sum to, so a maximum-weight matching *is* the lexicographic optimum.
The graph splits into small components (markers linked by a shared eligible finding);
each is solved with the Hungarian algorithm on Python ints. A finding pool per marker is
cut to its best ``n`` candidates first, which keeps a pathological capture (hundreds of
comments on one line) small without changing the optimum.
"""

from __future__ import annotations

import bisect
import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from redline_canary.corpus.publication import PublishedMarker
from redline_canary.corpus.severity import SCALE
from redline_canary.review.findings import Finding
from redline_canary.score.defaults import default

DEFAULT_WINDOW = int(default("--window"))
# (body, rule id) -> does the body cite it; rule_ids.cite_rule unless a profile says otherwise.
CitesRule = Callable[[str, str], bool]


@dataclass(frozen=True)
class Pair:
    finding: Finding
    marker: PublishedMarker
    caught: bool
    cited: bool
    distance: int


@dataclass
class Assignment:
    pairs: list[Pair]
    duplicates: list[Finding]
    borderline: list[Finding]
    noise: list[Finding]


def distance(start: int, end: int, line: int, last: int | None = None) -> int:
    """Lines between a finding's range and a marker's extent ``[line, last]``; 0 if they overlap."""
    last = line if last is None else last
    if start <= last and line <= end:
        return 0
    return line - end if end < line else start - last


def names_symbol(body: str, symbol: str) -> bool:
    return re.search(rf"(?<![\w$]){re.escape(symbol)}(?![\w$])", body) is not None


class _PathIndex:
    """Markers of one kind grouped by path and sorted by line, for window look-ups."""

    def __init__(self, markers: Sequence[PublishedMarker]) -> None:
        by_path: dict[str, list[PublishedMarker]] = defaultdict(list)
        for m in markers:
            by_path[m.path].append(m)
        self.by_path = {p: sorted(ms, key=lambda m: (m.line, m.marker.n)) for p, ms in by_path.items()}
        self.lines = {p: [m.line for m in ms] for p, ms in self.by_path.items()}
        self.longest = {p: max(m.end_line - m.line for m in ms) for p, ms in self.by_path.items()}
        self.structural = {
            p: [m for m in ms if m.marker.symbol] for p, ms in self.by_path.items()
        }

    def eligible(self, f: Finding, window: int) -> dict[int, tuple[PublishedMarker, int]]:
        """id(marker) -> (marker, distance) for every marker ``f`` is window-eligible to."""
        found: dict[int, tuple[PublishedMarker, int]] = {}
        if f.path is None or f.path not in self.by_path:
            return found
        markers = self.by_path[f.path]
        located = f.line_scoped and f.start is not None and f.end is not None
        if located:
            assert f.start is not None and f.end is not None
            lines = self.lines[f.path]
            lo = bisect.bisect_left(lines, f.start - window - self.longest[f.path])
            hi = bisect.bisect_right(lines, f.end + window)
            for m in markers[lo:hi]:
                d = distance(f.start, f.end, m.line, m.end_line)
                if d <= window:
                    found[id(m)] = (m, d)
        for m in self.structural[f.path]:
            if id(m) not in found and m.marker.symbol and names_symbol(f.body, m.marker.symbol):
                located_at = f.start is not None and f.end is not None
                d = distance(f.start or 0, f.end or 0, m.line, m.end_line) if located_at else window + 1
                found[id(m)] = (m, d)
        return found


def _severity_eligible(f: Finding, m: PublishedMarker) -> bool:
    return f.severity is None or f.severity >= m.marker.severity


def assign(
    markers: Sequence[PublishedMarker],
    findings: Sequence[Finding],
    window: int = DEFAULT_WINDOW,
    cites: CitesRule | None = None,
) -> Assignment:
    """The optimal assignment, independent of the order of ``markers`` and ``findings``."""
    seeds = sorted((m for m in markers if m.marker.kind == "seed"),
                   key=lambda m: (m.path, m.line, m.marker.n))
    borderlines = [m for m in markers if m.marker.kind == "borderline"]
    ordered = sorted(findings, key=Finding.sort_key)
    seed_index = _PathIndex(seeds)
    border_index = _PathIndex(borderlines)
    rank = {id(m): i for i, m in enumerate(seeds)}

    # edges[finding index] = {marker rank: (weight vector, distance, caught, cited)}
    edges: list[dict[int, tuple[tuple[int, ...], int, bool, bool]]] = []
    for f in ordered:
        row: dict[int, tuple[tuple[int, ...], int, bool, bool]] = {}
        for key, (m, d) in seed_index.eligible(f, window).items():
            caught = _severity_eligible(f, m)
            cited = caught and (f.rule == m.marker.rule
                                or (cites is not None and cites(f.body, m.marker.rule)))
            levels = (
                int(caught),
                int(cited),
                *(int(caught and m.marker.severity == s) for s in SCALE),
                1,
            )
            row[rank[key]] = (levels, d, caught, cited)
        edges.append(row)

    chosen = _solve(len(seeds), edges)
    pairs: list[Pair] = []
    assigned: set[int] = set()
    for fi, mi in sorted(chosen.items()):
        _levels, d, caught, cited = edges[fi][mi]
        pairs.append(Pair(ordered[fi], seeds[mi], caught, cited, d))
        assigned.add(fi)
    result = Assignment(pairs, [], [], [])
    for fi, f in enumerate(ordered):
        if fi in assigned:
            continue
        if edges[fi]:
            result.duplicates.append(f)
        elif border_index.eligible(f, window):
            result.borderline.append(f)
        else:
            result.noise.append(f)
    return result


def _solve(
    n_markers: int, edges: list[dict[int, tuple[tuple[int, ...], int, bool, bool]]]
) -> dict[int, int]:
    """finding index -> marker index, maximising the lexicographic objective."""
    parent = list(range(n_markers))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for row in edges:
        ms = list(row)
        for other in ms[1:]:
            parent[find(other)] = find(ms[0])
    components: dict[int, list[int]] = defaultdict(list)
    for fi, row in enumerate(edges):
        if row:
            components[find(next(iter(row)))].append(fi)
    chosen: dict[int, int] = {}
    for finding_ids in components.values():
        chosen.update(_solve_component(finding_ids, edges))
    return chosen


def _solve_component(
    finding_ids: list[int], edges: list[dict[int, tuple[tuple[int, ...], int, bool, bool]]]
) -> dict[int, int]:
    marker_ids = sorted({mi for fi in finding_ids for mi in edges[fi]})
    n = len(marker_ids)
    k = min(n, len(finding_ids))
    dmax = max(d for fi in finding_ids for (_l, d, _c, _t) in edges[fi].values()) + 1

    def weight(levels: tuple[int, ...], d: int) -> int:
        w = 0
        for v in levels:
            w = w * (k + 1) + v
        return w * (k * dmax + 1) + (dmax - d)

    weights = {
        (fi, mi): weight(levels, d)
        for fi in finding_ids
        for mi, (levels, d, _c, _t) in edges[fi].items()
    }
    # Each marker needs at most its best n candidates: any optimum can be moved onto them.
    keep: set[int] = set()
    for mi in marker_ids:
        candidates = sorted((fi for fi in finding_ids if mi in edges[fi]),
                            key=lambda fi: (-weights[(fi, mi)], fi))
        keep.update(candidates[:n])
    cols = sorted(keep)
    if len(marker_ids) <= len(cols):
        rows_are_markers = True
        matrix = [[-weights.get((fi, mi), 0) for fi in cols] for mi in marker_ids]
    else:
        rows_are_markers = False
        matrix = [[-weights.get((fi, mi), 0) for mi in marker_ids] for fi in cols]
    picked = hungarian(matrix)
    chosen: dict[int, int] = {}
    for r, c in enumerate(picked):
        mi, fi = (marker_ids[r], cols[c]) if rows_are_markers else (marker_ids[c], cols[r])
        if (fi, mi) in weights:
            chosen[fi] = mi
    return chosen


def hungarian(cost: list[list[int]]) -> list[int]:
    """Minimum-cost assignment of every row (rows <= cols); returns the column per row."""
    n = len(cost)
    if n == 0:
        return []
    m = len(cost[0])
    inf = sum(abs(x) for row in cost for x in row) * 2 + 1
    u = [0] * (n + 1)
    v = [0] * (m + 1)
    p = [0] * (m + 1)
    way = [0] * (m + 1)
    for i in range(1, n + 1):
        p[0] = i
        j0 = 0
        minv = [inf] * (m + 1)
        used = [False] * (m + 1)
        while True:
            used[j0] = True
            i0 = p[j0]
            delta = inf
            j1 = 0
            row = cost[i0 - 1]
            ui0 = u[i0]
            for j in range(1, m + 1):
                if not used[j]:
                    cur = row[j - 1] - ui0 - v[j]
                    if cur < minv[j]:
                        minv[j] = cur
                        way[j] = j0
                    if minv[j] < delta:
                        delta = minv[j]
                        j1 = j
            for j in range(m + 1):
                if used[j]:
                    u[p[j]] += delta
                    v[j] -= delta
                else:
                    minv[j] -= delta
            j0 = j1
            if p[j0] == 0:
                break
        while True:
            j1 = way[j0]
            p[j0] = p[j1]
            j0 = j1
            if j0 == 0:
                break
    answer = [-1] * n
    for j in range(1, m + 1):
        if p[j]:
            answer[p[j] - 1] = j - 1
    return answer

