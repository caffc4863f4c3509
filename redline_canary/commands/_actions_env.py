"""The GitHub Actions edge: where the runner reads what the pure Actions modules produced
(``workflow_commands``, ``actions_outputs``, ``actions_annotations``, ``actions_summary``).

Why separate from the core: these functions touch the environment and files the runner
hands every step (``GITHUB_OUTPUT``, ``GITHUB_STEP_SUMMARY``), and print workflow commands.
Outside Actions they degrade to plain output, so the same command works on a laptop.
Nothing here ever receives a token.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import sys
import uuid
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from redline_canary.errors import BadInput
from redline_canary.report.workflow_commands import output_entry, workflow_command


@dataclass(frozen=True)
class ActionsEnv:
    """What the runner tells a step through its environment, read once at a command's edge
    (``from_args``) so the command body is handed it rather than reading ``os.environ``."""

    active: bool = False  # GITHUB_ACTIONS=true: workflow commands are read from stdout
    output: str = ""  # GITHUB_OUTPUT: the step's outputs file ("" when there is none)
    summary: str = ""  # GITHUB_STEP_SUMMARY: the step's job summary file

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> ActionsEnv:
        return cls(env.get("GITHUB_ACTIONS") == "true", env.get("GITHUB_OUTPUT", ""),
                   env.get("GITHUB_STEP_SUMMARY", ""))


def in_github_actions() -> bool:
    return os.environ.get("GITHUB_ACTIONS") == "true"


def write_outputs(outputs: Mapping[str, str], path: str | None = None) -> bool:
    """Append step outputs to ``$GITHUB_OUTPUT`` (UTF-8, heredoc form for multi-line
    values with a random delimiter). Returns False when there is no such file. ``path``
    "" means none; None reads the environment (for commands not yet given an ActionsEnv)."""
    target = path if path is not None else os.environ.get("GITHUB_OUTPUT", "")
    if not target:
        return False
    text = "".join(output_entry(k, v, f"rc_{uuid.uuid4().hex}") for k, v in outputs.items())
    _append(target, text, "GITHUB_OUTPUT")
    return True


def append_summary(markdown: str, path: str | None = None) -> bool:
    """Append to ``$GITHUB_STEP_SUMMARY``; False when the step has none (``path`` as in
    :func:`write_outputs`)."""
    target = path if path is not None else os.environ.get("GITHUB_STEP_SUMMARY", "")
    if not target:
        return False
    _append(target, markdown, "GITHUB_STEP_SUMMARY")
    return True


def emit(commands: Iterable[str], stream: TextIO | None = None) -> None:
    """Workflow commands go to stdout, one per line, where the runner picks them up."""
    out = stream or sys.stdout
    for line in commands:
        out.write(line + "\n")
    out.flush()


@contextlib.contextmanager
def commands_suspended(stream: TextIO | None = None, *, active: bool | None = None) -> Iterator[None]:
    """Under Actions, suspend workflow-command processing while outside text is printed:
    ``::stop-commands::<random token>`` before, ``::<token>::`` after (also when the block
    raises). The token is fresh and unguessable, so no record field can end the pause.
    Outside Actions nothing is printed: a terminal has no commands to suspend. ``active``
    is :attr:`ActionsEnv.active`; None reads the environment."""
    if not (in_github_actions() if active is None else active):
        yield
        return
    out = stream or sys.stdout
    token = f"rc-{secrets.token_hex(16)}"
    out.write(f"::stop-commands::{token}\n")
    out.flush()
    try:
        yield
    finally:
        out.flush()
        out.write(f"::{token}::\n")
        out.flush()


def annotate_error(title: str, message: str) -> None:
    """An ``::error`` annotation when running under Actions; silent elsewhere (the CLI's
    one-line stderr message already says the same to a person)."""
    if in_github_actions():
        emit([workflow_command("error", message, title=title)])


def _append(target: str, text: str, what: str) -> None:
    try:
        with Path(target).open("a", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as exc:
        raise BadInput(f"{what}: cannot append to {target} ({exc.strerror})") from None
