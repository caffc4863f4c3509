"""``demo``: the whole product in a minute, offline — the built-in GitHub sandbox, real
reviewers (bandit) and a silent one, driven through the same ``run`` code path."""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
from collections.abc import Sequence
from typing import Any

from redline_canary.commands import _validate as validate
from redline_canary.errors import EXIT_MEANINGS, EXIT_SILENT, BadInput, InfraFailure
from redline_canary.github.client import CANARY_TOPIC
from redline_canary.run.corpus_files import load_corpus
from redline_canary.run.cycle import BRANCH_PREFIX, CycleOptions
from redline_canary.run.runner import ProgressPrinter, run_id_lines, run_targets, summary_table
from redline_canary.run.targets import Target
from redline_canary.score.polling import PollConfig
from redline_canary.score.record import Record

DEMO_TOKEN = "demo-sandbox-credential"  # the sandbox's own; never a GitHub token
BANDIT_STACKS = ("python", "microservices")
SILENT_STACK = "go"


def register(sub: Any) -> None:
    p = sub.add_parser("demo", help="run the canary end to end against the built-in sandbox")
    p.add_argument("--history", default="redline-canary-demo.jsonl",
                   help="history file to append the demo's records to (default: %(default)s)")
    p.add_argument("--json", action="store_true", help="print the records as JSON lines")
    p.set_defaults(func=run_demo)


def run_demo(args: argparse.Namespace) -> int:
    from redline_canary.sandbox import BanditReviewer, Sandbox, SilentReviewer

    if importlib.util.find_spec("bandit") is None:
        raise BadInput("demo needs bandit: pip install 'redline-canary[demo]'")
    history = validate.output_file(args.history, "--history")  # before a minute of work, not after
    corpus = load_corpus()
    targets = [Target(f"acme/canary-{s}", s) for s in BANDIT_STACKS]
    targets.append(Target(f"acme/canary-{SILENT_STACK}", SILENT_STACK))
    options = CycleOptions(run_id=f"demo-{int(time.time())}",
                           # 8 s: bandit answers in about a second, but on a loaded 2-core
                           # machine 4 s was seen to call every bandit PR silent
                           poll=PollConfig(interval=0.25, stable_polls=2, timeout=8.0), confirm=0)
    started = time.monotonic()
    with Sandbox(token=DEMO_TOKEN) as sb:
        for t in targets:
            sb.create_repo(t.repo, topics=[CANARY_TOPIC])
            sb.attach_reviewer(t.repo, SilentReviewer() if t.stack == SILENT_STACK
                               else BanditReviewer(latency=0.1))
        print(f"sandbox: {sb.url} — {len(targets)} canary repos; bandit reviews "
              f"{', '.join(BANDIT_STACKS)}, nobody reviews {SILENT_STACK}", file=sys.stderr)
        result = run_targets(targets, corpus, options, token=DEMO_TOKEN, api_url=sb.url,
                             parallel=len(targets), history=history,
                             progress=ProgressPrinter(sys.stderr))
        open_prs = sum(len(sb.open_pulls(t.repo)) for t in targets)
        branches = sum(b.startswith(BRANCH_PREFIX) for t in targets for b in sb.branches(t.repo))
    if args.json:
        for r in result.records:
            print(json.dumps(r.to_json()))
    else:
        print(summary_table(result.records))
        print("\n".join(["", *explain(result.records)]))
        print(f"\nhistory: {len(result.records)} record(s) appended to {history}")
        print(f"exit code {result.exit_code}: {EXIT_MEANINGS.get(result.exit_code, 'unexpected')}"
              + (f" (expected here: the {SILENT_STACK} reviewer is silent on purpose, and a silent reviewer "
                 "outranks a failed gate)" if result.exit_code == EXIT_SILENT else ""))
    print(f"teardown: {open_prs} PR(s) and {branches} canary branch(es) left; "
          f"took {time.monotonic() - started:.1f}s in all", file=sys.stderr)
    for line in run_id_lines(options.run_id, history, issue=False):
        print(line, file=sys.stderr)
    if open_prs or branches:
        raise InfraFailure("demo: teardown left canary PRs or branches behind")
    return result.exit_code


def explain(records: Sequence[Record]) -> list[str]:
    """Why the table reads as it does: a new user's first question is "is FAIL a bug?"."""
    lines = ["Why these verdicts:"]
    failed = sorted({r.stack for r in records if r.stack in BANDIT_STACKS and not r.gate.passed},
                    key=BANDIT_STACKS.index)
    if failed:
        lines += ["  bandit is a static analyser, not a reviewer: it misses or under-rates the BLOCKER seeds",
                  f"    of {' and '.join(failed)}, so their FAIL is expected: the canary caught a weak reviewer."]
    if any(r.stack == SILENT_STACK and r.outcome == "silent" for r in records):
        lines += [f"  {SILENT_STACK}'s reviewer is silent on purpose: a reviewer that never answers gets no score,",
                  f"    only \"silent\" (and a FAIL), which is exit code {EXIT_SILENT}."]
    return lines if len(lines) > 1 else []
