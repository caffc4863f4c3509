"""Commands are functions of their options: the flags and the environment are read once,
at the edge (``from_args`` or the registered entry function), and the rest of each command
is handed what it needs (options, the network, the clock, its output streams)."""

from __future__ import annotations

import argparse
import ast
import io
import json
import os
from pathlib import Path

import pytest

from redline_canary.cli import build_parser
from redline_canary.commands._options import add_scoring_options
from redline_canary.commands.gate import GateCommandOptions, gate
from redline_canary.commands.score import LivePR, ScoreOptions, score
from redline_canary.errors import BadInput
from redline_canary.score.defaults import SCORE_DEFAULTS
from tests.helpers.clirun import ROOT, cli, cli_main
from tests.helpers.factories import capture, inline, review

COMMANDS = ROOT / "redline_canary" / "commands"
# Helpers that read os.environ themselves when given no explicit value: a command handed
# its options must give one (the commands below have options; the rest only the first rule).
IMPLICIT = {"token_from_env": 1, "default_run_id": 1, "in_github_actions": 99, "append_summary": 2,
            "write_outputs": 2}
WITH_OPTIONS = ("run", "score", "gate", "issue", "janitor", "report", "actions_report")
APP = "p/app.py"


def _entry_points(tree: ast.Module) -> set[str]:
    """``from_args`` and the functions a command registers with ``set_defaults(func=...)``."""
    names = {"from_args"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "set_defaults":
            names |= {kw.value.id for kw in node.keywords if kw.arg == "func" and isinstance(kw.value, ast.Name)}
    return names


def _environment_reads(tree: ast.Module, strict: bool) -> list[tuple[str, int, str]]:
    """(enclosing function, line, what) for every read of the environment."""
    found: list[tuple[str, int, str]] = []

    def visit(node: ast.AST, func: str) -> None:
        for child in ast.iter_child_nodes(node):
            name = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else func
            if isinstance(child, ast.Attribute) and child.attr in ("environ", "getenv", "environb"):
                found.append((func, child.lineno, f"os.{child.attr}"))
            elif isinstance(child, ast.ImportFrom) and child.module == "os":
                found.extend((func, child.lineno, f"from os import {a.name}") for a in child.names
                             if a.name in ("environ", "getenv"))
            elif strict and isinstance(child, ast.Call):
                callee = child.func.attr if isinstance(child.func, ast.Attribute) else getattr(child.func, "id", "")
                given = len(child.args) + len(child.keywords)
                if callee in IMPLICIT and given < IMPLICIT[callee]:
                    found.append((func, child.lineno, f"{callee}() without an explicit value"))
                if callee == "commands_suspended" and not any(kw.arg == "active" for kw in child.keywords):
                    found.append((func, child.lineno, "commands_suspended() without active="))
            visit(child, name)

    visit(tree, "<module>")
    return found


# _actions_env reads the Actions environment for the commands that call it at their edge.
@pytest.mark.parametrize("path", sorted(p for p in COMMANDS.glob("*.py") if p.stem != "_actions_env"),
                         ids=lambda p: p.stem)
def test_no_command_reads_the_environment_outside_its_edge(path: Path) -> None:
    tree = ast.parse(path.read_text())
    edge = _entry_points(tree)
    stray = [(f, line, what) for f, line, what in _environment_reads(tree, path.stem in WITH_OPTIONS)
             if f not in edge]
    assert not stray, f"{path.name} reads the environment outside {sorted(edge)}: {stray}"


def test_the_edge_check_sees_a_stray_read() -> None:
    """The check above can fail: a helper reading os.environ, or asking a helper to."""
    tree = ast.parse("import os\ndef run_x(args):\n    return os.environ\n"
                     "def helper():\n    return os.environ.get('X'), token_from_env()\n"
                     "def register(sub):\n    sub.set_defaults(func=run_x)\n")
    stray = [r for r in _environment_reads(tree, strict=True) if r[0] not in _entry_points(tree)]
    assert [(f, what) for f, _, what in stray] == [("helper", "os.environ"),
                                                    ("helper", "token_from_env() without an explicit value")]


def _subparser(name: str) -> argparse.ArgumentParser:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    chosen: argparse.ArgumentParser = sub.choices[name]
    return chosen


def _flag(parser: argparse.ArgumentParser, flag: str) -> tuple[object, ...]:
    action = next(a for a in parser._actions if flag in a.option_strings)
    return (action.dest, action.default, action.type, action.choices, action.help, action.nargs, action.const)


def test_run_and_score_declare_the_scoring_flags_once() -> None:
    shared = argparse.ArgumentParser()
    add_scoring_options(shared)
    flags = [f for a in shared._actions for f in a.option_strings if f.startswith("--") and f != "--help"]
    assert {"--corpus", "--window", "--floor", "--profiles", "--min-recall", "--require-citation",
            "--blocker-gate", "--baseline", "--acknowledgements"} <= set(flags)
    run, score_parser = _subparser("run"), _subparser("score")
    for flag in flags:
        assert _flag(run, flag) == _flag(score_parser, flag) == _flag(shared, flag), flag


def test_score_flags_default_to_the_table_and_say_so_in_help(capsys: pytest.CaptureFixture[str]) -> None:
    parser = build_parser()
    args = parser.parse_args(["score", "--capture", "x.json"])
    with pytest.raises(SystemExit):
        parser.parse_args(["score", "--help"])
    helptext = "".join(capsys.readouterr().out.split())  # argparse wraps lines anywhere
    assert {d.flag for d in SCORE_DEFAULTS} >= {"--window", "--floor", "--blocker-gate", "--mode", "--reviewer"}
    for d in SCORE_DEFAULTS:
        if d.after_manifest:  # the capture's manifest speaks first: not given stays None
            assert getattr(args, d.dest) is None, d.flag
            assert f"(default:thecapture'smanifest,else{d.value})" in helptext, d.flag
        else:
            assert getattr(args, d.dest) == d.value, d.flag
            assert f"(default:{d.value})" in helptext, d.flag


def test_score_reads_its_token_from_the_env_mapping_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "from-os-environ-never-used")
    monkeypatch.delenv("REDLINE_CANARY_TOKEN", raising=False)
    args = build_parser().parse_args(["score", "--repo", "acme/canary", "--pr", "7", "--stack", "python",
                                      "--kind", "seeded"])
    with pytest.raises(BadInput, match="no token"):
        ScoreOptions.from_args(args, {})
    options = ScoreOptions.from_args(args, {"REDLINE_CANARY_TOKEN": "mapping-token-1234"})
    assert isinstance(options.source, LivePR) and options.source.credentials.token == "mapping-token-1234"
    assert "mapping-token-1234" not in repr(options)


def test_score_is_stamped_by_the_clock_it_is_given(tmp_path: Path, mini_corpus: Path) -> None:
    cap = tmp_path / "cap.json"
    cap.write_text(json.dumps(capture([inline(APP, 5, "[BLOCKER] secret")], [review("done")])))
    args = build_parser().parse_args(["score", "--capture", str(cap), "--corpus", str(mini_corpus), "--stack",
                                      "mini", "--prefix", "p", "--kind", "seeded", "--json"])
    out, err = io.StringIO(), io.StringIO()
    code = score(ScoreOptions.from_args(args, {}), out=out, err=err, now=lambda: "2031-02-03T04:05:06Z")
    record = json.loads(out.getvalue())
    assert code == 1 and err.getvalue() == ""
    assert record["recorded_at"] == "2031-02-03T04:05:06Z" and record["run_id"] == "score-2031-02-03T040506Z"


def test_gate_checks_acknowledgements_against_the_clock_it_is_given(tmp_path: Path) -> None:
    from tests.helpers.records import record

    history = tmp_path / "h.jsonl"
    history.write_text(json.dumps(record(run_id="r1")) + "\n")
    acks = tmp_path / "acks.yml"
    acks.write_text("acknowledgements:\n  - {reviewer: redline, stack: mini, seed: 1, reason: known gap, "
                    "until: 2030-06-01, by: qa}\n")
    args = build_parser().parse_args(["gate", str(history), "--run-id", "r1", "--acknowledgements", str(acks)])
    options = GateCommandOptions.from_args(args, {})
    assert gate(options, out=io.StringIO(), err=io.StringIO(), now=lambda: "2030-05-31T23:59:59Z") == 0
    with pytest.raises(BadInput, match="expired"):
        gate(options, out=io.StringIO(), err=io.StringIO(), now=lambda: "2030-06-02T00:00:00Z")


def test_gate_under_actions_suspends_commands_when_the_env_mapping_says_so(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.helpers.records import record

    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    history = tmp_path / "h.jsonl"
    history.write_text(json.dumps(record(run_id="r1")) + "\n")
    args = build_parser().parse_args(["gate", str(history), "--run-id", "r1"])
    plain, actions = io.StringIO(), io.StringIO()
    gate(GateCommandOptions.from_args(args, {}), out=plain, err=io.StringIO())
    gate(GateCommandOptions.from_args(args, {"GITHUB_ACTIONS": "true"}), out=actions, err=io.StringIO())
    assert "::stop-commands::" not in plain.getvalue()
    lines = actions.getvalue().splitlines()
    assert lines[0].startswith("::stop-commands::rc-") and lines[-1] == f"::{lines[0].split('::')[2]}::"
    assert lines[1:-1] == plain.getvalue().splitlines()


def test_in_process_cli_matches_the_subprocess_and_leaks_no_environment(tmp_path: Path, mini_corpus: Path) -> None:
    cap = tmp_path / "cap.json"
    cap.write_text(json.dumps(capture([inline(APP, 5, "[BLOCKER] secret")], [review("done")])))
    argv = ("score", "--capture", str(cap), "--corpus", str(mini_corpus), "--stack", "mini", "--prefix", "p",
            "--kind", "seeded", "--run-id", "same")
    before = dict(os.environ)
    here = cli_main(*argv, env={"RC_TEST_ONLY_IN_THIS_CALL": "1"})
    assert dict(os.environ) == before
    there = cli(*argv)
    assert (here.returncode, here.stdout, here.stderr) == (there.returncode, there.stdout, there.stderr)
    assert here.returncode == 1 and "gate: FAIL" in here.stdout
    bad = cli_main("score", "--window", "nope")
    assert bad.returncode == 2 and "invalid int value" in bad.stderr and bad.stdout == ""
