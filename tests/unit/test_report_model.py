"""Scoreboard data and Markdown from a synthetic history whose answers are known by design.

The history (``synthetic_history``) has three targets, two reviewers sharing one corpus,
silent and error runs, a confirmation re-run, a corpus fingerprint change and a seed that
only exists after it. Each seed's states were chosen to land in one known class.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from redline_canary.report import build as report_build
from redline_canary.report.markdown import MARKDOWN_LIMIT, render_markdown
from redline_canary.report.model import (
    ALWAYS_CAUGHT,
    INTERMITTENT,
    NEVER_CAUGHT,
    NEWLY_MISSED,
    NONE,
    Report,
    classify,
    to_json,
)
from redline_canary.report.stats import sign_test
from redline_canary.score.record import Record
from redline_canary.score.record_schema import RecordProblem
from redline_canary.score.scoring import wilson
from tests.helpers.clirun import ROOT
from tests.helpers.records import as_records

SCHEMA = json.loads((ROOT / "history" / "schema.json").read_text())
FP_PY = "aaaaaaaaaaaaaaaa"
FP_GO_OLD = "1111111111111111"
FP_GO_NEW = "2222222222222222"

SEEDS: dict[str, dict[int, tuple[str, str, int, str]]] = {
    "python": {
        1: ("BLOCKER", "app/db.py", 12, "core/sql-injection"),
        2: ("BLOCKER", "app/auth.py", 30, "core/hardcoded-secrets"),
        3: ("CRITICAL", "app/views.py", 8, "core/xss"),
        4: ("MAJOR", "app/util.py", 41, "core/resource-leak"),
        5: ("MINOR", "app/util.py", 77, "core/naming | style"),  # a pipe: must not break a table
    },
    "go": {
        1: ("BLOCKER", "main.go", 20, "core/sql-injection"),
        2: ("MAJOR", "handler.go", 14, "core/error-ignored"),
        3: ("CRITICAL", "handler.go", 60, "core/path-traversal"),
    },
}


def seed_entry(stack: str, n: int) -> dict[str, Any]:
    sev, path, line, rule = SEEDS[stack][n]
    return {"n": n, "path": path, "line": line, "pushed_path": path, "pushed_line": line,
            "severity": sev, "rule": rule, "symbol": None, "description": f"defect {n}"}


def make_record(*, run_id: str, day: int, repo: str, stack: str, kind: str, reviewer: str,
                fingerprint: str, outcome: str = "scored", states: dict[int, str] | None = None,
                cfp: int = 0, attempt: int = 1) -> dict[str, Any]:
    """A schema-valid record built the way ``scoring.build_record`` builds one."""
    states = states or {}
    scored = outcome == "scored"
    sev = {s: {"markers": 0, "caught": 0, "undercalled": 0, "missed": 0}
           for s in ("BLOCKER", "CRITICAL", "MAJOR", "MINOR", "INFO")}
    lists: dict[str, list[dict[str, Any]]] = {"caught": [], "undercalled": [], "missed": []}
    for n, state in sorted(states.items()):
        row = sev[SEEDS[stack][n][0]]
        row["markers"] += 1
        if scored:
            row[state] += 1
            lists[state].append(seed_entry(stack, n))
    markers = len(states) if kind == "seeded" else 0
    caught, under = len(lists["caught"]), len(lists["undercalled"])
    b = sev["BLOCKER"]
    seeded_scored = scored and kind == "seeded"
    reasons: list[str] = []
    if not scored:
        reasons = [f"reviewer {outcome}"]
    elif kind == "seeded" and b["caught"] < b["markers"]:
        reasons = [f"blocker recall {b['caught']}/{b['markers']} < 1.0"]
    elif kind == "clean" and cfp:
        reasons = [f"{cfp} clean false positive(s) at or above MAJOR"]
    record = {
        "schema": 1, "run_id": run_id, "attempt": attempt,
        "recorded_at": f"2026-{1 + day // 28:02d}-{1 + day % 28:02d}T10:{attempt:02d}:00Z",
        "repo": repo, "stack": stack, "kind": kind, "pr": 1, "reviewer": reviewer, "mode": "blind",
        "corpus_fingerprint": fingerprint, "outcome": outcome, "notice": None, "findings": 3,
        "markers": markers, "caught": caught, "undercalled": under,
        "missed": len(lists["missed"]), "duplicates": 0, "borderline": 0, "noise": 0, "cited": 0,
        "recall": round(caught / markers, 4) if seeded_scored and markers else None,
        "recall_ci95": wilson(caught, markers) if seeded_scored else None,
        "blocker_recall": round(b["caught"] / b["markers"], 4) if seeded_scored and b["markers"] else None,
        "blocker_recall_ci95": wilson(b["caught"], b["markers"]) if seeded_scored else None,
        "by_severity": sev, "caught_seeds": lists["caught"], "undercalled_seeds": lists["undercalled"],
        "missed_seeds": lists["missed"],
        "clean_false_positives": cfp if kind == "clean" and scored else None,
        "gate": {"passed": not reasons, "reasons": reasons}, "tool_version": "0.1.0",
    }
    return dict(json.loads(json.dumps(record)))  # as read back from a file: tuples become lists


C, U, M = "caught", "undercalled", "missed"
# python/redline, six weekly runs; run 4 is silent (no seed measured).
PY_REDLINE = {
    1: [C, C, C, None, C, C],        # always caught
    2: [C, C, C, None, U, M],        # newly missed
    3: [C, M, C, None, M, C],        # intermittent
    4: [U, M, U, None, M, M],        # never caught
    5: [M, C, C, None, C, C],        # intermittent (recovered)
}
PY_COPILOT = {1: [C, C, C], 2: [C, C, C], 3: [M, M, M], 4: [C, C, C], 5: [M, M, C]}


def synthetic_history() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i in range(6):
        outcome = "silent" if i == 3 else "scored"
        states = {n: s[i] or C for n, s in PY_REDLINE.items()}
        common: dict[str, Any] = {"run_id": f"py-r{i}", "day": 7 * i, "repo": "acme/canary-py", "stack": "python",
                  "reviewer": "redline", "fingerprint": FP_PY, "outcome": outcome}
        out.append(make_record(kind="seeded", states=states, **common))
        out.append(make_record(kind="clean", cfp=2 if i == 5 else 0, **common))
    for i in range(3):
        states = {n: s[i] for n, s in PY_COPILOT.items()}
        common = {"run_id": f"py-c{i}", "day": 7 * i + 1, "repo": "acme/canary-py2", "stack": "python",
                  "reviewer": "copilot", "fingerprint": FP_PY}
        out.append(make_record(kind="seeded", states=states, **common))
        out.append(make_record(kind="clean", **common))
    # go/redline: run 1 errors; the corpus changes before run 2 and gains seed 3.
    go = [
        ("go-r0", FP_GO_OLD, "scored", {1: C, 2: M}),
        ("go-r1", FP_GO_OLD, "error", {1: C, 2: C}),
        ("go-r2", FP_GO_NEW, "scored", {1: C, 2: C, 3: M}),
        ("go-r3", FP_GO_NEW, "scored", {1: C, 2: C, 3: U}),
    ]
    for i, (run_id, fp, outcome, states) in enumerate(go):
        common = {"run_id": run_id, "day": 7 * i + 2, "repo": "acme/canary-go", "stack": "go",
                  "reviewer": "redline", "fingerprint": fp, "outcome": outcome}
        out.append(make_record(kind="seeded", states=states, **common))
        out.append(make_record(kind="clean", **common))
    # A confirmation re-run of go-r3 seeded (attempt 2) supersedes attempt 1: seed 1 missed.
    out.append(make_record(run_id="go-r3", day=23, repo="acme/canary-go", stack="go", kind="seeded",
                           reviewer="redline", fingerprint=FP_GO_NEW, states={1: M, 2: C, 3: U}, attempt=2))
    return out


def write_history(path: Path, corrupt_after: int = 5) -> Path:
    """The synthetic history as JSONL with one torn line (line ``corrupt_after + 1``)."""
    lines = [json.dumps(r) for r in synthetic_history()]
    lines.insert(corrupt_after, '{"run_id": "torn", "repo": ')
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def build_report(records: Iterable[Mapping[str, Any] | Record], since: str | None = None,
                 corrupt: Sequence[tuple[int, str]] = ()) -> Report:
    """The report of these records as the history reads them."""
    read = [r if isinstance(r, Record) else as_records([r])[0] for r in records]
    return report_build.build_report(read, since=since, corrupt=corrupt)


def target(report: Any, stack: str, reviewer: str) -> Any:
    [t] = [t for t in report.targets if t.stack == stack and t.reviewer == reviewer]
    return t


# ------------------------------------------------------------------------------ tests


def test_synthetic_records_follow_the_history_schema() -> None:
    validator = jsonschema.validators.validator_for(SCHEMA)(SCHEMA)  # built once, not per record
    validator.check_schema(SCHEMA)
    for r in synthetic_history():
        validator.validate(r)


def test_targets_runs_and_latest_table() -> None:
    report = build_report(synthetic_history())
    assert [(t.repo, t.stack, t.reviewer) for t in report.targets] == [
        ("acme/canary-go", "go", "redline"), ("acme/canary-py", "python", "redline"),
        ("acme/canary-py2", "python", "copilot")]
    py = target(report, "python", "redline")
    assert [r.run_id for r in py.runs] == [f"py-r{i}" for i in range(6)]
    latest = py.latest
    assert latest.run_id == "py-r5"
    assert latest.seeded is not None and latest.seeded.recall is not None and latest.seeded.blocker is not None
    assert (latest.seeded.recall.successes, latest.seeded.recall.n) == (3, 5)  # 1, 3, 5 caught
    assert (latest.seeded.blocker.successes, latest.seeded.blocker.n) == (1, 2)
    assert latest.seeded.recall.ci == tuple(wilson(3, 5) or ())
    assert latest.clean is not None and latest.clean.clean_false_positives == 2
    assert not latest.gate_passed
    assert latest.gate_reasons == ("seeded: blocker recall 1/2 < 1.0",
                                   "clean: 2 clean false positive(s) at or above MAJOR")
    md = render_markdown(report)
    row = next(line for line in md.splitlines() if line.startswith("| acme/canary-py · python | redline |"))
    assert "0.50 (1/2, 95% CI 0.09–0.91)" in row and "0.60 (3/5, 95% CI 0.23–0.88)" in row
    assert "| 2 |" in row and "FAIL" in row and f"`{FP_PY}`" in row


def test_confirmation_rerun_supersedes_the_first_attempt() -> None:
    go = target(build_report(synthetic_history()), "go", "redline")
    last = go.latest.seeded
    assert last is not None and last.attempt == 2 and last.seed_states[1] == "missed"
    assert last.blocker is not None and (last.blocker.successes, last.blocker.n) == (0, 1)


def test_silent_and_error_runs_are_gaps_not_zeros() -> None:
    report = build_report(synthetic_history())
    py = target(report, "python", "redline")
    silent = py.runs[3]
    assert silent.seeded is not None and silent.seeded.outcome == "silent"
    assert silent.seeded.recall is None and silent.seeded.blocker is None
    assert silent.clean is not None and silent.clean.clean_false_positives is None
    assert py.gaps == {"silent": 1} and silent.gap == "silent"
    assert all(row.cells[3] == NONE for row in py.seeds)
    go = target(report, "go", "redline")
    assert go.gaps == {"error": 1}
    md = render_markdown(report)
    silent_row = next(line for line in md.splitlines() if "| py-r3 |" in line)
    assert "silent (not measured)" in silent_row and "0.00" not in silent_row
    assert "Gaps in the window (nothing measured, not zeros): silent × 1." in md


def test_fingerprint_change_is_marked_and_splits_comparability() -> None:
    go = target(build_report(synthetic_history()), "go", "redline")
    assert [r.fingerprint_changed for r in go.runs] == [False, False, True, False]
    assert [r.fingerprint for r in go.runs] == [FP_GO_OLD, FP_GO_OLD, FP_GO_NEW, FP_GO_NEW]
    md = render_markdown(build_report(synthetic_history()))
    change = next(line for line in md.splitlines() if "| go-r2 |" in line)
    assert f"⚑ corpus changed → `{FP_GO_NEW}`" in change


def test_seed_heat_map_and_classes() -> None:
    report = build_report(synthetic_history())
    py = target(report, "python", "redline")
    classes = {row.seed.n: row.seed_class for row in py.seeds}
    assert classes == {1: ALWAYS_CAUGHT, 2: NEWLY_MISSED, 3: INTERMITTENT, 4: NEVER_CAUGHT, 5: INTERMITTENT}
    row2 = next(r for r in py.seeds if r.seed.n == 2)
    assert row2.cells == (C, C, C, NONE, U, M)
    assert (row2.caught, row2.undercalled, row2.missed, row2.observed) == (3, 1, 1, 5)
    assert (row2.seed.path, row2.seed.severity, row2.seed.rule) == ("app/auth.py", "BLOCKER",
                                                                    "core/hardcoded-secrets")
    go = target(report, "go", "redline")
    go_rows = {row.seed.n: row for row in go.seeds}
    # Seed 3 exists only after the corpus change: earlier columns are "none", not "missed".
    assert go_rows[3].cells == (NONE, NONE, M, U)
    assert go_rows[3].seed_class == NEVER_CAUGHT
    assert go_rows[1].cells == (C, NONE, C, M) and go_rows[1].seed_class == NEWLY_MISSED
    assert go_rows[2].cells == (M, NONE, C, C) and go_rows[2].seed_class == INTERMITTENT
    md = render_markdown(report)
    line = next(x for x in md.splitlines() if x.startswith("| SEED 2 app/auth.py:30"))
    assert "| newly missed | 3/5 | 🟩🟩🟩⬜🟨🟥 |" in line
    assert "Classes over the window: newly missed 1, never caught 1, intermittent 2, always caught 1." in md


@pytest.mark.parametrize(("states", "expected"), [
    ([C], ALWAYS_CAUGHT), ([C, NONE, C], ALWAYS_CAUGHT), ([M], NEVER_CAUGHT), ([U, M], NEVER_CAUGHT),
    ([C, M], NEWLY_MISSED), ([C, C, U, NONE, M], NEWLY_MISSED), ([M, C], INTERMITTENT),
    ([C, M, C], INTERMITTENT), ([C, M, C, M], INTERMITTENT), ([NONE, C, U], NEWLY_MISSED),
])
def test_classify_edges(states: list[str], expected: str) -> None:
    assert classify(states) == expected


def test_cross_reviewer_paired_differences() -> None:
    report = build_report(synthetic_history())
    [comp] = report.comparisons  # go has one reviewer only: no comparison
    assert (comp.stack, comp.fingerprint) == ("python", FP_PY)
    assert [s.reviewer for s in comp.reviewers] == ["copilot", "redline"]
    copilot, redline = comp.reviewers
    assert copilot.runs == 3 and redline.runs == 5 and redline.gaps == 1
    assert redline.seed_counts == {1: (5, 5), 2: (3, 5), 3: (3, 5), 4: (0, 5), 5: (4, 5)}
    assert copilot.seed_counts == {1: (3, 3), 2: (3, 3), 3: (0, 3), 4: (3, 3), 5: (1, 3)}
    [pair] = comp.pairs
    assert (pair.a, pair.b, pair.seeds_compared) == ("copilot", "redline", 5)
    assert (pair.a_better, pair.b_better, pair.tied) == (2, 2, 1)
    assert {d.seed.n: round(d.diff, 4) for d in pair.differing} == {
        2: 0.4, 3: -0.6, 4: 1.0, 5: round(1 / 3 - 0.8, 4)}
    assert pair.sign_test_p == 1.0
    md = render_markdown(report)
    assert "**copilot vs redline** — paired over 5 seeds measured by both" in md
    assert "| SEED 4 app/util.py:41 [MAJOR] core/resource-leak — defect 4 | 3/3 | 0/5 | +1.00 |" in md


def test_sign_test_values() -> None:
    assert sign_test(0, 0) is None
    assert sign_test(5, 0) == pytest.approx(2 / 32)
    assert sign_test(3, 3) == 1.0
    assert sign_test(1, 9) == pytest.approx(2 * 11 / 1024)


def test_since_filters_the_window_and_the_classes() -> None:
    report = build_report(synthetic_history(), since="2026-01-29")  # py-r4 (day 28) onwards
    py = target(report, "python", "redline")
    assert [r.run_id for r in py.runs] == ["py-r4", "py-r5"]
    assert {row.seed.n: row.seed_class for row in py.seeds}[2] == NEVER_CAUGHT
    assert report.first is not None and report.first >= "2026-01-29"
    assert [t.reviewer for t in report.targets] == ["redline"]  # copilot and go runs are earlier


def test_markdown_table_cells_escape_pipes_and_fit_the_limit() -> None:
    md = render_markdown(build_report(synthetic_history()))
    assert "core/naming \\| style" in md
    assert len(md.encode()) < MARKDOWN_LIMIT
    for line in md.splitlines():
        if line.startswith("| SEED 5 "):
            assert line.replace("\\|", "").count("|") == 5  # four cells, no stray separator


def test_markdown_shrinks_to_fit_a_small_limit() -> None:
    report = build_report(synthetic_history())
    full = render_markdown(report)
    small = render_markdown(report, limit=len(full.encode()) // 2)
    assert len(small.encode()) <= len(full.encode()) // 2
    assert "# redline-canary scoreboard" in small and "## Latest run" in small
    tiny = render_markdown(report, limit=3000)
    assert len(tiny.encode()) <= 3000 and "left out to stay under 3000 bytes" in tiny


def test_markdown_trend_shows_only_the_last_runs() -> None:
    md = render_markdown(build_report(synthetic_history()), max_runs=3)
    assert "_Last 3 of 6 runs; the HTML report charts them all._" in md
    assert "| py-r3 |" in md and "| py-r2 |" not in md


def test_invalid_records_and_corrupt_lines_are_named_and_skipped() -> None:
    records = synthetic_history()
    # A value of the wrong type never reaches the report: reading refuses it, naming the key.
    with pytest.raises(RecordProblem, match=r"^recall_ci95: expected a list or null"):
        Record.from_json(dict(records[0], recall_ci95="high", run_id="bad-one"))
    # A record the schema allows but the scoreboard cannot name a row by is skipped, named.
    bad = dict(records[0], reviewer="", run_id="bad-one")
    report = build_report([*records, bad], corrupt=[(6, "not valid JSON (Expecting value)")])
    assert report.records_used == len(records)
    assert report.skipped[0] == "line 6: not valid JSON (Expecting value)"
    assert "run_id=bad-one" in report.skipped[1] and "reviewer is not a non-empty string" in report.skipped[1]
    md = render_markdown(report)
    assert "2 history line(s)/record(s) skipped, not counted" in md


def test_empty_history_renders_a_note() -> None:
    report = build_report([])
    assert report.targets == [] and report.comparisons == []
    assert "_No records in the window._" in render_markdown(report)


def test_json_form_is_serialisable_and_complete() -> None:
    data = json.loads(json.dumps(to_json(build_report(synthetic_history()))))
    py = next(t for t in data["targets"] if t["label"] == "acme/canary-py · python · redline")
    assert py["gaps"] == {"silent": 1}
    assert [s["seed_class"] for s in py["seeds"]] == [ALWAYS_CAUGHT, NEWLY_MISSED, INTERMITTENT,
                                                      NEVER_CAUGHT, INTERMITTENT]
    assert data["comparisons"][0]["pairs"][0]["a_better"] == 2


def test_the_scoreboard_shows_blockers_found_beside_rated_blocker() -> None:
    md = render_markdown(build_report(synthetic_history()))
    assert "| Latest BLOCKERs |" in md
    assert re.search(r"found \d+/\d+ · rated BLOCKER \d\.\d\d \(\d+/\d+", md), md[:2000]
