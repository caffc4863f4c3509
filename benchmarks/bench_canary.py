"""The canary's own operating characteristic (docs/matching.md#operating-characteristic).

A canary is worth keeping only if it stays green while the reviewer works and turns red
when it breaks. From real reviews (the answer-key audit's blind reviews under
``seeds/audit/``, each by an independent strong reviewer), with the default options:

* **false alarms**: a healthy week after a healthy week by a *different* reviewer (the
  first week in the history, ``--baseline window:4``), each healthy week on its own, and
  every clean twin's review;
* **detection**: degraded copies of the same healthy reviews (nothing said; a skip notice;
  security findings dropped; every severity collapsed to the lowest; every line shifted;
  half the findings dropped; the findings only in a summary without locations), each
  judged after the healthy week in the history. A degradation is caught when the gate
  fails or the PR ends silent.

Goal: at most 1 false alarm in 18 per kind, at least 95 % of each degradation caught.
``--quick`` runs three stacks (CI); the full run prints the README's table.
Run: ``python benchmarks/bench_canary.py [--quick] [--json]``
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from redline_canary import __version__
from redline_canary.corpus.model import CorpusData
from redline_canary.corpus.severity import Severity
from redline_canary.corpus.topics import TopicIndex
from redline_canary.review.extraction import Extraction
from redline_canary.review.findings import Finding
from redline_canary.review.findings_file import parse_findings
from redline_canary.run.corpus_files import load_corpus
from redline_canary.score.evaluate import ScoreSettings, evaluate_extraction
from redline_canary.score.record import Record
from redline_canary.score.scoring import RecordMeta
from redline_canary.score.verdict import BLOCKER_GATES, BlockerGate, GateOptions, decide

ROOT = Path(__file__).resolve().parent.parent
AUDIT = ROOT / "seeds" / "audit"
FINAL_WAVES = 7  # waves 7 onwards are the final measurement, by reviewers who took no part in fixes
HALF_DRAWS = 5
SHIFT = 25  # lines: well past the window and any extent
QUICK_STACKS = ("python", "go", "vue")


@dataclass(frozen=True)
class Review:
    review: str
    wave: int
    stack: str
    kind: str
    findings: tuple[Finding, ...]


def reviews(stacks: Sequence[str]) -> list[Review]:
    """The final-measurement reviews: seeded reviews from wave 7 on, and each clean twin's
    latest pair (the wave that measured it after its last change)."""
    out = []
    entries = [e for e in json.loads((AUDIT / "index.json").read_text(encoding="utf-8"))
               if e["stack"] in stacks and e["wave"] >= FINAL_WAVES]
    latest_clean = {}
    for e in entries:
        if e["kind"] == "clean":
            latest_clean[e["stack"]] = max(latest_clean.get(e["stack"], 0), e["wave"])
    for entry in entries:
        if entry["kind"] == "clean" and entry["wave"] != latest_clean[entry["stack"]]:
            continue
        doc = json.loads((AUDIT / entry["file"]).read_text(encoding="utf-8"))
        out.append(Review(entry["review"], entry["wave"], entry["stack"], entry["kind"], tuple(parse_findings(doc))))
    return out


def record_of(corpus: CorpusData, review: Review, extraction: Extraction, run: str, day: int,
              reviewer: str = "strong-reviewer") -> Record:
    meta = RecordMeta(run_id=run, recorded_at=f"2026-11-{day:02d}T06:17:00Z", repo="acme/canary",
                      tool_version=__version__, reviewer=reviewer)
    settings = ScoreSettings(stack=review.stack, kind=review.kind)
    _score, record = evaluate_extraction(extraction, corpus, settings, reviewer, meta)
    return record


def healthy(review: Review) -> Extraction:
    return Extraction(findings=list(review.findings), activity=max(1, len(review.findings)))


def passes(record: Record, gate: BlockerGate, history: Sequence[Record] = (), baseline: str | None = None) -> bool:
    verdict = decide(record, GateOptions(baseline=baseline, blocker_gate=gate), history=list(history))
    return record.outcome == "scored" and verdict.passed


# --- degradations -----------------------------------------------------------------
Degrade = Callable[[Review, random.Random, TopicIndex, CorpusData], Extraction]


def nothing(review: Review, _rng: random.Random, _t: TopicIndex, _c: CorpusData) -> Extraction:
    return Extraction()


def skip_notice(review: Review, _rng: random.Random, _t: TopicIndex, _c: CorpusData) -> Extraction:
    notice = "Review skipped: this pull request exceeds the monthly review quota of your plan."
    return Extraction(activity=1, signals=[("skipped", notice)])


def security_dropped(review: Review, _rng: random.Random, topics: TopicIndex, corpus: CorpusData) -> Extraction:
    security = {r for r, rule in corpus.rules.items() if rule.severity == Severity.BLOCKER}
    kept = [f for f in review.findings if not (topics.topics(f.body) & security)]
    return Extraction(findings=kept, activity=max(1, len(kept)))


def collapsed(review: Review, _rng: random.Random, _t: TopicIndex, _c: CorpusData) -> Extraction:
    low = [replace(f, severity=Severity.INFO, word="low") for f in review.findings]
    return Extraction(findings=low, activity=max(1, len(low)))


def shifted(review: Review, _rng: random.Random, _t: TopicIndex, _c: CorpusData) -> Extraction:
    moved = [replace(f, start=f.start + SHIFT if f.start is not None else None,
                     end=f.end + SHIFT if f.end is not None else None) for f in review.findings]
    return Extraction(findings=moved, activity=max(1, len(moved)))


def half(review: Review, rng: random.Random, _t: TopicIndex, _c: CorpusData) -> Extraction:
    kept = [f for f in review.findings if rng.random() < 0.5]
    return Extraction(findings=kept, activity=max(1, len(review.findings)))


def summary_only(review: Review, _rng: random.Random, _t: TopicIndex, _c: CorpusData) -> Extraction:
    """One summary body listing everything with no path or line: nothing a profile can mine."""
    return Extraction(findings=[], activity=1, signals=[("done", "Reviewed: " + "; ".join(
        (f.body.splitlines() or [""])[0][:60] for f in review.findings))])


DEGRADATIONS: tuple[tuple[str, Degrade, int], ...] = (
    ("nothing said", nothing, 1), ("a skip notice", skip_notice, 1),
    ("security findings dropped", security_dropped, 1), ("severities collapsed to the lowest", collapsed, 1),
    (f"every line shifted by {SHIFT}", shifted, 1), ("half the findings dropped", half, HALF_DRAWS),
    ("findings only in a summary without locations", summary_only, 1),
)


def measure(corpus: CorpusData, stacks: Sequence[str], gate: BlockerGate = "found") -> dict[str, tuple[int, int]]:
    """The figures under the gate rule ``gate`` (``found``, the default; ``caught``, the strict one)."""
    topics = TopicIndex.of(corpus.rules)
    all_reviews = reviews(stacks)
    out: dict[str, tuple[int, int]] = {}
    seeded = {s: sorted((r for r in all_reviews if r.stack == s and r.kind == "seeded"), key=lambda r: r.wave)
              for s in stacks}
    weeks = {s: rs[:2] for s, rs in seeded.items() if len(rs) >= 2}

    alone = [r for rs in seeded.values() for r in rs]
    red = sum(not passes(record_of(corpus, r, healthy(r), f"w-{r.review}", 1), gate) for r in alone)
    out["healthy seeded review, on its own"] = (red, len(alone))
    alarms = 0
    for _stack, (first, second) in weeks.items():
        history = [record_of(corpus, first, healthy(first), "week-1", 1)]
        now = record_of(corpus, second, healthy(second), "week-2", 8)
        alarms += not passes(now, gate, history, "window:4")
    out["healthy week after a healthy week (another reviewer, window:4)"] = (alarms, len(weeks))
    clean = [r for r in all_reviews if r.kind == "clean"]
    twins = {r.stack for r in clean}
    flagged = {r.stack for r in clean if not passes(record_of(corpus, r, healthy(r), f"c-{r.review}", 1), gate)}
    out["clean twin (its latest pair of reviews: red if either flags it)"] = (len(flagged), len(twins))

    rng = random.Random(20261207)
    for name, degrade, draws in DEGRADATIONS:
        caught = total = 0
        for _stack, (first, second) in weeks.items():
            history = [record_of(corpus, first, healthy(first), "week-1", 1)]
            for _ in range(draws):
                now = record_of(corpus, second, degrade(second, rng, topics, corpus), "week-2", 8)
                caught += not passes(now, gate, history, "window:4")
                total += 1
        out[f"degraded: {name}"] = (caught, total)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help=f"only {', '.join(QUICK_STACKS)} (CI)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--blocker-gate", choices=BLOCKER_GATES, default="found",
                        help="the gate rule to measure (default: %(default)s, the product's default)")
    args = parser.parse_args(argv)
    corpus = load_corpus(ROOT / "seeds")
    stacks = QUICK_STACKS if args.quick else tuple(corpus.stacks)
    started = time.monotonic()
    figures = measure(corpus, stacks, args.blocker_gate)
    if args.json:
        print(json.dumps({k: {"count": c, "n": n} for k, (c, n) in figures.items()}, indent=1))
        return 0
    print(f"redline-canary operating characteristic: {len(stacks)} stack(s), blocker-gate {args.blocker_gate}, "
          f"default options ({time.monotonic() - started:.1f}s)")
    print("| kind | red (false alarm) or caught | rate | goal |")
    print("|---|---|---|---|")
    for name, (count, n) in figures.items():
        goal = "≥ 95 % caught" if name.startswith("degraded") else "≤ 1 in 18 red"
        rate = f"{count / n:.0%}" if n else "n/a"
        print(f"| {name} | {count}/{n} | {rate} | {goal} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
