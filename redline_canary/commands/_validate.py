"""Validate every value a user hands the CLI, at the edge, before anything is read or sent.

Why one module: a value that reaches GitHub, a file name or a git ref unchecked fails
late (after a PR was opened), fails as a traceback (exit 5, read as a bug), or does
something it should not (a ``prefix`` of ``../`` writing outside the pushed folder, a
``--run-id`` that makes the janitor match another run's branches). Each function here
either returns the value, normalised, or raises :class:`BadInput` with a message of the
form ``<where>: <what is wrong>``, so the CLI prints one line and exits 2.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from redline_canary.errors import BadInput
from redline_canary.run.files import refuse_unsafe_target

# A run id ends up in branch names (``rc/<run-id>-<hex>``), the PR marker
# ``<!-- rc:run=<run-id> -->``, capture file names and history records: one charset
# that is safe in all four. GITHUB_RUN_ID-derived ids (``<digits>-<attempt>``) and the
# local default (``local-20261201t092217z``) always fit.
RUN_ID = re.compile(r"[A-Za-z0-9._-]{1,100}")
# GitHub: owner (user or org) up to 39 characters, letters, digits and hyphens, not
# starting with a hyphen (underscores appear in Enterprise Managed User logins);
# repository names up to 100 characters of letters, digits, ``.``, ``_`` and ``-``.
OWNER = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,38}")
REPO_NAME = re.compile(r"[A-Za-z0-9._-]{1,100}")
STACK = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_REF_FORBIDDEN = re.compile(r"[\x00-\x20\x7f~^:?*\[\\]")
MAX_REF = 255
MAX_LOGIN = 100
MAX_WINDOW = 1000  # lines; a window that wide matches anything in the file


def show(value: Any) -> str:
    """The bad value, quoted and cut short: a message stays one readable line."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def run_id(value: Any, where: str = "--run-id") -> str:
    """A run id, which becomes part of branch names, markers and file names."""
    if not isinstance(value, str) or not RUN_ID.fullmatch(value):
        raise BadInput(f"{where}: expected 1 to 100 of the characters A-Z a-z 0-9 . _ -, "
                       f"got {show(value)}")
    if value.startswith(".") or ".." in value:
        raise BadInput(f"{where}: must not start with '.' or contain '..' (it is part of a "
                       f"git branch name), got {show(value)}")
    return value


def repo(value: Any, where: str) -> str:
    """``OWNER/NAME`` exactly: no whitespace, no trailing newline, no extra path parts."""
    if not isinstance(value, str):
        raise BadInput(f"{where}: expected OWNER/NAME as a string, got {show(value)}")
    owner, sep, name = value.partition("/")
    if (not sep or not OWNER.fullmatch(owner) or not REPO_NAME.fullmatch(name)
            or name in (".", "..")):
        raise BadInput(f"{where}: expected OWNER/NAME (owner: up to 39 letters, digits, - or _; "
                       f"name: up to 100 letters, digits, . _ -), got {show(value)}")
    return value


def stack(value: Any, where: str = "--stack") -> str:
    """A corpus stack name: one folder name, never a path."""
    if not isinstance(value, str) or not STACK.fullmatch(value):
        raise BadInput(f"{where}: expected a stack name (letters, digits, . _ -), got {show(value)}")
    return value


def ref_name(value: Any, where: str) -> str:
    """A branch name git accepts (``git check-ref-format --branch`` rules)."""
    if not isinstance(value, str) or not value:
        raise BadInput(f"{where}: expected a branch name, got {show(value)}")
    why = None
    if len(value) > MAX_REF:
        why = f"longer than {MAX_REF} characters"
    elif _REF_FORBIDDEN.search(value):
        why = "contains a space, a control character or one of ~ ^ : ? * [ \\"
    elif ".." in value or "@{" in value or value == "@":
        why = "contains '..' or '@{'"
    elif value.startswith(("-", "/")) or value.endswith(("/", ".")) or "//" in value:
        why = "starts with '-' or '/', ends with '/' or '.', or has an empty component"
    elif any(part.startswith(".") or part.endswith(".lock") for part in value.split("/")):
        why = "a component starts with '.' or ends with '.lock'"
    if why:
        raise BadInput(f"{where}: not a valid git branch name ({why}): {show(value)}")
    return value


def prefix(value: Any, where: str) -> str:
    """A folder inside the canary repository, relative, that stays inside it."""
    if not isinstance(value, str):
        raise BadInput(f"{where}: must be a string, got {show(value)}")
    if _CONTROL.search(value) or "\\" in value:
        raise BadInput(f"{where}: must not contain control characters or backslashes: {show(value)}")
    if value.startswith("/"):
        raise BadInput(f"{where}: must be a relative folder in the repository, got {show(value)}")
    parts = value.rstrip("/").split("/") if value.rstrip("/") else []
    if any(p in ("", ".", "..") for p in parts):
        raise BadInput(f"{where}: must not contain '.', '..' or empty components: {show(value)}")
    if len(value) > 200:
        raise BadInput(f"{where}: longer than 200 characters")
    return value


def login(value: Any, where: str) -> str:
    """A reviewer identity (``copilot-pull-request-reviewer[bot]`` included)."""
    if (not isinstance(value, str) or not value.strip() or len(value) > MAX_LOGIN
            or _CONTROL.search(value) or value != value.strip()):
        raise BadInput(f"{where}: expected a login (a non-empty string without spaces around it), "
                       f"got {show(value)}")
    return value


def optional_choice_string(value: Any, where: str) -> str | None:
    """A key that must be a string when given (``reviewer``, ``mode``); None when absent."""
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise BadInput(f"{where}: must be a non-empty string, got {show(value)}")
    return value


def number(value: float, where: str, *, low: float, high: float, low_open: bool = False) -> float:
    """A finite float in ``[low, high]`` (``(low, high]`` with ``low_open``)."""
    if not math.isfinite(value) or value > high or value < low or (low_open and value == low):
        bound = "(" if low_open else "["
        raise BadInput(f"{where}: must be a number in {bound}{low:g}, {high:g}], got {value!r}")
    return value


def integer(value: int, where: str, *, low: int, high: int) -> int:
    if not low <= value <= high:
        raise BadInput(f"{where}: must be an integer from {low} to {high}, got {value}")
    return value


def output_file(value: str, where: str) -> Path:
    """A file the command will write: not a folder, and its parent is not a file."""
    path = Path(value)
    if not value or _CONTROL.search(value):
        raise BadInput(f"{where}: expected a file path, got {show(value)}")
    if path.is_dir():
        raise BadInput(f"{where}: {value} is a folder, expected a file")
    _creatable(path, value, where)
    return path


def safe_output_file(value: str, where: str) -> Path:
    """A file the command will write whole (``run/files.safe_write_text``): also not a
    symbolic link, a FIFO or a device, refused here before any work rather than after it."""
    path = output_file(value, where)
    refuse_unsafe_target(path, where)
    return path


def _creatable(path: Path, value: str, where: str) -> None:
    """The nearest existing ancestor must be a folder, or nothing can be made below it."""
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                raise BadInput(f"{where}: {parent} is a file, so {value} cannot be created")
            return


def history_path(value: str, where: str) -> Path:
    """A history to append to: a JSONL file, or an existing folder of them (docs/record.md)."""
    path = Path(value)
    if not value or _CONTROL.search(value):
        raise BadInput(f"{where}: expected a file or folder path, got {show(value)}")
    if not path.is_dir():
        _creatable(path, value, where)
    return path


def output_dir(value: str, where: str) -> Path:
    """A folder the command will write files into: not an existing file."""
    path = Path(value)
    if not value or _CONTROL.search(value):
        raise BadInput(f"{where}: expected a folder path, got {show(value)}")
    if path.exists() and not path.is_dir():
        raise BadInput(f"{where}: {value} is a file, expected a folder")
    _creatable(path, value, where)
    return path


def link_url(value: str | None, where: str) -> str | None:
    """An http(s) link a person will follow (a run page, a scoreboard): a host, no
    credentials, and nothing that could end a Markdown link or hide in a log (no blank,
    quote, backtick, angle bracket or control character). Queries and fragments are fine."""
    if value is None:
        return None
    if not value or re.search(r"[\s<>`\"'\\\x00-\x1f\x7f]", value) or len(value) > 2000:
        raise BadInput(f"{where}: expected an http(s) URL without spaces, quotes or angle brackets, "
                       f"got {show(value)}")
    try:
        parts = urlsplit(value)
    except ValueError as exc:
        raise BadInput(f"{where}: not a valid URL ({exc})") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise BadInput(f"{where}: expected an http:// or https:// URL with a host, got {show(value)}")
    if "@" in parts.netloc:
        raise BadInput(f"{where}: must not carry credentials (user:password@)")
    return value


def label(value: Any, where: str) -> str:
    """A GitHub label name (at most 50 characters) that also survives the issues list's
    ``labels=`` filter, which is comma-separated: no comma, no control character, no
    blanks around it."""
    if (not isinstance(value, str) or not value.strip() or value != value.strip() or len(value) > 50
            or "," in value or _CONTROL.search(value)):
        raise BadInput(f"{where}: expected a label name of 1 to 50 characters, without commas or "
                       f"blanks around it, got {show(value)}")
    return value
