"""A capture: the raw GitHub JSON of one reviewed PR, as ``run`` saves and ``score`` reads.

Shape: ``{"repo": "o/r", "pull": {...}, "review_comments": [...], "reviews": [...],
"issue_comments": [...], "reactions": [...], "check_runs": [...], "manifest": {...}}``
(``reactions`` on the PR itself and ``check_runs`` on its head commit are optional).
Pure: validation errors name the key.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from redline_canary.review.comments import (
    Channel,
    Comment,
    comment_from_check_run,
    comment_from_github,
    comment_from_reaction,
)

CHANNEL_KEYS: dict[str, Channel] = {"review_comments": "inline", "reviews": "review", "issue_comments": "issue"}


class CaptureError(ValueError):
    """Bad capture content; the message starts with the offending key path."""


# Field -> accepted JSON types (None = null allowed). A capture is read back from a file
# anyone may have edited; GitHub itself always sends these types.
_INT = (int,)
_STR = (str,)
_COMMENT_FIELDS: dict[str, tuple[type, ...]] = {
    "id": _INT, "body": _STR, "path": _STR, "line": _INT, "start_line": _INT,
    "original_line": _INT, "original_start_line": _INT, "side": _STR, "start_side": _STR,
    "subject_type": _STR, "in_reply_to_id": _INT, "pull_request_review_id": _INT,
    "commit_id": _STR, "state": _STR, "html_url": _STR, "created_at": _STR,
    "submitted_at": _STR, "user": (Mapping,),
}
_USER_FIELDS: dict[str, tuple[type, ...]] = {"login": _STR, "id": _INT, "type": _STR}
_REACTION_FIELDS: dict[str, tuple[type, ...]] = {"id": _INT, "content": _STR, "created_at": _STR,
                                                 "user": (Mapping,)}
_CHECK_FIELDS: dict[str, tuple[type, ...]] = {
    "id": _INT, "name": _STR, "status": _STR, "conclusion": _STR, "started_at": _STR,
    "completed_at": _STR, "app": (Mapping,), "output": (Mapping,),
}
_CHECK_APP_FIELDS: dict[str, tuple[type, ...]] = {"slug": _STR}
_CHECK_OUTPUT_FIELDS: dict[str, tuple[type, ...]] = {"title": _STR, "summary": _STR, "text": _STR}
_MANIFEST_FIELDS: dict[str, tuple[type, ...]] = {
    "stack": _STR, "kind": _STR, "mode": _STR, "prefix": _STR, "fingerprint": _STR,
    "reviewer": _STR, "run_id": _STR, "attempt": _INT, "variant": _STR,
}
_PULL_FIELDS: dict[str, tuple[type, ...]] = {"number": _INT, "head": (Mapping,), "body": _STR,
                                             "html_url": _STR}
_TYPE_NAMES = {int: "an integer", str: "a string", Mapping: "a JSON object"}


def _check_fields(obj: Mapping[str, Any], fields: Mapping[str, tuple[type, ...]], where: str) -> None:
    for key, types in fields.items():
        value = obj.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, types):
            raise CaptureError(f"{where}.{key}: expected {_TYPE_NAMES[types[0]]} or null, "
                               f"got {type(value).__name__}")


def _check_object(obj: Any, where: str, fields: Mapping[str, tuple[type, ...]]) -> Mapping[str, Any]:
    if not isinstance(obj, Mapping):
        raise CaptureError(f"{where}: expected a JSON object, got {type(obj).__name__}")
    _check_fields(obj, fields, where)
    return obj


def check_capture(doc: Any) -> None:
    """Strict shape check of a capture read from a file, before anything scores it.

    Why strict: the scoring code is lenient on purpose (a ``line`` that is not an integer
    is treated as absent), which on an edited capture silently turns a located finding
    into an unlocated one and changes the numbers. A file with a wrong type is refused,
    naming the key path (``review_comments[3].line``).
    """
    if not isinstance(doc, Mapping):
        raise CaptureError("top level: expected a JSON object")
    if doc.get("repo") is not None and not isinstance(doc.get("repo"), str):
        raise CaptureError("repo: expected a string")
    if "pull" in doc and doc["pull"] is not None:
        _check_object(doc["pull"], "pull", _PULL_FIELDS)
    if "manifest" in doc and doc["manifest"] is not None:
        _check_object(doc["manifest"], "manifest", _MANIFEST_FIELDS)
    for key in CHANNEL_KEYS:
        if key not in doc:
            raise CaptureError(f"{key}: missing")
        items = doc[key]
        if not isinstance(items, list):
            raise CaptureError(f"{key}: expected a list, got {type(items).__name__}")
        for i, obj in enumerate(items):
            comment = _check_object(obj, f"{key}[{i}]", _COMMENT_FIELDS)
            if "id" not in comment or comment["id"] is None:
                raise CaptureError(f"{key}[{i}].id: missing")
            if comment.get("user") is not None:
                _check_fields(comment["user"], _USER_FIELDS, f"{key}[{i}].user")
    for key, fields in (("reactions", _REACTION_FIELDS), ("check_runs", _CHECK_FIELDS)):
        items = doc.get(key, [])
        if not isinstance(items, list):
            raise CaptureError(f"{key}: expected a list, got {type(items).__name__}")
        for i, obj in enumerate(items):
            item = _check_object(obj, f"{key}[{i}]", fields)
            if key == "reactions" and item.get("user") is not None:
                _check_fields(item["user"], _USER_FIELDS, f"{key}[{i}].user")
            if key == "check_runs":
                for sub, sub_fields in (("app", _CHECK_APP_FIELDS), ("output", _CHECK_OUTPUT_FIELDS)):
                    if item.get(sub) is not None:
                        _check_fields(item[sub], sub_fields, f"{key}[{i}].{sub}")


def comments_from_capture(doc: Any) -> list[Comment]:
    if not isinstance(doc, Mapping):
        raise CaptureError("top level: expected a JSON object")
    comments: list[Comment] = []
    for key, channel in CHANNEL_KEYS.items():
        if key not in doc:
            raise CaptureError(f"{key}: missing")
        items = doc[key]
        if not isinstance(items, list):
            raise CaptureError(f"{key}: expected a list")
        for i, obj in enumerate(items):
            try:
                comments.append(comment_from_github(channel, obj))
            except KeyError as exc:
                raise CaptureError(f"{key}[{i}].{exc.args[0]}: missing") from None
            except (TypeError, ValueError) as exc:
                raise CaptureError(f"{key}[{i}]: {exc}") from None
    reactions = doc.get("reactions", [])
    if not isinstance(reactions, list):
        raise CaptureError("reactions: expected a list")
    for i, obj in enumerate(reactions):
        if not isinstance(obj, Mapping):
            raise CaptureError(f"reactions[{i}]: expected a JSON object")
        comments.append(comment_from_reaction(obj))
    checks = doc.get("check_runs", [])
    if not isinstance(checks, list):
        raise CaptureError("check_runs: expected a list")
    for i, obj in enumerate(checks):
        if not isinstance(obj, Mapping):
            raise CaptureError(f"check_runs[{i}]: expected a JSON object")
        comments.append(comment_from_check_run(obj))
    return comments


def capture_meta(doc: Mapping[str, Any]) -> tuple[str | None, int | None, dict[str, Any]]:
    """(repo, PR number, manifest) where present."""
    repo = doc.get("repo") if isinstance(doc.get("repo"), str) else None
    pull = doc.get("pull")
    number = pull.get("number") if isinstance(pull, Mapping) else None
    manifest = doc.get("manifest")
    return (
        repo,
        number if isinstance(number, int) else None,
        dict(manifest) if isinstance(manifest, Mapping) else {},
    )
