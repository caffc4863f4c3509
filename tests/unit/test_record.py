"""The typed history record: read, upgraded, refused, written back byte for byte."""

from __future__ import annotations

import json
import string
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from redline_canary.score.record import (
    Counts,
    Evidence,
    Gate,
    Record,
    Seed,
    Unmatched,
)
from redline_canary.score.record_schema import SEVERITIES, RecordProblem
from tests.helpers.clirun import ROOT
from tests.helpers.records import record

DEMO = ROOT / "tests" / "data" / "records" / "demo.jsonl"  # written by `redline-canary demo`


def _line(doc: dict[str, Any]) -> str:
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":"), allow_nan=False)  # as history writes


def test_a_real_demo_record_reads_typed_and_writes_back_byte_for_byte() -> None:
    lines = DEMO.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2
    for line in lines:
        r = Record.from_json(json.loads(line))
        assert _line(r.to_json()) == line
    seeded = Record.from_json(json.loads(lines[0]))
    assert seeded.kind == "seeded" and seeded.schema == 2 and seeded.scored
    assert seeded.blocker.markers >= 1 and isinstance(seeded.gate, Gate)
    assert all(s.evidence is not None for s in seeded.caught_seeds + seeded.undercalled_seeds)


def test_a_schema_1_line_is_upgraded_on_read_and_keeps_its_own_keys_in_order() -> None:
    doc = record("old")  # schema 1: no blocker_found, findings, notice or unmatched_findings
    doc["by_severity"]["BLOCKER"] = {"markers": 4, "caught": 1, "undercalled": 2, "missed": 1}
    r = Record.from_json(doc)
    assert r.schema == 1 and r.blocker_found == 0.75 and r.findings is None and r.unmatched_findings == ()
    assert r.to_json() == {**doc, "blocker_found": 0.75}
    assert list(r.to_json()) == [*doc, "blocker_found"]  # what `history merge` writes back


@pytest.mark.parametrize(("change", "key", "why"), [
    ({"caught_seeds": [{"n": 0, "path": "a", "line": 1, "severity": "MAJOR", "rule": "r"}]},
     "caught_seeds[0].n", "expected an integer >= 1, got 0"),
    ({"gate": {"passed": True}}, "gate.reasons", "required key missing"),
    ({"by_severity": {"HIGH": {}}}, "by_severity.HIGH", "unknown key"),
])
def test_a_malformed_record_is_refused_naming_its_key(change: dict[str, Any], key: str, why: str) -> None:
    with pytest.raises(RecordProblem) as refused:
        Record.from_json({**record("r1"), **change})
    assert (refused.value.key, refused.value.why) == (key, why)
    assert str(refused.value) == f"{key}: {why}"


def test_no_record_at_all_is_refused_without_a_key() -> None:
    doc = record("r1")
    del doc["gate"], doc["repo"]
    with pytest.raises(RecordProblem) as refused:
        Record.from_json(doc)
    assert refused.value.key is None and str(refused.value) == "missing keys: repo, gate"
    with pytest.raises(RecordProblem, match=r"^not a JSON object$"):
        Record.from_json([1])


def test_keys_this_version_does_not_know_survive_a_read_and_a_write() -> None:
    doc = dict(record("r1", kind="clean"), schema=2)  # schema 2 with its optional keys left out
    doc = {"zeta": {"nested": [1, None]}, **doc, "confirmed_by_attempts": "two", "baseline": 3}
    doc["caught_seeds"] = [{"rule": "core/x", "n": 2, "path": "a.py", "line": 3, "severity": "BLOCKER",
                            "evidence": {"word": "high", "vendor": {"id": 9}}, "tag": True}]
    doc["gate"] = {"reasons": [], "passed": True, "warnings": [], "why": "kept"}
    r = Record.from_json(doc)
    assert r.extra == {"zeta": {"nested": [1, None]}, "confirmed_by_attempts": "two", "baseline": 3}
    assert r.confirmed_by_attempts is None and r.baseline is None  # not what this program writes there
    assert r.caught_seeds[0].extra == {"tag": True} and r.caught_seeds[0].evidence == Evidence(
        word="high", extra={"vendor": {"id": 9}})
    written = r.to_json()
    assert _line(written) == _line(doc)
    assert list(written["caught_seeds"][0]) == list(doc["caught_seeds"][0])
    assert not r.caught_seeds[0].evidence.has("severity")  # type: ignore[union-attr]


# --------------------------------------------------------------------------- property

_text = st.text(max_size=12)
_name = st.text(alphabet=string.ascii_letters + string.digits + "-_.", min_size=1, max_size=10)
_rate = st.none() | st.floats(min_value=0, max_value=1)
_ci = st.none() | st.tuples(st.floats(min_value=0, max_value=1), st.floats(min_value=0, max_value=1))
_count = st.integers(min_value=0, max_value=10_000)
_opt_int = st.none() | st.integers(min_value=-5, max_value=5000)
_json = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.floats(allow_nan=False, allow_infinity=False) | _text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3), max_leaves=6)
_evidence = st.builds(Evidence, comment_id=_opt_int, channel=_text, source=_text, url=_text,
                      path=st.none() | _text, line=_opt_int, end_line=_opt_int,
                      severity=st.none() | st.sampled_from(SEVERITIES), word=_text, distance=_count,
                      cited=st.booleans(), excerpt=_text)
_seed = st.builds(Seed, n=st.integers(1, 99), path=_text, line=st.integers(-5, 5000),
                  severity=st.sampled_from(SEVERITIES), rule=_text, lines=st.integers(1, 9),
                  pushed_path=_text, pushed_line=_opt_int, pushed_end_line=_opt_int,
                  symbol=st.none() | _text, description=_text, evidence=st.none() | _evidence)
_seeds = st.lists(_seed, max_size=3).map(tuple)
_unmatched = st.builds(Unmatched, klass=st.sampled_from(("noise", "duplicate", "borderline")),
                       comment_id=_opt_int, channel=_text, source=_text, url=_text, path=st.none() | _text,
                       line=_opt_int, end_line=_opt_int, severity=st.none() | _text, word=_text, excerpt=_text)
_counts = st.builds(Counts, markers=_count, caught=_count, undercalled=_count, missed=_count)
_ids = st.lists(st.integers(1, 99), max_size=3).map(tuple)
_gate = st.builds(Gate, passed=st.booleans(), reasons=st.lists(_text, max_size=3).map(tuple), failing_seeds=_ids,
                  warnings=st.lists(_text, max_size=2).map(tuple), acknowledged=_ids,
                  blocker_gate=st.sampled_from(("caught", "found")))
_stamp = st.datetimes().map(lambda d: d.strftime("%Y-%m-%dT%H:%M:%SZ")).filter(lambda s: len(s) == 20)
_records = st.builds(
    Record, schema=st.integers(1, 5), run_id=_name, attempt=st.integers(1, 9), recorded_at=_stamp,
    repo=st.tuples(_name, _name).map("/".join), stack=_name, kind=st.sampled_from(("seeded", "clean")),
    pr=_opt_int, reviewer=_text, mode=st.sampled_from(("blind", "marked")),
    corpus_fingerprint=st.text(alphabet="0123456789abcdef", min_size=16, max_size=16),
    outcome=st.sampled_from(("scored", "silent", "error", "cancelled")), notice=st.none() | _text,
    findings=_count, markers=_count, caught=_count, undercalled=_count, missed=_count, duplicates=_count,
    borderline=_count, noise=_count, cited=_count, recall=_rate, recall_ci95=_ci, blocker_recall=_rate,
    blocker_recall_ci95=_ci, blocker_found=_rate, blocker_found_ci95=_ci,
    by_severity=st.dictionaries(st.sampled_from(SEVERITIES), _counts),
    caught_seeds=_seeds, undercalled_seeds=_seeds, missed_seeds=_seeds,
    unmatched_findings=st.lists(_unmatched, max_size=2).map(tuple),
    clean_false_positives=st.none() | _count, clean_findings_below_floor=st.none() | _count, gate=_gate,
    tool_version=_text,
    timings=st.none() | st.dictionaries(_text, st.floats(allow_nan=False, allow_infinity=False, min_value=-1e9,
                                                         max_value=1e9), max_size=3),
    api_requests=st.none() | st.dictionaries(_text, st.integers(0, 10**6), max_size=2),
    confirmed_by_attempts=st.none() | st.integers(2, 9),
    baseline=st.none() | st.dictionaries(_text, _json, max_size=2),
    extra=st.dictionaries(_text.filter(lambda k: k not in Record.KEYS), _json, max_size=2),
)


@settings(max_examples=200, deadline=None)
@given(_records)
def test_every_record_reads_back_as_itself(r: Record) -> None:
    assert Record.from_json(r.to_json()) == r
    line = _line(r.to_json())
    again = Record.from_json(json.loads(line))
    assert again == r and _line(again.to_json()) == line
