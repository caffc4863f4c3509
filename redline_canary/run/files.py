"""Writing output files whole: a reader never sees half a file, a failure leaves the old one.

Every file the tool writes for a user (keys, reports, audits, captures) goes through here, so
"nothing half-written" is one function to trust rather than a rule each command remembers.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path

from redline_canary.errors import BadInput


def atomic_write_text(path: Path | str, text: str) -> None:
    """Write ``text`` to a temporary sibling, fsync, then rename over ``path``."""
    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    except OSError as exc:
        raise BadInput(f"{target}: cannot write ({exc.strerror or exc.__class__.__name__})") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise BadInput(f"{target}: cannot write ({exc.strerror or exc.__class__.__name__})") from None
        raise


def file_kind(mode: int) -> str:
    """What a file that is not a regular file is, for a one-line refusal."""
    for test, name in ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a plain file"
