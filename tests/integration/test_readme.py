"""The README runs: every shell block marked ``run`` is typed into bash as a newcomer would
(a scratch folder, the CLI of this checkout, the exit status of every command held to what
the page says), its shown output is checked, and the blocks that are not commands but
must still be true (``checked-by``) are checked here. What the markers mean:
tests/helpers/readme.py. Blocks marked ``skip`` say why on the page, and
tests/unit/test_readme_blocks.py holds every block to one of the three.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from redline_canary.sandbox import Sandbox
from tests.helpers.clirun import cli
from tests.helpers.readme import ROOT, Block, blocks, commands, output_matches

BLOCKS = blocks()
RUN = [b for b in BLOCKS if b.action == "run"]
CHECKED = {b.directive["checked-by"]: b for b in BLOCKS if b.action == "checked-by" and b.directive}

PIP_STUB = f"""#!{sys.executable}
# pip, inside the suite: the install is the one under test already; check that what the
# README asks pip for exists (an extra of pyproject.toml), install nothing.
import re, sys
text = open({str(ROOT / "pyproject.toml")!r}, encoding="utf-8").read()  # no tomllib before 3.11
section = text.split("[project.optional-dependencies]", 1)[1].split("\\n[", 1)[0]
extras = set(re.findall(r"^([A-Za-z0-9_-]+)\\s*=", section, re.M))
args = [a for a in sys.argv[1:] if not a.startswith("-")]
if not args or args[0] != "install":
    sys.exit("pip stub: only 'pip install' is expected in the README, got " + " ".join(sys.argv[1:]))
for spec in args[1:]:
    m = re.fullmatch(r"(?:\\.|redline-canary)\\[([a-z,-]+)\\]", spec)
    if not m or not all(e in extras for e in m.group(1).split(",")):
        sys.exit(f"pip stub: {{spec}} names no extra of pyproject.toml ({{', '.join(sorted(extras))}})")
"""
PYTEST_STUB = f"""#!/bin/sh
# pytest, inside the suite: collect the whole suite from the checkout (it must find tests and
# import cleanly) instead of running it inside itself; .ci/run runs it for real.
cd {str(ROOT)!r} && out=$({sys.executable} -m pytest --collect-only -p no:cacheprovider "$@") || exit $?
echo "$out" | tail -1
echo "$out" | tail -1 | grep -Eq '^[1-9][0-9]* tests? collected' ||
  {{ echo "pytest stub: no tests collected" >&2; exit 5; }}
"""
CLI_SHIM = f"""#!/bin/sh
exec {sys.executable} -m redline_canary "$@"
"""


def _scratch(tmp_path: Path, block: Block) -> tuple[Path, dict[str, str]]:
    """A folder holding only what the block names from the checkout, and the environment a
    newcomer has: this checkout's CLI first on PATH, no token, a job summary file."""
    work = tmp_path / "work"
    work.mkdir()
    for src, dest in block.files():
        source, target = ROOT / src, work / dest
        target.parent.mkdir(parents=True, exist_ok=True)
        (shutil.copytree if source.is_dir() else shutil.copy)(source, target)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shims = {"redline-canary": CLI_SHIM, "pip": PIP_STUB, "pytest": PYTEST_STUB}
    for name in ["redline-canary", *block.stubs]:
        (bin_dir / name).write_text(shims[name])
        (bin_dir / name).chmod(0o755)
    env = {k: v for k, v in os.environ.items()
           if k not in ("REDLINE_CANARY_TOKEN", "GITHUB_TOKEN", "REDLINE_CANARY_API_URL", "CANARY_TARGETS",
                        "GITHUB_ACTIONS")}
    env.update(PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}", PYTHONPATH=str(ROOT),
               GITHUB_STEP_SUMMARY=str(tmp_path / "step-summary.md"))
    return work, env


@pytest.mark.parametrize("block", RUN, ids=[b.id for b in RUN])
def test_readme_block_runs_as_shown(block: Block, tmp_path: Path) -> None:
    work, env = _scratch(tmp_path, block)
    cmds = commands(block.text)
    status = tmp_path / "status"
    script = "set +e\n" + "".join(f'{c}\necho "$?" >> {status}\n' for c in cmds)
    proc = subprocess.run(["bash", "-c", script], cwd=work, env=env, capture_output=True, text=True,
                          timeout=600, check=False)
    got = [int(x) for x in status.read_text().split()] if status.exists() else []
    shown = "\n".join(f"  [{code}] {c.splitlines()[0]}" for c, code in zip(cmds, got, strict=False))
    assert got == block.exits, (f"{block.id}: exit statuses {got}, the README says {block.exits}\n{shown}\n"
                                f"stderr:\n{proc.stderr[-3000:]}")
    if block.output is not None:
        assert output_matches(block.output.text, proc.stdout), (
            f"{block.id}: the output shown at README.md:{block.output.line} is not what it prints:\n{proc.stdout}")


def test_doctor_misconfigured() -> None:
    """The doctor transcript: the command the paragraph above it names, against a sandbox
    built the way it describes (a classic token with only `gist`, expiring in 5 days; a
    repository without the topic and without a commit). Dates are the sandbox's clock."""
    scenario = {"repos": [{"name": "acme/misconfigured", "topic": False, "empty": True}],
                "token": {"kind": "classic", "scopes": ["gist"], "expires_in_days": 5}}
    with Sandbox.from_scenario(scenario, default_reviewer="none") as sb:
        res = cli("doctor", "--repo", "acme/misconfigured", "--reviewer", "bugbot", "--stack", "python",
                  "--api-url", sb.url, env={"REDLINE_CANARY_TOKEN": "ghp_readme", "GITHUB_TOKEN": ""})
    assert res.returncode == 2, res.stderr
    date = re.compile(r"on \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC")
    shown = date.sub("on DATE", CHECKED["doctor_misconfigured"].text)
    assert output_matches(shown, date.sub("on DATE", res.stdout)), res.stdout


def test_acknowledgements(tmp_path: Path) -> None:
    """The acknowledgements example is a file `targets` (and `run`, `score`, `gate`) accepts."""
    acks = tmp_path / "acknowledgements.yml"
    acks.write_text(CHECKED["acknowledgements"].text)
    res = cli("targets", "--repo", "acme/canary-python", "--stack", "python", "--acknowledgements", str(acks))
    assert res.returncode == 0, res.stderr


def test_sandbox_scenario(tmp_path: Path) -> None:
    """The scenario example builds a sandbox (`sandbox serve --scenario` reads it the same way)."""
    from redline_canary.sandbox.scenario_files import load_scenario

    path = tmp_path / "scenario.yml"
    path.write_text(CHECKED["sandbox_scenario"].text)
    with Sandbox.from_scenario(load_scenario(str(path)), default_reviewer="none") as sb:
        assert sb.repo_names() == ["acme/canary-python", "acme/product"]
        assert {"rc/2.4", "rc/2.5-hotfix"} <= set(sb.branches("acme/product"))


def test_canary_targets(tmp_path: Path) -> None:
    """The CANARY_TARGETS example is what the `plan` job validates: two targets, accepted."""
    text = CHECKED["canary_targets"].text
    res = cli("targets", "--json", env={"CANARY_TARGETS": text})
    assert res.returncode == 0, res.stderr
    assert [t["repo"] for t in json.loads(text)] == ["acme/canary-python", "acme/canary-web"]
    assert yaml.safe_load(text) == json.loads(text)


def _prose() -> str:
    """The README's text as one line per paragraph's words: a figure may wrap anywhere."""
    return " ".join(README_TEXT.split())


README_TEXT = (ROOT / "README.md").read_text(encoding="utf-8")


def test_agreement_figures_are_what_bench_agreement_prints() -> None:
    """The matcher-against-readers sentence quotes `benchmarks/bench_agreement.py` (a full
    run, 10-15 s): every count in it is read off the benchmark's output, none remembered."""
    res = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_agreement.py")], capture_output=True,
                         text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=600, check=False)
    assert res.returncode == 0, res.stderr
    sets = dict(re.findall(r"^(\S+): (\d+) judged pairs", res.stdout, re.M))
    held = res.stdout[res.stdout.index("held-out:"):]
    off = re.search(r"off-topic pairs credited: (\d+) of (\d+) \(place-only matcher: (\d+)\)", held)
    lost = re.search(r"no longer credited: (\d+) of (\d+) \(([\d.]+)%\)", held)
    assert off and lost, res.stdout
    total = sum(int(n) for n in sets.values())
    kept = int(lost.group(2)) - int(lost.group(1))
    said = _prose()
    assert f"scores the {total} (marker, comment) pairs" in said
    assert f"On the {sets['held-out']} pairs of reviews nothing was tuned on" in said
    assert (f"it credits {off.group(1)} of {off.group(2)} off-topic pairs (matching by place alone credited "
            f"{off.group(3)})") in said
    assert f"keeps {kept} of the {lost.group(2)} on-topic pairs place alone credited ({lost.group(3)} % lost)" in said
