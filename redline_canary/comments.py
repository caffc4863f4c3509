"""A uniform view of GitHub's three comment channels (DESIGN §5).

Review comments, reviews and issue comments have different shapes; profiles and the
finding extractor read this one type instead. Pure: built from the raw JSON dicts of a
capture, so the same code scores a live PR and a saved file.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

CHANNELS = ("inline", "review", "issue")


@dataclass(frozen=True)
class Comment:
    channel: str  # inline | review | issue
    id: int
    login: str
    user_id: int | None
    user_type: str
    body: str
    created_at: str = ""
    path: str | None = None
    line: int | None = None
    start_line: int | None = None
    original_line: int | None = None
    original_start_line: int | None = None
    side: str | None = None
    subject_type: str | None = None
    in_reply_to_id: int | None = None
    review_id: int | None = None
    commit_id: str | None = None
    state: str | None = None  # reviews: COMMENTED, APPROVED, CHANGES_REQUESTED, PENDING...
    html_url: str = ""

    @property
    def is_reply(self) -> bool:
        return self.in_reply_to_id is not None


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def comment_from_github(channel: str, obj: Mapping[str, Any]) -> Comment:
    """Build a Comment; raises KeyError/TypeError naming what is missing on bad input."""
    if channel not in CHANNELS:
        raise ValueError(f"unknown channel {channel!r}")
    if not isinstance(obj, Mapping):
        raise TypeError("comment is not a JSON object")
    user = obj.get("user") or {}
    if not isinstance(user, Mapping):
        raise TypeError("'user' is not a JSON object")
    comment_id = obj["id"]
    if not isinstance(comment_id, int):
        raise TypeError("'id' is not an integer")
    body = obj.get("body") or ""
    if not isinstance(body, str):
        raise TypeError("'body' is not a string")
    return Comment(
        channel=channel,
        id=comment_id,
        login=str(user.get("login") or ""),
        user_id=_int_or_none(user.get("id")),
        user_type=str(user.get("type") or ""),
        body=body,
        created_at=str(obj.get("created_at") or obj.get("submitted_at") or ""),
        path=obj.get("path") if isinstance(obj.get("path"), str) else None,
        line=_int_or_none(obj.get("line")),
        start_line=_int_or_none(obj.get("start_line")),
        original_line=_int_or_none(obj.get("original_line")),
        original_start_line=_int_or_none(obj.get("original_start_line")),
        side=obj.get("side") if isinstance(obj.get("side"), str) else None,
        subject_type=obj.get("subject_type") if isinstance(obj.get("subject_type"), str) else None,
        in_reply_to_id=_int_or_none(obj.get("in_reply_to_id")),
        review_id=_int_or_none(obj.get("pull_request_review_id")),
        commit_id=obj.get("commit_id") if isinstance(obj.get("commit_id"), str) else None,
        state=obj.get("state") if isinstance(obj.get("state"), str) else None,
        html_url=str(obj.get("html_url") or ""),
    )
