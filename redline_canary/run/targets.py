"""A target: which repository, stack and reviewer a run measures, with the gate rules that
judge it. A value type; reading and checking targets is ``commands/_targets.py``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from redline_canary.score.record import Mode
from redline_canary.score.verdict import GateOptions


@dataclass(frozen=True)
class Target:
    repo: str
    stack: str
    reviewer: str = "redline"
    base: str | None = None
    mode: Mode = "blind"
    prefix: str = ""
    logins: tuple[str, ...] = field(default_factory=tuple)
    gate_keys: tuple[tuple[str, Any], ...] = ()  # this target's own gate options, as written
    where: str = ""  # where the target was written, for messages about its keys
    gate: GateOptions | None = None  # the run's gate options with this target's applied
    variant: str | None = None  # auto, none or a variant id (docs/corpus.md#variants); None: the run's --variant
    corpus: tuple[str, ...] = ()  # private corpus folders this target adds (docs/corpus.md#layers)

    @property
    def label(self) -> str:
        return f"{self.repo} {self.stack}"
