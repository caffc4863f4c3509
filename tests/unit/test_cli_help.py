"""Every `--help` a user can ask for reads on a 100-column terminal, and the sandbox's
banner hands a newcomer commands that the real parser accepts."""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Iterator

import pytest

from redline_canary.cli import build_parser
from redline_canary.commands._options import SANDBOX_POLL_FLAGS, is_local_api
from redline_canary.commands.sandbox import banner

WIDTH = 100


def _parsers(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    """The parser and every subcommand's, at any depth (``corpus audit``, ``sandbox serve``)."""
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):  # aliases share a parser
                yield from _parsers(sub)


def test_every_help_line_fits_100_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    # argparse wraps flag help to the terminal, but raw descriptions and epilogs are printed
    # as written: one of them was a 367-character line.
    monkeypatch.setenv("COLUMNS", str(WIDTH))
    parsers = list(_parsers(build_parser()))
    assert len(parsers) > 20  # the walk reaches the subcommands, not only the root
    too_long = [f"{p.prog}: {len(line)} chars: {line[:60]}..."
                for p in parsers for line in p.format_help().splitlines() if len(line) > WIDTH]
    assert too_long == []


def test_sandbox_flags_say_reviewer_kind_not_reviewer(monkeypatch: pytest.MonkeyPatch) -> None:
    # `run --reviewer` names a profile; the sandbox's simulated reviewer is a kind.
    monkeypatch.setenv("COLUMNS", str(WIDTH))
    root = build_parser()
    for action in ("serve", "verify"):
        text = next(p for p in _parsers(root) if p.prog.endswith(f"sandbox {action}")).format_help()
        assert "--reviewer-kind {bandit,silent,none}" in text
        assert "--reviewer " not in text and "--reviewer\n" not in text  # the old spelling is hidden
    args = root.parse_args(["sandbox", "serve", "--reviewer", "silent"])  # still accepted
    assert args.reviewer_alias == "silent"


def test_banner_commands_are_ones_the_cli_accepts() -> None:
    url = "http://127.0.0.1:40123"
    lines = banner(url, ["acme/canary-python", "acme/other"],
                   {"acme/canary-python": "bandit", "acme/other": "silent"})
    text = "\n".join(lines)
    assert "acme/canary-python (reviewer: bandit), acme/other (reviewer: silent)" in text
    assert "any token works here" in text
    exports = [ln.strip() for ln in lines if ln.strip().startswith("export ")]
    assert len(exports) == 1
    env = dict(pair.split("=", 1) for pair in shlex.split(exports[0])[1:])
    assert env["REDLINE_CANARY_API_URL"] == url and env["REDLINE_CANARY_TOKEN"]
    commands = {ln.split()[1]: shlex.split(ln)[1:] for ln in lines if ln.strip().startswith("redline-canary ")}
    assert set(commands) == {"doctor", "run"}
    parser = build_parser()
    doctor = parser.parse_args(commands["doctor"])
    assert (doctor.repo, doctor.stack) == ("acme/canary-python", "python")
    run = parser.parse_args(commands["run"])
    assert (run.repo, run.stack) == ("acme/canary-python", "python")
    assert run.api_url is None and doctor.api_url is None  # the URL comes from the export
    assert run.poll_interval == float(SANDBOX_POLL_FLAGS[1]) < 30  # fast polling, not GitHub's 30 s
    assert run.history  # so the run ends by printing the gate command for its run id


@pytest.mark.parametrize(("url", "local"), [
    ("http://127.0.0.1:8080", True), ("http://localhost:1", True), ("http://[::1]:9", True),
    ("https://api.github.com", False), ("https://ghe.example.com/api/v3", False), (None, False),
    ("http://127.example.com", False),
])
def test_local_api_is_loopback_only(url: str | None, local: bool) -> None:
    assert is_local_api(url) is local
