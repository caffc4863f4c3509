"""A capture: the raw GitHub JSON of one reviewed PR, as ``run`` saves and ``score`` reads.

Shape: ``{"repo": "o/r", "pull": {...}, "review_comments": [...], "reviews": [...],
"issue_comments": [...], "reactions": [...], "check_runs": [...], "manifest": {...}}``
(``reactions`` on the PR itself and ``check_runs`` on its head commit are optional).
Pure: validation errors name the key.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from redline_canary.comments import Comment, comment_from_github
from redline_canary.profiles.base import comment_from_check_run, comment_from_reaction

CHANNEL_KEYS = {"review_comments": "inline", "reviews": "review", "issue_comments": "issue"}


class CaptureError(ValueError):
    """Bad capture content; the message starts with the offending key path."""


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
