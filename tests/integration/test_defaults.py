"""One table of defaults: the run flags and the action's inputs agree with it."""

from __future__ import annotations

import pytest
import yaml

from redline_canary.cli import build_parser
from redline_canary.score.defaults import RUN_DEFAULTS
from redline_canary.score.polling import PollConfig
from tests.helpers.clirun import ROOT


def test_action_inputs_default_to_the_table() -> None:
    inputs = yaml.safe_load((ROOT / "action.yml").read_text())["inputs"]
    for d in RUN_DEFAULTS:
        if d.action_input:
            assert d.action_input in inputs, d.action_input
            given = inputs[d.action_input]["default"]
            if isinstance(d.value, str):
                assert given == d.value, d.action_input
            else:
                assert float(given) == float(d.value), d.action_input


def test_every_gate_option_is_an_action_input_and_a_target_key() -> None:
    from redline_canary.commands._targets import GATE_KEYS

    inputs = yaml.safe_load((ROOT / "action.yml").read_text())["inputs"]
    assert set(GATE_KEYS) <= set(inputs)
    run_step = next(s for s in yaml.safe_load((ROOT / "action.yml").read_text())["runs"]["steps"]
                    if s.get("id") == "run")
    for key in GATE_KEYS:
        assert f"--{key}" in run_step["run"], key  # the input reaches the CLI flag of the same name


def test_run_flags_default_to_the_table_and_say_so_in_help(capsys: pytest.CaptureFixture[str]) -> None:
    parser = build_parser()
    args = parser.parse_args(["run", "--repo", "a/b", "--stack", "python"])
    with pytest.raises(SystemExit):
        parser.parse_args(["run", "--help"])
    helptext = "".join(capsys.readouterr().out.split())  # argparse wraps lines anywhere
    for d in RUN_DEFAULTS:
        assert getattr(args, d.dest) == d.value, d.flag
        assert f"(default:{d.value})" in helptext, d.flag
    assert PollConfig().interval == args.poll_interval and PollConfig().timeout == args.timeout_minutes * 60


def test_run_options_come_from_flags_and_an_env_mapping_never_os_environ(
    monkeypatch: pytest.MonkeyPatch, mini_corpus: object,
) -> None:
    import io
    import json

    from redline_canary.commands.run import RunOptions, run

    monkeypatch.delenv("CANARY_TARGETS", raising=False)
    monkeypatch.delenv("GITHUB_RUN_ID", raising=False)
    env = {"CANARY_TARGETS": json.dumps([{"repo": "acme/canary-mini", "stack": "mini"}]),
           "GITHUB_RUN_ID": "77", "GITHUB_RUN_ATTEMPT": "2", "GITHUB_TOKEN": "sandbox-secret-value-1234"}
    args = build_parser().parse_args(["run", "--corpus", str(mini_corpus), "--dry-run"])
    options = RunOptions.from_args(args, env)
    assert [t.repo for t in options.targets] == ["acme/canary-mini"] and options.cycle.run_id == "77-2"
    assert "sandbox-secret-value-1234" not in repr(options)
    out = io.StringIO()
    assert run(options, out=out, err=io.StringIO()) == 0
    assert "run 77-2: 1 target(s), nothing will be touched" in out.getvalue()
