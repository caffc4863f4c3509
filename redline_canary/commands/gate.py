"""``gate``: the exit code of one run, decided from its records (docs/cli.md)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TextIO

from redline_canary.commands._actions_env import ActionsEnv, commands_suspended
from redline_canary.commands._targets import load_acknowledgements
from redline_canary.errors import combine_exit_codes
from redline_canary.github.clock import utc_now_iso
from redline_canary.report.text import inert_line, json_text
from redline_canary.run.history import run_records
from redline_canary.score.verdict import final_attempts, record_exit_code


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


@dataclass(frozen=True)
class GateCommandOptions:
    """``gate``'s flags, checked, and the one environment fact it needs: whether the
    runner reads workflow commands from stdout (then record text is printed inert)."""

    history: str
    run_ids: tuple[str, ...]  # in the order given, repeats dropped: a later id supersedes
    acknowledgements: str | None
    json: bool
    actions: ActionsEnv = field(default_factory=ActionsEnv)

    @classmethod
    def from_args(cls, args: argparse.Namespace, env: Mapping[str, str]) -> GateCommandOptions:
        return cls(args.history, tuple(dict.fromkeys(args.run_ids)), args.acknowledgements, args.json,
                   ActionsEnv.from_env(env))


def run_gate(args: argparse.Namespace) -> int:
    """The edge: the flags and ``os.environ`` become options here, and only here."""
    return gate(GateCommandOptions.from_args(args, os.environ), out=sys.stdout, err=sys.stderr)


def gate(options: GateCommandOptions, *, out: TextIO, err: TextIO, now: Callable[[], str] = utc_now_iso) -> int:
    """Judge the run's final attempts and return the combined exit code. ``now`` is the wall
    clock (UTC ISO text) an acknowledgement's expiry is checked against."""
    run_ids = list(options.run_ids)
    load_acknowledgements(options.acknowledgements, now()[:10])
    records = run_records(options.history, run_ids, lambda line: print(line, file=err))
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
    if options.json:
        shown_ids: str | list[str] = run_ids[0] if len(run_ids) == 1 else run_ids
        print(json_text({"run_id": shown_ids, "exit_code": code, "targets": rows}), file=out)
        return code
    # The lines carry record text (repo, stack, the gate's reasons): each is one inert
    # line, and under Actions the block is also wrapped in stop-commands.
    with commands_suspended(out, active=options.actions.active):
        for r in judged:
            verdict = "PASS" if r.gate.passed else "FAIL"
            why = "; ".join(r.gate.reasons)
            print(inert_line(f"{r.repo} {r.stack}/{r.kind}: {r.outcome} {verdict}"
                             + (f" — {why}" if why else "")), file=out)
        print(inert_line(f"run {run_label}: exit {code}"), file=out)
    return code
