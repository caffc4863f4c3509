"""The value-checking schema of a history record: the type table and its validator. Pure.

What it owns: :data:`FIELDS` (the types of ``history/schema.json``, which
``tests/test_history_types.py`` holds equal to the file), the one validator that walks it
(:func:`record_problem`, :func:`shape_problem`) and :class:`RecordProblem`, the one
exception that says why a JSON value is not a record (or not one a reader can use). Why apart from :mod:`record`: the
typed record classes are what every reader uses; the table and its messages are what
``Record.from_json`` and the history writer check against, and change with the schema
file, not with the readers.

``jsonschema`` is not used at run time: it pulls a compiled extension (``rpds-py``) and
``referencing``/``attrs`` into every install of a CLI that runs in CI, and it would judge
differently from what users are told today (its ``$`` matches before a final newline, it
has no 2**53 bound on counts, and its messages name no key the way ours do).
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

SEVERITIES = ("BLOCKER", "CRITICAL", "MAJOR", "MINOR", "INFO")
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


# --------------------------------------------------------------------------- the type table


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
    "sites": _k("array", items=_k("object", required=("path", "line"), properties={
        "path": _k("string"), "line": _k("integer"), "pushed_path": _k("string"), "pushed_line": _k("integer")})),
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
    "schema": _k("integer", minimum=1),  # the schema file names the versions so far; later ones must read too
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
    "layer": _k("string", min_length=1),  # schema 3, when used
    "variant": _k("string", pattern=r"^[a-z0-9][a-z0-9-]{0,31}$"),  # schema 3, when used
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
    "clean_findings_outside_fix": _k("integer", "null", minimum=0),
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


class HugeInt(int):
    """Stands in for an integer literal too long to convert (Python refuses more than 4300
    digits): big enough to fail every bound, and it remembers how long it was."""

    digits = 0


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
    if isinstance(value, (list, tuple)):
        return "array"
    return "object" if isinstance(value, Mapping) else type(value).__name__


def _shown(value: Any) -> str:
    """A short, terminal-safe picture of a bad value for the message."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value).replace("inf", "Infinity").replace("nan", "NaN")
    if isinstance(value, HugeInt):
        return f"an integer of {value.digits} digits"
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_INT:
        return f"an integer of {len(str(abs(value)))} digits"
    if isinstance(value, (Mapping, list, tuple)):
        return _ARTICLE[_type_of(value)]
    # JSON with ASCII escapes: one line, no control character, nothing a terminal acts on.
    text = json.dumps(value, ensure_ascii=True)
    return text if len(text) <= 40 else text[:37] + "..."


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
                # Key names are record text too: the path is quoted in messages, so it is
                # shown with ASCII escapes here, once, rather than for every key read.
                return json.dumps(problem[0], ensure_ascii=True)[1:-1][:160], problem[1]
    return None


def shape_problem(record: Any) -> str | None:
    """Why a JSON value is no record at all (what a torn line or a bad merge leaves)."""
    if not isinstance(record, Mapping):
        return "not a JSON object"
    missing = [k for k in REQUIRED_KEYS if k not in record]
    return f"missing keys: {', '.join(missing)}" if missing else None


class RecordProblem(ValueError):
    """Why a JSON value is not a record, or not one a reader can use. ``key`` is None when
    it is no record at all (not an object, keys missing: *corrupt*), else the path of the
    first value of the wrong shape (*malformed*: no writer of this program makes one, so it
    is a bug or a forgery). ``Record.from_json`` raises it for the schema's types; the
    scoreboard (``report.build``) for what it needs beyond them, with a ``why`` that names
    the key itself."""

    def __init__(self, why: str, key: str | None = None) -> None:
        super().__init__(f"{key}: {why}" if key is not None else why)
        self.why = why
        self.key = key
