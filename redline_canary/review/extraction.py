"""What a reviewer said on one PR, reduced to what the scorer and the poller need. Pure.

Kept out of ``profiles`` so the scoring core (``scoring``, ``polling``, ``evaluate``) reads an
extraction without importing the dialect engine that produced it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from redline_canary.errors import mask
from redline_canary.review.findings import Finding

# What one reviewer comment says (docs/matching.md): done and clean need positive evidence.
Signal = Literal["finding", "clean", "done", "skipped", "error", "progress", "none"]

_HTML_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_TAG = re.compile(r"<[^>]+>")


@dataclass
class Extraction:
    """What the reviewer said on one PR, as the scorer and the poller need it."""

    findings: list[Finding] = field(default_factory=list)
    activity: int = 0  # reviewer comments, reviews and issue comments seen
    signals: list[tuple[Signal, str]] = field(default_factory=list)  # (signal, quoted body)

    def has(self, signal: Signal) -> bool:
        return any(s == signal for s, _ in self.signals)

    @property
    def finished(self) -> bool:
        """A "clean" verdict is also the reviewer's last word, so it ends polling too."""
        return self.has("done") or self.has("clean")

    def notice(self, *signals: Signal) -> str | None:
        """The first comment body that carried one of ``signals``, trimmed for a record."""
        for s, body in self.signals:
            if s in signals:
                return quote(body) or s
        return None


def quote(body: str, limit: int = 300) -> str:
    """The readable head of a notice: HTML markers and markup go, a heading keeps its reason.

    Vendors open notices with machine markers (``<!-- ... skip review ... -->``) and a
    heading ("## Review skipped"); a record that quoted the marker would say nothing.
    Every registered secret is masked first, before the text is reflowed and cut.
    """
    body = mask(body)
    lines: list[str] = []
    for raw in _TAG.sub(" ", _HTML_COMMENT.sub("", body)).splitlines():
        text = re.sub(r"\*\*|__", "", re.sub(r"\s+", " ", raw)).strip().lstrip("#>*_ ").rstrip("*_ ").strip()
        text = re.sub(r"^\[!\w+\]\s*", "", text)  # "> [!NOTE]" alert openers
        if not text:
            continue
        lines.append(text)
        if len(lines) == 2 or not re.match(r"[\s>]*(?:#|\*\*[^*]+\*\*\s*$)", raw):
            break
    return ": ".join(lines)[:limit]
