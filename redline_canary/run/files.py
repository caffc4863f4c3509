"""Writing output files safely: whole or not at all, and never through something planted.

Every file the tool writes for a user (keys, reports, audits, captures, recordings) goes
through :func:`safe_write_text`, so "nothing half-written, nothing written through a link"
is one function to trust rather than a rule each command remembers:

* a target that exists and is a symbolic link, or anything but a regular file (a FIFO, a
  device, a directory, a socket), is refused with one line naming it (BadInput, exit 2):
  never written through, never replaced, never opened (so a FIFO cannot block us);
* the text goes to a new temporary file in the same folder, created with
  ``O_CREAT|O_EXCL|O_NOFOLLOW`` (a name we did not create is never opened), fsynced, then
  moved into place: renamed over a regular file, or, with ``new_only`` (a file made inside
  an output folder: ``run --record``, ``run --save-captures``), hard-linked to its name,
  which fails if *anything* is there, a link planted after the check included.

Commands that take an output path call :func:`refuse_unsafe_target` when they read their
flags too, so a bad target is refused before any work, not after it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from pathlib import Path

from redline_canary.errors import BadInput

_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
# Filesystems without hard links (some network and FAT mounts) answer link() with these.
_NO_LINKS = {errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK}


def refuse_unsafe_target(path: Path | str, where: str = "") -> None:
    """BadInput if ``path`` exists and is a symbolic link or not a regular file.

    ``where`` (a flag, ``"--key"``) starts the message. Checked with ``lstat``: nothing is
    followed or opened."""
    target = Path(path)
    prefix = f"{where}: " if where else ""
    try:
        mode = os.lstat(target).st_mode
    except FileNotFoundError:
        return
    except OSError as exc:
        raise BadInput(f"{prefix}{target}: cannot write ({exc.strerror or exc.__class__.__name__})") from None
    if stat.S_ISLNK(mode):
        raise BadInput(f"{prefix}{target} is a symbolic link: refusing to write through it or replace it "
                       "(remove it, or give another path)")
    if not stat.S_ISREG(mode):
        raise BadInput(f"{prefix}{target} is {file_kind(mode)}, not a regular file: refusing to write to it "
                       "or replace it")


def safe_write_text(path: Path | str, text: str, *, new_only: bool = False, mode: int = 0o600) -> None:
    """Write ``text`` to ``path`` whole, or refuse (BadInput) and leave it as it was.

    ``new_only``: ``path`` must not exist (a file made inside an output folder); otherwise
    a regular file there is replaced. ``mode`` is the new file's, before the umask."""
    target = Path(path)
    refuse_unsafe_target(target)
    if new_only and os.path.lexists(target):
        raise BadInput(f"{target} already exists: refusing to replace it")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = _new_temporary(target, mode)
    except OSError as exc:
        raise BadInput(f"{target}: cannot write ({exc.strerror or exc.__class__.__name__})") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        if new_only:
            _link_new(tmp, target)
        else:
            refuse_unsafe_target(target)  # again, just before the rename: the narrowest window
            os.replace(tmp, target)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, FileExistsError):
            refuse_unsafe_target(target)  # something appeared at the name meanwhile: say what
            raise BadInput(f"{target} already exists: refusing to replace it") from None
        if isinstance(exc, OSError):
            raise BadInput(f"{target}: cannot write ({exc.strerror or exc.__class__.__name__})") from None
        raise


def _new_temporary(target: Path, mode: int) -> tuple[int, Path]:
    """A new hidden file beside ``target``, opened by us alone (never a name someone planted)."""
    for _ in range(100):
        tmp = target.parent / f".{target.name}.{secrets.token_hex(6)}.tmp"
        try:
            return os.open(tmp, _TEMP_FLAGS, mode), tmp
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary name", str(target.parent))


def _link_new(tmp: Path, target: Path) -> None:
    """Give the finished temporary file its name without replacing anything there."""
    try:
        os.link(tmp, target, follow_symlinks=False)  # EEXIST if anything is there, a link included
    except OSError as exc:
        if exc.errno not in _NO_LINKS:
            raise
        if os.path.lexists(target):  # no hard links here: the nearest check, then a rename
            raise FileExistsError(errno.EEXIST, "exists", str(target)) from None
        os.replace(tmp, target)
        return
    os.unlink(tmp)


def file_kind(mode: int) -> str:
    """What a file that is not a regular file is, for a one-line refusal."""
    for test, name in ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a plain file"
