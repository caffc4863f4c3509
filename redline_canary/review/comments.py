"""A uniform view of GitHub's three comment channels (docs/matching.md#findings).

Review comments, reviews and issue comments have different shapes; profiles and the
finding extractor read this one type instead. Pure: built from the raw JSON dicts of a
capture, so the same code scores a live PR and a saved file.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

# Where a body came from: GitHub's three comment channels, plus reactions and check runs.
Channel = Literal["inline", "review", "issue", "reaction", "check"]
CHANNELS: tuple[Channel, ...] = ("inline", "review", "issue")
# Reactions are not comments on GitHub, but several bots say "done" or "clean" only
# with one; a capture that records them feeds them through :func:`comment_from_reaction`.
REACTION_CHANNEL: Final = "reaction"
# Check runs on the head commit: how Bugbot (and Claude's managed review) say "finished"
# when their "no issues" comment is switched off. Fed through :func:`comment_from_check_run`.
CHECK_CHANNEL: Final = "check"
REACTION_EMOJI = {
    "+1": "👍", "-1": "👎", "laugh": "😄", "confused": "😕", "heart": "❤️",
    "hooray": "🎉", "rocket": "🚀", "eyes": "👀",
}


@dataclass(frozen=True)
class Comment:
    channel: Channel
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


def comment_from_github(channel: Channel, obj: Mapping[str, Any]) -> Comment:
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


def comment_from_reaction(obj: Mapping[str, Any]) -> Comment:
    """A reaction (GitHub's ``/reactions`` JSON) as a body-only comment on its own channel."""
    user = obj.get("user") or {}
    content = str(obj.get("content") or "")
    uid = user.get("id")
    return Comment(
        channel=REACTION_CHANNEL, id=int(obj.get("id") or 0), login=str(user.get("login") or ""),
        user_id=uid if isinstance(uid, int) and not isinstance(uid, bool) else None,
        user_type=str(user.get("type") or ""), body=REACTION_EMOJI.get(content, content),
        created_at=str(obj.get("created_at") or ""),
    )


def comment_from_check_run(obj: Mapping[str, Any]) -> Comment:
    """A check run (``/commits/{sha}/check-runs`` JSON) as a body-only comment.

    Its author is the app (``cursor`` → ``cursor[bot]``); the body reads
    ``<name>\n<status> <conclusion>\n<output title>\n<output summary>``, so signal rules
    can match on the check's name and state and on what its summary says.
    """
    app = obj.get("app") or {}
    output = obj.get("output") or {}
    slug = str(app.get("slug") or "") if isinstance(app, Mapping) else ""
    out = output if isinstance(output, Mapping) else {}
    body = "\n".join([
        str(obj.get("name") or ""),
        f"{obj.get('status') or ''} {obj.get('conclusion') or ''}".strip(),
        str(out.get("title") or ""),
        str(out.get("summary") or ""),
    ])
    cid = obj.get("id")
    return Comment(
        channel=CHECK_CHANNEL, id=cid if isinstance(cid, int) else 0,
        login=f"{slug}[bot]" if slug else "", user_id=None, user_type="Bot", body=body,
        created_at=str(obj.get("completed_at") or obj.get("started_at") or ""),
    )
