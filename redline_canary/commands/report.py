"""``report``: the scoreboard from a history file — Markdown, a static HTML folder, or JSON.

Corrupt lines do not stop the report: the history is append-only and one torn line must
not hide five years of numbers. Each is named on stderr with its line number, left out,
and counted in the report itself so nobody mistakes a thinner report for a full one.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from redline_canary.commands._actions_env import ActionsEnv, commands_suspended
from redline_canary.errors import EXIT_PASS, BadInput
from redline_canary.report.build import build_report
from redline_canary.report.legacy import LegacyRun, legacy_rows
from redline_canary.report.markdown import render_markdown
from redline_canary.report.model import to_json
from redline_canary.report.text import inert_line, json_text
from redline_canary.run.collector import collector_settled
from redline_canary.run.files import refuse_unsafe_target, safe_write_text
from redline_canary.run.history import read_history
from redline_canary.run.legacy_history import read_legacy


def register(sub: Any) -> None:
    p = sub.add_parser("report", help="render the scoreboard (Markdown, HTML folder, JSON) from a history",
                       description="Render the scoreboard from a JSONL history. With neither --html nor "
                       "--markdown (nor --json) the Markdown goes to stdout, ready for $GITHUB_STEP_SUMMARY.")
    p.add_argument("history", metavar="HISTORY", help="JSONL history file")
    p.add_argument("--html", metavar="DIR", help="write a static folder (index.html + charts/*.svg)")
    p.add_argument("--markdown", metavar="FILE", help="write the Markdown scoreboard to FILE (under 1 MiB)")
    p.add_argument("--since", metavar="YYYY-MM-DD", help="leave out records before this UTC date")
    p.add_argument("--json", action="store_true", help="print the report data as JSON on stdout")
    p.add_argument("--legacy", metavar="FILE", action="append", default=[],
                   help="also show an imported Redline history (`history import --from redline`), as a "
                        "separate series; repeatable")
    p.set_defaults(func=run_report)


def _since(value: str | None) -> str | None:
    if value is None:
        return None
    try:
        return dt.date.fromisoformat(value).isoformat()
    except ValueError:
        raise BadInput(f"--since: {value!r} is not a date (expected YYYY-MM-DD)") from None


def _legacy_rows(paths: Sequence[str], since: str | None, err: TextIO) -> list[list[str]]:
    """Every ``--legacy`` file's runs as the report's legacy rows; a corrupt line is named and left out."""
    runs: list[LegacyRun] = []
    for name in paths:
        read = read_legacy(name)
        for line, why in read.corrupt:
            print(inert_line(f"{name}:{line}: legacy line skipped ({why})"), file=err)
        runs += read.runs
    return legacy_rows(runs, since)


@dataclass(frozen=True)
class ReportOptions:
    """``report``'s flags, checked, and whether the runner reads workflow commands."""

    history: Path
    html: str | None
    markdown: str | None
    since: str | None
    json: bool
    legacy: tuple[str, ...]
    actions: ActionsEnv = field(default_factory=ActionsEnv)

    @classmethod
    def from_args(cls, args: argparse.Namespace, env: Mapping[str, str]) -> ReportOptions:
        return cls(Path(args.history), args.html, args.markdown, _since(args.since), args.json,
                   tuple(args.legacy), ActionsEnv.from_env(env))


def run_report(args: argparse.Namespace) -> int:
    """The edge: the flags and ``os.environ`` become options here, and only here."""
    return report(ReportOptions.from_args(args, os.environ), out=sys.stdout, err=sys.stderr)


def report(options: ReportOptions, *, out: TextIO, err: TextIO) -> int:
    """Read the history, build the report once, write each form asked for."""
    path = options.history
    if options.markdown:
        refuse_unsafe_target(options.markdown, "--markdown")  # before the work, not after
    if not os.path.lexists(path) and not options.legacy:
        raise BadInput(f"{path}: history file not found")
    with collector_settled() as settle:  # docs/record.md#reading-fast
        return _report(options, out, err, settle)


def _report(options: ReportOptions, out: TextIO, err: TextIO, settle: Callable[[], None]) -> int:
    """The report, with the collector settled once the board is built (``collector_settled``)."""
    since, path = options.since, options.history
    read = read_history(path)  # refuses a FIFO, /dev/zero or a folder (exit 2)
    # Corrupt and malformed lines alike are named and left out (the report is not a
    # verdict, and one bad line must not hide years of numbers); both are counted in it.
    if read.corrupt and not read.records:  # nothing but bad lines: not a history at all
        line, why = read.corrupt[0]
        raise BadInput(inert_line(f"{path}: no valid records ({len(read.corrupt)} corrupt line(s), "
                                  f"first: line {line}, {why})"))
    for line, why in read.corrupt:
        print(inert_line(f"{path}:{line}: corrupt record skipped ({why})"), file=err)
    board = build_report(read.records, since=since, corrupt=read.corrupt)
    board.legacy = _legacy_rows(options.legacy, since, err)
    settle()
    for note in board.skipped[len(read.corrupt):]:
        print(inert_line(f"{path}: {note} — skipped"), file=err)
    if options.html:
        from redline_canary.report.html import render_html

        files = render_html(board, options.html, write=lambda path, text: safe_write_text(path, text, mode=0o666))
        print(f"{options.html}: wrote {len(files)} files (open {Path(options.html) / 'index.html'})", file=err)
    if options.markdown:
        safe_write_text(options.markdown, render_markdown(board), mode=0o666)
    if options.json:
        print(json_text(to_json(board)), file=out)
    elif not options.html and not options.markdown:
        # The Markdown quotes record text; the runner must not act on it.
        with commands_suspended(out, active=options.actions.active):
            out.write(render_markdown(board))
    return EXIT_PASS
