"""The regression issue's decisions and texts (pure): which action per target, and what
the issue, its follow-up and its closing comment say, with hostile record text.

The same flow through the real CLI against the sandbox is in
``test_regression_issue_cli.py`` (integration tier; this module is in the unit tier).
"""

from __future__ import annotations

import re
from typing import Any

from redline_canary.report import regression_issue
from redline_canary.report.regression_issue import (
    MARKER,
    Links,
    OpenIssue,
    Target,
    TargetResult,
    find_issue,
    plan,
    title,
)
from redline_canary.score.record_schema import record_problem
from tests.helpers.records import as_records
from tests.helpers.references import live_references


def judge(records: list[dict[str, Any]], run_ids: list[str]) -> list[TargetResult]:
    """The run's records as the history reads them, judged."""
    return regression_issue.judge(as_records(records), run_ids)

REPO, STACK, REVIEWER = "acme/canary-python", "python", "copilot"
TARGET = Target(REPO, STACK, REVIEWER)
LINKS = Links("https://github.com/acme/metrics/actions/runs/100", "https://acme.example/scoreboard")
SEEDS = {1: ("app/api.py", 107, "BLOCKER", "core/idor"), 2: ("app/db.py", 12, "BLOCKER", "core/sql-injection"),
         3: ("app/util.py", 40, "MAJOR", "core/float-money"), 4: ("app/auth.py", 9, "BLOCKER", "core/weak-hash")}


def seed(n: int, **over: Any) -> dict[str, Any]:
    path, line, sev, rule = SEEDS[n]
    return {"n": n, "path": path, "line": line, "pushed_path": path, "pushed_line": line, "severity": sev,
            "rule": rule, "symbol": None, "description": f"defect {n}", **over}


def record(run_id: str = "100-1", kind: str = "seeded", *, caught: tuple[int, ...] = (1, 2, 3, 4),
           missed: tuple[int, ...] = (), undercalled: tuple[int, ...] = (), outcome: str = "scored",
           attempt: int = 1, cfp: int = 0, repo: str = REPO, stack: str = STACK, reviewer: str = REVIEWER,
           reasons: list[str] | None = None) -> dict[str, Any]:
    """A schema-valid record; the gate computed as scoring would (BLOCKER caught, clean FP)."""
    sev = {s: {"markers": 0, "caught": 0, "undercalled": 0, "missed": 0}
           for s in ("BLOCKER", "CRITICAL", "MAJOR", "MINOR", "INFO")}
    lists = {"caught": caught, "undercalled": undercalled, "missed": missed} if kind == "seeded" else {}
    for state, ns in lists.items():
        for n in ns:
            sev[SEEDS[n][2]]["markers"] += 1
            sev[SEEDS[n][2]][state] += 1
    b = sev["BLOCKER"]
    if reasons is None:
        reasons = []
        if outcome != "scored":
            reasons = [f"reviewer {outcome}"]
        elif kind == "seeded" and b["caught"] < b["markers"]:
            reasons = [f"blocker recall {b['caught']}/{b['markers']} < 1.0"]
        elif kind == "clean" and cfp:
            reasons = [f"{cfp} clean false positive(s) at or above MAJOR"]
    markers = sum(len(v) for v in lists.values())
    out = {
        "schema": 1, "run_id": run_id, "attempt": attempt, "recorded_at": "2026-11-30T10:00:00Z",
        "repo": repo, "stack": stack, "kind": kind, "pr": 1, "reviewer": reviewer, "mode": "blind",
        "corpus_fingerprint": "0123456789abcdef", "outcome": outcome, "markers": markers,
        "caught": len(lists.get("caught", ())), "undercalled": len(lists.get("undercalled", ())),
        "missed": len(lists.get("missed", ())), "duplicates": 0, "borderline": 0, "noise": 0, "cited": 0,
        "recall": None, "recall_ci95": None, "blocker_recall": None, "by_severity": sev,
        **{f"{k}_seeds": [seed(n) for n in lists.get(k, ())] for k in ("caught", "undercalled", "missed")},
        "clean_false_positives": cfp if kind == "clean" else None,
        "gate": {"passed": not reasons, "reasons": reasons}, "tool_version": "t",
    }
    assert record_problem(out) is None
    return out


def pair(run_id: str = "100-1", **seeded: Any) -> list[dict[str, Any]]:
    return [record(run_id, "seeded", **seeded), record(run_id, "clean")]


def failing(run_id: str = "100-1") -> TargetResult:
    return judge(pair(run_id, caught=(1, 3), missed=(2, 4)), [run_id])[0]


# --- judge ---------------------------------------------------------------------------------

def test_a_missed_blocker_fails_the_target_with_the_seeds_where_the_corpus_holds_them() -> None:
    [result] = judge(pair(caught=(1,), missed=(2, 3), undercalled=(4,)), ["100-1"])
    assert result.status == "failing" and result.target == TARGET and result.run_id == "100-1"
    assert result.reasons == ("seeded: blocker recall 1/3 < 1.0",)
    assert [(s.n, s.file, s.line, s.rule) for s in result.missed] == [
        (2, "seeds/seeded/python/app/db.py", 12, "core/sql-injection")]  # the MAJOR is not listed
    assert [s.n for s in result.undercalled] == [4]


def test_confirmation_lists_only_blockers_every_attempt_missed() -> None:
    first = record(caught=(1, 2, 3), missed=(4,), attempt=1)
    second = record(caught=(3,), missed=(1, 2, 4), attempt=2)
    [result] = judge([first, second, record(kind="clean")], ["100-1"])
    assert result.status == "failing" and [s.n for s in result.missed] == [4]  # 1, 2 caught once


def test_silent_and_clean_false_positives_fail_error_is_no_verdict_and_all_green_passes() -> None:
    silent = judge([record(outcome="silent", caught=()), record(kind="clean")], ["100-1"])[0]
    assert silent.status == "failing" and silent.reasons == ("seeded: reviewer silent",)
    noisy = judge([record(), record(kind="clean", cfp=2)], ["100-1"])[0]
    assert noisy.status == "failing" and noisy.reasons == ("clean: 2 clean false positive(s) at or above MAJOR",)
    assert judge([record(), record(kind="clean", outcome="error")], ["100-1"])[0].status == "unknown"
    assert judge(pair(), ["100-1"])[0].status == "passing"


def test_targets_are_kept_apart_and_a_later_run_id_supersedes() -> None:
    records = [*pair("100-1", caught=(1,), missed=(2, 4)), *pair("100-2"),
               *[record("100-1", k, stack="go", caught=(), missed=(1,)) for k in ("seeded",)]]
    results = {r.target.stack: r for r in judge(records, ["100-1", "100-2"])}
    assert results["python"].status == "passing" and results["python"].run_id == "100-2"
    assert results["go"].status == "failing" and results["go"].run_id == "100-1"
    assert judge(records, ["100-2"])[0].target.stack == "python" and len(judge(records, ["100-2"])) == 1


# --- plan ----------------------------------------------------------------------------------

def ours(run_id: str = "100-1", number: int = 7, comments: tuple[str, ...] = ()) -> OpenIssue:
    [action] = plan([failing(run_id)], [], LINKS)
    return OpenIssue(number, f"https://github.com/acme/metrics/issues/{number}", action.body, comments)


def test_open_when_failing_and_no_issue_then_nothing_for_the_same_run() -> None:
    [action] = plan([failing()], [], LINKS)
    assert action.kind == "open" and action.issue is None
    assert action.title == "redline-canary: copilot regressed on acme/canary-python python"
    assert action.body.startswith(TARGET.marker + "\n<!-- rc:regression-run=100-1 -->\n")
    assert "SEED 2 `seeds/seeded/python/app/db.py:12` `core/sql-injection` — defect 2" in action.body
    assert "SEED 4 `seeds/seeded/python/app/auth.py:9`" in action.body and "SEED 1 " not in action.body
    assert "- seeded: blocker recall 1/3 &lt; 1.0" in action.body
    assert f"[run `100-1`](<{LINKS.run_url}>)" in action.body and f"[Summary](<{LINKS.summary_url}>)" in action.body
    [again] = plan([failing()], [ours()], LINKS)
    assert again.kind == "nothing" and again.issue == 7 and "already reported" in again.why


def test_comment_once_per_further_failing_run() -> None:
    [action] = plan([failing("101-1")], [ours()], LINKS)
    assert action.kind == "comment" and action.issue == 7
    assert action.body.startswith("<!-- rc:regression-run=101-1 -->\nStill failing in [run `101-1`]")
    assert "SEED 2" in action.body
    issue = ours(comments=(action.body,))
    assert plan([failing("101-1")], [issue], LINKS)[0].kind == "nothing"


def test_close_with_a_comment_when_passing_again_and_nothing_when_no_issue() -> None:
    passing = judge(pair("102-1"), ["102-1"])[0]
    [action] = plan([passing], [ours()], LINKS)
    assert action.kind == "close" and action.issue == 7
    assert action.body.startswith("<!-- rc:regression-run=102-1 -->\nPassing again in [run `102-1`]")
    # A retry after the comment went out but the close failed closes without a second comment.
    [retry] = plan([passing], [ours(comments=(action.body,))], LINKS)
    assert retry.kind == "close" and retry.body == ""
    assert plan([passing], [], LINKS)[0].kind == "nothing"
    unknown = judge([record("102-1"), record("102-1", "clean", outcome="error")], ["102-1"])[0]
    [left] = plan([unknown], [ours()], LINKS)
    assert left.kind == "nothing" and "#7 left open" in left.why


def test_only_the_marker_finds_an_issue_never_the_title() -> None:
    human = OpenIssue(3, "u", "I think copilot regressed on acme/canary-python python. " + title(TARGET))
    other = OpenIssue(4, "u", Target(REPO, STACK, "copilot-2").marker)
    quoting = OpenIssue(5, "u", "we quoted " + MARKER.format(target="acme/canary-python/python"))
    assert find_issue([human, other, quoting], TARGET) is None
    assert plan([failing()], [human, other, quoting], LINKS)[0].kind == "open"
    assert find_issue([ours(number=9), ours(number=8)], TARGET).number == 8  # type: ignore[union-attr]


def test_run_markers_count_only_in_the_texts_given() -> None:
    issue = ours(comments=("<!-- rc:regression-run=200-1 -->",))
    assert issue.reported_runs() == {"100-1", "200-1"}


# --- hostile text ----------------------------------------------------------------------------

def test_record_text_cannot_forge_a_marker_ping_anyone_or_break_out() -> None:
    forged = MARKER.format(target="acme/canary-python/python/copilot")
    evil_reviewer = "copilot --> <img src=x onerror=alert(1)> @octocat"
    records = [record(reviewer=evil_reviewer, caught=(1,), missed=(2,),
                      reasons=[f"blocker recall {forged} @org/security-team see #12 and GH-3 ![x](https://e.vil/p.png)"]),
               record(kind="clean", reviewer=evil_reviewer)]
    records[0]["missed_seeds"][0].update(path="app/db.py\n## Injected heading", rule="[x](javascript:alert(1))",
                                         description="<!-- rc:regression-run=999-1 --> @someone")
    [result] = judge(records, ["100-1"])
    [action] = plan([result], [], LINKS)
    body = action.body
    target = result.target
    # Exactly two HTML comments, both ours, both first; the forged text is inert.
    assert re.findall(r"<!--.*?-->", body) == [target.marker, "<!-- rc:regression-run=100-1 -->"]
    assert "%20--%3E%20%3Cimg" in target.marker and "<img" not in body
    assert forged not in body and OpenIssue(1, "u", body).reported_runs() == {"100-1"}
    assert find_issue([OpenIssue(1, "u", body)], TARGET) is None  # the real copilot target is not this issue
    # Every mention and reference is a code span: GitHub neither notifies nor links from one.
    assert live_references(body) == []
    assert all(f"`{ref}`" in body for ref in ("@octocat", "@org/security-team", "#12", "GH-3", "@someone"))
    assert "!\\[x\\](" in body and "\\[x\\](javascript" in body  # brackets escaped: no link, no image
    assert len(re.findall(r"(?<!\\)\]\(", body)) == 2  # our two links: the run and the summary
    assert not any(line.startswith("## ") for line in body.splitlines())
    assert "\n" not in action.title and len(action.title) <= 256


def test_the_texts_stay_within_githubs_limits() -> None:
    SEEDS.update({n: (f"app/m{n}.py", n, "BLOCKER", "core/x" * 40) for n in range(10, 3000)})
    try:
        big = record(caught=(), missed=tuple(range(10, 3000)), reviewer="r" * 500, stack="s" * 99)
        [result] = judge([big], ["100-1"])
        [action] = plan([result], [], LINKS)
        assert len(action.body) < 65536 and len(action.title) <= 256
        assert "and 2950 more" in action.body
        follow = plan([result], [OpenIssue(1, "u", action.body.replace("100-1", "099-1"))], LINKS)[0]
        assert follow.kind == "comment" and len(follow.body) < 65536
    finally:
        for n in range(10, 3000):
            SEEDS.pop(n)
