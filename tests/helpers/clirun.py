"""Run the CLI as a user or CI would: in a real subprocess (``cli``), or through
``cli.main`` in this process (``cli_main``) where the process boundary is not the point.

``cli`` is for what only a process shows: exit codes set by the interpreter, signals,
``python -m``, stdin and a tty, the environment a child inherits, a crash that kills it.
``cli_main`` runs the same argv through the same ``main`` (argparse, the error edge, exit
codes), so a test of output, records and exit codes reads the same and runs in
milliseconds instead of half a second.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

from redline_canary.cli import main

ROOT = Path(__file__).resolve().parents[2]


def cli(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None,
        timeout: float = 120) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "redline_canary", *args], capture_output=True, text=True,
        env=full_env, cwd=cwd or ROOT, timeout=timeout, check=False,
    )


@contextlib.contextmanager
def _environment(extra: Mapping[str, str]) -> Iterator[None]:
    """``os.environ`` plus ``extra`` for the length of one call, then exactly as it was:
    the command's edge reads the environment, as it would in a child, and nothing leaks
    into the next test."""
    saved = dict(os.environ)
    os.environ.update(extra)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def cli_main(*args: str, env: dict[str, str] | None = None,
             cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``redline-canary ARGS`` through :func:`redline_canary.cli.main` in this process:
    the same (returncode, stdout, stderr) ``cli`` gives, argparse's own exits included."""
    out, err = io.StringIO(), io.StringIO()
    here = Path.cwd()
    with _environment(env or {}), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        os.chdir(cwd or ROOT)
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse: --help, --version, a bad flag
            code = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
        finally:
            os.chdir(here)
    return subprocess.CompletedProcess(["redline-canary", *args], code, out.getvalue(), err.getvalue())
