"""The README's walk from a fixed incident to a private canary stack, replayed (docs/mining.md).

The README mines tqdm's real fix of GHSA-g7vv-2v7x-gj9p (``cli.py`` passed command-line
values to ``eval()``), rebuilt as a git history from the two released source files kept in
``tests/data/mining/tqdm``. The commands are read from the README itself and run as
written (relative paths, in a temporary folder), so the README cannot drift from what the
tool does. Then the mined stack goes through the demo's cycle: ``run`` against the sandbox
with the real bandit reviewer, ``--corpus`` adding the mined folder.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from redline_canary.github.client import CANARY_TOPIC
from redline_canary.sandbox import BanditReviewer, Sandbox
from tests.helpers.clirun import ROOT, cli_main
from tests.helpers.sandboxing import TOKEN, assert_no_canary_left, run_in_process

DATA = ROOT / "tests" / "data" / "mining" / "tqdm"
README = (ROOT / "README.md").read_text(encoding="utf-8")
SECTION = README[README.index("## A private stack from a bug you fixed"):README.index("\n## Commands")]
GIT = ["git", "-c", "user.name=me", "-c", "user.email=me@example.invalid", "-c", "commit.gpgsign=false",
       "-c", "init.defaultBranch=main"]
SHA = re.compile(r"\b[0-9a-f]{12}\b")
REPO = "acme/canary-tools"
FAST = ["--poll-interval", "0.05", "--stable-polls", "2", "--timeout-minutes", "0.5", "--confirm", "0"]


def readme_commands() -> list[list[str]]:
    """Every ``redline-canary`` command of the section's bash blocks, continuation lines joined."""
    commands: list[list[str]] = []
    for block in re.findall(r"```bash\n(.*?)```", SECTION, re.DOTALL):
        text = block.replace("\\\n", " ")
        for line in text.splitlines():
            line = line.split(" #", 1)[0].strip()
            if line.startswith("redline-canary "):
                commands.append(shlex.split(line)[1:])
    return commands


def fix_history(where: Path) -> None:
    """tqdm 4.66.2 then 4.66.3 as two commits, as the README's first step makes them."""
    repo = where / "tqdm-fix"
    repo.mkdir()
    subprocess.run([*GIT, "init", "-q"], cwd=repo, check=True)
    fixed = "tqdm 4.66.3: cli: eval safety (GHSA-g7vv-2v7x-gj9p)"
    for version, message in (("4.66.2", "tqdm 4.66.2"), ("4.66.3", fixed)):
        (repo / "tqdm").mkdir(exist_ok=True)
        (repo / "tqdm" / "cli.py").write_bytes((DATA / version / "tqdm" / "cli.py").read_bytes())
        subprocess.run([*GIT, "add", "-A"], cwd=repo, check=True)
        subprocess.run([*GIT, "commit", "-q", "-m", message], cwd=repo, check=True)


@pytest.fixture()
def mined(tmp_path: Path) -> Path:
    """The README's ``corpus mine`` run as written; returns the folder it ran in."""
    fix_history(tmp_path)
    (mine,) = [c for c in readme_commands() if c[:2] == ["corpus", "mine"]]
    res = cli_main(*mine, cwd=tmp_path)
    assert res.returncode == 0, res.stdout + res.stderr
    shown = re.search(r"```text\n(.*?)```", SECTION, re.DOTALL)
    assert shown is not None
    assert SHA.sub("<sha>", res.stdout) == SHA.sub("<sha>", shown.group(1)), "update the README's output"
    return tmp_path


def test_the_readme_walk_mines_lints_and_audits_a_real_fix(mined: Path) -> None:
    seeded = (mined / "private-seeds" / "seeded" / "tqdm-cli" / "tqdm" / "cli.py").read_text()
    assert "SEED 1 [CRITICAL] (core/code-injection) {lines: 9}" in seeded
    assert (mined / "private-seeds" / "clean" / "tqdm-cli" / "tqdm" / "cli.py").read_bytes() == \
        (DATA / "4.66.3" / "tqdm" / "cli.py").read_bytes()
    # The reviews the README's audit step scores: one reviewer found the eval, the other
    # reviewed the twin and found nothing.
    (mined / "review-seeded.json").write_text(json.dumps([{
        "path": "tqdm/cli.py", "line": 35, "severity": "critical", "title": "eval() on command-line input",
        "body": "cast() passes the option value to eval(): a crafted --delim runs arbitrary code",
        "rule": "core/code-injection"}]))
    (mined / "review-clean.json").write_text("[]")
    steps = [c for c in readme_commands() if c[0] != "run" and c[:2] != ["corpus", "mine"]]
    assert [c[:2] for c in steps] == [["corpus", "lint"], ["corpus", "export"], ["corpus", "export"],
                                      ["score", "--findings"], ["score", "--findings"], ["corpus", "audit"]]
    for argv in steps:
        res = cli_main(*argv, cwd=mined)
        assert res.returncode == 0, (argv, res.stdout, res.stderr)
    kit = (mined / "kit-seeded" / "tqdm" / "cli.py").read_text()
    assert "SEED" not in kit and kit == (DATA / "4.66.2" / "tqdm" / "cli.py").read_text()
    key = json.loads((mined / "key-seeded.json").read_text())
    assert [(m["n"], m["line"], m["end_line"]) for m in key["markers"]] == [(1, 32, 40)]
    records = [json.loads(line) for line in (mined / "audit.jsonl").read_text().splitlines()]
    assert [(r["stack"], r["kind"], r["caught"]) for r in records] == [("tqdm-cli", "seeded", 1),
                                                                      ("tqdm-cli", "clean", 0)]
    assert "0 entries to adjudicate" in res.stdout


@pytest.fixture()
def sb(in_process_sandbox: Sandbox) -> Iterator[Sandbox]:
    in_process_sandbox.create_repo(REPO, topics=[CANARY_TOPIC])
    yield in_process_sandbox
    assert_no_canary_left(in_process_sandbox, REPO)


def test_the_mined_stack_runs_through_the_sandbox_cycle(mined: Path, sb: Sandbox) -> None:
    """The demo's cycle on a private stack: the README's ``run`` line, pointed at the sandbox."""
    sb.attach_reviewer(REPO, BanditReviewer(latency=0.02))
    (run,) = [c for c in readme_commands() if c[0] == "run"]
    argv = [a if a != "copilot" else "redline" for a in run[1:]]  # the sandbox's reviewer is bandit
    private = str(mined / "private-seeds")
    argv[argv.index("private-seeds")] = private
    history = mined / "history.jsonl"
    code, out, err = run_in_process(sb, *argv, "--history", str(history), "--run-id", "mined-1", *FAST,
                                    env={"GITHUB_TOKEN": TOKEN})
    records = [json.loads(line) for line in history.read_text().splitlines()]
    assert sorted((r["stack"], r["kind"], r["outcome"]) for r in records) == [
        ("tqdm-cli", "clean", "scored"), ("tqdm-cli", "seeded", "scored")], out + err
    show = json.loads(cli_main("corpus", "show", "--corpus", private, "--stack", "tqdm-cli", "--json").stdout)
    assert {r["corpus_fingerprint"] for r in records} == {show["stacks"]["tqdm-cli"]["fingerprint"]}
    seeded = next(r for r in records if r["kind"] == "seeded")
    # bandit flags the eval (B307) at MEDIUM: the CRITICAL seed is located, rated lower.
    assert [s["n"] for s in seeded["caught_seeds"] + seeded["undercalled_seeds"]] == [1]
    assert "tqdm-cli" in out and code in (0, 1)
    pulls = sb.pulls(REPO)
    assert len(pulls) == 2 and all("SEED" not in p.title + (p.body or "") for p in pulls)
