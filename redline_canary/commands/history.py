"""``history merge``: fold run fragments into the long-lived history, idempotently."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from redline_canary.commands import _actions_env as actions
from redline_canary.commands._groups import add_actions
from redline_canary.errors import EXIT_BAD_INPUT, EXIT_PASS, BadInput
from redline_canary.report.text import inert_line, json_text, md_text
from redline_canary.report.workflow_commands import workflow_command
from redline_canary.run.history import folder_files, is_history_folder, merge

# GitHub refuses a push holding a file over 100 MB; warn well before, while there is time
# to move to a folder of yearly files (docs/record.md). A stats file that silently stopped
# publishing at 100 MB is a known failure of tools that keep one growing file.
LARGE_HISTORY_BYTES = 40 * 1024 * 1024


def register(sub: Any) -> None:
    p = sub.add_parser("history", help="work with the JSONL history")
    inner = add_actions(p, "history_command")
    m = inner.add_parser(
        "merge", help="append fragment records not already in the history (--into HISTORY FRAGMENT...)",
        usage="%(prog)s [-h] --into HISTORY [--json] FRAGMENT [FRAGMENT ...]",
        description="Append to HISTORY every record of the FRAGMENT files it does not hold yet (idempotent). "
        "HISTORY is the long-lived file or folder, and the only one written; each FRAGMENT (the records file "
        "a run wrote) is only read. The older form `history merge HISTORY FRAGMENT...` still works, with a "
        "warning, and refuses arguments that look swapped.")
    m.add_argument("--into", metavar="HISTORY", help="the history file or folder to append to (created if absent)")
    m.add_argument("files", metavar="FRAGMENT", nargs="+", help="JSONL records files of runs (only read)")
    m.add_argument("--json", action="store_true", help="machine-readable output")
    m.set_defaults(func=run_merge)
    from redline_canary.commands import history_import

    history_import.register(inner)


def run_merge(args: argparse.Namespace) -> int:
    """Exit 0: merged. Exit 2 *with* the summary line (or the JSON) on stdout: merged, but
    some fragment lines were corrupt and left out. Exit 2 with nothing on stdout and one
    line on stderr: nothing was merged (bad file, disk full, history and fragment look
    swapped) and the history is unchanged. A torn tail a killed writer left in the history
    is cut off first, named on stderr and counted in the summary; the merge still exits 0
    (every complete line is kept, the history is whole)."""
    if args.into is not None:
        out, fragments = args.into, args.files
    elif len(args.files) < 2:
        raise BadInput("history merge: give the history with --into HISTORY, and at least one FRAGMENT")
    else:
        out, fragments = args.files[0], args.files[1:]  # the older positional form: HISTORY FRAGMENT...
    result = merge(out, fragments, refuse_swapped=args.into is None)
    if args.into is None:
        print(inert_line(f"warning: merged into {out}, the first file named; write `history merge --into {out} "
                         "FRAGMENT...` to say which file is the history"), file=sys.stderr)
    for fragment, line, why in result.corrupt:
        print(inert_line(f"{fragment}:{line}: corrupt record skipped ({why})"), file=sys.stderr)
    for torn in result.torn_tails:
        print(torn.message(), file=sys.stderr)
    in_folder = is_history_folder(Path(out))
    warnings = [size_warning(path, size, in_folder=in_folder) for path, size in large_history_files(out)]
    for warning in warnings:
        print(inert_line(f"warning: {warning}"), file=sys.stderr)
    if warnings and actions.in_github_actions():
        actions.emit([workflow_command("warning", w, title="History file large") for w in warnings])
        actions.append_summary("".join(f"> **Warning:** {md_text(w)}\n\n" for w in warnings))
    if args.json:
        print(json_text({"out": out, "appended": result.appended,
                         "already_present": result.already_present,
                         "corrupt": [{"fragment": f, "line": n, "why": w} for f, n, w in result.corrupt],
                         "torn_tails": [{"file": str(t.file), "line": t.line, "bytes": len(t.removed)}
                                        for t in result.torn_tails],
                         "warnings": warnings},
                        indent=None))
    else:
        repaired = f", torn tails removed {len(result.torn_tails)}" if result.torn_tails else ""
        print(f"{out}: appended {result.appended}, already present {result.already_present}, "
              f"corrupt {len(result.corrupt)}{repaired}")
    return EXIT_BAD_INPUT if result.corrupt else EXIT_PASS


def large_history_files(out: str, limit: int = LARGE_HISTORY_BYTES) -> list[tuple[Path, int]]:
    """The history's files at or over ``limit`` bytes (the file itself, or each file of a folder)."""
    target = Path(out)
    files = folder_files(target) if is_history_folder(target) else [target]
    found = []
    for f in files:
        try:
            size = f.stat().st_size
        except OSError:
            continue
        if size >= limit:
            found.append((f, size))
    return found


def size_warning(path: Path, size: int, *, in_folder: bool) -> str:
    advice = ("one year's records this large: check for a runaway matrix, or move part of the year to its own file"
              if in_folder else "merge into a folder instead (history/, one file per year) and keep this file as it is")
    return f"{path} is {size / 1_000_000:.1f} MB; GitHub refuses a push with a file over 100 MB: {advice}"
