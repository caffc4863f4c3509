"""Records for tests of the pure readers: a test writes only the keys it is about.

``as_record`` fills every other required key (and a seed's required keys) with a neutral
value, then reads the result exactly as the history does (``Record.from_json``), so a
test can never hand a reader something the history would have refused.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from redline_canary.run import history
from redline_canary.score.record import Record
from redline_canary.score.record_schema import SEVERITIES

_ZERO = {"markers": 0, "caught": 0, "undercalled": 0, "missed": 0}
BASE: dict[str, Any] = {
    "schema": 2, "run_id": "r1", "attempt": 1, "recorded_at": "2026-11-30T10:00:00Z", "repo": "acme/canary",
    "stack": "mini", "kind": "seeded", "pr": 1, "reviewer": "redline", "mode": "blind",
    "corpus_fingerprint": "0123456789abcdef", "outcome": "scored", "markers": 0, "caught": 0,
    "undercalled": 0, "missed": 0, "duplicates": 0, "borderline": 0, "noise": 0, "cited": 0, "recall": None,
    "recall_ci95": None, "blocker_recall": None, "by_severity": {s: dict(_ZERO) for s in SEVERITIES},
    "caught_seeds": [], "undercalled_seeds": [], "missed_seeds": [], "clean_false_positives": None,
    "gate": {"passed": True, "reasons": []}, "tool_version": "t",
}
_SEED = {"path": "app.py", "line": 1, "rule": "core/rule"}


def _seed(s: Mapping[str, Any]) -> dict[str, Any]:
    return {**_SEED, "line": s.get("n", 1), **s}


def as_record(data: Mapping[str, Any]) -> Record:
    doc = {**BASE, **data}
    for key in ("caught_seeds", "undercalled_seeds", "missed_seeds"):
        doc[key] = [_seed(s) for s in doc[key]]
    if isinstance(doc["gate"], dict) and "reasons" not in doc["gate"]:
        doc["gate"] = {"reasons": [], **doc["gate"]}
    return Record.from_json(doc)


def as_records(items: Iterable[Mapping[str, Any]]) -> list[Record]:
    return [as_record(x) for x in items]


def record(run_id: str = "r1", kind: str = "seeded", stack: str = "mini", outcome: str = "scored",
           passed: bool = True, attempt: int = 1) -> dict[str, Any]:
    sev = {s: {"markers": 0, "caught": 0, "undercalled": 0, "missed": 0}
           for s in ("BLOCKER", "CRITICAL", "MAJOR", "MINOR", "INFO")}
    return {
        "schema": 1, "run_id": run_id, "attempt": attempt, "recorded_at": "2026-11-30T10:00:00Z",
        "repo": "acme/canary", "stack": stack, "kind": kind, "pr": 1, "reviewer": "redline",
        "mode": "blind", "corpus_fingerprint": "0123456789abcdef", "outcome": outcome,
        "markers": 0, "caught": 0, "undercalled": 0, "missed": 0, "duplicates": 0, "borderline": 0,
        "noise": 0, "cited": 0, "recall": None, "recall_ci95": None, "blocker_recall": None,
        "by_severity": sev, "caught_seeds": [], "undercalled_seeds": [], "missed_seeds": [],
        "clean_false_positives": 0 if kind == "clean" else None,
        "gate": {"passed": passed, "reasons": [] if passed else ["x"]}, "tool_version": "t",
    }


def append_records(path: Path, rows: list[dict[str, Any]], **options: Any) -> int:
    """Write test rows as the program writes records: each read as a Record first."""
    return history.append_records(path, [Record.from_json(r) for r in rows], **options)
