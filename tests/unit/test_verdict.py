"""The one module that decides pass or fail and the exit code (verdict.py). Pure."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from redline_canary.errors import combine_exit_codes
from redline_canary.score.record import Record
from redline_canary.score.record_schema import RecordProblem
from redline_canary.score.verdict import confirm, final_attempts, record_exit_code
from tests.helpers.records import as_record, as_records


@pytest.mark.parametrize("codes", list(itertools.permutations([0, 1, 3, 4, 2, 5])))
def test_the_highest_priority_code_wins_in_any_order(codes: tuple[int, ...]) -> None:
    order = [5, 2, 4, 3, 1, 0]  # docs/cli.md
    for k in range(1, len(codes) + 1):
        assert combine_exit_codes(codes[:k]) == min(codes[:k], key=order.index)


def test_a_bug_outranks_an_interruption_which_outranks_verdicts() -> None:
    assert combine_exit_codes([130, 5]) == 5
    assert combine_exit_codes([1, 130, 4]) == 130
    assert combine_exit_codes([]) == 0


@pytest.mark.parametrize(("record", "code"), [
    ({"outcome": "scored", "gate": {"passed": True}}, 0),
    ({"outcome": "scored", "gate": {"passed": False}}, 1),
    ({"outcome": "silent", "gate": {"passed": False}}, 3),
    ({"outcome": "error"}, 4),
    ({"outcome": "cancelled"}, 130),
])
def test_record_exit_code(record: dict[str, Any], code: int) -> None:
    assert record_exit_code(as_record(record)) == code


@pytest.mark.parametrize(("gate", "key"), [({"passed": "yes"}, "gate.passed"), (None, "gate")])
def test_a_gate_that_is_not_a_verdict_never_becomes_a_record(gate: Any, key: str) -> None:
    # Only a real True passes: anything else is refused where records are read.
    with pytest.raises(RecordProblem) as refused:
        as_record({"outcome": "scored", "gate": gate})
    assert refused.value.key == key


def _seeded(attempt: int, caught: list[int], missed: list[int]) -> Record:
    seed = lambda n: {"n": n, "severity": "BLOCKER"}  # noqa: E731
    reasons = [f"blocker recall {len(caught)}/{len(caught) + len(missed)} < 1.0"] if missed else []
    return as_record({"kind": "seeded", "attempt": attempt, "outcome": "scored",
                      "caught_seeds": [seed(n) for n in caught], "missed_seeds": [seed(n) for n in missed],
                      "undercalled_seeds": [], "gate": {"passed": not reasons, "reasons": reasons}})


def test_a_blocker_counts_as_missed_only_if_every_attempt_missed_it() -> None:
    first = _seeded(1, caught=[1], missed=[2])
    again = confirm([first], _seeded(2, caught=[2], missed=[1]), 2)  # each caught what the other missed
    written = again.to_json()
    assert written["gate"]["passed"] and written["gate"]["reasons"] == [] and written["confirmed_by_attempts"] == 2
    assert written["gate"]["failing_seeds"] == []
    both = confirm([first], _seeded(2, caught=[1], missed=[2]), 2).to_json()
    assert not both["gate"]["passed"] and "confirmed_by_attempts" not in both


def test_final_attempts_prefers_the_later_attempt_and_the_later_listed_run() -> None:
    def rec(run: str, attempt: int, kind: str = "seeded") -> Record:
        return as_records([{"repo": "a/b", "stack": "go", "reviewer": "copilot", "kind": kind, "run_id": run,
                            "attempt": attempt}])[0]

    one, two, clean, rerun = rec("r1", 1), rec("r1", 2), rec("r1", 1, "clean"), rec("r2", 1)
    assert final_attempts([one, two, clean]) == [two, clean]
    assert final_attempts([rerun, one, two, clean], ["r1", "r2"]) == [rerun, clean]


# --- baselines with blocker-gate found (docs/matching.md#baseline) ------------------------------
def _week(run: str, day: int, *, caught: list[int], under: dict[int, str] | None = None,
          missed: list[int] | None = None, recall: tuple[int, int] = (10, 16)) -> Record:
    def seed(n: int, given: str | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {"n": n, "severity": "BLOCKER"}
        if given:
            out["evidence"] = {"severity": given, "word": given.lower()}
        return out
    k, n = recall
    return as_record({"kind": "seeded", "run_id": run, "recorded_at": f"2026-11-{day:02d}T06:00:00Z",
                      "outcome": "scored", "markers": n, "caught": k, "recall": round(k / n, 4),
                      "caught_seeds": [seed(s) for s in caught],
                      "undercalled_seeds": [seed(s, g) for s, g in (under or {}).items()],
                      "missed_seeds": [seed(s) for s in missed or []], "gate": {"passed": True, "reasons": []}})


def test_a_blocker_rated_lower_than_last_week_passes_with_a_severity_drift_warning() -> None:
    from redline_canary.score.verdict import GateOptions, decide

    before = _week("w1", 1, caught=[1, 2])
    now = _week("w2", 8, caught=[1], under={2: "CRITICAL"})
    verdict = decide(now, GateOptions(baseline="window:4"), history=[before])
    assert verdict.passed, verdict.reasons
    assert any(w.startswith("severity drift: SEED 2 [BLOCKER] rated BLOCKER in 1 of the last 1")
               for w in verdict.warnings), verdict.warnings
    strict = decide(now, GateOptions(blocker_gate="caught", baseline="window:4"), history=[before])
    assert not strict.passed  # the strict rule still fails it


def test_a_recall_drop_beyond_the_windows_spread_fails_and_a_small_one_does_not() -> None:
    from redline_canary.score.verdict import GateOptions, decide

    window = [_week("w1", 1, caught=[1], recall=(12, 16)), _week("w2", 8, caught=[1], recall=(14, 16))]
    small = _week("w3", 15, caught=[1], recall=(11, 16))  # 0.69 against a window of 0.75 and 0.88
    assert decide(small, GateOptions(baseline="window:4"), history=window).passed
    big = _week("w3", 15, caught=[1], recall=(5, 16))  # 0.31: half the findings gone
    verdict = decide(big, GateOptions(baseline="window:4"), history=window)
    assert not verdict.passed and verdict.reasons[0].startswith("recall drop: 5/16 (0.31)")
    assert decide(big, GateOptions(), history=window).passed  # no baseline, no recall rule


def test_previous_baseline_under_found_fails_only_when_a_blocker_is_no_longer_found() -> None:
    from redline_canary.score.verdict import GateOptions, decide

    before = _week("w1", 1, caught=[1, 2])
    lower = _week("w2", 8, caught=[1], under={2: "MAJOR"})
    assert decide(lower, GateOptions(baseline="previous"), history=[before]).passed
    gone = _week("w2", 8, caught=[1], missed=[2])
    verdict = decide(gone, GateOptions(baseline="previous"), history=[before])
    assert not verdict.passed and any("newly missed BLOCKER: SEED 2" in r for r in verdict.reasons)


@pytest.mark.parametrize("gate", ["found", "caught"])
def test_a_newly_missed_blocker_that_is_acknowledged_does_not_fail_the_previous_baseline(gate: str) -> None:
    """Under either gate rule: the baseline's "newly missed" is judged by the gate, which
    honours acknowledgements (under `caught` it used to come from a second, blind copy)."""
    from redline_canary.score.acknowledgements import Acknowledgement
    from redline_canary.score.verdict import GateOptions, decide

    before = _week("w1", 1, caught=[1, 2])
    gone = _week("w2", 8, caught=[1], missed=[2])
    ack = Acknowledgement(0, reviewer="redline", stack="mini", reason="known gap", until="2099-01-01",
                          by="team", seed=2)
    plain = decide(gone, GateOptions(baseline="previous", blocker_gate=gate), history=[before])  # type: ignore[arg-type]
    assert not plain.passed and any("newly missed BLOCKER: SEED 2" in r for r in plain.reasons)
    acked = decide(gone, GateOptions(baseline="previous", blocker_gate=gate,  # type: ignore[arg-type]
                                     acknowledgements=(ack,)), history=[before])
    assert acked.passed, acked.reasons
    assert acked.acknowledged == (2,)
