"""Crash logs: an unexpected exception is a bug in this tool, never a verdict (docs/cli.md).

The traceback goes to a file (masked: no registered token can reach it) and the user gets
one line naming the crash and the file, with exit code 5, so CI never reads a bug as "the
reviewer regressed" (1) and a bug report can carry the log.
"""

from __future__ import annotations

import datetime as dt
import os
import tempfile
import traceback
from pathlib import Path

from redline_canary.errors import mask


def crash_dir() -> Path:
    """``$RUNNER_TEMP`` on GitHub Actions (kept with the job), else the system temp folder."""
    runner_temp = os.environ.get("RUNNER_TEMP", "")
    return Path(runner_temp) if runner_temp and Path(runner_temp).is_dir() else Path(tempfile.gettempdir())


def write_crash_log(exc: BaseException, context: str = "") -> Path | None:
    """Write the masked traceback; None when even that is impossible (a full disk)."""
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%S")
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    body = mask(f"redline-canary crash{f' in {context}' if context else ''}\n{text}")
    try:
        fd, name = tempfile.mkstemp(prefix=f"redline-canary-crash-{stamp}-", suffix=".log", dir=crash_dir())
        with os.fdopen(fd, "w", encoding="utf-8", errors="replace") as fh:
            fh.write(body)
    except OSError:
        return None
    return Path(name)


def crash_line(exc: BaseException, log: Path | None) -> str:
    """The one line on stderr: what crashed and where the traceback is."""
    # masked before it is made one line and cut: either would hide a secret from the mask
    what = mask(f"{exc.__class__.__name__}: {exc}").replace("\n", " ")[:300]
    where = f"traceback in {log}" if log else "the crash log could not be written"
    return f"internal error (a bug in redline-canary, not a verdict): {what}; {where}"
