"""Findings: located statements by the reviewer, the unit the matcher assigns (docs/matching.md#findings)."""

from __future__ import annotations

from dataclasses import dataclass

from redline_canary.corpus.severity import Severity
from redline_canary.review.comments import Comment


@dataclass(frozen=True)
class Finding:
    """One located statement. ``severity is None`` means unrated (by location only)."""

    key: str  # stable identity, e.g. "inline:123" or "review:9#2"
    path: str | None
    start: int | None
    end: int | None
    severity: Severity | None
    body: str
    login: str
    source: str = "inline"  # inline | summary
    line_scoped: bool = True  # False: LEFT side or file-level, only structural matches
    url: str = ""  # where a reader finds the comment (html_url)
    word: str = ""  # the vendor's own severity word, as written ("🔴 Critical", "high")
    rule: str = ""  # a rule id the reviewer named in a structured field (findings files, SARIF)

    @property
    def channel(self) -> str:
        return self.key.split(":", 1)[0]

    @property
    def comment_id(self) -> int | None:
        tail = self.key.split(":", 1)[-1].split("#", 1)[0]
        return int(tail) if tail.isdigit() else None

    def sort_key(self) -> tuple[str, int, int, int, str, str]:
        """Canonical order so results never depend on the order of the capture."""
        return (self.path or "", self.start or 0, self.end or 0,
                -(self.severity or 0), self.key, self.body)


def inline_range(comment: Comment) -> tuple[int | None, int | None, bool]:
    """(start, end, line_scoped) of a review comment per docs/matching.md#findings.

    ``line`` is null on outdated comments; their original coordinates still say where
    the reviewer pointed. LEFT-side and file-level comments point at no pushed line.
    """
    if comment.line is not None:
        end: int | None = comment.line
        start = comment.start_line or comment.line
    elif comment.original_line is not None:
        end = comment.original_line
        start = comment.original_start_line or comment.original_line
    else:
        end = start = None
    scoped = (
        end is not None
        and comment.subject_type != "file"
        and (comment.side or "RIGHT").upper() != "LEFT"
    )
    if start is not None and end is not None and start > end:
        start, end = end, start
    return start, end, scoped
