"""The JSONL history file: append under a lock, read past corrupt lines, merge fragments.

History is append-only: nothing here rewrites what a file held. Concurrent writers
(matrix jobs, a ``run`` and a ``score``) serialise on an exclusive ``flock``. A batch of
records is written with one ``write`` of all its bytes and ``fsync``-ed; if that fails in
any way (disk full, file size limit, a short write, an interruption) the file is cut back
to the size it had before the batch, so it holds either the whole batch or none of it —
never half a line.

A writer that is SIGKILLed (or loses power) mid-``write`` cannot cut anything back: it
leaves the complete lines it got out and one unfinished last line. The next append, under
the lock, finds that **torn tail** — a last line with no newline that is not valid JSON —
and cuts it off before writing (:class:`TornTail`, named on stderr and counted in the
merge summary). That is the one change ever made to bytes already in a history; a last
line that is complete JSON but only lacks its newline is kept and gets one. The complete
lines a killed batch left stay (``history merge`` is idempotent: merging the same fragment
again adds the rest).

Reading: only regular files are read (``/dev/zero``, a FIFO or a directory are refused
before a byte is read). Each line is one of

* a **record**: a JSON object with every required key, each of the type
  ``history/schema.json`` gives it, read as a :class:`~redline_canary.score.record.Record`
  (``Record.from_json`` checks it with :func:`record_problem`, the one place that knows
  the types, and upgrades older schema versions);
* **corrupt**: not JSON, not an object, or missing keys — what a crash mid-write or a bad
  merge leaves; readers skip it and name its line;
* **malformed**: a JSON object with the required keys but a value of the wrong type
  (``"caught": "x"``, ``"gate": null``, NaN). No writer of this program produces one, so
  it is a bug or a forgery: ``gate`` and ``actions-report`` refuse it (exit 2, naming
  ``FILE:LINE: key``); ``report`` and ``history merge`` skip and name it like a corrupt
  line. Every malformed line is also in ``corrupt``.
"""

from __future__ import annotations

import datetime as dt
import errno
import fcntl
import json
import os
import stat
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from redline_canary.errors import BadInput
from redline_canary.report.text import inert_line, terminal_safe
from redline_canary.run.collector import collector_paused
from redline_canary.run.files import file_kind
from redline_canary.score.record import Record
from redline_canary.score.record_schema import MAX_INT, HugeInt, RecordProblem, record_problem

IDENTITY_KEYS = ("run_id", "repo", "stack", "kind", "attempt")


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
    records: list[Record] = field(default_factory=list)
    corrupt: list[tuple[int, str]] = field(default_factory=list)  # (line number, why); includes malformed
    malformed: list[Malformed] = field(default_factory=list)

    def refuse_malformed(self, path: Path | str, run_ids: Iterable[str] | None = None) -> None:
        """Raise BadInput (exit 2) naming the first malformed line, or with ``run_ids``
        the first that belongs to one of those runs (or names no run at all)."""
        wanted = None if run_ids is None else set(run_ids)
        for bad in self.malformed:
            if wanted is None or bad.run_id is None or bad.run_id in wanted:
                raise BadInput(bad.message(path))


def identity(record: Record) -> tuple[Any, ...]:
    """What makes a record one measurement: the same PR of the same run, the same attempt."""
    return tuple(getattr(record, k) for k in IDENTITY_KEYS)


def _parse_int(text: str) -> int:
    if len(text.lstrip("-")) <= 30:
        return int(text)
    huge = HugeInt(MAX_INT + 1)
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
            raise BadInput(f"{p}: {what} is not a regular file ({file_kind(mode)})")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


HISTORY_SUFFIX = ".jsonl"


def is_history_folder(path: Path | str) -> bool:
    """A history may be a folder of JSONL files (one per year): docs/record.md."""
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
    with collector_paused():
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
                if raw.isspace() or not raw:
                    continue
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError:
                    bad_line(number, "not valid UTF-8")
                    continue
                try:
                    # At the parser's own speed: a hook on every integer cost a fifth of
                    # reading. The default parser keeps NaN and Infinity and reads every
                    # integer the hook would; only one over Python's 4300-digit limit fails
                    # it, and that line is read again the slow way, so its key is named.
                    try:
                        record = json.loads(line)
                    except json.JSONDecodeError:
                        raise
                    except ValueError:
                        record = parse_json(line)
                except json.JSONDecodeError as exc:
                    bad_line(number, f"not valid JSON ({exc.msg})")
                    continue
                except (ValueError, RecursionError) as exc:  # a 5000-digit integer, 100 000 nested lists
                    bad_line(number, f"not valid JSON ({terminal_safe(exc)[:80]})")
                    continue
                try:
                    out.records.append(Record.from_json(record))
                except RecordProblem as exc:
                    if exc.key is not None:
                        run_id = record.get("run_id")
                        out.malformed.append(Malformed(number, exc.key, exc.why,
                                                       run_id if isinstance(run_id, str) else None, label))
                    bad_line(number, str(exc))
    except OSError as exc:
        raise BadInput(f"{p}: cannot read {what} ({exc.strerror or exc.__class__.__name__})") from None


def parse_json(text: str) -> Any:
    """One JSON document as the history reads a line: a huge integer or NaN is kept, so the
    type check names its key instead of the parser failing on it."""
    return json.loads(text, parse_constant=_nonfinite, parse_int=_parse_int)


def document_records(doc: Any) -> HistoryRead:
    """The records of one JSON document: a record (what ``score --json`` prints) or an array
    of records. A ``corrupt`` entry's number is the item's, from 1."""
    out = HistoryRead()
    for number, item in enumerate(doc if isinstance(doc, list) else [doc], start=1):
        try:
            out.records.append(Record.from_json(item))
        except RecordProblem as exc:
            out.corrupt.append((number, str(exc)))
    return out


def run_records(path: Path | str, run_ids: Sequence[str], warn: Callable[[str], None]) -> list[Record]:
    """The records of the runs ``gate`` and ``issue`` judge. A malformed record of those runs
    is refused (exit 2: judging around it could pass a run that failed), no record at all is
    bad input naming the file, and every corrupt line is named through ``warn``."""
    read = read_history(path)
    read.refuse_malformed(path, run_ids)
    records = [r for r in read.records if r.run_id in run_ids]
    if not records:
        shown = " or ".join(inert_line(repr(x)) for x in run_ids)
        skipped = (f" ({len(read.corrupt)} corrupt line(s) skipped, first: line {read.corrupt[0][0]}, "
                   f"{read.corrupt[0][1]})") if read.corrupt else ""
        raise BadInput(inert_line(f"{path}: no records with run_id {shown}{skipped}"))
    for line, why in read.corrupt:
        warn(inert_line(f"{path}:{line}: corrupt record skipped ({why})"))
    return records


def year_file(folder: Path, record: Record) -> Path:
    """Where a record goes in a history folder: the file of the year it was recorded in."""
    year = record.recorded_at[:4]
    return folder / f"{year if year.isdigit() else 'undated'}{HISTORY_SUFFIX}"


# --------------------------------------------------------------------------- writing


Row = dict[str, Any]  # a record as the JSON line it is written as


def _encode_one(r: Row) -> bytes:
    try:
        return json.dumps(r, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8") + b"\n"
    except UnicodeEncodeError:  # a lone surrogate read from a fragment: kept exactly, as a \u escape
        return json.dumps(r, ensure_ascii=True, separators=(",", ":"), allow_nan=False).encode("ascii") + b"\n"


def _encode(rows: Iterable[Row]) -> bytes:
    return b"".join(_encode_one(r) for r in rows)


def _rows(records: Sequence[Record]) -> list[Row]:
    """The lines to write, checked by the same validator that reads them back: a record
    built with a bad value (a bug) is refused before a byte is written."""
    rows = []
    for i, r in enumerate(records):
        row = r.to_json()
        bad = record_problem(row)
        if bad:
            raise BadInput(f"record {i}: {bad[0]}: {bad[1]}")
        rows.append(row)
    return rows


@dataclass(frozen=True)
class TornTail:
    """The unfinished last line a writer killed mid-append left, cut off by the next append."""

    file: Path
    line: int  # its line number
    removed: bytes  # the bytes cut off: no newline, not valid JSON

    def message(self) -> str:
        shown = self.removed[:40].decode("utf-8", "replace") + ("…" if len(self.removed) > 40 else "")
        return inert_line(f"{self.file}:{self.line}: torn last line removed ({len(self.removed)} bytes with no "
                          f"newline, not valid JSON: a writer killed mid-append left them; every complete line "
                          f"is kept): {shown!r}")


def _stderr(message: str) -> None:
    print(message, file=sys.stderr)


def append_records(path: Path | str, records: Iterable[Record], *,
                   warn: Callable[[str], None] = _stderr) -> int:
    """Append records under an exclusive lock, all or nothing; returns how many were written.
    A torn tail cut off first is named through ``warn`` (stderr unless told)."""
    chosen = list(records)
    rows = _rows(chosen)
    if not rows:
        return 0
    p = Path(path)
    if is_history_folder(p):
        by_file: dict[Path, list[Row]] = {}
        for r, row in zip(chosen, rows, strict=True):
            by_file.setdefault(year_file(p, r), []).append(row)
        # Each year's file is its own all-or-nothing batch (a run's records share a year).
        written = 0
        for file, batch in sorted(by_file.items()):
            count, torn = _append_locked(file, _constant(batch))
            if torn is not None:
                warn(torn.message())
            written += count
        return written
    count, torn = _append_locked(p, lambda: rows)
    if torn is not None:
        warn(torn.message())
    return count


def _constant(rows: list[Row]) -> Callable[[], list[Row]]:
    return lambda: rows


def _append_locked(p: Path, choose: Callable[[], list[Row]]) -> tuple[int, TornTail | None]:
    """Append what ``choose`` returns, calling it while the lock is held, so a writer that
    decides *what* to append from the file's contents (``merge``) cannot race another.
    Returns how many rows were written and the torn tail cut off first, if there was one
    (it is cut off even when there is nothing to append).

    The batch is one ``os.write`` of all its bytes, then ``fsync``. Any failure — an
    error, a short write, an interruption — puts the file back as it was before the batch
    (under the same lock), torn tail included."""
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
            raise BadInput(f"{p}: history is not a regular file ({file_kind(mode)})")
        os.set_blocking(fd, True)
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            _refuse_foreign(p, fd)
            torn = _torn_tail(p, fd)
            rows = choose()
            if rows or torn is not None:
                _write_batch(p, fd, _encode(rows), torn)
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    except OSError as exc:
        raise BadInput(f"{p}: cannot append to history ({exc.strerror})") from None
    finally:
        os.close(fd)
    return len(rows), torn


_TAIL_CHUNK = 1 << 16


def _refuse_foreign(p: Path, fd: int) -> None:
    """BadInput if the file is not a JSONL history we may append to: its first line is not
    a JSON object, or it holds a NUL byte where we look, or its unfinished last line is not
    the start of one (a killed writer of ours leaves ``{...`` in UTF-8). A binary file given
    as ``--into`` was once "repaired" by cutting its content off as a torn tail."""
    size = os.fstat(fd).st_size
    head = os.pread(fd, min(size, _TAIL_CHUNK), 0)
    tail = os.pread(fd, min(size, _TAIL_CHUNK), max(0, size - _TAIL_CHUNK))
    newline = tail.rfind(b"\n")
    last = tail[newline + 1:] if not tail.endswith(b"\n") and (newline >= 0 or size <= _TAIL_CHUNK) else b""
    foreign = (b"\0" in head or b"\0" in tail or (head.strip() and not head.lstrip().startswith(b"{"))
               or (last and not last.lstrip().startswith(b"{")) or not _utf8_prefix(last))
    if foreign:
        raise BadInput(f"{p}: not a JSONL history (binary, or a line that is not a JSON object): refusing to "
                       "append to it or repair it; the file is unchanged")


def _utf8_prefix(data: bytes) -> bool:
    """Whether ``data`` is UTF-8, allowing a character cut off at its very end (a kill mid-write)."""
    for cut in range(4):
        try:
            data[: len(data) - cut].decode("utf-8")
            return True
        except UnicodeDecodeError:
            continue
    return False


def _torn_tail(p: Path, fd: int) -> TornTail | None:
    """The file's last line if a killed writer left it unfinished: no newline, not valid JSON."""
    size = os.fstat(fd).st_size
    if not size or os.pread(fd, 1, size - 1) == b"\n":
        return None
    start, pos = 0, size
    while pos > 0:  # back to the newline before the last line (or the start of the file)
        step = min(_TAIL_CHUNK, pos)
        pos -= step
        cut = os.pread(fd, step, pos).rfind(b"\n")
        if cut >= 0:
            start = pos + cut + 1
            break
    tail = os.pread(fd, size - start, start)
    try:
        json.loads(tail.decode("utf-8"), parse_constant=_nonfinite, parse_int=_parse_int)
        return None  # complete: only its newline is missing (a hand edit); it is kept
    except (ValueError, RecursionError):  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        pass
    lines = 1
    for pos in range(0, start, _TAIL_CHUNK):
        lines += os.pread(fd, min(_TAIL_CHUNK, start - pos), pos).count(b"\n")
    return TornTail(p, lines, tail)


def _write_batch(p: Path, fd: int, data: bytes, torn: TornTail | None) -> None:
    size = os.fstat(fd).st_size
    keep = size - len(torn.removed) if torn is not None else size
    if keep and os.pread(fd, 1, keep - 1) != b"\n":
        # A complete last line without its newline (a hand edit) gets one first, so the
        # batch starts on a line of its own.
        data = b"\n" + data
    try:
        if torn is not None:
            os.ftruncate(fd, keep)
        if data:
            written = os.write(fd, data)
            if written != len(data):
                raise OSError(errno.ENOSPC, f"short write: {written} of {len(data)} bytes "
                                            "(disk full or file too large?)")
        os.fsync(fd)
    except BaseException as exc:
        try:
            _restore(fd, keep, torn)
        except OSError as undo:
            raise BadInput(f"{p}: cannot append to history ({_why(exc)}), and cutting it back to "
                           f"{size} bytes failed too ({undo.strerror}): the last line may be partial") from None
        if not isinstance(exc, OSError):
            raise  # KeyboardInterrupt and the like: rolled back, now let it through
        raise BadInput(f"{p}: cannot append to history ({_why(exc)}); the file is unchanged") from None


def _restore(fd: int, keep: int, torn: TornTail | None) -> None:
    """The file as it was before a failed batch: cut back, and a torn tail put back."""
    os.ftruncate(fd, keep)
    if torn is not None and os.write(fd, torn.removed) != len(torn.removed):
        raise OSError(errno.ENOSPC, "short write")
    os.fsync(fd)


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
    torn_tails: list[TornTail] = field(default_factory=list)  # cut off before appending


def _recorded(record: Record) -> dt.datetime | None:
    try:
        when = dt.datetime.fromisoformat(record.recorded_at.replace("Z", "+00:00"))
    except (ValueError, AttributeError):
        return None
    return when if when.tzinfo else when.replace(tzinfo=dt.timezone.utc)


def swapped_reason(held: Sequence[Record], fragment: Sequence[Record]) -> str | None:
    """Why a history holding ``held`` looks like the fragment and ``fragment`` like the
    history, or None. Never when the history is new or empty, nor when the fragment holds
    fewer records; otherwise only when the fragment holds every record of the history and
    more, or when the history is one run newer than every record of a fragment of several
    runs (what a run's fresh records file is next to the history it was meant for)."""
    if not held or len(fragment) <= len(held):
        return None
    if {identity(r) for r in held} < {identity(r) for r in fragment}:
        return f"it already holds all {len(held)} record(s) of the history, and more"
    held_runs, fragment_runs = {r.run_id for r in held}, {r.run_id for r in fragment}
    if len(held_runs) != 1 or len(fragment_runs) < 2:
        return None
    held_times, fragment_times = [_recorded(r) for r in held], [_recorded(r) for r in fragment]
    if None in held_times or None in fragment_times:
        return None
    if min(t for t in held_times if t) > max(t for t in fragment_times if t):
        return (f"it holds {len(fragment)} record(s) of {len(fragment_runs)} runs, all older than the "
                f"{len(held)} record(s) of the one run {next(iter(held_runs))}")
    return None


def merge(out: Path | str, fragments: Iterable[Path | str], *, refuse_swapped: bool = False) -> MergeResult:
    """Append every fragment record not already in ``out``; idempotent, also when two
    merges run at once (what is new is decided under the history's lock). Corrupt and
    malformed fragment lines are reported, never merged. ``refuse_swapped``: raise
    BadInput, writing nothing, when ``out`` and a fragment look swapped (:func:`swapped_reason`)."""
    candidates: list[Record] = []
    corrupt: list[tuple[str, int, str]] = []
    reads: list[tuple[Path, list[Record]]] = []
    for fragment in fragments:
        frag = Path(fragment)
        if not os.path.lexists(frag):
            raise BadInput(f"{frag}: fragment not found")
        read = read_history(frag, what="fragment")
        corrupt += [(str(frag), n, why) for n, why in read.corrupt]
        candidates += read.records
        reads.append((frag, read.records))
    present = 0
    target = Path(out)
    if refuse_swapped and not is_history_folder(target):
        held = read_history(target).records
        for frag, records in reads:
            why = swapped_reason(held, records)
            if why is not None:
                raise BadInput(
                    f"{target} and {frag} look swapped: {frag} looks like the history ({why}); nothing was "
                    f"merged. The history comes first; say which is which with --into: "
                    f"`history merge --into {frag} {target}`, or `--into {target} {frag}` to merge as given")

    def new_among(chosen: list[Record]) -> Callable[[], list[Row]]:
        def pick() -> list[Row]:
            nonlocal present
            seen = {identity(r) for r in read_history(target).records}
            new: list[Row] = []
            for r in chosen:
                key = identity(r)
                if key in seen:
                    present += 1
                    continue
                seen.add(key)
                new.append(r.to_json())
            return new
        return pick

    if not candidates:
        return MergeResult(0, present, corrupt)
    if not is_history_folder(target):
        batches = [(target, candidates)]
    else:
        # A folder: each year's file is written under its own lock, and what is new is decided
        # against the whole folder under it (a record always lands in its own year's file, so
        # two merges of the same record meet on the same lock).
        batches = [(file, [r for r in candidates if year_file(target, r) == file])
                   for file in sorted({year_file(target, r) for r in candidates})]
    result = MergeResult(0, 0, corrupt)
    for file, chosen in batches:
        count, torn = _append_locked(file, new_among(chosen))
        result.appended += count
        if torn is not None:
            result.torn_tails.append(torn)
    result.already_present = present
    return result
