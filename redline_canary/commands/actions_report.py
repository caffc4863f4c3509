"""``actions-report``: the action's last step — job summary, annotations and outputs.

Why a command and not shell in ``action.yml``: the summary and annotations are rendered
from the records file by the pure ``actions_render`` core, which is tested like the rest
of the product; the composite action only passes the path and the exit code along.
It reads the records the run wrote and never talks to GitHub, so it needs no token and
is safe in an ``if: always()`` step, even after a cancelled run.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from redline_canary.actions import append_summary, commands_suspended, emit, in_github_actions, write_outputs
from redline_canary.actions_render import action_outputs, annotation_commands, job_summary, workflow_command
from redline_canary.errors import EXIT_BAD_INPUT, EXIT_INFRA, EXIT_PASS, BadInput
from redline_canary.history import read_history
from redline_canary.record import Record
from redline_canary.render import inert_line


def register(sub: Any) -> None:
    p = sub.add_parser("actions-report",
                       help="GitHub Actions: job summary, annotations and outputs from a records file")
    p.add_argument("records", metavar="RECORDS", nargs="?", default="",
                   help="JSONL records the run wrote (missing or empty: nothing was measured)")
    p.add_argument("--exit-code", type=int, default=EXIT_INFRA,
                   help="exit code of the run being reported (default 4: unknown means failure)")
    p.add_argument("--corpus-prefix", default="seeds",
                   help="corpus folder as seen from the workspace, for annotation file= paths (seeds)")
    p.add_argument("--summary", help="write the Markdown here (default: $GITHUB_STEP_SUMMARY, else stdout)")
    p.set_defaults(func=run_actions_report)


def _report_refusal(args: argparse.Namespace, message: str) -> None:
    markdown = job_summary([], EXIT_BAD_INPUT, corpus_prefix=args.corpus_prefix,
                           notes=[f"{message} — the records file was refused"])
    if args.summary:
        append_summary(markdown, args.summary)
    elif not append_summary(markdown):
        with commands_suspended():
            print(markdown)
    if in_github_actions():
        emit([workflow_command("error", message, title="Malformed history record")])
    write_outputs(action_outputs([], EXIT_BAD_INPUT, args.records))


def run_actions_report(args: argparse.Namespace) -> int:
    records: list[Record] = []
    notes: list[str] = []
    if args.records and os.path.lexists(args.records):
        # Anything but a regular file (a FIFO, /dev/zero, a folder) is refused, exit 2. So
        # is a record with a value of the wrong type: the records are this run's own, so
        # it is a bug or a forgery, and summing around it would report numbers nobody
        # measured. Either way the step still says so in its summary, an annotation and
        # its outputs, so the action reports "bad-input" rather than "nothing ran".
        try:
            read = read_history(args.records, what="records file")
            read.refuse_malformed(args.records)
        except BadInput as exc:
            _report_refusal(args, str(exc))
            raise
        records = read.records
        for line, why in read.corrupt:
            note = inert_line(f"{args.records}:{line}: corrupt record skipped ({why})")
            notes.append(note)
            print(note, file=sys.stderr)
    elif args.records:
        notes.append("the run wrote no records file")
    markdown = job_summary(records, args.exit_code, corpus_prefix=args.corpus_prefix, notes=notes)
    if args.summary:
        append_summary(markdown, args.summary)
    elif not append_summary(markdown):
        with commands_suspended():  # the Markdown quotes record text; the runner must not act on it
            print(markdown)
    if in_github_actions():
        emit(annotation_commands(records, args.corpus_prefix, exit_code=args.exit_code))
    write_outputs(action_outputs(records, args.exit_code, args.records))
    return EXIT_PASS
