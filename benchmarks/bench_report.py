"""Scoreboard speed: a 5-year weekly history of 20 targets, seeded and clean PRs each week.

10 stacks × 2 reviewers (so every stack has a cross-reviewer comparison), 16 seeds per
stack, a corpus change once a year, ~3 % silent and ~1 % error runs, a few confirmation
re-runs. Measured in one run (best of ``--repeat`` rounds), as ratios to a floor:

Times are CPU seconds of this process (wall seconds printed beside them):

* floor: ``json.loads`` of every line (the least any reader of a JSONL history does);
* typed: ``read_history``, every line checked and read into a typed ``Record``; goal <= 3x;
* markdown: ``report --markdown FILE`` (read + model + Markdown scoreboard); goal <= 4x;
* html: ``report --html DIR`` (read + model + ``index.html`` and every chart); goal <= 8x
  (issue 25). Both run the command's own function, as the CLI does, minus the start-up.

Prints the absolute seconds beside each ratio, and whether each goal is met. The goals
are reported, not enforced: a shared CI machine's noise must not fail a build.

Run: python benchmarks/bench_report.py
``--quick`` (what CI runs): 2 years of 4 targets (2 stacks), 3 rounds; it fails only on
an exception.
"""

from __future__ import annotations

import argparse
import datetime as dt
import io
import json
import random
import tempfile
import time
from pathlib import Path
from typing import Any

from redline_canary.commands.report import ReportOptions, report
from redline_canary.run.history import read_history
from redline_canary.score.record import Record, forget_shared_parts
from redline_canary.score.scoring import wilson

SEVERITIES = ("BLOCKER", "CRITICAL", "MAJOR", "MINOR", "INFO")
STACKS = ("python", "go", "java", "kotlin", "react", "rust", "csharp", "swift", "terraform", "sql")
REVIEWERS = ("redline", "copilot")
WEEKS = 5 * 52
SEEDS_PER_STACK = 16


def _seed(stack: str, n: int) -> dict[str, Any]:
    return {"n": n, "path": f"src/{stack}/mod{n % 5}.x", "line": 10 + 7 * n, "pushed_path": f"mod{n % 5}.x",
            "pushed_line": 10 + 7 * n, "severity": SEVERITIES[n % 4], "rule": f"core/rule-{n % 9}",
            "symbol": None, "description": f"seeded defect {n} of {stack}"}


def _record(rng: random.Random, *, week: int, stack: str, reviewer: str, kind: str, skill: dict[int, float],
            outcome: str, attempt: int = 1) -> dict[str, Any]:
    when = dt.datetime(2021, 1, 4, 6, tzinfo=dt.timezone.utc) + dt.timedelta(weeks=week, minutes=attempt)
    fingerprint = f"{stack[:4]:0<4}".encode().hex()[:8] + f"{week // 52:08x}"
    sev = {s: {"markers": 0, "caught": 0, "undercalled": 0, "missed": 0} for s in SEVERITIES}
    lists: dict[str, list[dict[str, Any]]] = {"caught": [], "undercalled": [], "missed": []}
    scored = outcome == "scored"
    if kind == "seeded":
        for n in range(1, SEEDS_PER_STACK + 1 + week // 52):  # the corpus grows a seed a year
            seed = _seed(stack, n)
            sev[seed["severity"]]["markers"] += 1
            if scored:
                roll = rng.random()
                state = "caught" if roll < skill[n] else "undercalled" if roll < skill[n] + 0.05 else "missed"
                sev[seed["severity"]][state] += 1
                lists[state].append(seed)
    markers = sum(r["markers"] for r in sev.values())
    caught, b = len(lists["caught"]), sev["BLOCKER"]
    measured = scored and kind == "seeded"
    cfp = (rng.random() < 0.1) * rng.randint(1, 3) if kind == "clean" and scored else None
    passed = scored and (b["caught"] == b["markers"] if kind == "seeded" else not cfp)
    return {
        "schema": 1, "run_id": f"{stack}-{reviewer}-w{week}", "attempt": attempt,
        "recorded_at": when.strftime("%Y-%m-%dT%H:%M:%SZ"), "repo": f"acme/canary-{reviewer}", "stack": stack,
        "kind": kind, "pr": week + 1, "reviewer": reviewer, "mode": "blind", "corpus_fingerprint": fingerprint,
        "outcome": outcome, "notice": None, "findings": caught + 3, "markers": markers, "caught": caught,
        "undercalled": len(lists["undercalled"]), "missed": len(lists["missed"]), "duplicates": 0,
        "borderline": 0, "noise": 2, "cited": caught // 2,
        "recall": round(caught / markers, 4) if measured and markers else None,
        "recall_ci95": wilson(caught, markers) if measured else None,
        "blocker_recall": round(b["caught"] / b["markers"], 4) if measured and b["markers"] else None,
        "blocker_recall_ci95": wilson(b["caught"], b["markers"]) if measured else None,
        "by_severity": sev, "caught_seeds": lists["caught"], "undercalled_seeds": lists["undercalled"],
        "missed_seeds": lists["missed"], "clean_false_positives": cfp,
        "gate": {"passed": passed, "reasons": [] if passed else ["benchmark"]}, "tool_version": "bench",
    }


def write_history(path: Path, seed: int = 7, *, stacks: tuple[str, ...] = STACKS, weeks: int = WEEKS) -> int:
    rng = random.Random(seed)
    count = 0
    with path.open("w", encoding="utf-8") as fh:
        for stack in stacks:
            for reviewer in REVIEWERS:
                skill = {n: rng.choice((0.98, 0.9, 0.6, 0.1)) for n in range(1, SEEDS_PER_STACK + 6)}
                for week in range(weeks):
                    roll = rng.random()
                    outcome = "silent" if roll < 0.03 else "error" if roll < 0.04 else "scored"
                    for kind in ("seeded", "clean"):
                        fh.write(json.dumps(_record(rng, week=week, stack=stack, reviewer=reviewer, kind=kind,
                                                    skill=skill, outcome=outcome)) + "\n")
                        count += 1
                    if outcome == "scored" and rng.random() < 0.02:  # confirmation re-run
                        fh.write(json.dumps(_record(rng, week=week, stack=stack, reviewer=reviewer,
                                                    kind="seeded", skill=skill, outcome="scored",
                                                    attempt=2)) + "\n")
                        count += 1
    return count


def best_of_rounds(figures: dict[str, Any], repeat: int) -> dict[str, tuple[float, float]]:
    """The best (CPU seconds, wall seconds) of each figure over ``repeat`` rounds, each
    round timing every figure once in turn. Why CPU time for the ratios: everything here
    runs in this one process, and on a shared machine the wall clock mostly measures the
    neighbours (the wall time is printed beside it)."""
    cpu: dict[str, list[float]] = {name: [] for name in figures}
    wall: dict[str, list[float]] = {name: [] for name in figures}
    for _ in range(repeat):
        for name, fn in figures.items():
            forget_shared_parts()  # each figure reads cold, as a new process would
            c0, w0 = time.process_time(), time.perf_counter()
            fn()
            cpu[name].append(time.process_time() - c0)
            wall[name].append(time.perf_counter() - w0)
    return {name: (min(cpu[name]), min(wall[name])) for name in figures}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, help="rounds, each figure's best is kept; default 5 (3 with --quick)")
    parser.add_argument("--quick", action="store_true",
                        help="a small run of the same measurement (2 years of 4 targets, 3 rounds), for CI")
    args = parser.parse_args()
    repeat = args.repeat or (3 if args.quick else 5)
    stacks, weeks = (STACKS[:2], 2 * 52) if args.quick else (STACKS, WEEKS)
    with tempfile.TemporaryDirectory() as tmp:
        hist = Path(tmp) / "seed-scores.jsonl"
        records = write_history(hist, stacks=stacks, weeks=weeks)
        size = hist.stat().st_size / 2**20
        print(f"history: {records} records, {size:.1f} MiB, {len(stacks) * len(REVIEWERS)} targets, "
              f"{weeks} weeks")

        def floor() -> None:
            with hist.open("rb") as fh:
                for raw in fh:
                    json.loads(raw)

        def typed() -> None:
            read()

        def read() -> list[Record]:
            """The records, refusing a history this script wrote wrong (a figure over
            skipped lines would measure nothing)."""
            got = read_history(hist)
            if got.corrupt or len(got.records) != records:
                raise RuntimeError(f"the generated history does not read back: {len(got.records)} of "
                                   f"{records} records, first problem {got.corrupt[:1]}")
            return got.records

        board = Path(tmp) / "board.md"

        def command(html: str | None = None, markdown: str | None = None) -> None:
            sink = io.StringIO()
            report(ReportOptions(hist, html, markdown, None, False, ()), out=sink, err=sink)

        def markdown() -> None:
            command(markdown=str(board))

        def html() -> None:
            command(html=str(Path(tmp) / "site"))

        got = best_of_rounds({"floor": floor, "typed": typed, "markdown": markdown, "html": html}, repeat)
        base = got["floor"][0]
        print(f"floor:    {base:.3f} s CPU ({got['floor'][1]:.3f} s wall; json.loads of every line; best of "
              f"{repeat} rounds)")

        def ratio(name: str, goal: float, what: str) -> None:
            cpu, wall = got[name]
            times = cpu / base
            verdict = "ok" if times <= goal else "over"
            print(f"{name + ':':<9} {cpu:.3f} s CPU = {times:.1f}x the floor ({wall:.3f} s wall; goal <= {goal:g}x: "
                  f"{verdict}; {what})")

        ratio("typed", 3, "read_history into typed records")
        ratio("markdown", 4, f"report --markdown: read + model + render, {board.stat().st_size / 1024:.0f} KiB")
        total = sum(p.stat().st_size for p in (Path(tmp) / "site").rglob("*") if p.is_file()) / 2**20
        ratio("html", 8, f"report --html: read + model + index.html and charts, {total:.1f} MiB")

if __name__ == "__main__":
    main()
