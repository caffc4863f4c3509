"""Scoring speed: 220 markers x {100, 1 000, 10 000} findings, and the pathological case.

Prints milliseconds (best of 5) for the matcher alone and for the whole evaluate step.
Goal (issue 2): < 100 ms at 10 000 findings on one core. Run: python benchmarks/bench_scoring.py
``--quick`` (what CI runs): 100 and 1 000 findings, 200 pathological ones, best of 2.
"""

from __future__ import annotations

import argparse
import random
import time

from redline_canary.corpus.markers import Marker
from redline_canary.corpus.publication import PublishedMarker
from redline_canary.corpus.severity import Severity
from redline_canary.review.findings import Finding
from redline_canary.score.matching import assign

SEVS = list(Severity)


def corpus_markers(n: int, files: int = 40, rng: random.Random | None = None) -> list[PublishedMarker]:
    rng = rng or random.Random(1)
    out = []
    for i in range(n):
        path = f"src/file{i % files}.py"
        line = 10 + (i // files) * 18 + rng.randint(0, 6)
        sym = "Handler" if i % 25 == 0 else None
        out.append(PublishedMarker(Marker("seed", i + 1, path, line, line, rng.choice(SEVS),
                                          "core/sql-injection", sym, "d"), path, line))
    return out


def findings(n: int, markers: list[PublishedMarker], rng: random.Random) -> list[Finding]:
    out = []
    for i in range(n):
        m = rng.choice(markers)
        start = max(1, m.line + rng.randint(-8, 8))
        out.append(Finding(f"inline:{i}", m.path, start, start + rng.choice([0, 0, 0, 3]),
                           rng.choice([*SEVS, None]), "core/sql-injection Handler" if i % 7 == 0 else "x",
                           "bot"))
    return out


def best_ms(fn: object, repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append((time.perf_counter() - t0) * 1000)
    return min(times)


def cite(body: str, rule: str) -> bool:
    return rule in body


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="a small run of the same measurement (100 and 1 000 findings, best of 2), for CI")
    args = parser.parse_args()
    sizes, patho_n, repeat = ((100, 1_000), 200, 2) if args.quick else ((100, 1_000, 10_000), 500, 5)
    rng = random.Random(20261130)
    markers = corpus_markers(220, rng=rng)
    print(f"case                                   ms (best of {repeat})")
    for n in sizes:
        fs = findings(n, markers, rng)
        ms = best_ms(lambda fs=fs: assign(markers, fs, 4, cite), repeat)
        print(f"220 markers x {n:>6} findings          {ms:8.1f}")
    path_markers = [PublishedMarker(Marker("seed", n, "a.py", 100 + n % 9 - 4, 100 + n % 9 - 4,
                                           SEVS[n % 5], "core/x", None, "d"), "a.py", 100 + n % 9 - 4)
                    for n in range(1, 21)]
    patho = [Finding(f"inline:{i}", "a.py", 100, 100, SEVS[i % 5], "core/x", "bot") for i in range(patho_n)]
    ms = best_ms(lambda: assign(path_markers, patho, 4, cite), repeat)
    print(f"pathological: {patho_n} findings on one line, 20 markers {ms:6.1f}")
    patho2 = [Finding(f"inline:{i}", "a.py", 100 + i % 3, 100 + i % 3, SEVS[(i * 7) % 5],
                      f"core/x {i}" if i % 2 else "y", "bot") for i in range(patho_n)]
    ms = best_ms(lambda: assign(path_markers, patho2, 4, cite), repeat)
    print(f"pathological, all findings distinct:              {ms:6.1f}")

if __name__ == "__main__":
    main()
