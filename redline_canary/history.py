"""The JSONL history file: append under a lock, read past corrupt lines, merge fragments.

History is append-only: nothing here truncates or rewrites a file. Concurrent writers
(matrix jobs, a ``run`` and a ``score``) serialise on an exclusive ``flock``; one record
is one line written in one ``write`` so a reader never sees half a record.
"""

from __future__ import annotations

import fcntl
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonlines

from redline_canary.errors import BadInput

IDENTITY_KEYS = ("run_id", "repo", "stack", "kind", "attempt")
REQUIRED_KEYS = (
    "schema", "run_id", "recorded_at", "repo", "stack", "kind", "pr", "reviewer", "mode",
    "corpus_fingerprint", "outcome", "markers", "caught", "undercalled", "missed",
    "duplicates", "borderline", "noise", "cited", "recall", "recall_ci95", "blocker_recall",
    "by_severity", "caught_seeds", "undercalled_seeds", "missed_seeds",
    "clean_false_positives", "gate", "tool_version",
)


@dataclass
class HistoryRead:
    records: list[dict[str, Any]] = field(default_factory=list)
    corrupt: list[tuple[int, str]] = field(default_factory=list)  # (line number, why)


def identity(record: Mapping[str, Any]) -> tuple[Any, ...]:
    return tuple(record.get(k, 1 if k == "attempt" else None) for k in IDENTITY_KEYS)


def _problem(record: Any) -> str | None:
    if not isinstance(record, dict):
        return "not a JSON object"
    missing = [k for k in REQUIRED_KEYS if k not in record]
    return f"missing keys: {', '.join(missing)}" if missing else None


def read_history(path: Path | str) -> HistoryRead:
    """Every valid record; corrupt lines are reported with their number, never dropped."""
    out = HistoryRead()
    p = Path(path)
    if not p.exists():
        return out
    try:
        with p.open("r", encoding="utf-8") as fh:
            for number, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as exc:
                    out.corrupt.append((number, f"not valid JSON ({exc.msg})"))
                    continue
                why = _problem(record)
                if why:
                    out.corrupt.append((number, why))
                else:
                    out.records.append(record)
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInput(f"{p}: cannot read history ({exc.__class__.__name__})") from None
    return out


def append_records(path: Path | str, records: Iterable[Mapping[str, Any]]) -> int:
    """Append records under an exclusive lock; returns how many were written."""
    rows = list(records)
    for i, r in enumerate(rows):
        why = _problem(r)
        if why:
            raise BadInput(f"record {i}: {why}")
    if not rows:
        return 0
    return _append_locked(Path(path), lambda: rows)


def _append_locked(p: Path, choose: Callable[[], list[Mapping[str, Any]]]) -> int:
    """Append what ``choose`` returns, calling it while the lock is held, so a writer that
    decides *what* to append from the file's contents (``merge``) cannot race another."""
    if p.parent != Path():
        p.parent.mkdir(parents=True, exist_ok=True)
    try:
        with p.open("a", encoding="utf-8") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                rows = choose()
                if rows:
                    _ensure_line_start(p, fh)
                    writer = jsonlines.Writer(fh, compact=True, sort_keys=False, flush=True)
                    writer.write_all(rows)
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)
    except OSError as exc:
        raise BadInput(f"{p}: cannot append to history ({exc.strerror})") from None
    return len(rows)


def _ensure_line_start(path: Path, fh: Any) -> None:
    """A file whose last line lacks its newline (a crash mid-write) gets one first,
    so the damage stays confined to that line."""
    size = path.stat().st_size
    if size:
        with path.open("rb") as rb:
            rb.seek(size - 1)
            if rb.read(1) != b"\n":
                fh.write("\n")
                fh.flush()


@dataclass
class MergeResult:
    appended: int
    already_present: int
    corrupt: list[tuple[str, int, str]]  # (fragment, line, why)


def merge(out: Path | str, fragments: Iterable[Path | str]) -> MergeResult:
    """Append every fragment record not already in ``out``; idempotent, also when two
    merges run at once (what is new is decided under the history's lock)."""
    candidates: list[dict[str, Any]] = []
    corrupt: list[tuple[str, int, str]] = []
    for fragment in fragments:
        frag = Path(fragment)
        if not frag.is_file():
            raise BadInput(f"{frag}: fragment not found")
        read = read_history(frag)
        corrupt += [(str(frag), n, why) for n, why in read.corrupt]
        candidates += read.records
    present = 0

    def new_records() -> list[Mapping[str, Any]]:
        nonlocal present
        seen = {identity(r) for r in read_history(out).records}
        new: list[Mapping[str, Any]] = []
        for r in candidates:
            key = identity(r)
            if key in seen:
                present += 1
                continue
            seen.add(key)
            new.append(r)
        return new

    appended = _append_locked(Path(out), new_records) if candidates else 0
    return MergeResult(appended, present, corrupt)
