"""The full canary cycle through ``redline-canary run`` against the sandbox (issue 4 §6).

Where the wire is not the point, ``run`` runs in this process with its clients mounted on
the sandbox's WSGI app (no socket; a dropped connection still surfaces as httpx's
transport error). Signals and the demo run the real CLI in a subprocess; the CLI's own
input checks and the janitor after a SIGKILL go through ``cli.main`` in this process, over
a real socket (``wire_sb``). Every test ends by asserting the sandbox holds no canary PR
and no canary branch.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from redline_canary.github.client import CANARY_TOPIC, GitHubClient
from redline_canary.github.clock import FakeClock
from redline_canary.github.retry import RetryPolicy
from redline_canary.run.corpus_files import load_corpus
from redline_canary.run.cycle import CycleOptions, TargetCycle
from redline_canary.run.targets import Target
from redline_canary.sandbox import BanditReviewer, Batch, Sandbox, ScriptedReviewer, SilentReviewer
from redline_canary.score.polling import PollConfig
from tests.helpers.clirun import ROOT, cli, cli_main
from tests.helpers.sandboxing import TOKEN, assert_no_canary_left, canary_sandbox, run_in_process

REPO = "acme/canary-mini"
CORPUS = ROOT / "tests" / "data" / "corpus"
SCHEMA = json.loads((ROOT / "history" / "schema.json").read_text())
FAST = ["--poll-interval", "0.05", "--stable-polls", "2", "--timeout-minutes", "0.5"]


@pytest.fixture()
def sb(in_process_sandbox: Sandbox) -> Iterator[Sandbox]:
    """The canary repo in a sandbox reached in-process (see ``run_cycle``)."""
    in_process_sandbox.create_repo(REPO, topics=[CANARY_TOPIC])
    yield in_process_sandbox
    assert_no_canary_left(in_process_sandbox, REPO)


@pytest.fixture()
def wire_sb() -> Iterator[Sandbox]:
    """The canary repo in a sandbox on a real socket, for the CLI in a subprocess."""
    yield from canary_sandbox(REPO)


def run_cycle(sb: Sandbox, tmp_path: Path, *extra: str, run_id: str = "t1") -> tuple[int, list[dict[str, Any]], str]:
    hist = tmp_path / "history.jsonl"
    code, out, err = run_in_process(sb, "--repo", REPO, "--stack", "mini", "--corpus", str(CORPUS),
                                    "--history", str(hist), "--run-id", run_id, *FAST, *extra,
                                    env={"GITHUB_TOKEN": TOKEN})
    records = [json.loads(line) for line in hist.read_text().splitlines()] if hist.exists() else []
    for r in records:
        jsonschema.validate(r, SCHEMA)
    assert TOKEN not in out + err + (hist.read_text() if hist.exists() else "")
    return code, records, out + err


def test_happy_path_with_the_real_bandit_reviewer(sb: Sandbox, tmp_path: Path) -> None:
    sb.attach_reviewer(REPO, BanditReviewer(latency=0.02))
    captures = tmp_path / "captures"
    code, records, out = run_cycle(sb, tmp_path, "--confirm", "0", "--save-captures", str(captures))
    seeded = next(r for r in records if r["kind"] == "seeded")
    clean = next(r for r in records if r["kind"] == "clean")
    assert seeded["outcome"] == "scored" and clean["outcome"] == "scored"
    # bandit rates the hard-coded token LOW and the SQL string MEDIUM: located, but undercalled.
    assert {s["n"] for s in seeded["undercalled_seeds"]} == {1, 2}
    assert seeded["blocker_recall"] == 0.0 and clean["clean_false_positives"] == 0
    assert code == 1 and "blockers" in out and "rated BLOCKER 0/3" in out
    pulls = sb.pulls(REPO)
    assert len(pulls) == 2 and all("redline-exempt" in p.labels for p in pulls)
    assert all("SEED" not in p.title + (p.body or "") for p in pulls)
    # The saved capture re-scores offline to the very same numbers (its manifest says how).
    saved = sorted(captures.glob("*-seeded-1.json"))
    assert len(saved) == 1
    again = json.loads(cli_main("score", "--capture", str(saved[0]), "--corpus", str(CORPUS), "--json").stdout)
    for key in ("caught", "undercalled", "missed", "duplicates", "noise", "blocker_recall", "recall_ci95",
                "corpus_fingerprint", "pr"):
        assert again[key] == seeded[key], key


def test_streaming_reviewer_is_not_cut_short(sb: Sandbox, tmp_path: Path) -> None:
    batches = [
        Batch(after=0.05, inline=[{"path": "app.py", "line": 5, "body": "[BLOCKER] token in code"}]),
        Batch(after=0.3, inline=[{"path": "app.py", "line": 10, "body": "[BLOCKER] SQL injection"}]),
        Batch(after=0.3, inline=[{"path": "web/Profile.tsx", "line": 7, "body": "[BLOCKER] XSS"}]),
    ]
    sb.attach_reviewer(REPO, ScriptedReviewer(batches))
    code, records, _ = run_cycle(sb, tmp_path, "--poll-interval", "0.2", "--stable-polls", "4")
    seeded = next(r for r in records if r["kind"] == "seeded")
    assert seeded["caught"] == 3 and seeded["blocker_recall"] == 1.0
    clean = next(r for r in records if r["kind"] == "clean")
    assert clean["clean_false_positives"] == 3  # the script says the same on clean code
    assert code == 1


def test_silent_reviewer_is_silent_not_zero(sb: Sandbox, tmp_path: Path) -> None:
    sb.attach_reviewer(REPO, SilentReviewer())
    code, records, _out = run_cycle(sb, tmp_path, "--timeout-minutes", "0.01")
    assert code == 3
    assert [r["outcome"] for r in records] == ["silent", "silent"]
    assert all(r["recall"] is None and r["clean_false_positives"] is None for r in records)


def test_missing_label_is_created_and_existing_branch_is_reused(sb: Sandbox, tmp_path: Path) -> None:
    from redline_canary.run.cycle import BRANCH_PREFIX, branch_name

    sb.attach_reviewer(REPO, BanditReviewer(latency=0.02))
    stale = branch_name(BRANCH_PREFIX, "t-exists", "mini", "seeded", 1)
    sb.commit_files(REPO, stale, {"stale.txt": "left by an earlier attempt\n"})
    code, records, _ = run_cycle(sb, tmp_path, "--confirm", "0", run_id="t-exists")
    assert code == 1 and len(records) == 2
    assert any(r.route == "/repos/{owner}/{repo}/labels" and r.method == "POST" for r in sb.requests)


def test_pr_creation_failure_after_commit_still_deletes_the_branch(
    sb: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REDLINE_CANARY_TIME_SCALE", "0.01")  # the retries' waits are not the point
    sb.attach_reviewer(REPO, SilentReviewer())
    sb.inject_fault("POST", "/repos/{owner}/{repo}/pulls", status=500, times=None)
    code, records, out = run_cycle(sb, tmp_path)
    assert code == 4 and "could not open a PR" in out
    assert {r["outcome"] for r in records} == {"error"} and "could not open a PR" in records[0]["notice"]
    assert sb.pulls(REPO) == []
    assert any(r.method == "POST" and r.route.endswith("/git/refs") for r in sb.requests)


def test_secondary_rate_limit_retry_after_is_honoured(sb: Sandbox, tmp_path: Path) -> None:
    sb.attach_reviewer(REPO, BanditReviewer(latency=0.02))
    sb.inject_fault("POST", "/repos/{owner}/{repo}/git/trees", status=403, times=1,
                    headers={"retry-after": "1"},
                    body={"message": "You have exceeded a secondary rate limit. Please wait a few minutes.",
                          "documentation_url": "https://docs.github.com/rest"})
    started = time.monotonic()
    code, records, _ = run_cycle(sb, tmp_path, "--confirm", "0")
    assert code == 1 and len(records) == 2
    assert time.monotonic() - started >= 1.0
    trees = [r for r in sb.requests if r.route.endswith("/git/trees")]
    assert [r.status for r in trees][:2] == [403, 201]


def test_server_errors_on_polls_are_retried(sb: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REDLINE_CANARY_TIME_SCALE", "0.01")  # the retries' waits are not the point
    sb.attach_reviewer(REPO, BanditReviewer(latency=0.02))
    sb.inject_fault("GET", "/repos/{owner}/{repo}/pulls/{pull_number}/comments", status=502, times=2)
    sb.inject_fault("GET", "/repos/{owner}/{repo}/issues/{issue_number}/comments", drop=True, times=1)
    code, records, _ = run_cycle(sb, tmp_path, "--confirm", "0")
    assert code == 1 and [r["outcome"] for r in records] == ["scored", "scored"]


def test_invalid_targets_exit_2_and_touch_nothing(wire_sb: Sandbox, tmp_path: Path) -> None:
    for targets, message in [
        ('[{"repo": "acme/x", "stack": "mini"', "not valid JSON"),
        ('[{"repo": "acme/x"}]', "[0].stack: required string"),
        ('[{"repo": "acme/x", "stack": "cobol"}]', "[0].stack: unknown stack 'cobol'"),
        ('[{"repo": "acme/x", "stack": "mini", "reviewer": "hal"}]', "[0].reviewer: unknown profile"),
        ('[{"repo": "nope", "stack": "mini"}]', "[0].repo: expected OWNER/NAME"),
    ]:
        res = cli_main("run", "--targets", targets, "--corpus", str(CORPUS), "--api-url", wire_sb.url,
                  "--history", str(tmp_path / "h.jsonl"), env={"GITHUB_TOKEN": TOKEN})
        assert res.returncode == 2, res.stderr
        assert message in res.stderr and len(res.stderr.strip().splitlines()) == 1
    assert wire_sb.requests == [] and not (tmp_path / "h.jsonl").exists()


def test_dry_run_prints_the_plan_and_touches_nothing(wire_sb: Sandbox, tmp_path: Path) -> None:
    res = cli_main("run", "--repo", REPO, "--stack", "mini", "--corpus", str(CORPUS), "--api-url", wire_sb.url,
              "--dry-run", "--run-id", "plan1")
    assert res.returncode == 0 and "mini/seeded" in res.stdout and "mini/clean" in res.stdout
    assert wire_sb.requests == []


def _spawn_run(sb: Sandbox, tmp_path: Path, run_id: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "redline_canary", "run", "--repo", REPO, "--stack", "mini",
         "--corpus", str(CORPUS), "--api-url", sb.url, "--history", str(tmp_path / "h.jsonl"),
         "--run-id", run_id, "--poll-interval", "0.1", "--timeout-minutes", "5"],
        cwd=ROOT, env={**os.environ, "GITHUB_TOKEN": TOKEN}, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _wait_for_open_pulls(sb: Sandbox, n: int, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if len(sb.open_pulls(REPO)) >= n:
            time.sleep(0.3)  # into the poll loop
            return
        time.sleep(0.05)
    raise AssertionError("the run never opened its PRs")


def test_sigterm_mid_poll_tears_down_and_exits_130(wire_sb: Sandbox, tmp_path: Path) -> None:
    wire_sb.attach_reviewer(REPO, SilentReviewer())
    proc = _spawn_run(wire_sb, tmp_path, "sigterm1")
    _wait_for_open_pulls(wire_sb, 2)
    sent = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    _out, err = proc.communicate(timeout=15)
    assert time.monotonic() - sent < 7.0
    assert proc.returncode == 130, err
    records = [json.loads(line) for line in (tmp_path / "h.jsonl").read_text().splitlines()]
    assert sorted(r["kind"] for r in records) == ["clean", "seeded"]
    assert {r["outcome"] for r in records} == {"cancelled"}


def test_sigkill_mid_poll_then_janitor_leaves_nothing(wire_sb: Sandbox, tmp_path: Path) -> None:
    wire_sb.attach_reviewer(REPO, SilentReviewer())
    # A person's PR that even quotes a run marker: no label, no canary branch, so untouched.
    unrelated = wire_sb.create_pull(REPO, "feature/human-work", files={"notes.md": "mine\n"},
                               title="Human PR", body="see <!-- rc:run=sigkill1 -->")
    proc = _spawn_run(wire_sb, tmp_path, "sigkill1")
    _wait_for_open_pulls(wire_sb, 3)
    proc.kill()
    proc.wait(timeout=10)
    assert len(wire_sb.open_pulls(REPO)) == 3
    res = cli_main("janitor", "--repo", REPO, "--api-url", wire_sb.url, "--run-id", "sigkill1", "--json",
              env={"GITHUB_TOKEN": TOKEN})
    assert res.returncode == 0, res.stderr
    report = json.loads(res.stdout)
    assert len(report["pulls"]) == 2 and len(report["branches"]) == 2
    assert [p.number for p in wire_sb.open_pulls(REPO)] == [unrelated]
    assert "feature/human-work" in wire_sb.branches(REPO)


def test_janitor_older_than_removes_only_old_leftovers(tmp_path: Path) -> None:
    age = [3 * 3600.0]  # the sandbox's clock runs 3 h behind while the first run opens its PRs
    with Sandbox(token=TOKEN, clock=lambda: time.time() - age[0]) as sandbox:
        sandbox.create_repo(REPO, topics=[CANARY_TOPIC])
        sandbox.attach_reviewer(REPO, SilentReviewer())
        for run_id, n_open in (("old-run", 2), ("new-run", 4)):
            proc = _spawn_run(sandbox, tmp_path, run_id)
            _wait_for_open_pulls(sandbox, n_open)
            proc.kill()
            proc.wait(timeout=10)
            age[0] = 0.0
        res = cli_main("janitor", "--repo", REPO, "--api-url", sandbox.url, "--older-than", "2h", "--json",
                  env={"GITHUB_TOKEN": TOKEN})
        report = json.loads(res.stdout)
        assert res.returncode == 0 and len(report["pulls"]) == 2 and len(report["branches"]) == 2
        assert all(b.startswith("rc/old-run-") for b in report["branches"])
        left = sandbox.open_pulls(REPO)
        assert len(left) == 2 and all("rc:run=new-run" in (p.body or "") for p in left)
        assert cli_main("janitor", "--repo", REPO, "--api-url", sandbox.url, "--older-than", "nonsense",
                   env={"GITHUB_TOKEN": TOKEN}).returncode == 2
        cli_main("janitor", "--repo", REPO, "--api-url", sandbox.url, "--run-id", "new-run",
                 env={"GITHUB_TOKEN": TOKEN})
        assert_no_canary_left(sandbox, REPO)


def test_forty_minute_wait_runs_in_milliseconds_with_an_injected_clock(sb: Sandbox) -> None:
    sb.attach_reviewer(REPO, SilentReviewer())
    clock = FakeClock()
    client = GitHubClient(TOKEN, sb.url, clock=clock, policy=RetryPolicy(clock=clock), transport=sb.transport())
    options = CycleOptions(run_id="fake-clock", poll=PollConfig(interval=30.0, timeout=40 * 60.0))
    started = time.monotonic()
    records = TargetCycle(client, Target(REPO, "mini"), load_corpus(CORPUS), options, clock).run()
    client.close()
    assert time.monotonic() - started < 10
    assert clock.now() >= 40 * 60.0 and [r.outcome for r in records] == ["silent", "silent"]


def test_reviewer_error_notice_makes_the_outcome_error_with_the_notice_quoted(
    sb: Sandbox, tmp_path: Path
) -> None:
    from redline_canary.sandbox import COPILOT

    notice = "Copilot encountered an error and was unable to review this pull request."
    sb.attach_reviewer(REPO, ScriptedReviewer([Batch(after=0.05, reviews=[{"body": notice}])],
                                              identity=COPILOT))
    code, records, _ = run_cycle(sb, tmp_path, "--reviewer", "copilot")
    assert code == 4
    assert [r["outcome"] for r in records] == ["error", "error"]
    assert all(r["notice"].startswith("Copilot encountered an error") for r in records)
    assert all(r["recall"] is None for r in records)


class _FlakyReviewer(ScriptedReviewer):
    """Misses the SQL injection on the first seeded PR (#1), catches it on the re-run (#3)."""

    def act(self, ctx: Any) -> None:
        inline = [{"path": "app.py", "line": 5, "body": "[BLOCKER] hard-coded token"},
                  {"path": "web/Profile.tsx", "line": 7, "body": "[BLOCKER] raw HTML"}]
        if ctx.number >= 3:
            inline.append({"path": "app.py", "line": 10, "body": "[BLOCKER] SQL built from input"})
        ctx.post_review("review", "COMMENTED", inline)


def test_confirmation_rerun_clears_a_blocker_caught_the_second_time(sb: Sandbox, tmp_path: Path) -> None:
    sb.attach_reviewer(REPO, _FlakyReviewer([]))
    code, records, _out = run_cycle(sb, tmp_path, "--confirm", "1")
    assert code == 1  # the clean PR got the same BLOCKER comments
    seeded = [r for r in records if r["kind"] == "seeded"]
    assert [r["attempt"] for r in seeded] == [1, 2]
    assert not seeded[0]["gate"]["passed"] and seeded[1]["gate"]["passed"]
    hist = tmp_path / "history.jsonl"
    gate = cli_main("gate", str(hist), "--run-id", "t1")
    assert gate.returncode == 1  # the clean PR is flagged: same comments on clean code
    assert "mini/seeded: scored PASS" in gate.stdout.replace("acme/canary-mini ", "")


def test_run_accepts_a_custom_profile_file(sb: Sandbox, tmp_path: Path) -> None:
    profiles = tmp_path / "profiles.yml"
    profiles.write_text(
        "profiles:\n"
        "  house-bot:\n"
        "    extends: redline\n"
        "    logins: ['house-reviewer[bot]']\n"
    )
    from redline_canary.sandbox import Identity

    sb.attach_reviewer(REPO, ScriptedReviewer(
        [Batch(after=0.05, inline=[{"path": "app.py", "line": 10, "body": "[BLOCKER] SQL"}])],
        identity=Identity("house-reviewer[bot]", 190_000_099)))
    code, records, out = run_cycle(sb, tmp_path, "--reviewer", "house-bot", "--profiles", str(profiles),
                                 "--confirm", "0")
    assert {r["reviewer"] for r in records} == {"house-bot"}, out
    assert code == 1  # one of three BLOCKERs caught
    assert next(r for r in records if r["kind"] == "seeded")["caught"] == 1


def test_demo_runs_end_to_end_offline(tmp_path: Path) -> None:
    hist = tmp_path / "demo.jsonl"
    res = cli("demo", "--history", str(hist), "--json", timeout=120)
    assert res.returncode == 3, res.stderr  # the silent reviewer's exit code wins
    assert "teardown: 0 PR(s) and 0 canary branch(es) left" in res.stderr
    records = [json.loads(line) for line in res.stdout.splitlines()]
    assert len(records) == 6 and hist.read_text().count("\n") == 6
    assert {r["outcome"] for r in records} == {"scored", "silent"}
    python = next(r for r in records if r["stack"] == "python" and r["kind"] == "seeded")
    assert python["undercalled"] + python["caught"] >= 1  # bandit really found something


def _run_id_from(stderr: str) -> str:
    ids = [line.removeprefix("run id: ") for line in stderr.splitlines() if line.startswith("run id: ")]
    assert len(ids) == 1, stderr
    return ids[0]


def test_demo_explains_its_verdicts_and_ends_with_its_run_id(tmp_path: Path) -> None:
    """The demo says why bandit's rows FAIL and why exit 3 is expected, how long it took in
    all, and the run id that ``gate`` and ``issue`` ask for, with the command to use it."""
    hist = tmp_path / "demo.jsonl"
    res = cli("demo", "--history", str(hist), timeout=120)
    assert res.returncode == 3, res.stderr
    assert "bandit is a static analyser" in res.stdout and "so their FAIL is expected" in res.stdout
    assert "silent on purpose" in res.stdout and "exit code 3" in res.stdout
    assert re.search(r"took \d+\.\ds in all", res.stderr), res.stderr
    run_id = _run_id_from(res.stderr)
    assert res.stderr.splitlines()[-2:] == [
        f"run id: {run_id}", f"  next: redline-canary gate --run-id {run_id} {hist}"]
    assert cli_main("gate", str(hist), "--run-id", run_id).returncode == 3


def test_run_ends_with_its_run_id_and_names_a_rerun_by_its_attempt(wire_sb: Sandbox, tmp_path: Path) -> None:
    """No --run-id given (a first run): the id is printed with the gate command that takes
    it, and the table names a confirmation re-run "(attempt 2)", not "#2" (a PR number?)."""
    wire_sb.attach_reviewer(REPO, _FlakyReviewer([]))
    hist = tmp_path / "history.jsonl"
    res = cli_main("run", "--repo", REPO, "--stack", "mini", "--corpus", str(CORPUS), "--api-url", wire_sb.url,
                   "--history", str(hist), *FAST, "--confirm", "1", env={"GITHUB_TOKEN": TOKEN, "GITHUB_RUN_ID": ""})
    assert res.returncode == 1, res.stderr
    assert f"{REPO} mini (attempt 2)" in res.stdout and " #2" not in res.stdout, res.stdout
    run_id = _run_id_from(res.stderr)
    assert f"  next: redline-canary gate --run-id {run_id} {hist}" in res.stderr.splitlines()
    assert cli_main("gate", str(hist), "--run-id", run_id).returncode == 1


class _ThumbsUpCodex(ScriptedReviewer):
    """Codex's way of saying "reviewed, nothing to report": a 👍 on the PR, no comment."""

    def act(self, ctx: Any) -> None:
        ctx.react_to_pull("+1")


def test_codex_thumbs_up_is_clean_and_done_not_silent(sb: Sandbox, tmp_path: Path) -> None:
    from redline_canary.sandbox import Identity

    codex = Identity("chatgpt-codex-connector[bot]", 199175422)
    sb.attach_reviewer(REPO, _ThumbsUpCodex([], identity=codex, trigger_phrases=["@codex review"],
                                            wake_on=["comment"]))
    code, records, out = run_cycle(sb, tmp_path, "--reviewer", "codex", "--confirm", "0")
    clean = next(r for r in records if r["kind"] == "clean")
    seeded = next(r for r in records if r["kind"] == "seeded")
    assert clean["outcome"] == "scored" and clean["gate"]["passed"], out
    assert seeded["outcome"] == "scored" and seeded["missed"] == 6
    assert code == 1


def test_two_reviewers_on_one_repo_and_stack_are_rejected_before_any_request(wire_sb: Sandbox, tmp_path: Path) -> None:
    targets = json.dumps([{"repo": REPO, "stack": "mini"}, {"repo": REPO, "stack": "mini", "reviewer": "copilot"}])
    res = cli_main("run", "--targets", targets, "--corpus", str(CORPUS), "--api-url", wire_sb.url,
              env={"GITHUB_TOKEN": TOKEN})
    assert res.returncode == 2 and "[1]: acme/canary-mini mini is already target [0]" in res.stderr
    assert wire_sb.requests == []


def test_a_repository_without_the_canary_topic_is_refused_before_any_write(
    in_process_sandbox: Sandbox, tmp_path: Path
) -> None:
    sandbox = in_process_sandbox
    sandbox.create_repo("acme/production-app")
    code, _out, err = run_in_process(sandbox, "--repo", "acme/production-app", "--stack", "mini", "--corpus",
                                     str(CORPUS), "--history", str(tmp_path / "h.jsonl"), env={"GITHUB_TOKEN": TOKEN})
    assert code == 2
    assert "not a canary repository: add the topic 'redline-canary'" in err
    assert [r.method for r in sandbox.requests] == ["GET"]
    assert sandbox.pulls("acme/production-app") == []
    assert not (tmp_path / "h.jsonl").exists()


def test_a_comment_on_page_two_is_seen_although_page_one_is_unchanged(sb: Sandbox) -> None:
    from redline_canary.github.forge import ChannelState

    number = sb.create_pull(REPO, "rc/paging", files={"a.py": "x = 1\n"}, title="paging")
    for i in range(150):
        sb.add_issue_comment(REPO, number, f"note {i}", author="someone")
    client = GitHubClient(TOKEN, sb.url, transport=sb.transport())
    states: dict[str, ChannelState] = {}
    client.poll(REPO, number, states)
    assert len(states["issue_comments"].items or []) == 150
    sb.add_issue_comment(REPO, number, "the 151st, on page two", author="someone")
    assert client.poll(REPO, number, states) is True
    assert (states["issue_comments"].items or [])[-1]["body"] == "the 151st, on page two"
    assert client.poll(REPO, number, states) is False  # unchanged, re-read in full, not lost
    client.close_pull(REPO, number)
    client.delete_branch(REPO, "rc/paging")
    client.close()


def test_sandbox_secondary_limit_mode_is_waited_out(sb: Sandbox, tmp_path: Path) -> None:
    # More than 6 content-creating requests per 2 s window -> 403 + retry-after: 1.
    sb.attach_reviewer(REPO, BanditReviewer(latency=0.02))
    sb.secondary_limit(per_minute=6, window=2.0, retry_after=1)
    code, records, _ = run_cycle(sb, tmp_path, "--confirm", "0")
    assert code == 1 and [r["outcome"] for r in records] == ["scored", "scored"]
    limited = [r for r in sb.requests if r.status == 403]
    assert limited, "the limit should have been hit at least once"
    assert all(r.method in ("POST", "PATCH", "PUT") for r in limited)


class _QuietBugbot(ScriptedReviewer):
    """Bugbot with "hide no bugs found": on clean code only its check run says it finished."""

    def act(self, ctx: Any) -> None:
        seeded = b"f\"SELECT" in ctx.files().get("app.py", b"")
        if seeded:
            ctx.post_review("<!-- BUGBOT_REVIEW --> Cursor Bugbot has reviewed your changes and found 1 "
                            "potential issue.", "COMMENTED",
                            [{"path": "app.py", "line": 10, "body": "### SQL built from input\n\n"
                              "**High Severity**\n\nThe order id is interpolated into the query."}])
        found = 1 if seeded else 0
        ctx.post_check_run("Cursor Bugbot", "Final Result: Bugbot completed review and found "
                           f"{found} potential issues.")


def test_bugbot_finished_check_run_makes_a_quiet_clean_pr_clean_not_silent(sb: Sandbox, tmp_path: Path) -> None:
    from redline_canary.sandbox import Identity

    sb.attach_reviewer(REPO, _QuietBugbot([], identity=Identity("cursor[bot]", 206951365)))
    code, records, out = run_cycle(sb, tmp_path, "--reviewer", "bugbot", "--confirm", "0",
                                 "--poll-interval", "0.05", "--stable-polls", "50")
    clean = next(r for r in records if r["kind"] == "clean")
    seeded = next(r for r in records if r["kind"] == "seeded")
    assert clean["outcome"] == "scored" and clean["gate"]["passed"], out
    assert seeded["outcome"] == "scored" and seeded["caught_seeds"][0]["n"] == 2
    # finished by the check run's done signal, long before 50 stable polls
    assert all(r["timings"]["polls"] < 50 for r in records)
    assert code == 1


def test_a_review_posted_just_before_its_done_check_run_is_not_missed(sb: Sandbox, tmp_path: Path) -> None:
    # One poll reads the channels one after another. Hold the first check-run read back so
    # the review and the "done" check run both land between the comment reads and it: the
    # done signal must not end the PR on comments read before the review arrived.
    from redline_canary.sandbox import Identity

    sb.attach_reviewer(REPO, _QuietBugbot([], identity=Identity("cursor[bot]", 206951365), latency=0.05))
    sb.inject_fault("GET", "/repos/{owner}/{repo}/commits/{ref}/check-runs", delay=0.6, times=1)
    _code, records, out = run_cycle(sb, tmp_path, "--reviewer", "bugbot", "--confirm", "0",
                                 "--poll-interval", "0.05", "--stable-polls", "50")
    seeded = next(r for r in records if r["kind"] == "seeded")
    assert seeded["outcome"] == "scored" and [s["n"] for s in seeded["caught_seeds"]] == [2], out
