"""``gate``: the exit code of one run, decided from its records (DESIGN §9)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from redline_canary.actions import commands_suspended
from redline_canary.clock import utc_now_iso
from redline_canary.history import run_records
from redline_canary.options import load_acknowledgements
from redline_canary.render import inert_line, json_text
from redline_canary.verdict import combine_exit_codes, final_attempts, record_exit_code


def register(sub: Any) -> None:
    p = sub.add_parser("gate", help="exit with the gate result of one run's records")
    p.add_argument("history", metavar="HISTORY", help="JSONL history file")
    p.add_argument("--run-id", required=True, action="append", dest="run_ids", metavar="RUN_ID",
                   help="the run to judge; repeat to judge several (a later id supersedes an earlier "
                   "one for the same PR, as a workflow re-run does)")
    p.add_argument("--acknowledgements", metavar="FILE",
                   help="check this acknowledgements file too: an expired entry is exit 2, naming it")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=run_gate)


def run_gate(args: argparse.Namespace) -> int:
    run_ids: list[str] = list(dict.fromkeys(args.run_ids))
    load_acknowledgements(args.acknowledgements, utc_now_iso()[:10])
    records = run_records(args.history, run_ids, lambda line: print(line, file=sys.stderr))
    judged = final_attempts(records, run_ids)
    run_label = ", ".join(run_ids)
    codes = [record_exit_code(r) for r in judged]
    code = combine_exit_codes(codes)
    rows = [
        {"repo": r.repo, "stack": r.stack, "kind": r.kind, "attempt": r.attempt,
         "outcome": r.outcome, "passed": r.gate.passed, "reasons": list(r.gate.reasons),
         "exit_code": c}
        for r, c in zip(judged, codes, strict=True)
    ]
    if args.json:
        shown_ids: str | list[str] = run_ids[0] if len(run_ids) == 1 else run_ids
        print(json_text({"run_id": shown_ids, "exit_code": code, "targets": rows}))
        return code
    # The lines carry record text (repo, stack, the gate's reasons): each is one inert
    # line, and under Actions the block is also wrapped in stop-commands.
    with commands_suspended():
        for r in judged:
            verdict = "PASS" if r.gate.passed else "FAIL"
            why = "; ".join(r.gate.reasons)
            print(inert_line(f"{r.repo} {r.stack}/{r.kind}: {r.outcome} {verdict}"
                             + (f" — {why}" if why else "")))
        print(inert_line(f"run {run_label}: exit {code}"))
    return code
