"""Commands made of actions (``corpus``, ``history``, ``profile``, ``sandbox``): given no
action, they list their actions (their help, on stdout) and say on one line of stderr what
to type, exit 2 — as ``redline-canary`` given no command prints its help and exits 2."""

from __future__ import annotations

import argparse
import functools
import sys
from typing import Any

from redline_canary.errors import EXIT_BAD_INPUT


def add_actions(parser: argparse.ArgumentParser, dest: str) -> Any:
    """The group's subparsers; with no action chosen, ``func`` lists them."""
    actions = parser.add_subparsers(dest=dest, metavar="ACTION")
    parser.set_defaults(func=functools.partial(list_actions, parser, actions))
    return actions


def list_actions(parser: argparse.ArgumentParser, actions: Any, _args: argparse.Namespace) -> int:
    parser.print_help()
    names = ", ".join(actions.choices)
    print(f"{parser.prog}: error: give an ACTION: {names} (`{parser.prog} ACTION --help` for its options)",
          file=sys.stderr)
    return EXIT_BAD_INPUT
