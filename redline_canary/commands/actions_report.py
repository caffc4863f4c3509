"""``actions-report``: the action's last step — job summary, annotations and outputs.

Why a command and not shell in ``action.yml``: the summary and annotations are rendered
from the records file by the pure Actions core (``actions_summary``, ``actions_annotations``,
``actions_outputs``), tested like the rest of the product; the composite action only passes
the path and the exit code along.
It reads the records the run wrote and never talks to GitHub, so it needs no token and
is safe in an ``if: always()`` step, even after a cancelled run.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TextIO

from redline_canary.commands._actions_env import ActionsEnv, append_summary, commands_suspended, emit, write_outputs
from redline_canary.errors import EXIT_BAD_INPUT, EXIT_INFRA, EXIT_PASS, BadInput
from redline_canary.report.action_outputs import action_outputs
from redline_canary.report.annotations import annotation_commands
from redline_canary.report.job_summary import job_summary
from redline_canary.report.text import inert_line
from redline_canary.report.workflow_commands import workflow_command
from redline_canary.run.history import read_history
from redline_canary.score.record import Record


def register(sub: Any) -> None:
    p = sub.add_parser("actions-report",
                       help="GitHub Actions: job summary, annotations and outputs from a records file")
    p.add_argument("records", metavar="RECORDS",
                   help="JSONL records the run wrote (a missing or empty file, or \"\": nothing was measured)")
    p.add_argument("--exit-code", type=int, default=EXIT_INFRA,
                   help="exit code of the run being reported (default 4: unknown means failure)")
    p.add_argument("--corpus-prefix", default="seeds",
                   help="corpus folder as seen from the workspace, for annotation file= paths (seeds)")
    p.add_argument("--summary", help="write the Markdown here (default: $GITHUB_STEP_SUMMARY, else stdout)")
    p.set_defaults(func=run_actions_report)


@dataclass(frozen=True)
class ActionsReportOptions:
    """The step's flags and what the runner said through the environment (whether it reads
    workflow commands, where the outputs and the job summary go), read once."""

    records: str
    exit_code: int
    corpus_prefix: str
    summary: str | None
    actions: ActionsEnv = field(default_factory=ActionsEnv)

    @classmethod
    def from_args(cls, args: argparse.Namespace, env: Mapping[str, str]) -> ActionsReportOptions:
        return cls(args.records, args.exit_code, args.corpus_prefix, args.summary, ActionsEnv.from_env(env))

    @property
    def summary_file(self) -> str:
        """``--summary``, else the step's summary file, else "" (print it)."""
        return self.summary or self.actions.summary


def run_actions_report(args: argparse.Namespace) -> int:
    """The edge: the flags and ``os.environ`` become options here, and only here."""
    return actions_report(ActionsReportOptions.from_args(args, os.environ), out=sys.stdout, err=sys.stderr)


def _show(options: ActionsReportOptions, markdown: str, out: TextIO) -> None:
    if not append_summary(markdown, options.summary_file):
        with commands_suspended(out, active=options.actions.active):  # the Markdown quotes record text
            print(markdown, file=out)


def _report_refusal(options: ActionsReportOptions, message: str, out: TextIO) -> None:
    markdown = job_summary([], EXIT_BAD_INPUT, corpus_prefix=options.corpus_prefix,
                           notes=[f"{message} — the records file was refused"])
    _show(options, markdown, out)
    if options.actions.active:
        emit([workflow_command("error", message, title="Malformed history record")], out)
    write_outputs(action_outputs([], EXIT_BAD_INPUT, options.records), options.actions.output)


def actions_report(options: ActionsReportOptions, *, out: TextIO, err: TextIO) -> int:
    """Summary, annotations and outputs of one run's records; exit 0 unless they are refused."""
    records: list[Record] = []
    notes: list[str] = []
    if options.records and os.path.lexists(options.records):
        # Anything but a regular file (a FIFO, /dev/zero, a folder) is refused, exit 2. So
        # is a record with a value of the wrong type: the records are this run's own, so
        # it is a bug or a forgery, and summing around it would report numbers nobody
        # measured. Either way the step still says so in its summary, an annotation and
        # its outputs, so the action reports "bad-input" rather than "nothing ran".
        try:
            read = read_history(options.records, what="records file")
            read.refuse_malformed(options.records)
        except BadInput as exc:
            _report_refusal(options, str(exc), out)
            raise
        records = read.records
        for line, why in read.corrupt:
            note = inert_line(f"{options.records}:{line}: corrupt record skipped ({why})")
            notes.append(note)
            print(note, file=err)
    elif options.records:
        notes.append("the run wrote no records file")
    _show(options, job_summary(records, options.exit_code, corpus_prefix=options.corpus_prefix, notes=notes), out)
    if options.actions.active:
        emit(annotation_commands(records, options.corpus_prefix, exit_code=options.exit_code), out)
    write_outputs(action_outputs(records, options.exit_code, options.records), options.actions.output)
    return EXIT_PASS
