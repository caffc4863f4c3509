"""``history import --from redline FILE``: Redline's seed-score history as a legacy series.

The lines go to a file of their own (``--out``, default ``history/redline-legacy.jsonl``)
under their own schema tag, so ``gate`` and ``score --baseline`` never read them; ``report
HISTORY --legacy FILE`` shows them in a section of their own.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from redline_canary.errors import EXIT_BAD_INPUT, EXIT_PASS
from redline_canary.github.clock import utc_now_iso
from redline_canary.report.text import inert_line, json_text
from redline_canary.run.legacy_history import DEFAULT_OUT, import_redline

SOURCES = ("redline",)


def register(inner: Any) -> None:
    p = inner.add_parser("import", help="import another tool's score history (Redline) as a legacy series")
    p.add_argument("file", metavar="FILE", help="Redline's seed-scores.jsonl")
    p.add_argument("--from", dest="source", required=True, choices=SOURCES, help="the format of FILE")
    p.add_argument("--out", default=DEFAULT_OUT,
                   help="the legacy series file, created if absent (default: %(default)s); keep it out of a "
                        "history folder")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=run_import)


def run_import(args: argparse.Namespace) -> int:
    """Exit 0: imported. Exit 2 with the summary: imported, but some lines were corrupt and left out."""
    result = import_redline(args.file, args.out, utc_now_iso())
    for line, why in result.corrupt:
        print(inert_line(f"{args.file}:{line}: not imported ({why})"), file=sys.stderr)
    if args.json:
        print(json_text({"out": args.out, "appended": result.appended, "already_present": result.already_present,
                         "corrupt": [{"line": n, "why": w} for n, w in result.corrupt]}, indent=None))
    else:
        print(inert_line(f"{args.out}: appended {result.appended} Redline score(s) as the legacy series, "
                         f"already present {result.already_present}, corrupt {len(result.corrupt)}"))
    return EXIT_BAD_INPUT if result.corrupt else EXIT_PASS
