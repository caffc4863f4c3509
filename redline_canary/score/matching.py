"""The one-to-one assignment of findings to markers (docs/matching.md#assignment). Pure and exact.

Off-topic pairs (a finding that speaks of other rules only, :mod:`corpus.topics`) are never
eligible. The objective is lexicographic: caught pairs, then caught pairs that are on-topic
(a citation of the rule id is the strongest topic: what a finding is about outranks any
preference between defects), then caught pairs by marker severity (BLOCKER first), then
all pairs ("located"), then located pairs that are on-topic, then least total distance to
the markers' nearest places (extent or sites). A finding without topics scores exactly as
before topics existed: both topic levels are 0 for it.
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
from dataclasses import dataclass, field

from redline_canary.corpus.publication import Place, PublishedMarker
from redline_canary.corpus.severity import SCALE
from redline_canary.corpus.topics import NO_TOPICS, TopicIndex
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
    on_topic: bool = False  # the finding speaks of the marker's rule (False: it names no rule)


@dataclass(frozen=True)
class Edge:
    """One eligible (finding, marker) pair: its objective levels and what they stand for."""

    levels: tuple[int, ...]
    distance: int
    caught: bool
    cited: bool
    on_topic: bool


@dataclass
class Assignment:
    pairs: list[Pair]
    duplicates: list[Finding]
    borderline: list[Finding]
    noise: list[Finding]
    # Findings on a clean twin that carries FIXED places, outside every one of them: that
    # code is real code nobody audited, so they are reported, never counted
    # (docs/corpus.md#fixed-places).
    outside_fix: list[Finding] = field(default_factory=list)


def distance(start: int, end: int, line: int, last: int | None = None) -> int:
    """Lines between a finding's range and a marker's extent ``[line, last]``; 0 if they overlap."""
    last = line if last is None else last
    if start <= last and line <= end:
        return 0
    return line - end if end < line else start - last


def names_symbol(body: str, symbol: str) -> bool:
    return re.search(rf"(?<![\w$]){re.escape(symbol)}(?![\w$])", body) is not None


class _PathIndex:
    """Every place of every marker (its extent and its sites) grouped by path and sorted by
    line, for window look-ups."""

    def __init__(self, markers: Sequence[PublishedMarker]) -> None:
        by_path: dict[str, list[tuple[Place, PublishedMarker]]] = defaultdict(list)
        for m in markers:
            for place in m.places:
                by_path[place.path].append((place, m))
        self.by_path = {p: sorted(ps, key=lambda e: (e[0].line, e[1].marker.n)) for p, ps in by_path.items()}
        self.lines = {p: [place.line for place, _m in ps] for p, ps in self.by_path.items()}
        self.longest = {p: max(place.end_line - place.line for place, _m in ps) for p, ps in self.by_path.items()}
        self.structural: dict[str, list[PublishedMarker]] = defaultdict(list)
        for m in markers:
            if m.marker.symbol:
                self.structural[m.path].append(m)

    def eligible(self, f: Finding, window: int) -> dict[int, tuple[PublishedMarker, int]]:
        """id(marker) -> (marker, distance to its nearest place) for every marker ``f`` is
        window-eligible to, before topics are considered."""
        found: dict[int, tuple[PublishedMarker, int]] = {}
        if f.path is None:
            return found
        located = f.line_scoped and f.start is not None and f.end is not None
        if located and f.path in self.by_path:
            assert f.start is not None and f.end is not None
            entries = self.by_path[f.path]
            lines = self.lines[f.path]
            lo = bisect.bisect_left(lines, f.start - window - self.longest[f.path])
            hi = bisect.bisect_right(lines, f.end + window)
            for place, m in entries[lo:hi]:
                d = distance(f.start, f.end, place.line, place.end_line)
                if d <= window and (id(m) not in found or d < found[id(m)][1]):
                    found[id(m)] = (m, d)
        for m in self.structural.get(f.path, ()):
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
    topics: TopicIndex = NO_TOPICS,
) -> Assignment:
    """The optimal assignment, independent of the order of ``markers`` and ``findings``.

    ``topics`` decides what each finding is about: a pair whose finding speaks of other
    rules only is never eligible (docs/matching.md#eligibility)."""
    seeds = sorted((m for m in markers if m.marker.kind == "seed"),
                   key=lambda m: (m.path, m.line, m.marker.n))
    borderlines = [m for m in markers if m.marker.kind == "borderline"]
    fixed = [m for m in markers if m.marker.kind == "fixed"]
    fixed_index = _PathIndex(fixed) if fixed else None
    ordered = sorted(findings, key=Finding.sort_key)
    seed_index = _PathIndex(seeds)
    border_index = _PathIndex(borderlines)
    rank = {id(m): i for i, m in enumerate(seeds)}

    # edges[finding index] = {marker rank: (weight vector, distance, caught, cited, on topic)}
    edges: list[dict[int, Edge]] = []
    seen: dict[str, frozenset[str]] = {}  # a body's topics, computed once (a flood repeats bodies)
    for f in ordered:
        row: dict[int, Edge] = {}
        near = seed_index.eligible(f, window)
        about: frozenset[str] = frozenset()
        if near:
            if f.body not in seen:
                seen[f.body] = topics.topics(f.body)
            about = seen[f.body]
        for key, (m, d) in near.items():
            cited = f.rule == m.marker.rule or (cites is not None and cites(f.body, m.marker.rule))
            on_topic = cited or m.marker.rule in about
            if about and not on_topic:
                continue  # off-topic: about another problem, however near
            caught = _severity_eligible(f, m)
            levels = (
                int(caught),
                int(caught and on_topic),
                *(int(caught and m.marker.severity == s) for s in SCALE),
                1,
                int(m.marker.rule in about),  # 0 for a finding without topics: the old objective
            )
            row[rank[key]] = Edge(levels, d, caught, caught and cited, on_topic)
        edges.append(row)

    chosen = _solve(len(seeds), edges)
    pairs: list[Pair] = []
    assigned: set[int] = set()
    for fi, mi in sorted(chosen.items()):
        e = edges[fi][mi]
        pairs.append(Pair(ordered[fi], seeds[mi], e.caught, e.cited, e.distance, e.on_topic))
        assigned.add(fi)
    result = Assignment(pairs, [], [], [])
    for fi, f in enumerate(ordered):
        if fi in assigned:
            continue
        if edges[fi]:
            result.duplicates.append(f)
        elif border_index.eligible(f, window):
            result.borderline.append(f)
        elif fixed_index is not None and not fixed_index.eligible(f, window):
            result.outside_fix.append(f)
        else:
            result.noise.append(f)
    return result


def _solve(
    n_markers: int, edges: list[dict[int, Edge]]
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
    finding_ids: list[int], edges: list[dict[int, Edge]]
) -> dict[int, int]:
    marker_ids = sorted({mi for fi in finding_ids for mi in edges[fi]})
    n = len(marker_ids)
    k = min(n, len(finding_ids))
    dmax = max(e.distance for fi in finding_ids for e in edges[fi].values()) + 1

    def weight(levels: tuple[int, ...], d: int) -> int:
        w = 0
        for v in levels:
            w = w * (k + 1) + v
        return w * (k * dmax + 1) + (dmax - d)

    weights = {
        (fi, mi): weight(e.levels, e.distance)
        for fi in finding_ids
        for mi, e in edges[fi].items()
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

