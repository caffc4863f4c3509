"""The one edge that turns exceptions into messages and exit codes (docs/cli.md, "Exit codes").

Each subcommand lives in ``redline_canary/commands/<name>.py`` and exposes
``register(subparsers)``, which adds its parser and sets ``func(args) -> int``. The list
below imports each one by name, so a missing or broken command fails at once, loudly.
Nothing below this module calls ``sys.exit``.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from types import ModuleType

from redline_canary import __version__
from redline_canary.commands import (
    actions_report,
    corpus,
    demo,
    doctor,
    gate,
    history,
    issue,
    janitor,
    profile,
    report,
    run,
    sandbox,
    score,
    targets,
)
from redline_canary.commands._options import API_URL_VAR
from redline_canary.errors import (
    EXIT_BAD_INPUT,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_PASS,
    CanaryError,
    mask,
)
from redline_canary.github.transport import validate_api_url
from redline_canary.report.text import inert_line
from redline_canary.run.crash import crash_line, write_crash_log

# Order is the order shown in --help.
COMMANDS: tuple[ModuleType, ...] = (
    doctor, run, score, corpus, janitor, report, history, gate, issue, targets, actions_report, profile,
    sandbox, demo,
)


class _Parser(argparse.ArgumentParser):
    """argparse exits 2 on bad flags already; keep its message to one line."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="redline-canary",
        description="Regression test for automated pull-request reviewers.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for module in COMMANDS:
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_BAD_INPUT
    try:
        _api_url_from_env(args)
        code: int = args.func(args)
    except CanaryError as exc:
        print(f"redline-canary: {inert_line(mask(str(exc)))}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("redline-canary: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # `redline-canary ... | head`: the reader left; say nothing more, fail nothing.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_PASS
    except Exception as exc:  # a bug: exit 5 with a crash log, never a traceback read as a verdict
        print(f"redline-canary: {crash_line(exc, write_crash_log(exc, ' '.join(argv or sys.argv[1:])))}",
              file=sys.stderr)
        return EXIT_INTERNAL
    return code


def _api_url_from_env(args: argparse.Namespace) -> None:
    """``--api-url``, else ``REDLINE_CANARY_API_URL``: what ``sandbox serve`` tells you to
    export, so its banner's commands and a GitHub Enterprise setup need no flag on every
    line (docs/cli.md#authentication). Only for commands that talk to the API: ``score``
    reads a capture or a findings file without one, and takes it only with ``--repo``."""
    if getattr(args, "api_url", "") is not None:  # given, or a command without the flag
        return
    if args.command == "score" and not getattr(args, "repo", None):
        return
    value = os.environ.get(API_URL_VAR, "").strip()
    if value:
        args.api_url = validate_api_url(value, API_URL_VAR)


def entrypoint() -> None:
    sys.exit(main())


if __name__ == "__main__":
    entrypoint()
