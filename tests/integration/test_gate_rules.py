"""The gate teams keep switched on: found vs rated, acknowledged gaps, rolling baselines."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from redline_canary.score.acknowledgements import AcknowledgementError, parse, seed_fingerprint
from redline_canary.score.record import Record
from redline_canary.score.verdict import GateOptions, classify, decide, parse_baseline
from tests.helpers.records import as_record

pytestmark = pytest.mark.unit


def seed(n: int, severity: str = "BLOCKER", **extra: Any) -> dict[str, Any]:
    return {"n": n, "path": "app.py", "line": n, "severity": severity, "rule": f"core/r{n}",
            "description": f"defect {n}", **extra}


def record(run: str, caught: list[int] = (), under: dict[int, str] | None = None, missed: list[int] = (),
           at: str = "2026-11-01T00:00:00Z", attempt: int = 1, **fields: Any) -> Record:
    under = under or {}
    return as_record({
        "run_id": run, "attempt": attempt, "recorded_at": at, "repo": "acme/canary", "stack": "python",
        "kind": "seeded", "reviewer": "copilot", "corpus_fingerprint": "0123456789abcdef", "outcome": "scored",
        "caught_seeds": [seed(n, evidence={"severity": "BLOCKER", "cited": False}) for n in caught],
        "undercalled_seeds": [seed(n, evidence={"severity": sev, "word": sev.lower()}) for n, sev in under.items()],
        "missed_seeds": [seed(n) for n in missed], "recall": 0.5, "caught": len(caught), "markers": 6,
        "clean_false_positives": None, **fields,
    })


def test_found_gate_counts_a_blocker_located_at_or_above_the_floor() -> None:
    r = record("r1", caught=[1], under={2: "CRITICAL", 3: "MINOR"})
    assert not decide(r, GateOptions()).passed
    found = decide(r, GateOptions(blocker_gate="found"))
    assert not found.passed and found.failing == (3,)  # MINOR is below the MAJOR floor
    assert decide(r, GateOptions(blocker_gate="found", floor="MINOR")).passed
    assert decide(record("r2", caught=[1], under={2: "MAJOR"}), GateOptions(blocker_gate="found")).passed


def _acks(**entry: Any) -> GateOptions:
    base = {"reviewer": "copilot", "stack": "python", "reason": "never flags it", "until": "2027-03-01", "by": "alice"}
    return GateOptions(acknowledgements=parse({"acknowledgements": [{**base, **entry}]}, "2026-12-01"))


def test_an_acknowledged_miss_does_not_fail_and_says_so() -> None:
    r = record("r1", caught=[1], missed=[2])
    v = decide(r, _acks(seed=2))
    assert v.passed and v.acknowledged == (2,) and "acknowledged by alice until 2027-03-01" in v.warnings[0]
    assert decide(r, _acks(rule="core/r2")).passed
    assert not decide(r, _acks(seed=2, stack="go")).passed  # another stack's entry


def test_an_acknowledgement_no_longer_needed_is_reported() -> None:
    v = decide(record("r1", caught=[1, 2]), _acks(seed=2))
    assert v.passed and any("no longer needed" in w for w in v.warnings)


def test_a_changed_seed_voids_its_acknowledgement() -> None:
    r = record("r1", caught=[1], missed=[2])
    pinned = seed_fingerprint(r.missed_seeds[0])
    assert decide(r, _acks(seed=2, fingerprint=pinned)).passed
    changed = replace(r, missed_seeds=(replace(r.missed_seeds[0], description="rewritten defect"),))
    v = decide(changed, _acks(seed=2, fingerprint=pinned))
    assert not v.passed and any("corpus changed SEED 2" in w for w in v.warnings)


@pytest.mark.parametrize(("entry", "says"), [
    ({"until": "2026-11-30"}, "expired on 2026-11-30"),
    ({"until": "2026-02-30"}, "until: expected a date"),
    ({"seed": None}, "exactly one of seed"),
    ({"rule": "core/x"}, "exactly one of seed"),
    ({"by": ""}, "by: required text"),
    ({"colour": "red"}, "colour: unknown key"),
    ({"fingerprint": "xyz"}, "fingerprint"),
])
def test_a_bad_or_expired_entry_names_itself(entry: dict[str, Any], says: str) -> None:
    base = {"reviewer": "copilot", "stack": "python", "seed": 3, "reason": "r", "until": "2027-01-01", "by": "bob"}
    with pytest.raises(AcknowledgementError, match="acknowledgements\\[0\\]") as exc:
        parse({"acknowledgements": [{**base, **entry}]}, "2026-12-01")
    assert says in str(exc.value)


def test_a_rolling_window_fails_a_newly_missed_blocker_and_warns_on_an_intermittent_one() -> None:
    history = [record(f"w{i}", caught=[1, 2] if i % 2 else [1], missed=[] if i % 2 else [2],
                      at=f"2026-11-0{i}T00:00:00Z") for i in range(1, 5)]
    now = record("w5", caught=[], missed=[1, 2], at="2026-11-05T00:00:00Z")
    v = decide(now, GateOptions(baseline="window:4"), history=history)
    assert not v.passed and v.failing == (1,)
    assert v.reasons == ("newly missed BLOCKER: SEED 1 (caught in 4 of the last 4 runs)",)
    assert v.warnings == ("SEED 2 [BLOCKER] intermittent: missed now, caught in 2 of the last 4 runs",)
    # Without the window the absolute gate fails on both.
    assert decide(now, GateOptions()).failing == (1, 2)


def test_a_window_never_looks_at_other_reviewers_or_corpora() -> None:
    other = record("w1", caught=[1], reviewer="gemini")
    v = decide(record("w2", missed=[1]), GateOptions(baseline="window:3"), history=[other])
    assert v.reasons == ("blockers found 0/1 (not found: SEED 1)",)  # no comparable history: the absolute gate


def test_seed_classes_are_one_definition() -> None:
    assert classify(["caught", "caught", "missed"]) == "newly missed"
    assert classify(["caught", "missed", "caught", "missed"]) == "intermittent"
    assert classify(["none", "missed"]) == "never caught"


@pytest.mark.parametrize("bad", ["window", "window:0", "window:99", "last", "window:x"])
def test_baseline_spec_is_checked(bad: str) -> None:
    with pytest.raises(ValueError, match="--baseline"):
        parse_baseline(bad)
    assert parse_baseline("window:04") == "window:4" and parse_baseline("previous") == "previous"
