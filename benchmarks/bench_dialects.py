"""Reviewer dialects on a fresh set of real bot comments: how many the shipped profiles read
right (docs/matching.md#findings, docs/matching.md#the-fail-safe-notice-rule).

``tests/data/dialects-fresh/<vendor>.jsonl`` holds real review comments from repositories no
profile fixture came from, each with the reading its vendor's conventions call for, written
before the tool read it. Each body goes through the profile code ``profile classify`` uses;
this prints read-right k/n per kind and per vendor, every misread, and the fail-safe count:
notices (the reviewer posted a notice instead of a review) that read as a pass (clean, done
or a finding). That count's goal is 0.
Run: ``python benchmarks/bench_dialects.py [--quick] [--vendor NAME]``
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script: the set's reader lives with the tests
    sys.path.insert(0, str(ROOT))

from tests.helpers.dialects import DATA, KINDS, PASSING, judge, load_items, looks_like_notice  # noqa: E402


def _rate(k: int, n: int) -> str:
    return f"{k}/{n} ({k / n:.0%})" if n else "0/0"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the same reading (the set is small); CI runs this")
    parser.add_argument("--vendor", action="append", default=[], help="only this vendor (repeatable)")
    parser.add_argument("--set", type=Path, default=DATA, help="a folder of <vendor>.jsonl items in the same "
                        "format (default: tests/data/dialects-fresh; tests/data/dialects-heldout is the held-out set)")
    args = parser.parse_args(argv)
    items = load_items(tuple(args.vendor), args.set)
    if not items:
        raise SystemExit(f"no items in {args.set}")
    verdicts = [judge(item) for item in items]
    vendors = sorted({v.item["vendor"] for v in verdicts})
    total = Counter[tuple[str, str]]()
    right = Counter[tuple[str, str]]()
    for v in verdicts:
        for key in ((v.item["vendor"], v.item["expect"]["kind"]), (v.item["vendor"], "all"),
                    ("all", v.item["expect"]["kind"]), ("all", "all")):
            total[key] += 1
            right[key] += v.right
    print(f"dialect set {args.set.name}: {len(items)} real bot comments, {len(vendors)} vendors")
    print("read right, per kind and vendor (k/n):")
    columns = [*KINDS, "all"]
    print("| vendor | " + " | ".join(columns) + " |")
    print("|---" * (len(columns) + 1) + "|")
    for vendor in [*vendors, "all"]:
        cells = [_rate(right[vendor, c], total[vendor, c]) if total[vendor, c] else "-" for c in columns]
        print(f"| {vendor} | " + " | ".join(cells) + " |")
    classes = Counter(v.item["expect"]["class"] for v in verdicts if v.item["expect"]["kind"] == "notice")
    classes_right = Counter(v.item["expect"]["class"] for v in verdicts
                            if v.item["expect"]["kind"] == "notice" and v.right)
    print("notices per class: " + ", ".join(f"{c} {_rate(classes_right[c], n)}" for c, n in sorted(classes.items())))
    notices = [v for v in verdicts if looks_like_notice(v.item)]
    passed = [v for v in notices if v.reading.signal in PASSING]
    print(f"fail-safe: notices read as a pass (clean, done or a finding): {len(passed)} of {len(notices)} "
          "(goal 0)")
    misread = [v for v in verdicts if not v.right]
    print(f"misreads: {len(misread)}")
    for v in misread:
        expect = v.item["expect"]
        what = expect["kind"] + (f"/{expect['class']}" if expect["kind"] == "notice" else "")
        flag = "  FAIL-SAFE" if v in passed else ""
        print(f"  {v.item['id']} [{v.item['vendor']} {v.item['channel']} {what}]: {v.why}{flag}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
