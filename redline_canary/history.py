"""The JSONL history file: append under a lock, read past corrupt lines, merge fragments.

History is append-only: nothing here rewrites what a file held. Concurrent writers
(matrix jobs, a ``run`` and a ``score``) serialise on an exclusive ``flock``. A batch of
records is written with one ``write`` of all its bytes and ``fsync``-ed; if that fails in
any way (disk full, file size limit, a short write, an interruption) the file is cut back
to the size it had before the batch, so it holds either the whole batch or none of it —
never half a line.

Reading: only regular files are read (``/dev/zero``, a FIFO or a directory are refused
before a byte is read). Each line is one of

* a **record**: a JSON object with every required key, each of the type
  ``history/schema.json`` gives it (checked by :func:`record_problem`, the one place
  that knows the types);
* **corrupt**: not JSON, not an object, or missing keys — what a crash mid-write or a bad
  merge leaves; readers skip it and name its line;
* **malformed**: a JSON object with the required keys but a value of the wrong type
  (``"caught": "x"``, ``"gate": null``, NaN). No writer of this program produces one, so
  it is a bug or a forgery: ``gate`` and ``actions-report`` refuse it (exit 2, naming
  ``FILE:LINE: key``); ``report`` and ``history merge`` skip and name it like a corrupt
  line. Every malformed line is also in ``corrupt``.
"""

from __future__ import annotations

import errno
import fcntl
import functools
import json
import math
import os
import re
import stat
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from redline_canary.errors import BadInput
from redline_canary.render import inert_line, terminal_safe

IDENTITY_KEYS = ("run_id", "repo", "stack", "kind", "attempt")
REQUIRED_KEYS = (
    "schema", "run_id", "recorded_at", "repo", "stack", "kind", "pr", "reviewer", "mode",
    "corpus_fingerprint", "outcome", "markers", "caught", "undercalled", "missed",
    "duplicates", "borderline", "noise", "cited", "recall", "recall_ci95", "blocker_recall",
    "by_severity", "caught_seeds", "undercalled_seeds", "missed_seeds",
    "clean_false_positives", "gate", "tool_version",
)

# Counts are far below this; anything above is forged (and would overflow a float when a
# rate is computed from it). 2**53 is also the largest integer every JSON reader keeps.
MAX_INT = 2**53
SEVERITIES = ("BLOCKER", "CRITICAL", "MAJOR", "MINOR", "INFO")


# --------------------------------------------------------------------------- types
#
# The types of ``history/schema.json``, as a small table a hand validator walks (the
# schema file is not read at run time, and jsonschema is not a runtime dependency);
# ``tests/test_history_types.py`` checks the table against the schema file.

@dataclass(frozen=True)
class Kind:
    """One value's type. ``of``: JSON type names (``integer``, ``number``, ``string``,
    ``boolean``, ``array``, ``object``, ``null``)."""

    of: tuple[str, ...]
    minimum: float | None = None
    maximum: float | None = None
    enum: tuple[Any, ...] | None = None
    pattern: str | None = None
    min_length: int | None = None
    items: Kind | None = None
    min_items: int | None = None
    max_items: int | None = None
    properties: Mapping[str, Kind] = field(default_factory=dict)
    required: tuple[str, ...] = ()
    closed: bool = False  # additionalProperties: false
    values: Kind | None = None  # additionalProperties: <schema>


def _k(*of: str, **kw: Any) -> Kind:
    return Kind(tuple(of), **kw)


COUNT = _k("integer", minimum=0)
RATE = _k("number", "null", minimum=0, maximum=1)
CI = _k("array", "null", items=_k("number", minimum=0, maximum=1), min_items=2, max_items=2)
_SEV_ROW = _k("object", required=("markers", "caught", "undercalled", "missed"),
              properties={k: COUNT for k in ("markers", "caught", "undercalled", "missed")})
_EVIDENCE = _k("object", properties={
    "comment_id": _k("integer", "null"), "channel": _k("string"), "source": _k("string"),
    "url": _k("string"), "path": _k("string", "null"), "line": _k("integer", "null"),
    "end_line": _k("integer", "null"), "severity": _k("string", "null"), "word": _k("string"),
    "distance": _k("integer", minimum=0), "cited": _k("boolean"), "excerpt": _k("string"),
})
_SEED = _k("object", required=("n", "path", "line", "severity", "rule"), properties={
    "n": _k("integer", minimum=1), "path": _k("string"), "line": _k("integer"),
    "lines": _k("integer", minimum=1), "pushed_path": _k("string"), "pushed_line": _k("integer", "null"),
    "pushed_end_line": _k("integer", "null"), "severity": _k(enum=SEVERITIES),
    "rule": _k("string"), "symbol": _k("string", "null"), "description": _k("string"),
    "evidence": _EVIDENCE,
})
SEEDS = _k("array", items=_SEED)
_UNMATCHED = _k("object", properties={
    "class": _k(enum=("noise", "duplicate", "borderline")), "comment_id": _k("integer", "null"),
    "channel": _k("string"), "source": _k("string"), "url": _k("string"), "path": _k("string", "null"),
    "line": _k("integer", "null"), "end_line": _k("integer", "null"), "severity": _k("string", "null"),
    "word": _k("string"), "excerpt": _k("string"),
})

FIELDS: dict[str, Kind] = {
    "schema": _k("integer", minimum=1),  # the schema file says const 1; later versions must read too
    "run_id": _k("string", min_length=1),
    "attempt": _k("integer", minimum=1),
    "recorded_at": _k("string", pattern=r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$"),
    "repo": _k("string", pattern=r"^[^/\s]+/[^/\s]+$"),
    "stack": _k("string", min_length=1),
    "kind": _k(enum=("seeded", "clean")),
    "pr": _k("integer", "null"),
    "reviewer": _k("string"),
    "mode": _k(enum=("blind", "marked")),
    "corpus_fingerprint": _k("string", pattern=r"^[0-9a-f]{16}$"),
    "outcome": _k(enum=("scored", "silent", "error", "cancelled")),
    "notice": _k("string", "null"),
    "findings": COUNT,
    **{k: COUNT for k in ("markers", "caught", "undercalled", "missed", "duplicates", "borderline",
                          "noise", "cited")},
    "cited_prefix": COUNT,  # caught seeds whose Redline/<SEVERITY> [rule-id] prefix names the rule
    "recall": RATE,
    "recall_ci95": CI,
    "blocker_recall": RATE,
    "blocker_recall_ci95": CI,
    "blocker_found": RATE,
    "blocker_found_ci95": CI,
    "by_severity": _k("object", properties={s: _SEV_ROW for s in SEVERITIES}, closed=True),
    "caught_seeds": SEEDS,
    "undercalled_seeds": SEEDS,
    "missed_seeds": SEEDS,
    "unmatched_findings": _k("array", items=_UNMATCHED),
    "clean_false_positives": _k("integer", "null", minimum=0),
    "clean_findings_below_floor": _k("integer", "null", minimum=0),
    "gate": _k("object", required=("passed", "reasons"),
               properties={"passed": _k("boolean"), "reasons": _k("array", items=_k("string")),
                           "warnings": _k("array", items=_k("string")),
                           "acknowledged": _k("array", items=_k("integer", minimum=1)),
                           "failing_seeds": _k("array", items=_k("integer", minimum=1)),
                           "blocker_gate": _k(enum=("caught", "found"))}),
    "tool_version": _k("string"),
    "timings": _k("object", values=_k("number")),
    "api_requests": _k("object", values=_k("integer")),
}

_ARTICLE = {"integer": "an integer", "number": "a number", "string": "a string", "boolean": "true or false",
            "array": "a list", "object": "an object", "null": "null"}


def _type_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):  # a record built in memory holds tuples (wilson())
        return "array"
    return "object" if isinstance(value, Mapping) else type(value).__name__


def _shown(value: Any) -> str:
    """A short, terminal-safe picture of a bad value for the message."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value).replace("inf", "Infinity").replace("nan", "NaN")
    if isinstance(value, _HugeInt):
        return f"an integer of {value.digits} digits"
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_INT:
        return f"an integer of {len(str(abs(value)))} digits"
    if isinstance(value, (Mapping, list, tuple)):
        return _ARTICLE[_type_of(value)]
    text = json.dumps(value, ensure_ascii=True)
    return inert_line(text if len(text) <= 40 else text[:37] + "...")


def _expected(kind: Kind) -> str:
    if kind.enum is not None:
        return "one of " + ", ".join(map(str, kind.enum))
    names = [_ARTICLE[t] for t in kind.of if t != "null"]
    text = " or ".join(names) + (" or null" if "null" in kind.of else "")
    if kind.minimum is not None and kind.maximum is not None:
        text += f" from {kind.minimum:g} to {kind.maximum:g}"
    elif kind.minimum is not None:
        text += f" >= {kind.minimum:g}"
    if kind.min_items is not None and kind.min_items == kind.max_items:
        text += f" of {kind.min_items} items"
    return text


@functools.lru_cache(maxsize=64)
def _pattern(pattern: str) -> re.Pattern[str]:
    return re.compile(re.sub(r"\$$", r"\\Z", pattern))


def _check(value: Any, kind: Kind, key: str) -> tuple[str, str] | None:
    """(key path, what is wrong) for the first problem in ``value``, else None."""
    if kind.enum is not None:
        ok = isinstance(value, str) and value in kind.enum
        return None if ok else (key, f"expected {_expected(kind)}, got {_shown(value)}")
    got = _type_of(value)
    fits = got in kind.of or (got == "integer" and "number" in kind.of)
    if not fits:
        return key, f"expected {_expected(kind)}, got {_shown(value)}"
    if got in ("integer", "number"):
        if got == "number" and not math.isfinite(value):
            return key, f"expected {_expected(kind)}, got {_shown(value)}"
        if abs(value) > MAX_INT:
            return key, f"expected {_expected(kind)} (at most {MAX_INT}), got {_shown(value)}"
        if (kind.minimum is not None and value < kind.minimum) or (kind.maximum is not None
                                                                   and value > kind.maximum):
            return key, f"expected {_expected(kind)}, got {_shown(value)}"
    elif got == "string":
        if kind.min_length is not None and len(value) < kind.min_length:
            return key, "expected a non-empty string"
        # JSON Schema's "$" is the end of the string; Python's also matches before a final
        # newline, so it is read as \Z.
        if kind.pattern is not None and not _pattern(kind.pattern).search(value):
            return key, f"expected a string matching {kind.pattern}, got {_shown(value)}"
    elif got == "array":
        if (kind.min_items is not None and len(value) < kind.min_items) or (
                kind.max_items is not None and len(value) > kind.max_items):
            return key, f"expected {_expected(kind)}, got {len(value)} items"
        if kind.items is not None:
            for i, item in enumerate(value):
                problem = _check(item, kind.items, f"{key}[{i}]")
                if problem:
                    return problem
    elif got == "object":
        for name in kind.required:
            if name not in value:
                return f"{key}.{name}", "required key missing"
        for name, item in value.items():
            sub = kind.properties.get(name) or kind.values
            if sub is None:
                if kind.closed:
                    return f"{key}.{name}", "unknown key"
                continue
            problem = _check(item, sub, f"{key}.{name}")
            if problem:
                return problem
    return None


def record_problem(record: Any) -> tuple[str, str] | None:
    """The first type problem of a record that has every required key, as (key, why);
    None for a well-formed record. Keys this table does not know are allowed."""
    for key, kind in FIELDS.items():
        if key in record:
            problem = _check(record[key], kind, key)
            if problem:
                # Key names are record text too: the path is quoted in messages, so it is made
                # inert here, once, rather than for every key of every record read.
                return inert_line(problem[0])[:160], problem[1]
    return None


# --------------------------------------------------------------------------- reading

CURRENT_SCHEMA = 2


def upgrade(record: dict[str, Any]) -> dict[str, Any]:
    """An older record in today's shape, so no reader needs to know history's versions.

    Schema 1 had no ``blocker_found``: it is what ``by_severity`` already says (BLOCKER
    markers caught or undercalled). The line on disk is never touched: this is a view.
    """
    if record.get("schema", 1) >= CURRENT_SCHEMA or "blocker_found" in record:
        return record
    row = record["by_severity"].get("BLOCKER") if isinstance(record.get("by_severity"), dict) else None
    found: float | None = None
    if (record.get("kind") == "seeded" and record.get("outcome") == "scored" and row and row.get("markers")):
        found = round((row["caught"] + row["undercalled"]) / row["markers"], 4)
    return {**record, "blocker_found": found}



@dataclass(frozen=True)
class Malformed:
    """A line that is a JSON object with the required keys but a value of the wrong type."""

    line: int
    key: str
    why: str
    run_id: str | None  # the run the line names, when its run_id is a string
    file: str = ""  # in a history folder: the file of the folder the line is in

    def message(self, path: Path | str) -> str:
        where = f"{path}/{self.file}" if self.file else str(path)
        return f"{where}:{self.line}: {self.key}: {self.why}"


@dataclass
class HistoryRead:
    records: list[dict[str, Any]] = field(default_factory=list)
    corrupt: list[tuple[int, str]] = field(default_factory=list)  # (line number, why); includes malformed
    malformed: list[Malformed] = field(default_factory=list)

    def refuse_malformed(self, path: Path | str, run_ids: Iterable[str] | None = None) -> None:
        """Raise BadInput (exit 2) naming the first malformed line, or with ``run_ids``
        the first that belongs to one of those runs (or names no run at all)."""
        wanted = None if run_ids is None else set(run_ids)
        for bad in self.malformed:
            if wanted is None or bad.run_id is None or bad.run_id in wanted:
                raise BadInput(bad.message(path))


def identity(record: Mapping[str, Any]) -> tuple[Any, ...]:
    return tuple(record.get(k, 1 if k == "attempt" else None) for k in IDENTITY_KEYS)


def _problem(record: Any) -> str | None:
    if not isinstance(record, dict):
        return "not a JSON object"
    missing = [k for k in REQUIRED_KEYS if k not in record]
    return f"missing keys: {', '.join(missing)}" if missing else None


class _HugeInt(int):
    """Stands in for an integer literal too long to convert (Python refuses more than 4300
    digits): big enough to fail every bound, and it remembers how long it was."""

    digits = 0


def _parse_int(text: str) -> int:
    if len(text.lstrip("-")) <= 30:
        return int(text)
    huge = _HugeInt(MAX_INT + 1)
    huge.digits = len(text.lstrip("-"))
    return huge


def _nonfinite(name: str) -> float:
    return float(name.replace("Infinity", "inf"))  # kept, so the type check can name the key


def open_regular(path: Path | str, what: str = "file") -> BinaryIO:
    """Open ``path`` for binary reading if it is a regular file, else BadInput (exit 2).

    Opened non-blocking and checked with ``fstat`` on the open descriptor, so a FIFO
    neither blocks the open nor gets read, and a file swapped after a check is still the
    one checked. A symlink to a regular file is followed."""
    p = Path(path)
    try:
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except FileNotFoundError:
        raise BadInput(f"{p}: {what} not found") from None
    except OSError as exc:
        raise BadInput(f"{p}: cannot read {what} ({exc.strerror})") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise BadInput(f"{p}: {what} is not a regular file ({_file_kind(mode)})")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _file_kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a plain file"


HISTORY_SUFFIX = ".jsonl"


def is_history_folder(path: Path | str) -> bool:
    """A history may be a folder of JSONL files (one per year): DESIGN §8."""
    return Path(path).is_dir()


def folder_files(folder: Path) -> list[Path]:
    """The folder's history files, oldest name first: ``*.jsonl``, not hidden, not nested."""
    try:
        names = sorted(p for p in folder.iterdir() if p.name.endswith(HISTORY_SUFFIX) and not p.name.startswith("."))
    except OSError as exc:
        raise BadInput(f"{folder}: cannot read the history folder ({exc.strerror})") from None
    return names


def read_history(path: Path | str, *, what: str = "history") -> HistoryRead:
    """Every valid record; corrupt and malformed lines are reported with their number,
    never dropped silently. A missing file is an empty history; a folder is read file by
    file (``*.jsonl``, by name: ``2026.jsonl``, ``2027.jsonl``…); anything else that is not a
    regular file is refused (BadInput)."""
    out = HistoryRead()
    p = Path(path)
    if not os.path.lexists(p):
        return out
    if is_history_folder(p):
        for file in folder_files(p):
            _read_file(file, what, out, file.name)
        return out
    _read_file(p, what, out, "")
    return out


def _read_file(p: Path, what: str, out: HistoryRead, label: str) -> None:
    def bad_line(number: int, why: str) -> None:
        out.corrupt.append((number, f"{label}: {why}" if label else why))

    try:
        with open_regular(p, what) as fh:
            for number, raw in enumerate(fh, start=1):
                if not raw.strip():
                    continue
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError:
                    bad_line(number, "not valid UTF-8")
                    continue
                try:
                    record = json.loads(line, parse_constant=_nonfinite, parse_int=_parse_int)
                except json.JSONDecodeError as exc:
                    bad_line(number, f"not valid JSON ({exc.msg})")
                    continue
                except (ValueError, RecursionError) as exc:  # a 5000-digit integer, 100 000 nested lists
                    bad_line(number, f"not valid JSON ({terminal_safe(exc)[:80]})")
                    continue
                why = _problem(record)
                if why:
                    bad_line(number, why)
                    continue
                bad = record_problem(record)
                if bad:
                    key, reason = bad
                    run_id = record.get("run_id")
                    out.malformed.append(Malformed(number, key, reason, run_id if isinstance(run_id, str) else None,
                                                   label))
                    bad_line(number, f"{key}: {reason}")
                    continue
                out.records.append(upgrade(record))
    except OSError as exc:
        raise BadInput(f"{p}: cannot read {what} ({exc.strerror or exc.__class__.__name__})") from None


def run_records(path: Path | str, run_ids: Sequence[str], warn: Callable[[str], None]) -> list[dict[str, Any]]:
    """The records of the runs ``gate`` and ``issue`` judge. A malformed record of those runs
    is refused (exit 2: judging around it could pass a run that failed), no record at all is
    bad input naming the file, and every corrupt line is named through ``warn``."""
    read = read_history(path)
    read.refuse_malformed(path, run_ids)
    records = [r for r in read.records if r["run_id"] in run_ids]
    if not records:
        shown = " or ".join(inert_line(repr(x)) for x in run_ids)
        skipped = (f" ({len(read.corrupt)} corrupt line(s) skipped, first: line {read.corrupt[0][0]}, "
                   f"{read.corrupt[0][1]})") if read.corrupt else ""
        raise BadInput(inert_line(f"{path}: no records with run_id {shown}{skipped}"))
    for line, why in read.corrupt:
        warn(inert_line(f"{path}:{line}: corrupt record skipped ({why})"))
    return records


def year_file(folder: Path, record: Mapping[str, Any]) -> Path:
    """Where a record goes in a history folder: the file of the year it was recorded in."""
    year = str(record.get("recorded_at") or "")[:4]
    return folder / f"{year if year.isdigit() else 'undated'}{HISTORY_SUFFIX}"


# --------------------------------------------------------------------------- writing


def _encode_one(r: Mapping[str, Any]) -> bytes:
    try:
        return json.dumps(r, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8") + b"\n"
    except UnicodeEncodeError:  # a lone surrogate read from a fragment: kept exactly, as a \u escape
        return json.dumps(r, ensure_ascii=True, separators=(",", ":"), allow_nan=False).encode("ascii") + b"\n"


def _encode(rows: Iterable[Mapping[str, Any]]) -> bytes:
    return b"".join(_encode_one(r) for r in rows)


def _check_rows(rows: list[Mapping[str, Any]]) -> None:
    for i, r in enumerate(rows):
        why = _problem(r)
        if why:
            raise BadInput(f"record {i}: {why}")
        bad = record_problem(r)
        if bad:
            raise BadInput(f"record {i}: {bad[0]}: {bad[1]}")


def append_records(path: Path | str, records: Iterable[Mapping[str, Any]]) -> int:
    """Append records under an exclusive lock, all or nothing; returns how many were written."""
    rows = list(records)
    _check_rows(rows)
    if not rows:
        return 0
    p = Path(path)
    if is_history_folder(p):
        by_file: dict[Path, list[Mapping[str, Any]]] = {}
        for r in rows:
            by_file.setdefault(year_file(p, r), []).append(r)
        # Each year's file is its own all-or-nothing batch (a run's records share a year).
        written = 0
        for file, batch in sorted(by_file.items()):
            written += _append_locked(file, _constant(batch))
        return written
    return _append_locked(p, lambda: rows)


def _constant(rows: list[Mapping[str, Any]]) -> Callable[[], list[Mapping[str, Any]]]:
    return lambda: rows


def _append_locked(p: Path, choose: Callable[[], list[Mapping[str, Any]]]) -> int:
    """Append what ``choose`` returns, calling it while the lock is held, so a writer that
    decides *what* to append from the file's contents (``merge``) cannot race another.

    The batch is one ``os.write`` of all its bytes, then ``fsync``. Any failure — an
    error, a short write, an interruption — truncates the file back to its size before
    the batch (under the same lock), so it is left exactly as it was."""
    if p.parent != Path():
        try:
            p.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise BadInput(f"{p}: cannot append to history ({exc.strerror})") from None
    try:
        fd = os.open(p, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        raise BadInput(f"{p}: cannot append to history ({exc.strerror})") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise BadInput(f"{p}: history is not a regular file ({_file_kind(mode)})")
        os.set_blocking(fd, True)
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            rows = choose()
            if rows:
                _write_batch(p, fd, _encode(rows))
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    except OSError as exc:
        raise BadInput(f"{p}: cannot append to history ({exc.strerror})") from None
    finally:
        os.close(fd)
    return len(rows)


def _write_batch(p: Path, fd: int, data: bytes) -> None:
    size = os.fstat(fd).st_size
    if size and os.pread(fd, 1, size - 1) != b"\n":
        # A file whose last line lacks its newline (a crash mid-write by an older
        # version, or a hand edit) gets one first, so the damage stays on that line.
        data = b"\n" + data
    try:
        written = os.write(fd, data)
        if written != len(data):
            raise OSError(errno.ENOSPC, f"short write: {written} of {len(data)} bytes (disk full or file too large?)")
        os.fsync(fd)
    except BaseException as exc:
        try:
            os.ftruncate(fd, size)
            os.fsync(fd)
        except OSError as undo:
            raise BadInput(f"{p}: cannot append to history ({_why(exc)}), and cutting it back to "
                           f"{size} bytes failed too ({undo.strerror}): the last line may be partial") from None
        if not isinstance(exc, OSError):
            raise  # KeyboardInterrupt and the like: rolled back, now let it through
        raise BadInput(f"{p}: cannot append to history ({_why(exc)}); the file is unchanged") from None


def _why(exc: BaseException) -> str:
    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    return exc.__class__.__name__


# --------------------------------------------------------------------------- merging


@dataclass
class MergeResult:
    appended: int
    already_present: int
    corrupt: list[tuple[str, int, str]]  # (fragment, line, why)


def merge(out: Path | str, fragments: Iterable[Path | str]) -> MergeResult:
    """Append every fragment record not already in ``out``; idempotent, also when two
    merges run at once (what is new is decided under the history's lock). Corrupt and
    malformed fragment lines are reported, never merged."""
    candidates: list[dict[str, Any]] = []
    corrupt: list[tuple[str, int, str]] = []
    for fragment in fragments:
        frag = Path(fragment)
        if not os.path.lexists(frag):
            raise BadInput(f"{frag}: fragment not found")
        read = read_history(frag, what="fragment")
        corrupt += [(str(frag), n, why) for n, why in read.corrupt]
        candidates += read.records
    present = 0
    target = Path(out)

    def new_among(chosen: list[dict[str, Any]]) -> Callable[[], list[Mapping[str, Any]]]:
        def pick() -> list[Mapping[str, Any]]:
            nonlocal present
            seen = {identity(r) for r in read_history(target).records}
            new: list[Mapping[str, Any]] = []
            for r in chosen:
                key = identity(r)
                if key in seen:
                    present += 1
                    continue
                seen.add(key)
                new.append(r)
            return new
        return pick

    if not candidates:
        return MergeResult(0, present, corrupt)
    if not is_history_folder(target):
        return MergeResult(_append_locked(target, new_among(candidates)), present, corrupt)
    # A folder: each year's file is written under its own lock, and what is new is decided
    # against the whole folder under it (a record always lands in its own year's file, so
    # two merges of the same record meet on the same lock).
    appended = 0
    for file in sorted({year_file(target, r) for r in candidates}):
        appended += _append_locked(file, new_among([r for r in candidates if year_file(target, r) == file]))
    return MergeResult(appended, present, corrupt)
