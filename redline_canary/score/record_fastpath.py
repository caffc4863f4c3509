"""The history's type table compiled into one yes/no check per key: the fast path of reading. Pure.

Why: :func:`~redline_canary.score.record_schema.record_problem` walks the table generically
(a type name per value, a message ready for the first problem) and was most of the time
the scoreboard spent reading a history (docs/record.md#reading-fast). A line that is
well formed — every line this program writes — needs none of that: only a yes.

The contract that keeps the strictness: :func:`fits` answers True only for a value
``record_problem`` accepts. It is *narrower*, never wider: it knows only the exact types
``json.loads`` makes (``dict``, ``list``, ``str``, ``int``, ``float``, ``None``, ``bool``)
and answers False for anything else, so a False proves nothing and the caller asks the
full validator, which decides and words the refusal exactly as before.
``tests/unit/test_record_fastpath.py`` holds the two to agreeing on generated values.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from typing import Any, Generic, TypeVar

from redline_canary.score.record_schema import FIELDS, MAX_INT, Kind
from redline_canary.score.record_schema import _pattern as pattern_of

Check = Callable[[Any], bool]
T = TypeVar("T")


class _Compiler:
    """Turns kinds into Python source, one expression per scalar kind, one function per
    array or object kind, and compiles it. Why source and not closures: a closure per
    value is a call per value (millions in a long history); an inline test is a few
    bytecodes. Only this table's own data goes into the source (key names through
    ``repr``, bounds as numbers); patterns and enums are passed as names."""

    def __init__(self) -> None:
        self.env: dict[str, Any] = {"isfinite": math.isfinite}
        self.lines: list[str] = []

    def name(self, value: Any) -> str:
        key = f"c{len(self.env)}"
        self.env[key] = value
        return key

    def expr(self, kind: Kind, v: str) -> str:
        """A Python expression true only when the value named ``v`` fits ``kind``."""
        if kind.enum is not None:
            allowed = self.name(frozenset(x for x in kind.enum if isinstance(x, str)))
            return f"(type({v}) is str and {v} in {allowed})"
        of = set(kind.of) - {"null"}
        test = self._typed(kind, of, v)
        return f"({v} is None or {test})" if "null" in kind.of else test

    def _typed(self, kind: Kind, of: set[str], v: str) -> str:
        lo = -MAX_INT if kind.minimum is None else max(-MAX_INT, kind.minimum)
        hi = MAX_INT if kind.maximum is None else min(MAX_INT, kind.maximum)
        if of == {"integer"}:
            return f"(type({v}) is int and {lo!r} <= {v} <= {hi!r})"
        if of in ({"number"}, {"integer", "number"}):
            return (f"((type({v}) is int or (type({v}) is float and isfinite({v}))) "
                    f"and {lo!r} <= {v} <= {hi!r})")
        if of == {"string"}:
            test = f"type({v}) is str"
            if kind.min_length:
                test += f" and len({v}) >= {int(kind.min_length)}"
            if kind.pattern is not None:
                test += f" and {self.name(pattern_of(kind.pattern).search)}({v}) is not None"
            return f"({test})"
        if of == {"boolean"}:
            return f"(type({v}) is bool)"
        if of == {"array"}:
            return f"{self.function(kind, self._array)}({v})"
        if of == {"object"}:
            return f"{self.function(kind, self._object)}({v})"
        return "False"  # a mixed kind the table does not use: always the full validator

    def function(self, kind: Kind, body: Callable[[Kind], list[str]]) -> str:
        fname = f"f{len(self.env)}"
        self.env[fname] = None  # reserved: nested kinds get their own names first
        self.lines += [f"def {fname}(v):", *(f"    {line}" for line in body(kind)), ""]
        return fname

    def _array(self, kind: Kind) -> list[str]:
        out = ["if type(v) is not list:", "    return False"]
        if kind.min_items is not None:
            out += [f"if len(v) < {int(kind.min_items)}:", "    return False"]
        if kind.max_items is not None:
            out += [f"if len(v) > {int(kind.max_items)}:", "    return False"]
        if kind.items is not None:
            out += ["for x in v:", f"    if not {self.expr(kind.items, 'x')}:", "        return False"]
        return [*out, "return True"]

    def _object(self, kind: Kind) -> list[str]:
        out = ["if type(v) is not dict:", "    return False"]
        if kind.required:
            out += [f"if not {self.name(frozenset(kind.required))}.issubset(v):", "    return False"]
        if kind.closed:
            out += [f"if not {self.name(frozenset(kind.properties))}.issuperset(v):", "    return False"]
        if kind.values is not None:
            known = self.name(frozenset(kind.properties))
            out += ["for k, x in v.items():", f"    if k not in {known} and not {self.expr(kind.values, 'x')}:",
                    "        return False"]
        return [*out, *self.fields(kind.properties), "return True"]

    def fields(self, properties: Mapping[str, Kind]) -> list[str]:
        out = []
        for key, sub in properties.items():  # "in" and [] are bytecodes; .get would be a call
            out += [f"if {key!r} in v:", f"    x = v[{key!r}]", f"    if not {self.expr(sub, 'x')}:",
                    "        return False"]
        return out

    def build(self, fname: str) -> Check:
        exec("\n".join(self.lines), self.env)  # the source was made above from the table alone
        check: Check = self.env[fname]
        return check


def compile_kind(kind: Kind) -> Check:
    """One function deciding ``kind`` for the values ``json.loads`` makes (see the module's contract)."""
    compiler = _Compiler()
    compiler.lines += ["def check(v):", f"    return {compiler.expr(kind, 'v')}", ""]
    return compiler.build("check")


# The keys whose parts are read (checked and built at once) by :class:`Parts`.
PART_KEYS = ("by_severity", "caught_seeds", "undercalled_seeds", "missed_seeds")


def _record_check(keys: Mapping[str, Kind]) -> Check:
    compiler = _Compiler()
    compiler.lines += ["def record(v):", *(f"    {line}" for line in compiler.fields(keys)), "    return True", ""]
    return compiler.build("record")


@functools.cache
def _checks(parts: bool) -> Check:
    """Compiled on first use, not at import: every CLI start imports this module, and only
    a command that reads a history needs the check (``parts=True`` only in tests)."""
    return _record_check(FIELDS if parts else {key: kind for key, kind in FIELDS.items() if key not in PART_KEYS})


def fits(record: Mapping[str, Any], *, parts: bool = True) -> bool:
    """True only when :func:`record_problem` would find no problem in ``record`` (a dict
    with every required key); False means "ask it", not "it is malformed". ``parts=False``
    leaves out :data:`PART_KEYS`, for a caller that reads them with :class:`Parts`."""
    if type(record) is not dict:
        return False
    return _checks(parts)(record)


class Parts(Generic[T]):
    """Checks and builds the parts of one kind (a seed, a severity row) at once, and keeps
    the part built from each distinct flat JSON object. Why: a weekly history repeats the
    same seed in every record that missed it, and the same row of counts, so most parts of
    a long history are ones already checked and built; a frozen part can be shared.

    The memo key is the object's keys, its values *and the type of each value*: equal items of other
    types (``1``, ``1.0``, ``true``) never share a part, so a hit is exactly the object
    that was checked. Objects holding a list or an object are unhashable and never kept
    (a seed with evidence is checked and built each time). At most ``limit`` parts are
    kept, so a hostile history cannot grow it without bound."""

    def __init__(self, kind: Kind, build: Callable[[dict[str, Any]], T], limit: int = 20_000) -> None:
        self._memo: dict[Any, T] = {}
        self._limit = limit
        self.one: Callable[[Any], T] = _reader(compile_kind(kind), build, self._memo, limit)
        """The part a JSON object holds; :class:`Unsure` when the fast check fails (ask the validator)."""

    def clear(self) -> None:
        """Forget every kept part (the next read starts cold, as a new process does)."""
        self._memo.clear()

    def listed(self, items: Any) -> tuple[T, ...] | None:
        """The parts of a JSON array, or None when any fails the fast check. A part already
        kept is found here, inline (one call per part less: a long history has ~100 000)."""
        if type(items) is not list:
            return None
        memo, one = self._memo, self.one
        out = []
        try:
            for data in items:
                if type(data) is not dict:
                    return None
                values = tuple(data.values())
                try:
                    part = memo[(tuple(data), values, tuple(map(type, values)))]
                except (KeyError, TypeError):
                    part = one(data)
                out.append(part)
        except Unsure:
            return None
        return tuple(out)

    def named(self, rows: Any, names: frozenset[str]) -> dict[str, T] | None:
        """The parts of a JSON object whose keys must be among ``names``, or None."""
        if type(rows) is not dict or not names.issuperset(rows):
            return None
        memo, one = self._memo, self.one
        out = {}
        try:
            for name, data in rows.items():
                if type(data) is not dict:
                    return None
                values = tuple(data.values())
                try:
                    out[name] = memo[(tuple(data), values, tuple(map(type, values)))]
                except (KeyError, TypeError):
                    out[name] = one(data)
        except Unsure:
            return None
        return out


def _reader(check: Check, build: Callable[[dict[str, Any]], T], memo: dict[Any, T], limit: int) -> Callable[[Any], T]:
    """:attr:`Parts.one` as a closure: its names are locals, looked up once per part, not
    attributes looked up on every call."""

    def one(data: Any) -> T:
        if type(data) is not dict:
            raise Unsure
        values = tuple(data.values())
        key: Any = (tuple(data), values, tuple(map(type, values)))
        try:
            return memo[key]
        except KeyError:
            pass
        except TypeError:  # a nested list or object: not kept
            key = None
        if not check(data):
            raise Unsure
        part = build(data)
        if key is not None and len(memo) < limit:
            memo[key] = part
        return part

    return one


class Unsure(Exception):
    """The fast check could not say yes: the full validator must decide."""
