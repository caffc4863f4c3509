"""Reader agreement: does the matcher credit a comment to the defect a careful reader says it
describes? (docs/matching.md#topics)

``seeds/audit/judged/pairs.jsonl`` holds every window-eligible (marker, finding) pair of the
final-measurement seeded reviews (waves 7 to 12, from which the rule terms were written:
``authoring``) and of wave 13's fresh reviews (``held-out``: nothing was tuned on them),
each judged on-topic, partial or off by independent readers from the two texts alone
(``judge`` names the reader). This scores the same reviews with
today's matcher and prints, with n: off-topic pairs it credits (goal 0) and on-topic pairs
the place-only matcher credited that it no longer credits (goal at most 2 %).
Run: ``python benchmarks/bench_agreement.py [--quick]``
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from redline_canary.corpus.model import publish
from redline_canary.corpus.topics import TopicIndex
from redline_canary.review.findings_file import parse_findings
from redline_canary.run.corpus_files import load_corpus
from redline_canary.score.matching import assign

ROOT = Path(__file__).resolve().parent.parent
AUDIT = ROOT / "seeds" / "audit"
JUDGED = AUDIT / "judged" / "pairs.jsonl"


def report(name: str, pairs: list[dict[str, Any]], credited_now: set[tuple[str, int, int]]) -> None:
    """One set's figures: ``authoring`` pairs are from the reviews the terms were written
    from; ``held-out`` pairs are from reviews nobody tuned anything on (wave 13)."""
    verdicts = Counter(p["verdict"] for p in pairs)
    now = [p for p in pairs if (p["review"], p["finding"], p["seed"]) in credited_now]
    off_kept = [p for p in now if p["verdict"] == "off"]
    on_before = [p for p in pairs if p["verdict"] == "on-topic" and p["credited_before"]]
    on_lost = [p for p in on_before if (p["review"], p["finding"], p["seed"]) not in credited_now]
    before_off = sum(p["credited_before"] and p["verdict"] == "off" for p in pairs)
    print(f"{name}: {len(pairs)} judged pairs ({verdicts['on-topic']} on-topic, {verdicts['partial']} partial, "
          f"{verdicts['off']} off) from {len({p['review'] for p in pairs})} reviews")
    print(f"  off-topic pairs credited: {len(off_kept)} of {verdicts['off']} (place-only matcher: {before_off})")
    print(f"  on-topic pairs the place-only matcher credited, no longer credited: {len(on_lost)} of "
          f"{len(on_before)} ({len(on_lost) / max(1, len(on_before)):.1%})")
    print(f"  partial pairs credited: {sum(p['verdict'] == 'partial' for p in now)} of {verdicts['partial']}")
    for p in off_kept + on_lost:
        print(f"    {p['verdict']:8} {p['id']}: {p['rule']} <- {p['finding_title'][:90]}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="three stacks only (CI)")
    args = parser.parse_args(argv)
    corpus = load_corpus(ROOT / "seeds")
    topics = TopicIndex.of(corpus.rules)
    pairs = [json.loads(line) for line in JUDGED.read_text(encoding="utf-8").splitlines() if line.strip()]
    if args.quick:
        pairs = [p for p in pairs if p["stack"] in ("python", "go", "vue")]
    index = {e["review"]: e for e in json.loads((AUDIT / "index.json").read_text(encoding="utf-8"))}
    credited_now: set[tuple[str, int, int]] = set()
    for review in sorted({p["review"] for p in pairs}):
        entry = index[review]
        findings = parse_findings(json.loads((AUDIT / entry["file"]).read_text(encoding="utf-8")))
        _files, markers = publish(corpus, entry["stack"], "seeded", "blind")
        # A finding's identity in the judged set is its index in the review file.
        position = {id(f): i for i, f in enumerate(findings)}
        for p in assign(markers, findings, 4, None, topics).pairs:
            credited_now.add((review, position[id(p.finding)], p.marker.marker.n))
    for name in ("authoring", "held-out"):
        report(name, [p for p in pairs if p["set"] == name], credited_now)
    return 0


if __name__ == "__main__":
    sys.exit(main())
