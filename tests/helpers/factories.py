"""Build GitHub-shaped comment objects for captures (the keys the recordings carry)."""

from __future__ import annotations

import itertools
from typing import Any

_ids = itertools.count(1000)
BOT = {"login": "redline-bot[bot]", "id": 41898282, "type": "Bot"}
HUMAN = {"login": "octocat", "id": 583231, "type": "User"}


def user(login: str, uid: int, type_: str = "Bot") -> dict[str, Any]:
    return {"login": login, "id": uid, "node_id": f"U_{uid}", "type": type_, "site_admin": False}


def inline(path: str, line: int | None, body: str, *, start_line: int | None = None,
           side: str = "RIGHT", who: dict[str, Any] | None = None, original_line: int | None = None,
           original_start_line: int | None = None, subject_type: str = "line",
           in_reply_to_id: int | None = None, comment_id: int | None = None) -> dict[str, Any]:
    c: dict[str, Any] = {
        "id": comment_id or next(_ids), "pull_request_review_id": 1, "path": path,
        "commit_id": "a" * 40, "original_commit_id": "a" * 40,
        "user": user(**_who(who)), "body": body, "created_at": "2026-11-30T10:00:00Z",
        "updated_at": "2026-11-30T10:00:00Z", "start_line": start_line,
        "original_start_line": original_start_line if original_start_line is not None else start_line,
        "start_side": side if start_line else None, "line": line,
        "original_line": original_line if original_line is not None else line, "side": side,
        "subject_type": subject_type,
    }
    if in_reply_to_id is not None:
        c["in_reply_to_id"] = in_reply_to_id
    return c


def review(body: str, state: str = "COMMENTED", who: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"id": next(_ids), "user": user(**_who(who)), "body": body, "state": state,
            "commit_id": "a" * 40, "submitted_at": "2026-11-30T10:00:01Z"}


def issue_comment(body: str, who: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"id": next(_ids), "user": user(**_who(who)), "body": body,
            "created_at": "2026-11-30T10:00:02Z", "updated_at": "2026-11-30T10:00:02Z"}


def _who(who: dict[str, Any] | None) -> dict[str, Any]:
    w = who or BOT
    return {"login": w["login"], "uid": w["id"], "type_": w["type"]}


def capture(review_comments: list[dict[str, Any]] | None = None,
            reviews: list[dict[str, Any]] | None = None,
            issue_comments: list[dict[str, Any]] | None = None,
            **manifest: Any) -> dict[str, Any]:
    return {
        "repo": "acme/canary", "pull": {"number": 7, "head": {"sha": "a" * 40}},
        "review_comments": review_comments or [], "reviews": reviews or [],
        "issue_comments": issue_comments or [], "manifest": manifest,
    }


# Each vendor's bot account as GitHub shows it (login, id), by profile name.
BOTS = {
    "copilot": user("copilot-pull-request-reviewer[bot]", 175728472),
    "coderabbit": user("coderabbitai[bot]", 136622811),
    "codex": user("chatgpt-codex-connector[bot]", 199175422),
    "gemini": user("gemini-code-assist[bot]", 176961590),
    "claude": user("claude[bot]", 209825114),
    "bugbot": user("cursor[bot]", 206951365),
    "greptile": user("greptile-apps[bot]", 165735046),
    "sourcery": user("sourcery-ai[bot]", 58596630),
    "qodo": user("qodo-merge-pro[bot]", 151058649),
    "cubic": user("cubic-dev-ai[bot]", 191113872),
}
