"""The pure GitHub Actions rendering: commands, outputs, summary limits, annotations."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from redline_canary.report.action_outputs import action_outputs, matrix_entry
from redline_canary.report.annotations import annotation_commands
from redline_canary.report.job_summary import job_summary, md
from redline_canary.report.markdown_fit import SUMMARY_LIMIT
from redline_canary.report.workflow_commands import escape_property, output_entry, workflow_command
from redline_canary.score.verdict import final_attempts
from tests.helpers.actionrunner import parse_commands, read_file_command
from tests.helpers.records import as_records, record


def seed(n: int, severity: str = "BLOCKER", path: str = "app/api.py") -> dict[str, Any]:
    return {"n": n, "path": path, "line": 10 + n, "pushed_path": path, "pushed_line": 9 + n,
            "severity": severity, "rule": "core/sql-injection", "symbol": None,
            "description": f"defect number {n} | with a pipe and <b>html</b>"}


def seeded(missed: list[dict[str, Any]], caught: int = 1, **kw: Any) -> dict[str, Any]:
    r = record(kind="seeded", stack="python", **kw)
    blockers = sum(1 for s in missed if s["severity"] == "BLOCKER")
    r.update(markers=len(missed) + caught, caught=caught, missed=len(missed), missed_seeds=missed,
             recall=caught / (len(missed) + caught), recall_ci95=[0.01, 0.5], blocker_recall_ci95=[0.0, 0.4])
    r["by_severity"]["BLOCKER"].update(markers=blockers + caught, caught=caught)
    return r


def test_a_newline_in_text_cannot_start_another_command() -> None:
    evil = "looks fine\n::set-env name=X::pwned\r\n::add-mask::x 100%"
    line = workflow_command("error", evil, file="a:b,c.py", line=3, title="t")
    assert "\n" not in line and "\r" not in line
    parsed = parse_commands(line)
    assert len(parsed) == 1 and parsed[0].message == evil and parsed[0].props["file"] == "a:b,c.py"
    assert escape_property("a,b:c%") == "a%2Cb%3Ac%25"


def test_outputs_use_the_heredoc_form_only_for_multi_line_values(tmp_path: Any) -> None:
    f = tmp_path / "out"
    f.write_text(output_entry("a", "1", "D") + output_entry("b", "x\ny=2", "EOF_1"))
    assert read_file_command(f) == {"a": "1", "b": "x\ny=2"}
    with pytest.raises(ValueError):
        output_entry("c", "x\nEOF_1\ny", "EOF_1")


def test_outputs_pool_final_attempts_and_leave_silence_empty() -> None:
    first = seeded([seed(1)], caught=1, attempt=1)
    confirm = seeded([], caught=2, attempt=2)  # the confirmation re-run caught both
    clean = record(kind="clean", stack="python")
    clean["clean_false_positives"] = 2
    read = as_records([first, confirm, clean])
    out = action_outputs(read, 1, "/tmp/r.jsonl")
    assert final_attempts(read) == read[1:]
    assert out == {"outcome": "fail", "exit-code": "1", "blocker-recall": "1", "recall": "1",
                   "clean-false-positives": "2", "records": "/tmp/r.jsonl", "run-id": "r1"}
    silent = [record(kind=k, outcome="silent") for k in ("seeded", "clean")]
    for r in silent:
        r["clean_false_positives"] = None
    out = action_outputs(as_records(silent), 3)
    assert out["outcome"] == "silent" and out["recall"] == out["blocker-recall"] == out["clean-false-positives"] == ""


def test_summary_has_the_four_numbers_with_n_and_interval_and_escapes_text() -> None:
    r = seeded([seed(1), seed(2, "MAJOR")], caught=1)
    r["undercalled"] = 0
    text = job_summary(as_records([r]), 1)
    assert text.startswith("## redline-canary: FAIL (exit 1: a gate failed)")
    assert "0.50 (1/2, 95% CI 0.00–0.40)" in text  # blocker recall with n and interval
    assert "0.33 (1/3, 95% CI 0.01–0.50)" in text
    assert "0 of 3" in text
    assert "seeds/seeded/python/app/api.py:11 [BLOCKER]" in text
    assert "<b>" not in text and "&lt;b&gt;" in text and "\\|" in text


def test_summary_never_exceeds_the_limit_and_says_what_it_left_out() -> None:
    base = seeded([seed(i, "BLOCKER" if i % 3 else "MINOR") for i in range(1, 300)], caught=1)
    records = []
    for i in range(60):
        r = copy.deepcopy(base)
        r["repo"] = f"acme/canary-{i}"
        records.append(r)
    text = job_summary(as_records(records), 1)
    assert len(text.encode()) <= SUMMARY_LIMIT
    assert "PR detail section(s) left out" in text
    assert text.count("| acme/canary-") == 60  # every PR keeps its row
    assert len(job_summary(as_records(records), 1, limit=5_000).encode()) <= 5_000


def test_annotations_put_blockers_first_and_cap_each_level() -> None:
    r = seeded([seed(i, "MINOR") for i in range(1, 4)] + [seed(i) for i in range(10, 25)], caught=0)
    lines = annotation_commands(as_records([r]), "seeds")
    cmds = parse_commands("\n".join(lines))
    errors = [c for c in cmds if c.name == "error"]
    assert len(errors) == 10
    assert errors[0].message.startswith("SEED 10 [BLOCKER] missed by redline on acme/canary PR #1")
    assert errors[0].props == {"file": "seeds/seeded/python/app/api.py", "line": "20", "title": "BLOCKER seed missed"}
    assert [c.name for c in cmds].count("warning") == 3
    notice = [c for c in cmds if c.name == "notice"]
    assert len(notice) == 1 and notice[0].message.startswith("5 more error(s)")


def test_annotations_for_silence_errors_and_clean_false_positives() -> None:
    silent = record(kind="seeded", outcome="silent")
    error = record(kind="clean", outcome="error")
    error["notice"] = "could not open a PR"
    clean = record(kind="clean", stack="go")
    clean["clean_false_positives"] = 3
    cmds = parse_commands("\n".join(annotation_commands(as_records([silent, error, clean]))))
    titles = [c.props["title"] for c in cmds]
    assert titles == ["Reviewer silent", "Canary error", "Clean false positives"]
    assert "could not open a PR" in cmds[1].message
    failed = parse_commands("\n".join(annotation_commands([], exit_code=2)))
    assert failed[0].props["title"] == "redline-canary: bad-input"
    assert annotation_commands([], exit_code=0) == []


def test_matrix_entries_carry_the_whole_target_and_a_safe_slug() -> None:
    entry = matrix_entry({"repo": "Acme/canary.py", "stack": "react-native", "reviewer": "copilot",
                          "mode": "blind", "login": ["a[bot]"]})
    assert entry["slug"] == "Acme--canary.py-react-native-copilot"
    assert json.loads(entry["target"])["login"] == ["a[bot]"]
    assert md("a|b\nc<") == "a\\|b c&lt;"
