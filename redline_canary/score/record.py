"""The history record as a typed value (docs/record.md): one frozen :class:`Record` per scored PR. Pure.

Why one type: every command reads records back (gate, issue, report, the action's summary,
audit, merge, baselines), and each used to walk a ``dict`` with its own ``.get`` defaults,
so the readers disagreed about what a record may hold. Now a record is checked once, when
it is made from JSON (:meth:`Record.from_json`), by the one validator of
:mod:`~redline_canary.score.record_schema`, and upgraded there from older schema versions;
a reader gets attributes of known types and needs to know neither.

:meth:`Record.to_json` gives back exactly the JSON a record came from: the same keys in
the same order, keys this version does not know kept verbatim (``extra``), keys an older
writer left out still left out. For a record this program built it is the line the
history has always held. Absent and ``null`` read the same to a reader (``has`` tells
them apart where a rule needs it); ``layout`` only decides how a record is written back,
so it takes no part in equality.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import MISSING, dataclass, field, fields
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeVar, get_args

from redline_canary.corpus.model import (  # a record without ``layer``/``variant``: packaged, canonical
    CANONICAL,
    PACKAGED,
)
from redline_canary.score.record_fastpath import Parts, fits
from redline_canary.score.record_schema import FIELDS, REQUIRED_KEYS, RecordProblem, record_problem, shape_problem

if TYPE_CHECKING:  # verdict imports this module; the gate rule's type is only named here
    from redline_canary.score.verdict import BlockerGate

# 2: blocker_found, per-seed evidence, marker extents; 3: found = on topic at >= floor, sites, gate rule,
# and (when used) the corpus layer and the variant id
CURRENT_SCHEMA = 3

# The closed sets a record's values come from (``record_schema.FIELDS`` holds a record read
# from JSON to the same values). A value from outside (a flag, a manifest, a targets file)
# becomes one of these by ``in`` one of the tuples below, which narrows it.
PRKind = Literal["seeded", "clean"]  # "Kind" is record_schema's type-table entry
Mode = Literal["blind", "marked"]
Outcome = Literal["scored", "silent", "error", "cancelled"]
KINDS: tuple[PRKind, ...] = get_args(PRKind)
MODES: tuple[Mode, ...] = get_args(Mode)
OUTCOMES: tuple[Outcome, ...] = get_args(Outcome)


# --------------------------------------------------------------------------- the parts


@dataclass(frozen=True, kw_only=True)
class _Object:
    """What every part of a record shares: the keys this version does not know (kept
    verbatim) and the key order it was read in (None: built here, written canonically)."""

    extra: Mapping[str, Any] = field(default_factory=dict)
    layout: tuple[str, ...] | None = field(default=None, compare=False, repr=False)

    KEYS: ClassVar[tuple[str, ...]] = ()  # every key this version knows, in the order it writes them
    KEYSET: ClassVar[frozenset[str]] = frozenset()  # the same, as a set (made once per class)
    OPTIONAL: ClassVar[frozenset[str]] = frozenset()  # left out when unset (see _is_set)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.KEYSET = frozenset(cls.KEYS)

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


_T = TypeVar("_T", bound=_Object)


def _extra(data: Mapping[str, Any], keyset: frozenset[str]) -> dict[str, Any]:
    """The keys of ``data`` this version does not know (usually none: one set test, no copy).
    ``keyset`` is a class's KEYSET, built once per class."""
    if keyset.issuperset(data):
        return {}
    return {k: v for k, v in data.items() if k not in keyset}


def _assemble(cls: type[_T], values: dict[str, Any]) -> _T:
    """An instance of a frozen record class from ``values``, one per field, without its
    ``__init__``: that sets each field through ``object.__setattr__`` (the price of
    ``frozen``), which made building the ~200 000 parts of a 10 000-record history cost
    more than parsing it. Only ``from_json`` uses it, with every field given and every
    value already checked (tests/unit/test_record.py holds a read equal to a built one)."""
    obj = object.__new__(cls)
    obj.__dict__.update(values)
    return obj


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
        return _assemble(cls, {"markers": data["markers"], "caught": data["caught"],
                               "undercalled": data["undercalled"], "missed": data["missed"],
                               "extra": _extra(data, cls.KEYSET), "layout": tuple(data)})


@dataclass(frozen=True, kw_only=True)
class Evidence(_Object):
    """The finding a caught or undercalled seed was matched to (docs/matching.md). Every key is
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
        values = {k: data.get(k) for k in cls.KEYS}
        values["extra"], values["layout"] = _extra(data, cls.KEYSET), tuple(data)
        return _assemble(cls, values)


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
    # Other places of the same defect (SITE lines), from schema 3: each {path, line,
    # pushed_path, pushed_line}. Left out when the seed has none.
    sites: tuple[Mapping[str, Any], ...] = ()
    evidence: Evidence | None = None  # caught and undercalled seeds, from schema 2

    KEYS: ClassVar[tuple[str, ...]] = ("n", "path", "line", "lines", "pushed_path", "pushed_line",
                                       "pushed_end_line", "severity", "rule", "symbol", "description",
                                       "sites", "evidence")
    OPTIONAL: ClassVar[frozenset[str]] = frozenset({"evidence", "sites"})

    def _is_set(self, key: str, value: Any) -> bool:
        return bool(value) if key == "sites" else value is not None

    def _values(self) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in self.KEYS[:-2]}
        out["sites"] = [dict(s) for s in self.sites]
        out["evidence"] = self.evidence.to_json() if self.evidence is not None else None
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Seed:
        get = data.get
        evidence = get("evidence")
        return _assemble(cls, {
            "n": data["n"], "path": data["path"], "line": data["line"], "severity": data["severity"],
            "rule": data["rule"], "lines": get("lines"), "pushed_path": get("pushed_path"),
            "pushed_line": get("pushed_line"), "pushed_end_line": get("pushed_end_line"),
            "symbol": get("symbol"), "description": get("description"), "sites": tuple(get("sites") or ()),
            "evidence": Evidence.from_json(evidence) if evidence is not None else None,
            "extra": _extra(data, cls.KEYSET), "layout": tuple(data)})


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
        values = {k: data.get(k) for k in cls.KEYS[1:]}
        values["klass"], values["extra"], values["layout"] = data.get("class"), _extra(data, cls.KEYSET), tuple(data)
        return _assemble(cls, values)


@dataclass(frozen=True, kw_only=True)
class Gate(_Object):
    """The verdict written into a record (``verdict.decide`` makes it)."""

    passed: bool
    reasons: tuple[str, ...] = ()
    failing_seeds: tuple[int, ...] = ()  # the BLOCKER seeds that fail it (absent before it was recorded)
    warnings: tuple[str, ...] = ()
    acknowledged: tuple[int, ...] = ()
    blocker_gate: BlockerGate = "caught"

    KEYS: ClassVar[tuple[str, ...]] = ("passed", "reasons", "failing_seeds", "warnings", "acknowledged",
                                       "blocker_gate")
    OPTIONAL: ClassVar[frozenset[str]] = frozenset({"warnings", "acknowledged", "blocker_gate"})

    def _values(self) -> dict[str, Any]:
        return {"passed": self.passed, "reasons": list(self.reasons), "failing_seeds": list(self.failing_seeds),
                "warnings": list(self.warnings), "acknowledged": list(self.acknowledged),
                "blocker_gate": self.blocker_gate}

    def _is_set(self, key: str, value: Any) -> bool:
        if key == "blocker_gate":  # a new record always says which rule judged it (schema 3)
            return self.layout is None or value != "caught"
        return bool(value)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Gate:
        get = data.get
        return _assemble(cls, {
            "passed": data["passed"], "reasons": tuple(data["reasons"]),
            "failing_seeds": tuple(get("failing_seeds") or ()), "warnings": tuple(get("warnings") or ()),
            "acknowledged": tuple(get("acknowledged") or ()), "blocker_gate": get("blocker_gate") or "caught",
            "extra": _extra(data, cls.KEYSET), "layout": tuple(data)})


SEED_LISTS = ("caught_seeds", "undercalled_seeds", "missed_seeds")
_NO_BLOCKERS = Counts()


@dataclass(frozen=True, kw_only=True)
class Record(_Object):
    """One history line: the numbers, outcome and gate of one PR (docs/matching.md, docs/record.md)."""

    schema: int
    run_id: str
    attempt: int = 1
    recorded_at: str
    repo: str
    stack: str
    kind: PRKind
    pr: int | None
    reviewer: str
    mode: Mode
    corpus_fingerprint: str
    layer: str = PACKAGED  # the corpus layer the stack came from; written when not the packaged one
    variant: str = CANONICAL  # the variant published (docs/corpus.md#variants); written when one was
    outcome: Outcome
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
    # Clean findings outside every FIXED place of a mined twin: reported, never counted.
    clean_findings_outside_fix: int | None = None
    gate: Gate
    tool_version: str
    timings: Mapping[str, float] | None = None
    api_requests: Mapping[str, int] | None = None
    # Not in the schema: written by the confirmation rule and by ``score --baseline``.
    confirmed_by_attempts: int | None = None
    baseline: Mapping[str, Any] | None = None

    KEYS: ClassVar[tuple[str, ...]] = (
        "schema", "run_id", "attempt", "recorded_at", "repo", "stack", "kind", "pr", "reviewer", "mode",
        "corpus_fingerprint", "layer", "variant", "outcome", "notice", "findings", "markers", "caught",
        "undercalled", "missed", "duplicates", "borderline", "noise", "cited", "cited_prefix", "recall",
        "recall_ci95", "blocker_recall",
        "blocker_recall_ci95", "blocker_found", "blocker_found_ci95", "by_severity", "caught_seeds",
        "undercalled_seeds", "missed_seeds", "unmatched_findings", "clean_false_positives",
        "clean_findings_below_floor", "clean_findings_outside_fix", "gate", "tool_version", "timings", "api_requests",
        "confirmed_by_attempts", "baseline",
    )
    OPTIONAL: ClassVar[frozenset[str]] = frozenset({"layer", "variant", "timings", "api_requests",
                                                    "confirmed_by_attempts", "baseline", "cited_prefix",
                                                    "clean_findings_outside_fix"})
    _PLAIN: ClassVar[tuple[str, ...]] = (
        "schema", "run_id", "attempt", "recorded_at", "repo", "stack", "kind", "pr", "reviewer", "mode",
        "corpus_fingerprint", "layer", "variant", "outcome", "notice", "findings", "markers", "caught",
        "undercalled", "missed", "duplicates", "borderline", "noise", "cited", "cited_prefix", "recall",
        "blocker_recall", "blocker_found",
        "clean_false_positives", "clean_findings_below_floor", "clean_findings_outside_fix", "tool_version",
    )

    # --- reading --------------------------------------------------------------------
    @classmethod
    def from_json(cls, data: object) -> Record:
        """The record a JSON value holds, checked against the schema's types and upgraded
        to today's shape; :class:`RecordProblem` says why not."""
        if type(data) is not dict or not _REQUIRED.issubset(data):  # else nothing to say: skip the list
            why = shape_problem(data)
            if why:
                raise RecordProblem(why)
        assert isinstance(data, Mapping)
        # The fast path (record_fastpath): every key but the parts checked at once, then
        # the parts checked and built together. Any "not sure" asks the full validator,
        # which decides and words the refusal.
        rows = caught = undercalled = missed = None
        if fits(data, parts=False):
            rows = _ROWS.named(data["by_severity"], _SEVERITY_NAMES)
            caught = _SEEDS.listed(data["caught_seeds"])
            undercalled = _SEEDS.listed(data["undercalled_seeds"])
            missed = _SEEDS.listed(data["missed_seeds"])
        if rows is None or caught is None or undercalled is None or missed is None:
            problem = record_problem(data)
            if problem:
                raise RecordProblem(problem[1], problem[0])
            seed = Seed.from_json
            rows = {name: Counts.from_json(row) for name, row in data["by_severity"].items()}
            caught, undercalled, missed = (tuple(map(seed, data[k])) for k in SEED_LISTS)
        # Keys outside the schema are typed when they hold what this program writes there,
        # and kept verbatim among the extras otherwise.
        get = data.get
        confirmed = get("confirmed_by_attempts")
        if isinstance(confirmed, bool) or not isinstance(confirmed, int):
            confirmed = None
        baseline = get("baseline")
        if not isinstance(baseline, Mapping):
            baseline = None
        untyped = set()
        if confirmed is None and "confirmed_by_attempts" in data:
            untyped.add("confirmed_by_attempts")
        if baseline is None and "baseline" in data:
            untyped.add("baseline")
        timings, requests = get("timings"), get("api_requests")
        # Every key of the line, then the typed values over the non-plain ones, then the
        # keys this version does not know taken out again: one C-level copy instead of a
        # lookup per field.
        values = dict(_PLAIN_DEFAULTS)
        values.update(data)
        extra = _extra(data, cls.KEYSET)
        for key in extra:
            del values[key]
        ci, blocker_ci, found_ci = data["recall_ci95"], get("blocker_recall_ci95"), get("blocker_found_ci95")
        values["recall_ci95"] = None if ci is None else (ci[0], ci[1])
        values["blocker_recall_ci95"] = None if blocker_ci is None else (blocker_ci[0], blocker_ci[1])
        values["blocker_found_ci95"] = None if found_ci is None else (found_ci[0], found_ci[1])
        values["by_severity"] = rows
        values["caught_seeds"], values["undercalled_seeds"], values["missed_seeds"] = caught, undercalled, missed
        unmatched = get("unmatched_findings")
        values["unmatched_findings"] = tuple(map(Unmatched.from_json, unmatched)) if unmatched else ()
        values["gate"] = Gate.from_json(data["gate"])
        values["timings"] = dict(timings) if timings is not None else None
        values["api_requests"] = dict(requests) if requests is not None else None
        values["confirmed_by_attempts"] = confirmed
        values["baseline"] = dict(baseline) if baseline is not None else None
        values["extra"] = extra if not untyped else {
            k: v for k, v in data.items() if k not in cls.KEYSET or k in untyped}
        values["layout"] = tuple(data)
        if values["schema"] < 2:
            _upgrade_values(values)
        return _assemble(cls, values)

    # --- writing --------------------------------------------------------------------
    def _is_set(self, key: str, value: Any) -> bool:
        """``layer`` and ``variant`` are written when used: a record without them was
        measured on the packaged corpus's canonical files."""
        if key == "layer":
            return bool(value != PACKAGED)
        if key == "variant":
            return bool(value != CANONICAL)
        return value is not None

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
        """(repo, stack, reviewer): what a canary measures (docs/architecture.md)."""
        return self.repo, self.stack, self.reviewer

    def seeds(self, *lists: str) -> tuple[Seed, ...]:
        """The seeds of the named lists (``caught_seeds``…), in that order; all three by default."""
        return tuple(s for name in (lists or SEED_LISTS) for s in getattr(self, name))


def _upgrade_values(values: dict[str, Any]) -> None:
    """An older record's values in today's shape, so no reader needs to know history's versions.

    Schema 1 had no ``blocker_found``: it is what ``by_severity`` already says (BLOCKER
    markers caught or undercalled). The line on disk is never touched: this is a view, and
    a record written back (``history merge``) carries the key after its own."""
    layout = values["layout"]
    if values["schema"] >= 2 or "blocker_found" in layout:  # from schema 2 it is written
        return
    row = values["by_severity"].get("BLOCKER")
    found: float | None = None
    if values["kind"] == "seeded" and values["outcome"] == "scored" and row is not None and row.markers:
        found = round((row.caught + row.undercalled) / row.markers, 4)
    values["blocker_found"] = found
    values["layout"] = (*layout, "blocker_found")


# The defaults of the plain fields a record may leave out (``from_json`` gives every field).
_PLAIN_DEFAULTS: dict[str, Any] = {
    f.name: f.default for f in fields(Record) if f.name in Record._PLAIN and f.default is not MISSING}


# Checked-and-built parts, shared between records (record_fastpath.Parts).
_SEVERITY_NAMES = frozenset(FIELDS["by_severity"].properties)
_ROWS: Parts[Counts] = Parts(FIELDS["by_severity"].properties["BLOCKER"], Counts.from_json)
_SEED_KIND = FIELDS["caught_seeds"].items
assert _SEED_KIND is not None
_SEEDS: Parts[Seed] = Parts(_SEED_KIND, Seed.from_json)


def forget_shared_parts() -> None:
    """Empty the parts kept between records, so a read starts as in a new process (what
    ``benchmarks/bench_report.py`` times: a CLI reads a history once)."""
    _ROWS.clear()
    _SEEDS.clear()
_REQUIRED = frozenset(REQUIRED_KEYS)
