"""The history record as a typed value (DESIGN §8): one frozen :class:`Record` per scored PR. Pure.

Why one type: every command reads records back (gate, issue, report, the action's summary,
audit, merge, baselines), and each used to walk a ``dict`` with its own ``.get`` defaults,
so the readers disagreed about what a record may hold. Now a record is checked once, when
it is made from JSON (:meth:`Record.from_json`), by the one validator below, and upgraded
there from older schema versions; a reader gets attributes of known types and needs to
know neither.

The validator walks a small type table, :data:`FIELDS`: the types of
``history/schema.json``, which ``tests/test_history_types.py`` holds equal to the file.
``jsonschema`` is not used at run time: it pulls a compiled extension (``rpds-py``) and
``referencing``/``attrs`` into every install of a CLI that runs in CI, and it would judge
differently from what users are told today (its ``$`` matches before a final newline, it
has no 2**53 bound on counts, and its messages name no key the way ours do).

:meth:`Record.to_json` gives back exactly the JSON a record came from: the same keys in
the same order, keys this version does not know kept verbatim (``extra``), keys an older
writer left out still left out. For a record this program built it is the line the
history has always held. Absent and ``null`` read the same to a reader (``has`` tells
them apart where a rule needs it); ``layout`` only decides how a record is written back,
so it takes no part in equality.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

CURRENT_SCHEMA = 2  # 2: blocker_found, per-seed evidence, marker extents
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
    """Why a JSON value is not a record. ``key`` is None when it is no record at all (not
    an object, keys missing: *corrupt*), else the path of the first value of the wrong type
    (*malformed*: no writer of this program makes one, so it is a bug or a forgery)."""

    def __init__(self, why: str, key: str | None = None) -> None:
        super().__init__(f"{key}: {why}" if key is not None else why)
        self.why = why
        self.key = key


# --------------------------------------------------------------------------- the parts


@dataclass(frozen=True, kw_only=True)
class _Object:
    """What every part of a record shares: the keys this version does not know (kept
    verbatim) and the key order it was read in (None: built here, written canonically)."""

    extra: Mapping[str, Any] = field(default_factory=dict)
    layout: tuple[str, ...] | None = field(default=None, compare=False, repr=False)

    KEYS: ClassVar[tuple[str, ...]] = ()  # every key this version knows, in the order it writes them
    OPTIONAL: ClassVar[frozenset[str]] = frozenset()  # left out when unset (see _is_set)

    def has(self, key: str) -> bool:
        """Whether the JSON held ``key`` (always, for a part this program built)."""
        return self.layout is None or key in self.layout

    def _values(self) -> dict[str, Any]:
        raise NotImplementedError

    def _is_set(self, key: str, value: Any) -> bool:
        return value is not None

    def to_json(self) -> dict[str, Any]:
        """The JSON object: read keys where and as they were read, then anything set since."""
        values = self._values()
        out: dict[str, Any] = {}
        for key in self.layout or ():
            if key in self.extra:
                out[key] = self.extra[key]
            elif key in values:
                out[key] = values[key]
        for key, value in values.items():
            if key in out:
                continue
            if key in self.OPTIONAL:
                if self._is_set(key, value):
                    out[key] = value
            elif self.layout is None:
                out[key] = value
        for key, value in self.extra.items():
            out.setdefault(key, value)
        return out


_KEYSETS: dict[tuple[str, ...], frozenset[str]] = {}


def _extra(data: Mapping[str, Any], known: tuple[str, ...]) -> dict[str, Any]:
    """The keys of ``data`` this version does not know (usually none: one set test, no copy).
    ``known`` is a class's KEYS constant, so its set is built once per class."""
    keyset = _KEYSETS.get(known)
    if keyset is None:
        keyset = _KEYSETS[known] = frozenset(known)
    if keyset.issuperset(data):
        return {}
    return {k: v for k, v in data.items() if k not in keyset}


def _pair(value: Any) -> tuple[float, float] | None:
    return None if value is None else (value[0], value[1])


def _list(value: tuple[float, float] | None) -> list[float] | None:
    return None if value is None else list(value)


@dataclass(frozen=True, kw_only=True)
class Counts(_Object):
    """One row of ``by_severity``: that severity's seeds and what became of them."""

    markers: int = 0
    caught: int = 0
    undercalled: int = 0
    missed: int = 0

    KEYS: ClassVar[tuple[str, ...]] = ("markers", "caught", "undercalled", "missed")

    def _values(self) -> dict[str, Any]:
        return {"markers": self.markers, "caught": self.caught, "undercalled": self.undercalled,
                "missed": self.missed}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Counts:
        return cls(markers=data["markers"], caught=data["caught"], undercalled=data["undercalled"],
                   missed=data["missed"], extra=_extra(data, cls.KEYS), layout=tuple(data))


@dataclass(frozen=True, kw_only=True)
class Evidence(_Object):
    """The finding a caught or undercalled seed was matched to (DESIGN §6). Every key is
    optional in the schema: an absent one reads as None."""

    comment_id: int | None = None
    channel: str | None = None
    source: str | None = None
    url: str | None = None
    path: str | None = None
    line: int | None = None
    end_line: int | None = None
    severity: str | None = None
    word: str | None = None
    distance: int | None = None
    cited: bool | None = None
    excerpt: str | None = None

    KEYS: ClassVar[tuple[str, ...]] = ("comment_id", "channel", "source", "url", "path", "line", "end_line",
                                       "severity", "word", "distance", "cited", "excerpt")

    def _values(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.KEYS}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Evidence:
        return cls(**{k: data.get(k) for k in cls.KEYS}, extra=_extra(data, cls.KEYS), layout=tuple(data))


@dataclass(frozen=True, kw_only=True)
class Seed(_Object):
    """One seed of the corpus as the record lists it (caught, undercalled or missed)."""

    n: int
    path: str
    line: int
    severity: str
    rule: str
    lines: int | None = None
    pushed_path: str | None = None
    pushed_line: int | None = None
    pushed_end_line: int | None = None
    symbol: str | None = None
    description: str | None = None
    evidence: Evidence | None = None  # caught and undercalled seeds, from schema 2

    KEYS: ClassVar[tuple[str, ...]] = ("n", "path", "line", "lines", "pushed_path", "pushed_line",
                                       "pushed_end_line", "severity", "rule", "symbol", "description",
                                       "evidence")
    OPTIONAL: ClassVar[frozenset[str]] = frozenset({"evidence"})

    def _values(self) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in self.KEYS[:-1]}
        out["evidence"] = self.evidence.to_json() if self.evidence is not None else None
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Seed:
        evidence = data.get("evidence")
        return cls(n=data["n"], path=data["path"], line=data["line"], severity=data["severity"],
                   rule=data["rule"], lines=data.get("lines"), pushed_path=data.get("pushed_path"),
                   pushed_line=data.get("pushed_line"), pushed_end_line=data.get("pushed_end_line"),
                   symbol=data.get("symbol"), description=data.get("description"),
                   evidence=Evidence.from_json(evidence) if evidence is not None else None,
                   extra=_extra(data, cls.KEYS), layout=tuple(data))


@dataclass(frozen=True, kw_only=True)
class Unmatched(_Object):
    """A finding no seed took (noise, a duplicate, a borderline place): what an audit adjudicates."""

    klass: str | None = None  # "class" in the JSON
    comment_id: int | None = None
    channel: str | None = None
    source: str | None = None
    url: str | None = None
    path: str | None = None
    line: int | None = None
    end_line: int | None = None
    severity: str | None = None
    word: str | None = None
    excerpt: str | None = None

    KEYS: ClassVar[tuple[str, ...]] = ("class", "comment_id", "channel", "source", "url", "path", "line",
                                       "end_line", "severity", "word", "excerpt")

    def _values(self) -> dict[str, Any]:
        return {"class": self.klass, **{k: getattr(self, k) for k in self.KEYS[1:]}}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Unmatched:
        return cls(klass=data.get("class"), **{k: data.get(k) for k in cls.KEYS[1:]},
                   extra=_extra(data, cls.KEYS), layout=tuple(data))


@dataclass(frozen=True, kw_only=True)
class Gate(_Object):
    """The verdict written into a record (``verdict.decide`` makes it)."""

    passed: bool
    reasons: tuple[str, ...] = ()
    failing_seeds: tuple[int, ...] = ()  # the BLOCKER seeds that fail it (absent before it was recorded)
    warnings: tuple[str, ...] = ()
    acknowledged: tuple[int, ...] = ()
    blocker_gate: str = "caught"

    KEYS: ClassVar[tuple[str, ...]] = ("passed", "reasons", "failing_seeds", "warnings", "acknowledged",
                                       "blocker_gate")
    OPTIONAL: ClassVar[frozenset[str]] = frozenset({"warnings", "acknowledged", "blocker_gate"})

    def _values(self) -> dict[str, Any]:
        return {"passed": self.passed, "reasons": list(self.reasons), "failing_seeds": list(self.failing_seeds),
                "warnings": list(self.warnings), "acknowledged": list(self.acknowledged),
                "blocker_gate": self.blocker_gate}

    def _is_set(self, key: str, value: Any) -> bool:
        return value != "caught" if key == "blocker_gate" else bool(value)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Gate:
        return cls(passed=data["passed"], reasons=tuple(data["reasons"]),
                   failing_seeds=tuple(data.get("failing_seeds") or ()), warnings=tuple(data.get("warnings") or ()),
                   acknowledged=tuple(data.get("acknowledged") or ()),
                   blocker_gate=data.get("blocker_gate") or "caught",
                   extra=_extra(data, cls.KEYS), layout=tuple(data))


SEED_LISTS = ("caught_seeds", "undercalled_seeds", "missed_seeds")
_NO_BLOCKERS = Counts()


@dataclass(frozen=True, kw_only=True)
class Record(_Object):
    """One history line: the numbers, outcome and gate of one PR (DESIGN §6, §8)."""

    schema: int
    run_id: str
    attempt: int = 1
    recorded_at: str
    repo: str
    stack: str
    kind: str  # seeded | clean
    pr: int | None
    reviewer: str
    mode: str  # blind | marked
    corpus_fingerprint: str
    outcome: str  # scored | silent | error | cancelled
    notice: str | None = None
    findings: int | None = None  # None: not recorded (older writers)
    markers: int
    caught: int
    undercalled: int
    missed: int
    duplicates: int
    borderline: int
    noise: int
    cited: int
    cited_prefix: int | None = None  # Redline's way of counting rule attribution (redline profile)
    recall: float | None
    recall_ci95: tuple[float, float] | None
    blocker_recall: float | None
    blocker_recall_ci95: tuple[float, float] | None = None
    blocker_found: float | None = None
    blocker_found_ci95: tuple[float, float] | None = None
    by_severity: Mapping[str, Counts]
    caught_seeds: tuple[Seed, ...]
    undercalled_seeds: tuple[Seed, ...]
    missed_seeds: tuple[Seed, ...]
    unmatched_findings: tuple[Unmatched, ...] = ()
    clean_false_positives: int | None
    clean_findings_below_floor: int | None = None
    gate: Gate
    tool_version: str
    timings: Mapping[str, float] | None = None
    api_requests: Mapping[str, int] | None = None
    # Not in the schema: written by the confirmation rule and by ``score --baseline``.
    confirmed_by_attempts: int | None = None
    baseline: Mapping[str, Any] | None = None

    KEYS: ClassVar[tuple[str, ...]] = (
        "schema", "run_id", "attempt", "recorded_at", "repo", "stack", "kind", "pr", "reviewer", "mode",
        "corpus_fingerprint", "outcome", "notice", "findings", "markers", "caught", "undercalled", "missed",
        "duplicates", "borderline", "noise", "cited", "cited_prefix", "recall", "recall_ci95", "blocker_recall",
        "blocker_recall_ci95", "blocker_found", "blocker_found_ci95", "by_severity", "caught_seeds",
        "undercalled_seeds", "missed_seeds", "unmatched_findings", "clean_false_positives",
        "clean_findings_below_floor", "gate", "tool_version", "timings", "api_requests",
        "confirmed_by_attempts", "baseline",
    )
    OPTIONAL: ClassVar[frozenset[str]] = frozenset({"timings", "api_requests", "confirmed_by_attempts",
                                                    "baseline", "cited_prefix"})
    _PLAIN: ClassVar[tuple[str, ...]] = (
        "schema", "run_id", "attempt", "recorded_at", "repo", "stack", "kind", "pr", "reviewer", "mode",
        "corpus_fingerprint", "outcome", "notice", "findings", "markers", "caught", "undercalled", "missed",
        "duplicates", "borderline", "noise", "cited", "cited_prefix", "recall", "blocker_recall", "blocker_found",
        "clean_false_positives", "clean_findings_below_floor", "tool_version",
    )

    # --- reading --------------------------------------------------------------------
    @classmethod
    def from_json(cls, data: object) -> Record:
        """The record a JSON value holds, checked against the schema's types and upgraded
        to today's shape; :class:`RecordProblem` says why not."""
        why = shape_problem(data)
        if why:
            raise RecordProblem(why)
        assert isinstance(data, Mapping)
        problem = record_problem(data)
        if problem:
            raise RecordProblem(problem[1], problem[0])
        # Keys outside the schema are typed when they hold what this program writes there,
        # and kept verbatim among the extras otherwise.
        confirmed = data.get("confirmed_by_attempts")
        if isinstance(confirmed, bool) or not isinstance(confirmed, int):
            confirmed = None
        baseline = data.get("baseline")
        if not isinstance(baseline, Mapping):
            baseline = None
        untyped = {k for k, v in (("confirmed_by_attempts", confirmed), ("baseline", baseline))
                   if k in data and v is None}
        timings, requests = data.get("timings"), data.get("api_requests")
        record = cls(
            **{k: data[k] for k in cls._PLAIN if k in data},
            recall_ci95=_pair(data["recall_ci95"]),
            blocker_recall_ci95=_pair(data.get("blocker_recall_ci95")),
            blocker_found_ci95=_pair(data.get("blocker_found_ci95")),
            by_severity={name: Counts.from_json(row) for name, row in data["by_severity"].items()},
            caught_seeds=tuple(Seed.from_json(s) for s in data["caught_seeds"]),
            undercalled_seeds=tuple(Seed.from_json(s) for s in data["undercalled_seeds"]),
            missed_seeds=tuple(Seed.from_json(s) for s in data["missed_seeds"]),
            unmatched_findings=tuple(Unmatched.from_json(u) for u in data.get("unmatched_findings") or ()),
            gate=Gate.from_json(data["gate"]),
            timings=dict(timings) if timings is not None else None,
            api_requests=dict(requests) if requests is not None else None,
            confirmed_by_attempts=confirmed,
            baseline=dict(baseline) if baseline is not None else None,
            extra={k: v for k, v in data.items() if k not in cls.KEYS or k in untyped},
            layout=tuple(data),
        )
        return _upgrade(record)

    # --- writing --------------------------------------------------------------------
    def _values(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key in self.KEYS:
            value = getattr(self, key)
            if key.endswith("_ci95"):
                value = _list(value)
            elif key == "by_severity":
                value = {name: row.to_json() for name, row in value.items()}
            elif key in SEED_LISTS or key == "unmatched_findings":
                value = [item.to_json() for item in value]
            elif key == "gate":
                value = value.to_json()
            elif key in ("timings", "api_requests", "baseline") and value is not None:
                value = dict(value)
            out[key] = value
        return out

    # --- what readers ask -----------------------------------------------------------
    @property
    def scored(self) -> bool:
        return self.outcome == "scored"

    @property
    def seeded(self) -> bool:
        return self.kind == "seeded"

    @property
    def blocker(self) -> Counts:
        """The BLOCKER row of ``by_severity`` (all zero when the record has none)."""
        return self.by_severity.get("BLOCKER") or _NO_BLOCKERS

    @property
    def target(self) -> tuple[str, str, str]:
        """(repo, stack, reviewer): what a canary measures (DESIGN §1)."""
        return self.repo, self.stack, self.reviewer

    def seeds(self, *lists: str) -> tuple[Seed, ...]:
        """The seeds of the named lists (``caught_seeds``…), in that order; all three by default."""
        return tuple(s for name in (lists or SEED_LISTS) for s in getattr(self, name))


def _upgrade(record: Record) -> Record:
    """An older record in today's shape, so no reader needs to know history's versions.

    Schema 1 had no ``blocker_found``: it is what ``by_severity`` already says (BLOCKER
    markers caught or undercalled). The line on disk is never touched: this is a view, and
    a record written back (``history merge``) carries the key after its own."""
    if record.schema >= CURRENT_SCHEMA or record.has("blocker_found"):
        return record
    row = record.by_severity.get("BLOCKER")
    found: float | None = None
    if record.kind == "seeded" and record.outcome == "scored" and row is not None and row.markers:
        found = round((row.caught + row.undercalled) / row.markers, 4)
    return replace(record, blocker_found=found, layout=(*(record.layout or ()), "blocker_found"))
