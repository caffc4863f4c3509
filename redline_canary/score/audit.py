"""The adjudication worklist of a corpus audit (seeds/RUBRIC.md, docs/corpus.md#rubric). Pure.

A blind review scored against the key leaves four kinds of finding the score could not
account for, and each one is a question about the key, not about the reviewer:

* ``clean``      a clean-twin finding at or above the floor, not at a borderline place:
                 either the twin still has a defect (fix it) or the finding is wrong (reject);
* ``noise``      a seeded-PR finding no marker took: an unmarked real defect (add a marker
                 or fix it) or a wrong finding;
* ``undercall``  a seed found within one line of its extent but rated lower: the marker's
                 severity may be above what the rubric supports;
* ``near-miss``  a seeded-PR finding just outside the window: the extent may be too short.

Entries at the same place (same corpus file, lines within ``GROUP_GAP``) from different
reviews are grouped, so one decision settles them all.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from redline_canary.corpus.publication import PublishedFile, PublishedMarker
from redline_canary.corpus.severity import Severity, at_or_above
from redline_canary.score.matching import distance
from redline_canary.score.record import PRKind, Record

CATEGORIES = ("clean", "noise", "undercall", "near-miss")
GROUP_GAP = 2
NEAR_MISS_EXTRA = 3


@dataclass(frozen=True)
class Published:
    """One stack/kind as the reviewer saw it: files (for the reverse line map) and markers."""

    files: Sequence[PublishedFile]
    markers: Sequence[PublishedMarker]
    fingerprint: str


@dataclass
class Entry:
    stack: str
    kind: PRKind
    category: str
    severity: str | None
    word: str
    pushed_path: str
    pushed_line: int | None
    corpus_path: str | None
    corpus_line: int | None
    excerpt: str
    reviewer: str
    run_id: str
    seed: int | None = None  # undercall / near-miss: the marker concerned
    marked: str | None = None  # the marker's severity
    distance: int | None = None
    group: str = ""

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Worklist:
    entries: list[Entry] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    reviews: int = 0

    def by_stack(self) -> dict[tuple[str, str], list[Entry]]:
        out: dict[tuple[str, str], list[Entry]] = {}
        for e in self.entries:
            out.setdefault((e.stack, e.kind), []).append(e)
        return out


def _corpus_place(files: Sequence[PublishedFile], path: str | None,
                  line: int | None) -> tuple[str | None, int | None]:
    """The corpus file and line a pushed place came from (the nearest kept line at or above)."""
    if path is None:
        return None, None
    for f in files:
        if f.path == path or path.endswith("/" + f.corpus_path) or f.corpus_path == path:
            if line is None:
                return f.corpus_path, None
            back = {pushed: corpus for corpus, pushed in f.line_map.items()}
            nearest = max((p for p in back if p <= line), default=None)
            return f.corpus_path, back[nearest] if nearest is not None else None
    return None, None


def worklist(
    records: Iterable[Record],
    published: Mapping[tuple[str, str], Published],
    *,
    window: int,
    floor: Severity,
) -> Worklist:
    """Every entry the rubric says to adjudicate, from scored records (schema 2)."""
    out = Worklist()
    for r in records:
        if r.outcome != "scored":
            continue
        stack, kind = r.stack, r.kind
        pub = published.get((stack, kind))
        if pub is None:
            out.warnings.append(f"{r.run_id}: stack {stack!r} is not in this corpus; skipped")
            continue
        out.reviews += 1
        if r.corpus_fingerprint != pub.fingerprint:
            out.warnings.append(
                f"{r.run_id} ({stack}/{kind}): scored with corpus {r.corpus_fingerprint}, "
                f"the corpus is now {pub.fingerprint}: places may have moved")
        if r.schema < 2:
            out.warnings.append(f"{r.run_id} ({stack}/{kind}): schema 1 record has no finding "
                                "texts; only undercalls are listed")
        who, run = r.reviewer, r.run_id
        seeds = [m for m in pub.markers if m.marker.kind == "seed"]
        for u in r.unmatched_findings:
            klass, sev = u.klass, u.severity
            path, line = u.path, u.line
            end = u.end_line or line
            cpath, cline = _corpus_place(pub.files, path, line)
            entry = functools.partial(Entry, stack=stack, kind=kind, severity=sev, word=u.word or "",
                                      pushed_path=str(path), pushed_line=line, corpus_path=cpath,
                                      corpus_line=cline, excerpt=u.excerpt or "", reviewer=who, run_id=run)
            if kind == "clean":
                if klass != "borderline" and at_or_above(sev, floor.name):
                    out.entries.append(entry(category="clean"))
                continue
            if klass != "noise":
                continue
            near = None
            if isinstance(line, int) and isinstance(end, int):
                gaps = [(distance(line, end, m.line, m.end_line), m) for m in seeds if m.path == path]
                close = [(d, m) for d, m in gaps if window < d <= window + NEAR_MISS_EXTRA]
                near = min(close, key=lambda x: (x[0], x[1].marker.n)) if close else None
            if near is not None:
                out.entries.append(entry(category="near-miss", seed=near[1].marker.n,
                                         marked=near[1].marker.severity.name, distance=near[0]))
            else:
                out.entries.append(entry(category="noise"))
        for s in r.undercalled_seeds:
            ev = s.evidence
            if ev is None or ev.distance is None or ev.distance > 1:
                continue
            out.entries.append(Entry(
                stack=stack, kind=kind, category="undercall", severity=ev.severity,
                word=ev.word or "", pushed_path=str(s.pushed_path),
                pushed_line=s.pushed_line, corpus_path=s.path,
                corpus_line=s.line, excerpt=ev.excerpt or "", reviewer=who,
                run_id=run, seed=s.n, marked=s.severity, distance=ev.distance))
    _group(out.entries)
    return out


def _group(entries: list[Entry]) -> None:
    """Label entries at one place (same stack, kind, file; lines within GROUP_GAP) alike."""
    order = sorted(range(len(entries)), key=lambda i: (
        entries[i].stack, entries[i].kind, entries[i].corpus_path or entries[i].pushed_path,
        entries[i].corpus_line or 0))
    label = 0
    last: tuple[str, str, str] | None = None
    last_line = -10**9
    for i in order:
        e = entries[i]
        place = (e.stack, e.kind, e.corpus_path or e.pushed_path)
        line = e.corpus_line or 0
        if place != last or line - last_line > GROUP_GAP:
            label += 1
        e.group = f"{e.stack}/{e.kind}#{label}"
        last, last_line = place, line
