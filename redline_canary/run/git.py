"""Reading a local git checkout for ``corpus mine`` (docs/mining.md): the one place that runs git.

A repository is outside input. Git runs as a subprocess with an argument list (never a
shell), with no terminal prompt, no external diff or text conversion, stdin closed, a
time limit, and every read bounded: a fix commit is a few files of source, so anything
bigger than :data:`MAX_OUTPUT` is refused rather than held in memory. Errors name the
flag and the value the user gave, never git's own stderr (which may echo paths or config).
"""

from __future__ import annotations

import os
import re
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path

from redline_canary.errors import BadInput

MAX_OUTPUT = 8 << 20  # one answer from git: a diff or a blob of a fix commit is far smaller
MAX_BLOB = 1 << 20  # a corpus file is at most 1 MiB (run/corpus_files.py)
TIMEOUT_SECONDS = 60
MAX_CHANGED_FILES = 500
_SHA_LIKE = re.compile(r"^[0-9A-Za-z._/@^~-]{1,100}$")
# Variables that would point git at another repository or configuration than the one named.
_DROP_ENV = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_NAMESPACE",
             "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_CONFIG_PARAMETERS", "GIT_EXTERNAL_DIFF")


class GitFailed(Exception):
    """Git answered with a non-zero status (the caller knows what that means)."""


@dataclass(frozen=True)
class Change:
    """One file a commit changed (``git diff-tree --raw``): status letter, modes, blob ids."""

    status: str  # M, A, D, T (renames are off: a rename is a D and an A)
    path: str
    old_mode: str
    new_mode: str
    old_blob: str
    new_blob: str


class GitRepo:
    """A local checkout, read with git plumbing commands."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        if not self.path.is_dir():
            raise BadInput(f"--repo {self.path}: not a folder")
        try:
            self._git("rev-parse", "--git-dir")
        except GitFailed:
            raise BadInput(f"--repo {self.path}: not a git repository (or one git refuses to read: "
                           f"`git -C {self.path} status` says why)") from None

    def _git(self, *args: str, limit: int = MAX_OUTPUT) -> bytes:
        env = {k: v for k, v in os.environ.items() if k not in _DROP_ENV}
        env.update(GIT_TERMINAL_PROMPT="0", GIT_OPTIONAL_LOCKS="0", LC_ALL="C", GIT_PAGER="cat")
        command = ["git", "-C", str(self.path), "-c", "core.quotepath=off", "-c", "diff.noprefix=false", *args]
        try:
            proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=subprocess.DEVNULL, env=env)
        except OSError as exc:
            raise BadInput(f"git: cannot run ({exc.strerror or exc.__class__.__name__}); is git installed?") from None
        expired = threading.Event()

        def stop() -> None:
            expired.set()
            proc.kill()

        timer = threading.Timer(TIMEOUT_SECONDS, stop)
        timer.start()
        try:
            assert proc.stdout is not None
            out = proc.stdout.read(limit + 1)
            if len(out) > limit:
                proc.kill()
                raise BadInput(f"--repo {self.path}: git answered more than {limit >> 20} MiB for "
                               f"'{' '.join(args[:2])}' (a fix commit is a few files of source)")
            code = proc.wait()
        finally:
            timer.cancel()
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        if expired.is_set():
            raise BadInput(f"--repo {self.path}: git took longer than {TIMEOUT_SECONDS} s for "
                           f"'{' '.join(args[:2])}'")
        if code != 0:
            raise GitFailed(code)
        return out

    def commit(self, rev: str) -> str:
        """The full id of commit ``rev``; BadInput when it is not a commit of this repository."""
        if not _SHA_LIKE.match(rev) or rev.startswith("-"):
            raise BadInput(f"--fix {rev[:60]!r}: not a commit id")
        try:
            out = self._git("rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}")
        except GitFailed:
            raise BadInput(f"--fix {rev}: no such commit in {self.path}") from None
        return out.decode("ascii", errors="replace").strip()

    def parents(self, sha: str) -> list[str]:
        out = self._git("rev-list", "--parents", "-n", "1", sha).decode("ascii", errors="replace").split()
        return out[1:]

    def message(self, sha: str) -> str:
        """The commit message (subject and body), bounded."""
        return self._git("show", "-s", "--format=%B", sha, limit=64 << 10).decode("utf-8", errors="replace")

    def changes(self, parent: str, sha: str) -> list[Change]:
        """Every file ``sha`` changed relative to ``parent``, renames off."""
        raw = self._git("diff-tree", "-r", "-z", "--no-renames", "--no-commit-id", "--raw", parent, sha)
        fields = raw.decode("utf-8", errors="surrogateescape").split("\0")
        changes: list[Change] = []
        i = 0
        while i + 1 < len(fields) and fields[i].startswith(":"):
            meta = fields[i][1:].split()
            if len(meta) != 5:
                break
            old_mode, new_mode, old_blob, new_blob, status = meta
            changes.append(Change(status[:1], fields[i + 1], old_mode, new_mode, old_blob, new_blob))
            i += 2
            if len(changes) > MAX_CHANGED_FILES:
                raise BadInput(f"--fix {sha[:12]}: changes more than {MAX_CHANGED_FILES} files "
                               "(a fix commit, not a merge of a release?)")
        return changes

    def blob(self, blob_id: str) -> bytes | None:
        """The blob's bytes, or None when it is bigger than a corpus file may be."""
        size = int(self._git("cat-file", "-s", blob_id).strip() or b"0")
        if size > MAX_BLOB:
            return None
        return self._git("cat-file", "blob", blob_id, limit=MAX_BLOB)

    def diff(self, old_blob: str, new_blob: str) -> str:
        """The unified diff of two blobs with no context lines (each hunk is exactly what changed)."""
        out = self._git("diff", "-U0", "--no-color", "--no-ext-diff", "--no-textconv", "--no-renames",
                        "--diff-algorithm=myers", old_blob, new_blob)
        return out.decode("utf-8", errors="replace")
