"""``history merge``: fold run fragments into the long-lived history, idempotently."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from redline_canary.errors import EXIT_BAD_INPUT, EXIT_PASS
from redline_canary.history import merge
from redline_canary.render import inert_line, json_text


def register(sub: Any) -> None:
    p = sub.add_parser("history", help="work with the JSONL history")
    inner = p.add_subparsers(dest="history_command", metavar="ACTION", required=True)
    m = inner.add_parser("merge", help="append fragment records not already in OUT")
    m.add_argument("out", metavar="OUT", help="history file (created if absent)")
    m.add_argument("fragments", metavar="FRAGMENT", nargs="+", help="JSONL fragment files")
    m.add_argument("--json", action="store_true", help="machine-readable output")
    m.set_defaults(func=run_merge)
    from redline_canary.commands import history_import

    history_import.register(inner)


def run_merge(args: argparse.Namespace) -> int:
    """Exit 0: merged. Exit 2 *with* the summary line (or the JSON) on stdout: merged, but
    some fragment lines were corrupt and left out. Exit 2 with nothing on stdout and one
    line on stderr: nothing was merged (bad file, disk full) and OUT is unchanged."""
    result = merge(args.out, args.fragments)
    for fragment, line, why in result.corrupt:
        print(inert_line(f"{fragment}:{line}: corrupt record skipped ({why})"), file=sys.stderr)
    if args.json:
        print(json_text({"out": args.out, "appended": result.appended,
                         "already_present": result.already_present,
                         "corrupt": [{"fragment": f, "line": n, "why": w} for f, n, w in result.corrupt]},
                        indent=None))
    else:
        print(f"{args.out}: appended {result.appended}, already present {result.already_present}, "
              f"corrupt {len(result.corrupt)}")
    return EXIT_BAD_INPUT if result.corrupt else EXIT_PASS
