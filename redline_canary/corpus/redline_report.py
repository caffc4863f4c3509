"""What a Redline import reports: each marker it rejected, each change it made that a reader
should check, each provider-shaped secret it found, per stack and in all. Pure.

What it owns: the report's rows (:class:`Rejection`, :class:`Note`, :class:`SecretHit`),
the per-stack counts and :class:`ImportResult`, the files to write together with the report
and its ``--json`` shape (:meth:`ImportResult.as_json`). Why apart: every step of the
import (the standards in :mod:`redline_rules`, one file's markers in
:mod:`redline_markers`, the checkout in :mod:`redline_import`) adds to these, and the
command prints them; none of those needs the others to name a row.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Rejection:
    """A marker (or marker-shaped text) the importer could not convert."""

    file: str  # path in the Redline checkout
    line: int
    reason: str
    stack: str = ""
    into: str = ""  # the corpus file the marker would have been in

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.reason}"


@dataclass(frozen=True)
class Note:
    """Something the importer changed or decided that a reader should check."""

    file: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}" if self.line else f"{self.file}: {self.message}"


@dataclass(frozen=True)
class SecretHit:
    file: str
    line: int
    provider: str
    replacement: str
    replaced: bool

    def __str__(self) -> str:
        done = "replaced with" if self.replaced else "suggested neutral replacement:"
        return f"{self.file}:{self.line}: string shaped like a real {self.provider}; {done} {self.replacement!r}"


@dataclass
class StackReport:
    read: int = 0
    converted: int = 0
    rejected: list[Rejection] = field(default_factory=list)
    files: int = 0
    skeletons: int = 0


@dataclass
class ImportResult:
    """What to write (``files`` by output path, the rules catalog and the side table) and the report."""

    files: dict[str, str]
    rules: dict[str, dict[str, Any]]
    side_table: dict[str, Any]
    stacks: dict[str, StackReport]
    notes: list[Note]
    secrets: list[SecretHit]
    standards_version: str | None

    @property
    def read(self) -> int:
        return sum(s.read for s in self.stacks.values())

    @property
    def converted(self) -> int:
        return sum(s.converted for s in self.stacks.values())

    @property
    def rejected(self) -> list[Rejection]:
        return [r for s in self.stacks.values() for r in s.rejected]

    def as_json(self) -> dict[str, Any]:
        return {
            "markers": {"read": self.read, "converted": self.converted, "rejected": len(self.rejected)},
            "stacks": {
                name: {"files": s.files, "read": s.read, "converted": s.converted, "skeleton_twins": s.skeletons,
                       "rejected": [{"file": r.file, "line": r.line, "reason": r.reason} for r in s.rejected]}
                for name, s in sorted(self.stacks.items())
            },
            "rules": len(self.rules),
            "standards_version": self.standards_version,
            "secrets": [{"file": h.file, "line": h.line, "provider": h.provider, "replacement": h.replacement,
                         "replaced": h.replaced} for h in self.secrets],
            "notes": [{"file": n.file, "line": n.line, "message": n.message} for n in self.notes],
        }
