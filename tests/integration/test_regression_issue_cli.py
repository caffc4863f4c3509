"""``redline-canary issue`` end to end: the real CLI in a subprocess against the sandbox.

A metrics repository as life leaves it — a person's issue with the very title the tool
uses (and even its label), a pull request whose body quotes the marker (the issues list
returns pull requests too) — then a failing run, the same command again, a second failing
run and a passing one. Only the tool's own issue is ever opened, commented on or closed.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from redline_canary.report.regression_issue import DEFAULT_LABEL, title
from redline_canary.run.history import append_records
from redline_canary.sandbox import IssueSummary, Sandbox
from tests.helpers.clirun import cli_main
from tests.helpers.records import as_records
from tests.helpers.sandboxing import TOKEN, assert_no_canary_left
from tests.unit.test_regression_issue import TARGET, pair, record

METRICS = "acme/metrics"
RUN_URL = "https://github.com/acme/metrics/actions/runs/100"
ENV = {"GITHUB_TOKEN": TOKEN, "REDLINE_CANARY_TOKEN": "", "REDLINE_CANARY_TIME_SCALE": "0.01",
       "GITHUB_ACTIONS": ""}


@pytest.fixture
def sb() -> Iterator[Sandbox]:
    with Sandbox(token=TOKEN) as sandbox:
        sandbox.create_repo(METRICS, files={"README.md": "metrics\n"})
        yield sandbox
        # A person's PR may stay open (the command must not touch it); nothing canary may.
        assert_no_canary_left(sandbox, METRICS)


def issue(sb: Sandbox, history: Path, *run_ids: str, extra: tuple[str, ...] = ()) -> Any:
    args = ["issue", "--repo", METRICS, "--history", str(history), "--api-url", sb.url, "--run-url", RUN_URL]
    for rid in run_ids:
        args += ["--run-id", rid]
    res = cli_main(*args, *extra, env=ENV)
    assert TOKEN not in res.stdout + res.stderr
    return res


def ours(sb: Sandbox) -> list[IssueSummary]:
    return [i for i in sb.issues(METRICS) if TARGET.marker in (i.body or "")]


def test_open_once_comment_once_per_run_close_when_passing_and_touch_nothing_else(
        sb: Sandbox, tmp_path: Path) -> None:
    human = sb.create_issue(METRICS, title(TARGET), "copilot looks off this week", author="octocat",
                            labels=[DEFAULT_LABEL])
    pr = sb.create_pull(METRICS, "notes", title="Notes", body=f"Quoting the bot: {TARGET.marker}",
                        files={"notes.md": "n\n"}, author="octocat")
    sb.state.add_labels(sb.state.get_repo_by_name(METRICS), pr, [DEFAULT_LABEL])
    history = tmp_path / "history.jsonl"
    go = [record("100-1", k, stack="go") for k in ("seeded", "clean")]
    append_records(history, as_records([*pair("100-1", caught=(1, 3), missed=(2, 4)), *go]))

    # A failing run opens one issue, with the missed seeds, the gate's reasons and the run.
    res = issue(sb, history, "100-1")
    assert res.returncode == 0, res.stderr
    [mine] = ours(sb)
    assert mine.number not in (human, pr) and mine.state == "open" and mine.labels == (DEFAULT_LABEL,)
    assert mine.title == "redline-canary: copilot regressed on acme/canary-python python"
    assert "SEED 2 `seeds/seeded/python/app/db.py:12` `core/sql-injection`" in (mine.body or "")
    assert "SEED 4 `seeds/seeded/python/app/auth.py:9`" in (mine.body or "")
    assert "blocker recall 1/3 &lt; 1.0" in (mine.body or "") and f"(<{RUN_URL}>)" in (mine.body or "")
    assert res.stdout.splitlines() == [
        f"acme/canary-python python/copilot: opened #{mine.number} — gate failed in run 100-1: "
        "seeded: blocker recall 1/3 < 1.0",
        "acme/canary-python go/copilot: nothing — passing in run 100-1"]

    # The same command again (a retried job): no second issue, no comment.
    again = issue(sb, history, "100-1")
    assert again.returncode == 0, again.stderr
    assert f"nothing — run 100-1 already reported on #{mine.number}" in again.stdout
    assert [(i.number, i.comments) for i in ours(sb)] == [(mine.number, ())]

    # A stranger's comment carrying next run's marker cannot silence it.
    sb.add_issue_comment(METRICS, mine.number, "<!-- rc:regression-run=101-1 --> me too", author="mallory")
    append_records(history, as_records(pair("101-1", caught=(1, 2, 3), missed=(4,))))
    for _ in range(2):
        res = issue(sb, history, "101-1")
        assert res.returncode == 0, res.stderr
    [mine] = ours(sb)
    assert len(mine.comments) == 2 and mine.comments[1].startswith("<!-- rc:regression-run=101-1 -->\nStill failing")
    assert "SEED 4 " in mine.comments[1] and "SEED 2 " not in mine.comments[1]
    assert "commented on" not in res.stdout and "already reported" in res.stdout

    # A passing run closes it with a comment; once closed, a rerun does nothing.
    append_records(history, as_records(pair("102-1")))
    res = issue(sb, history, "102-1")
    assert res.returncode == 0, res.stderr
    assert f"acme/canary-python python/copilot: closed #{mine.number} — passing again in run 102-1" in res.stdout
    [mine] = ours(sb)
    assert mine.state == "closed" and mine.state_reason == "completed"
    assert len(mine.comments) == 3 and "Passing again in [run `102-1`]" in mine.comments[2]
    assert issue(sb, history, "102-1").stdout.splitlines() == ["acme/canary-python python/copilot: nothing — "
                                                               "passing in run 102-1"]
    assert len(ours(sb)) == 1 and len(ours(sb)[0].comments) == 3

    # The person's issue (same title, same label, no marker) and the PR were never touched.
    everything = {i.number: i for i in sb.issues(METRICS, pulls=True)}
    assert everything[human].state == "open" and everything[human].comments == ()
    assert everything[human].body == "copilot looks off this week"
    assert everything[pr].pull and everything[pr].state == "open" and everything[pr].comments == ()
    assert len(everything) == 3


def test_dry_run_and_json_say_what_would_happen_and_write_nothing(sb: Sandbox, tmp_path: Path) -> None:
    history = tmp_path / "history.jsonl"
    append_records(history, as_records(pair("100-1", caught=(), missed=(1, 2, 4))))
    res = issue(sb, history, "100-1", extra=("--dry-run",))
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("acme/canary-python python/copilot: would open — gate failed in run 100-1")
    res = issue(sb, history, "100-1", extra=("--dry-run", "--json"))
    data = json.loads(res.stdout)
    assert data["dry_run"] is True and data["exit_code"] == 0 and data["label"] == DEFAULT_LABEL
    assert [(a["action"], a["applied"], a["issue"]) for a in data["actions"]] == [("open", False, None)]
    assert sb.issues(METRICS) == []
    res = issue(sb, history, "100-1", extra=("--json",))
    [row] = json.loads(res.stdout)["actions"]
    assert row["applied"] is True and row["url"].endswith(f"/{METRICS}/issues/{row['issue']}")


def test_a_create_answered_502_after_it_happened_opens_exactly_one_issue(sb: Sandbox, tmp_path: Path) -> None:
    history = tmp_path / "history.jsonl"
    append_records(history, as_records(pair("100-1", caught=(1,), missed=(2, 4))))
    sb.inject_fault("POST", "/repos/{owner}/{repo}/issues", status=502, after_write=True, times=1)
    res = issue(sb, history, "100-1")
    assert res.returncode == 0, res.stderr
    assert len(ours(sb)) == 1 and sb.request_counts()["POST /repos/{owner}/{repo}/issues"] == 1


def test_a_token_without_issues_write_is_bad_configuration(sb: Sandbox, tmp_path: Path) -> None:
    history = tmp_path / "history.jsonl"
    append_records(history, as_records(pair("100-1", caught=(1,), missed=(2, 4))))
    sb.fine_grained_token(missing={"issues"})
    res = issue(sb, history, "100-1")
    assert res.returncode == 2
    [line] = res.stderr.splitlines()
    assert line.startswith(f"redline-canary: {METRICS}: open issue: the token lacks a permission this needs: "
                           "issues=write")
    assert "could not open" in res.stdout and sb.issues(METRICS) == []


def test_issues_turned_off_on_the_repository_is_bad_configuration(sb: Sandbox, tmp_path: Path) -> None:
    sb.create_repo("acme/quiet", has_issues=False)
    history = tmp_path / "history.jsonl"
    append_records(history, as_records(pair("100-1")))
    res = cli_main("issue", "--repo", "acme/quiet", "--history", str(history), "--run-id", "100-1",
              "--api-url", sb.url, env=ENV)
    assert res.returncode == 2 and res.stdout == ""
    assert res.stderr == ("redline-canary: acme/quiet: list issues labelled 'redline-canary-regression': "
                          "GitHub answered 410 Issues are disabled for this repo\n")
