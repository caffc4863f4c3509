"""The weekly workflow's data flow, job by job, with its real step scripts (issue 6).

plan (``targets --matrix`` from ``vars.CANARY_TARGETS``) → one canary job per matrix entry
(the composite action against the sandbox, fragment "uploaded", janitor safety net) →
record (fragments "downloaded", ``history merge`` into a git checkout, commit and push
with a concurrent writer forcing a non-fast-forward, ``gate``). ``actionrunner`` runs the
``run:`` steps from ``workflows/seed-canary.yml`` exactly as written; ``uses:`` steps are
simulated: the redline-canary action runs as a nested composite (install skipped),
artifacts are folders, checkout is a local clone of a bare "origin".
"""

from __future__ import annotations

import fnmatch
import json
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from redline_canary.github.client import CANARY_TOPIC
from redline_canary.run.history import identity, read_history
from redline_canary.sandbox import BanditReviewer, Sandbox, SilentReviewer
from redline_canary.score.record import Record
from tests.helpers.actionrunner import Run, Runner, StepRun, load_yaml, run_composite, run_job
from tests.helpers.clirun import ROOT, cli_main
from tests.helpers.records import record
from tests.helpers.sandboxing import TOKEN, assert_no_canary_left, canary_sandbox

WORKFLOW = load_yaml(ROOT / "workflows" / "seed-canary.yml")
SCHEMA = json.loads((ROOT / "history" / "schema.json").read_text())
DEV_CLI = str(Path(sys.executable).parent / "redline-canary")
REPO = "acme/canary"
RUN_ID = "4242-1"  # github.run_id - github.run_attempt, as the workflow's env computes it
FAST = {"poll-interval": "0.05", "stable-polls": "2", "timeout-minutes": "0.5", "confirm": "0"}
GIT = ["git", "-c", "user.name=test", "-c", "user.email=test@example.invalid"]


class Actions:
    """Stands in for the ``uses:`` steps of the workflow; artifacts live in one folder."""

    def __init__(self, artifacts: Path, fast: Mapping[str, str] | None = None) -> None:
        self.artifacts = artifacts
        self.fast = dict(fast or {})

    def __call__(self, step: Mapping[str, Any], with_: dict[str, str], runner: Runner) -> StepRun:
        uses = str(step["uses"])
        name = str(step.get("name", uses))
        if uses.startswith("your-org/redline-canary@"):
            inputs = {**self.fast, **with_} if with_.get("install-only") != "true" else with_
            run = run_composite(ROOT, inputs, runner, skip={"install": {"cli": DEV_CLI}})
            return StepRun(None, name, "failure" if run.failed else "success", 1 if run.failed else 0,
                           run.stdout, run.stderr, run.outputs, run.summary)
        if uses.startswith("actions/upload-artifact@"):
            src = Path(with_["path"])
            dest = self.artifacts / with_["name"]
            if src.is_file():
                if dest.exists() and with_.get("overwrite") != "true":
                    return StepRun(None, name, "failure", 1, stderr="artifact exists")
                dest.mkdir(parents=True, exist_ok=True)
                shutil.copy(src, dest / src.name)
            return StepRun(None, name, "success", 0)
        if uses.startswith("actions/download-artifact@"):
            target = Path(with_["path"])
            for art in sorted(self.artifacts.iterdir()) if self.artifacts.exists() else []:
                if fnmatch.fnmatch(art.name, with_.get("pattern", "*")):
                    shutil.copytree(art, target / art.name, dirs_exist_ok=True)
            return StepRun(None, name, "success", 0)
        if uses.startswith("actions/checkout@"):
            return StepRun(None, name, "success", 0)  # the test cloned "origin" into the workspace
        if uses.startswith("actions/setup-python@"):
            return StepRun(None, name, "success", 0, outputs={"python-path": sys.executable})
        raise AssertionError(f"unexpected uses: {uses}")


def git(*args: str, cwd: Path) -> str:
    return subprocess.run([*GIT, *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


@pytest.fixture()
def sb() -> Iterator[Sandbox]:
    yield from canary_sandbox(REPO)


def metrics_repo(base: Path, workspace: Path, history: list[dict[str, Any]]) -> Path:
    """A bare "origin" holding the history, cloned into the record job's workspace."""
    origin = base / "origin.git"
    seed = base / "seed-clone"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(origin)], check=True)
    subprocess.run(["git", "clone", "-q", str(origin), str(seed)], check=True, capture_output=True)
    (seed / "history").mkdir()
    (seed / "history" / "seed-scores.jsonl").write_text("".join(json.dumps(r) + "\n" for r in history))
    (seed / "README.md").write_text("metrics\n")
    git("add", ".", cwd=seed)
    git("commit", "-qm", "start", cwd=seed)
    git("push", "-q", "origin", "HEAD:main", cwd=seed)
    shutil.rmtree(workspace)
    subprocess.run(["git", "clone", "-q", str(origin), str(workspace)], check=True, capture_output=True)
    return origin


def add_competing_writer(base: Path, origin: Path, workspace: Path, line: dict[str, Any]) -> Path:
    """A pre-push hook that, once, lets another writer push a history line first: the
    record job's first push is then rejected as non-fast-forward."""
    other = base / "other-writer"
    subprocess.run(["git", "clone", "-q", str(origin), str(other)], check=True, capture_output=True)
    marker = base / "competitor-pushed"
    hook = workspace / ".git" / "hooks" / "pre-push"
    hook.write_text(f"""#!/usr/bin/env bash
unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE
if [ ! -e '{marker}' ]; then
  touch '{marker}'
  cd '{other}' || exit 1
  printf '%s\\n' '{json.dumps(line)}' >> history/seed-scores.jsonl
  git -c user.name=other -c user.email=o@example.invalid commit -qam "another writer" >/dev/null
  git push -q origin HEAD:main >/dev/null 2>&1
fi
exit 0
""")
    hook.chmod(0o755)
    return marker


def origin_history(origin: Path, base: Path) -> list[dict[str, Any]]:
    text = subprocess.run(["git", "--git-dir", str(origin), "show", "main:history/seed-scores.jsonl"],
                          check=True, capture_output=True, text=True).stdout
    path = base / "origin-history.jsonl"
    path.write_text(text)
    read = read_history(path)
    assert read.corrupt == []
    return [r.to_json() for r in read.records]


def plan(tmp_path: Path, targets: Any, inputs: Mapping[str, Any] | None = None) -> Run:
    runner = Runner.create(tmp_path / "plan", github={"job": "plan"}, uses=Actions(tmp_path / "artifacts"))
    text = targets if isinstance(targets, str) else json.dumps(targets)
    return run_job(WORKFLOW, "plan", runner, vars={"CANARY_TARGETS": text}, inputs=inputs or {})


def canary_job(tmp_path: Path, sb: Sandbox, entry: Mapping[str, Any], index: int) -> Run:
    runner = Runner.create(tmp_path / f"canary-{index}", github={"job": "canary"},
                           uses=Actions(tmp_path / "artifacts", FAST))
    return run_job(WORKFLOW, "canary", runner, matrix=entry, secrets={"REDLINE_CANARY_TOKEN": TOKEN},
                   vars={"CANARY_API_URL": sb.url})


def record_job(tmp_path: Path, history: list[dict[str, Any]], *, competitor: dict[str, Any] | None = None,
               canary_result: str = "success", api: Sandbox | None = None) -> tuple[Run, Path, Runner]:
    """``api``: the sandbox stands in for this repository's GitHub (``github.token`` and
    ``GITHUB_API_URL``, as the runner provides them); without it the regression issue step
    has no token and fails with exit 2 before any request."""
    env = {"GITHUB_API_URL": api.url, "GITHUB_SERVER_URL": "https://github.com"} if api else None
    github = {"job": "record", **({"token": TOKEN} if api else {})}
    runner = Runner.create(tmp_path / "record", env=env, github=github, uses=Actions(tmp_path / "artifacts"))
    origin = metrics_repo(tmp_path, runner.workspace, history)
    if competitor is not None:
        add_competing_writer(tmp_path, origin, runner.workspace, competitor)
    run = run_job(WORKFLOW, "record", runner, skip={"rc": {"cli": DEV_CLI}},
                  needs={"plan": {"result": "success"}, "canary": {"result": canary_result}})
    return run, origin, runner


# --- the flow ------------------------------------------------------------------------------

def test_weekly_flow_plan_two_matrix_jobs_record_with_a_concurrent_writer_then_gate(
        sb: Sandbox, tmp_path: Path) -> None:
    sb.attach_reviewer(REPO, BanditReviewer(latency=0.02))
    planned = plan(tmp_path, [{"repo": REPO, "stack": "python"}, {"repo": REPO, "stack": "go", "mode": "blind"}])
    assert not planned.failed, planned.stderr
    assert planned.outputs["count"] == "2"
    matrix = json.loads(planned.outputs["matrix"])
    assert [e["name"] for e in matrix["include"]] == [f"{REPO} python (redline)", f"{REPO} go (redline)"]
    assert "| acme/canary | python | redline | blind |" in planned.summary

    # Both matrix jobs at once on the same canary repo, as max-parallel allows.
    jobs: dict[int, Run] = {}
    threads = [threading.Thread(target=lambda i=i, e=e: jobs.__setitem__(i, canary_job(tmp_path, sb, e, i)))
               for i, e in enumerate(matrix["include"])]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=240)
    assert sorted(jobs) == [0, 1]
    for job in jobs.values():
        assert not job.failed, [(s.name, s.outcome, s.stderr[-500:]) for s in job.steps]  # fail-on: never
        assert job.steps[-1].name.startswith("Remove this run's leftovers") and job.steps[-1].outcome == "success"
    artifacts = sorted(p.name for p in (tmp_path / "artifacts").iterdir())
    assert artifacts == ["redline-canary-records-acme--canary-go-redline",
                         "redline-canary-records-acme--canary-python-redline"]

    older = record(run_id="4100-1", stack="python")
    other = record(run_id="other-writer", stack="python")
    sb.create_repo("acme/metrics")  # the runner's github.repository
    run, origin, _ = record_job(tmp_path, [older], competitor=other, api=sb)
    merge = run.step("merge")
    assert merge.outcome == "success", merge.stderr
    assert any("push rejected (attempt 1/5)" in a.message for a in run.annotations("warning"))
    records = origin_history(origin, tmp_path)
    ours = [r for r in records if r["run_id"] == RUN_ID]
    assert len(ours) == 4 and {(r["stack"], r["kind"]) for r in ours} == {
        ("python", "seeded"), ("python", "clean"), ("go", "seeded"), ("go", "clean")}
    for r in ours:
        jsonschema.validate(r, SCHEMA)
    assert [r["run_id"] for r in records[:2]] == ["4100-1", "other-writer"]  # nothing of theirs lost
    assert len({identity(Record.from_json(r)) for r in records}) == len(records) == 6
    log = git("log", "--format=%s", "main", cwd=origin).splitlines()
    assert log[:2] == [f"redline-canary: records of run {RUN_ID}", "another writer"]

    # bandit catches no BLOCKER on either stack: the gate turns the run red with exit 1.
    gate = next(s for s in run.steps if s.name == "Gate")
    assert gate.outcome == "failure" and gate.returncode == 1, gate.stdout + gate.stderr
    assert f"run {RUN_ID}: exit 1" in gate.stdout
    assert run.failed

    # ... and opens one regression issue per target in the metrics repository.
    step = next(s for s in run.steps if s.name == "Regression issue")
    assert step.outcome == "success", step.stdout + step.stderr
    issues = sb.issues("acme/metrics")
    assert sorted(i.title for i in issues) == ["redline-canary: redline regressed on acme/canary go",
                                               "redline-canary: redline regressed on acme/canary python"]
    assert all(i.labels == ("redline-canary-regression",) and "/acme/metrics/actions/runs/4242>" in (i.body or "")
               for i in issues)


def test_a_corrupt_fragment_is_reported_not_merged_and_kept(tmp_path: Path) -> None:
    good = [record(run_id=RUN_ID, kind=k) for k in ("seeded", "clean")]
    art = tmp_path / "artifacts"
    (art / "redline-canary-records-a").mkdir(parents=True)
    (art / "redline-canary-records-b").mkdir(parents=True)
    frag_a = art / "redline-canary-records-a" / "records-1.jsonl"
    frag_a.write_text("".join(json.dumps(r) + "\n" for r in good))
    other = record(run_id=RUN_ID, stack="go")
    frag_b = art / "redline-canary-records-b" / "records-2.jsonl"
    frag_b.write_text(json.dumps(other) + "\n" + '{"schema": 1, "run_id": "torn' + "\n" + '{"schema": 1}\n')
    before = {p: p.read_bytes() for p in (frag_a, frag_b)}

    run, origin, _ = record_job(tmp_path, [])
    merge = run.step("merge")
    assert merge.outcome == "failure" and merge.returncode == 2
    assert "records-2.jsonl:2: corrupt record skipped (not valid JSON" in merge.stderr
    assert "records-2.jsonl:3: corrupt record skipped (missing keys" in merge.stderr
    assert any(a.props.get("title") == "Corrupt history fragment" for a in run.annotations("error"))
    pushed = origin_history(origin, tmp_path)
    assert sorted((r["stack"], r["kind"]) for r in pushed) == [("go", "seeded"), ("mini", "clean"), ("mini", "seeded")]
    assert {p: p.read_bytes() for p in (frag_a, frag_b)} == before  # the artifacts keep every line
    gate = next(s for s in run.steps if s.name == "Gate")
    assert gate.outcome == "success" and f"run {RUN_ID}: exit 0" in gate.stdout  # the gate still judged
    assert run.failed


def test_gate_fails_when_a_matrix_job_produced_no_verdict(tmp_path: Path) -> None:
    art = tmp_path / "artifacts" / "redline-canary-records-a"
    art.mkdir(parents=True)
    (art / "records.jsonl").write_text("".join(json.dumps(record(run_id=RUN_ID, kind=k)) + "\n"
                                               for k in ("seeded", "clean")))
    run, _, _ = record_job(tmp_path, [], canary_result="failure")
    gate = next(s for s in run.steps if s.name == "Gate")
    assert gate.returncode == 4 and any("Canary job failure" in (a.props.get("title") or "")
                                        for a in run.annotations("error"))


def test_gate_judges_every_run_id_the_fragments_carry(tmp_path: Path) -> None:
    """After "re-run failed jobs": one target keeps attempt 1's records, the re-run one
    brings attempt 2's; both are judged, the later attempt superseding."""
    art = tmp_path / "artifacts"
    for name, rows in {"a": [record(run_id="4242-1", stack="python", kind=k) for k in ("seeded", "clean")],
                       "b": [record(run_id="4242-2", stack="go", kind=k) for k in ("seeded", "clean")]}.items():
        (art / f"redline-canary-records-{name}").mkdir(parents=True)
        (art / f"redline-canary-records-{name}" / "r.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    stale = record(run_id="4242-1", stack="go", kind="seeded", passed=False)
    run, _, _ = record_job(tmp_path, [stale])
    gate = next(s for s in run.steps if s.name == "Gate")
    assert gate.outcome == "success", gate.stdout + gate.stderr
    assert "run 4242-1, 4242-2: exit 0" in gate.stdout


def test_two_history_merges_at_once_neither_lose_nor_double_a_record(tmp_path: Path) -> None:
    frags = []
    for name in ("a", "b"):
        path = tmp_path / f"{name}.jsonl"
        path.write_text("".join(json.dumps(record(run_id=f"{name}-{i}")) + "\n" for i in range(200)))
        frags.append(path)
    for trial in range(4):
        out = tmp_path / f"history-{trial}.jsonl"
        # Two writers at once: one merges both fragments, the other the same plus a repeat.
        procs = [subprocess.Popen([sys.executable, "-m", "redline_canary", "history", "merge", str(out), *args],
                                  cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                 for args in ([str(frags[0]), str(frags[1])], [str(frags[1]), str(frags[0])])]
        assert [p.wait(timeout=120) for p in procs] == [0, 0]
        read = read_history(out)
        assert read.corrupt == []
        assert len(read.records) == 400 == len({identity(r) for r in read.records})


# --- plan ----------------------------------------------------------------------------

def test_plan_rejects_bad_targets_with_an_annotation(tmp_path: Path) -> None:
    run = plan(tmp_path, '[{"repo": "acme/x", "stack": "python"')
    step = run.step("targets")
    assert step.outcome == "failure" and step.returncode == 2
    errors = run.annotations("error")
    assert len(errors) == 1 and errors[0].props["title"] == "Invalid canary targets"
    assert errors[0].message.startswith("CANARY_TARGETS: not valid JSON")
    assert step.stderr.strip().count("\n") == 0 and step.stderr.startswith("redline-canary: CANARY_TARGETS")


@pytest.mark.parametrize("targets, message", [
    ([{"repo": "acme/x", "stack": "cobol"}], "CANARY_TARGETS: [0].stack: unknown stack 'cobol'"),
    ([{"repo": "acme/x", "stack": "python", "reviewr": "copilot"}], "CANARY_TARGETS: [0].reviewr: unknown key"),
    ([{"repo": "acme/x", "stack": "python"}, {"repo": "acme/x", "stack": "python", "reviewer": "copilot"}],
     "CANARY_TARGETS: [1]: acme/x python is already target [0]"),
])
def test_plan_names_the_key_that_is_wrong(tmp_path: Path, targets: Any, message: str) -> None:
    run = plan(tmp_path, targets)
    assert run.failed
    assert run.annotations("error")[0].message.startswith(message)


def test_dispatch_inputs_plan_one_target_and_dry_run_stops_there(tmp_path: Path) -> None:
    run = plan(tmp_path, [{"repo": "acme/a", "stack": "go"}, {"repo": "acme/b", "stack": "go"}],
               inputs={"repo": "acme/one", "stack": "python", "reviewer": "copilot", "mode": "marked",
                       "dry-run": True})
    assert not run.failed, run.stderr
    entries = json.loads(run.outputs["matrix"])["include"]
    assert len(entries) == 1 and json.loads(entries[0]["target"]) == {
        "repo": "acme/one", "stack": "python", "reviewer": "copilot", "mode": "marked"}
    assert "Dry run" in run.summary
    from tests.helpers.actionrunner import condition, substitute

    ctx = {"inputs": {"dry-run": True}, "__status__": {"failed": False, "cancelled": False},
           "needs": {"plan": {"result": "success"}}}
    # A dry run's canary jobs run doctor only (reads): the action gets dry-run, the janitor
    # and the record job do not run.
    canary = WORKFLOW["jobs"]["canary"]
    assert "if" not in canary
    step = next(s for s in canary["steps"] if s.get("id") == "canary")
    assert substitute(step["with"]["dry-run"], ctx) == "true"
    assert not condition(canary["steps"][-1]["if"], ctx)
    assert not condition(WORKFLOW["jobs"]["record"]["if"], ctx)
    scheduled = {**ctx, "inputs": {}}
    assert substitute(step["with"]["dry-run"], scheduled) == "false"
    assert condition(canary["steps"][-1]["if"], scheduled)
    assert condition(WORKFLOW["jobs"]["record"]["if"], scheduled)


def test_targets_command_outside_actions_prints_no_annotation(tmp_path: Path) -> None:
    res = cli_main("targets", "--targets", '[{"repo": "acme/x"}]', "--matrix",
              env={"GITHUB_ACTIONS": "", "GITHUB_OUTPUT": ""})
    assert res.returncode == 2 and res.stdout == ""
    assert res.stderr == "redline-canary: --targets: [0].stack: required string\n"
    out = tmp_path / "out"
    out.touch()
    res = cli_main("targets", "--repo", "acme/x", "--stack", "python", "--matrix",
              env={"GITHUB_OUTPUT": str(out), "GITHUB_STEP_SUMMARY": ""})
    assert res.returncode == 0
    assert out.read_text() == f"matrix={res.stdout.strip()}\ncount=1\n"


# --- the janitor safety net ----------------------------------------------------------------

def test_janitor_safety_net_leaves_a_sibling_stacks_prs_alone(tmp_path: Path) -> None:
    """Matrix jobs of one run share its id and may share a canary repo: one job's
    ``if: always()`` janitor must not close the PRs another job is still waiting on."""
    with Sandbox(token=TOKEN) as box:
        box.create_repo(REPO, topics=[CANARY_TOPIC])
        box.attach_reviewer(REPO, SilentReviewer())
        sibling = subprocess.Popen(
            [sys.executable, "-m", "redline_canary", "run", "--repo", REPO, "--stack", "go", "--api-url", box.url,
             "--run-id", RUN_ID, "--history", str(tmp_path / "h.jsonl"), "--poll-interval", "0.1",
             "--timeout-minutes", "5"], cwd=ROOT, env={**_env(), "REDLINE_CANARY_TOKEN": TOKEN},
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 60
            while len(box.open_pulls(REPO)) < 2:
                assert time.monotonic() < deadline and sibling.poll() is None
                time.sleep(0.05)
            entry = {"repo": REPO, "stack": "python", "name": "x", "slug": "x", "target": "{}"}
            runner = Runner.create(tmp_path / "job", github={"job": "canary"}, uses=Actions(tmp_path / "artifacts"))
            job = run_job(WORKFLOW, "canary", runner, matrix=entry, secrets={"REDLINE_CANARY_TOKEN": TOKEN},
                          vars={"CANARY_API_URL": box.url}, skip={"canary": {"cli": DEV_CLI, "records": ""}})
            janitor = job.steps[-1]
            assert janitor.outcome == "success" and "removed 0 PR(s)" in janitor.stdout, janitor.stderr
            assert len(box.open_pulls(REPO)) == 2, "a sibling stack's PRs were touched"
            # The go job's own safety net does remove them.
            job = run_job(WORKFLOW, "canary", runner, matrix={**entry, "stack": "go"},
                          secrets={"REDLINE_CANARY_TOKEN": TOKEN}, vars={"CANARY_API_URL": box.url},
                          skip={"canary": {"cli": DEV_CLI, "records": ""}})
            assert "removed 2 PR(s)" in job.steps[-1].stdout
        finally:
            sibling.send_signal(signal.SIGINT)
            sibling.wait(timeout=30)
        assert_no_canary_left(box, REPO)


def _env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if k not in ("GITHUB_TOKEN", "REDLINE_CANARY_TOKEN")}


def test_record_without_any_fragment_is_an_infrastructure_failure(tmp_path: Path) -> None:
    run, _, _ = record_job(tmp_path, [], canary_result="failure")
    assert run.step("merge").outcome == "success"  # nothing to merge is not an error by itself
    gate = next(s for s in run.steps if s.name == "Gate")
    assert gate.returncode == 4
    titles = [a.props.get("title") for a in run.annotations("error")]
    assert titles == ["No history fragments", "Nothing measured"]


def test_janitor_stack_scope_needs_a_run_id() -> None:
    res = cli_main("janitor", "--repo", REPO, "--stack", "python", env={"REDLINE_CANARY_TOKEN": TOKEN})
    assert res.returncode == 2 and "--stack: only together with --run-id" in res.stderr
