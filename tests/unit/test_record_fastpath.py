"""The fast path of reading a record never accepts what the full validator refuses.

``record_fastpath`` compiles the type table into checks that only say "yes" or "not
sure"; a history line is refused only by ``record_problem``. These tests hold the fast
"yes" inside the validator's on generated values, and show a hostile line refused with
the validator's own message even when a well-formed twin was read just before (the
memo of parts must not let it through).
"""

from __future__ import annotations

import copy
import json
from dataclasses import fields
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from redline_canary.score.record import Counts, Gate, Record, Seed
from redline_canary.score.record_fastpath import compile_kind, fits
from redline_canary.score.record_schema import FIELDS, MAX_INT, RecordProblem, _check, record_problem
from tests.helpers.clirun import ROOT
from tests.helpers.records import record

DEMO = ROOT / "tests" / "data" / "records" / "demo.jsonl"

# Values of every JSON type, near every bound the table has, and a few that are not JSON
# at all (a tuple, a bool where a number goes): the kinds' edges, not random noise.
_scalars = (st.none() | st.booleans() | st.sampled_from([0, 1, -1, 2, MAX_INT, MAX_INT + 1, -MAX_INT - 1])
            | st.integers(-3, 3) | st.sampled_from([0.0, 0.5, 1.0, 1.5, -0.0, float("nan"), float("inf")])
            | st.sampled_from(["", "x", "BLOCKER", "noise", "seeded", "blind", "scored", "caught", "a/b",
                               "0123456789abcdef", "2026-01-02T03:04:05Z", "2026-01-02T03:04:05Z\n"]))
_keys = st.sampled_from(sorted({k for kind in FIELDS.values() for k in kind.properties}
                               | {"n", "path", "line", "severity", "rule", "passed", "reasons", "zz"}))
_values = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=3)
                       | st.dictionaries(_keys, inner, max_size=6) | st.tuples(inner), max_leaves=12)


@settings(max_examples=1500, deadline=None)
@given(key=st.sampled_from(sorted(FIELDS)), value=_values)
def test_the_fast_yes_is_never_wider_than_the_validator(key: str, value: Any) -> None:
    if compile_kind(FIELDS[key])(value):
        assert _check(value, FIELDS[key], key) is None


def _demo_records() -> list[dict[str, Any]]:
    return [json.loads(line) for line in DEMO.read_text(encoding="utf-8").splitlines()]


def test_every_line_this_program_writes_takes_the_fast_path() -> None:
    # The demo's records (schema 2, evidence on caught seeds) and the helper's schema 1 shape.
    for doc in [*_demo_records(), record("r1"), record("r2", kind="clean")]:
        assert record_problem(doc) is None and fits(doc)


@pytest.mark.parametrize(("path", "bad"), [
    (("caught_seeds", 0, "n"), True),            # true == 1 to Python, not to the schema
    (("caught_seeds", 0, "line"), 12.0),         # 12.0 == 12 to Python
    (("caught_seeds", 0, "severity"), "HIGH"),
    (("by_severity", "BLOCKER", "caught"), True),
    (("by_severity", "BLOCKER", "markers"), -1),
    (("recall",), float("nan")),
    (("gate", "passed"), 1),
    (("recorded_at",), "2026-11-30T10:00:00Z\n"),
])
def test_a_hostile_twin_of_a_line_just_read_is_refused_with_the_validators_words(
        path: tuple[Any, ...], bad: Any) -> None:
    good = _demo_records()[0]  # the seeded record: it has caught seeds
    Record.from_json(copy.deepcopy(good))  # its parts are now in the memo
    twin = copy.deepcopy(good)
    holder: Any = twin
    for step in path[:-1]:
        holder = holder[step]
    holder[path[-1]] = bad
    expected = record_problem(twin)
    assert expected is not None
    with pytest.raises(RecordProblem) as refused:
        Record.from_json(twin)
    assert (refused.value.key, refused.value.why) == expected


@pytest.mark.parametrize("cls", [Record, Seed, Counts, Gate])
def test_a_part_read_from_json_equals_one_built_through_its_constructor(cls: type[Any]) -> None:
    docs = _demo_records()
    parts: list[Any] = [Record.from_json(d) for d in docs]
    if cls is Seed:
        parts = [s for r in parts for s in r.seeds()]
    elif cls is Counts:
        parts = [c for r in parts for c in r.by_severity.values()]
    elif cls is Gate:
        parts = [r.gate for r in parts]
    assert parts
    names = {f.name for f in fields(cls)}
    for part in parts:
        assert set(vars(part)) == names  # every field set, nothing else
        rebuilt = cls(**{name: getattr(part, name) for name in names})
        assert rebuilt == part and rebuilt.to_json() == part.to_json()


def test_the_memo_of_parts_is_bounded() -> None:
    from redline_canary.score import record as record_module

    seeds = record_module._SEEDS
    try:
        for n in range(1, seeds._limit + 50):
            seeds.one({"n": n, "path": "a.py", "line": 1, "severity": "MAJOR", "rule": "r"})
        assert len(seeds._memo) <= seeds._limit
    finally:  # a full memo would leave every later test in this process reading cold
        record_module.forget_shared_parts()
