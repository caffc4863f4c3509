"""The legacy series file: import Redline's ``seed-scores.jsonl`` into it, and read it (issue 15).

Kept apart from ``history.py`` on purpose: the legacy series is its own file with its own
schema tag, so no gate, baseline or history reader can take a Redline line for a record.
Importing is idempotent (a line already imported, by repo, PR and time, is not added
again) and all or nothing: the file is rewritten whole through :func:`files.safe_write_text`
with its old bytes first, so a failure leaves it as it was. Corrupt source lines are named
with their line number and left out, never guessed at.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, replace
from pathlib import Path

from redline_canary.errors import BadInput
from redline_canary.report.legacy import LegacyRun, from_stored, parse_redline, to_stored
from redline_canary.run.files import refuse_unsafe_target, safe_write_text
from redline_canary.run.history import is_history_folder, open_regular

MAX_BYTES = 64 << 20  # Redline writes ~2 KB a line: this is tens of thousands of runs
DEFAULT_OUT = "history/redline-legacy.jsonl"


@dataclass
class LegacyRead:
    runs: list[LegacyRun] = field(default_factory=list)
    corrupt: list[tuple[int, str]] = field(default_factory=list)


def _lines(path: Path, what: str) -> list[bytes]:
    with open_regular(path, what) as fh:
        data = fh.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise BadInput(f"{path}: larger than {MAX_BYTES >> 20} MiB; split it first")
    return data.split(b"\n")


def _read(path: Path, what: str, redline: bool) -> LegacyRead:
    out = LegacyRead()
    for number, raw in enumerate(_lines(path, what), start=1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw.decode("utf-8"))
            run = parse_redline(obj) if redline else from_stored(obj)
        except UnicodeDecodeError:
            out.corrupt.append((number, "not valid UTF-8"))
            continue
        except (ValueError, RecursionError) as exc:  # JSONDecodeError and LegacyError are ValueErrors
            why = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
            out.corrupt.append((number, f"not valid JSON ({why})" if isinstance(exc, json.JSONDecodeError)
                                else why[:120]))
            continue
        out.runs.append(replace(run, source=f"{path.name}:{number}") if redline else run)
    return out


def read_redline_scores(path: Path | str) -> LegacyRead:
    """Redline's own ``seed-scores.jsonl``."""
    return _read(Path(path), "Redline seed-scores file", redline=True)


def read_legacy(path: Path | str) -> LegacyRead:
    """The legacy series file this product wrote; a missing file is an empty series."""
    p = Path(path)
    if not os.path.lexists(p):
        raise BadInput(f"{p}: legacy history file not found")
    return _read(p, "legacy history", redline=False)


@dataclass
class ImportSummary:
    appended: int
    already_present: int
    corrupt: list[tuple[int, str]]


def import_redline(src: Path | str, out: Path | str, imported_at: str) -> ImportSummary:
    """Append every Redline score of ``src`` not already in ``out``, tagged as the legacy series."""
    target = Path(out)
    if is_history_folder(target):
        raise BadInput(f"--out {target}: is a folder; the legacy series is one file of its own (history readers "
                       "would take its lines for corrupt records), e.g. history/redline-legacy.jsonl")
    refuse_unsafe_target(target, "--out")  # before reading it: a link is neither followed nor replaced
    source = read_redline_scores(src)
    if source.corrupt and not source.runs:
        line, why = source.corrupt[0]
        raise BadInput(f"{src}:{line}: no Redline score could be read ({why}); nothing was written")
    old_bytes = b""
    present: set[tuple[str, int | None, str]] = set()
    if os.path.lexists(target):
        existing = read_legacy(target)
        if existing.corrupt and not existing.runs:
            line, why = existing.corrupt[0]
            raise BadInput(f"{target}:{line}: not a legacy history file ({why}); nothing was written")
        present = {r.identity for r in existing.runs}
        with open_regular(target, "legacy history") as fh:
            old_bytes = fh.read(MAX_BYTES + 1)
    new: list[str] = []
    already = 0
    for run in source.runs:
        if run.identity in present:
            already += 1
            continue
        present.add(run.identity)
        stored = to_stored(replace(run, imported_at=imported_at))
        new.append(json.dumps(stored, ensure_ascii=False, separators=(",", ":")))
    if new:
        try:
            head = old_bytes.decode("utf-8")
        except UnicodeDecodeError:
            raise BadInput(f"{target}: not UTF-8 text; nothing was written") from None
        if head and not head.endswith("\n"):
            head += "\n"
        safe_write_text(target, head + "\n".join(new) + "\n")
    return ImportSummary(len(new), already, source.corrupt)
