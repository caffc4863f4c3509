"""The operations a canary cycle needs from a forge, as one protocol.

The cycle (and its tests) depend on this, not on the HTTP client: everything GitHub-shaped
that the cycle does is one of these calls, so a reader sees the whole seam on one screen.
The protocol owns the types it speaks in (a base commit, a channel's poll state), so it
does not import its implementation: ``github/client.py`` (``GitHubClient``) implements it,
with retries and pacing behind it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any, Protocol

from redline_canary.github.retry import RetryPolicy

# The three channels a reviewer speaks in, and where each is read.
CHANNEL_PATHS = {
    "review_comments": "pulls/{n}/comments",
    "reviews": "pulls/{n}/reviews",
    "issue_comments": "issues/{n}/comments",
}


@dataclass(frozen=True)
class BaseCommit:
    branch: str
    sha: str
    tree_sha: str


@dataclass
class ChannelState:
    etag: str | None = None
    items: list[dict[str, Any]] | None = None
    rate_limit_wait: float = 0.0  # seconds GitHub's rate limit made reads of this channel wait


class Forge(Protocol):
    policy: RetryPolicy
    counts: Counter[str]

    def preflight(self, repo: str, base: str | None) -> BaseCommit: ...

    def ensure_label(self, repo: str, name: str, color: str = ..., description: str = ...) -> None: ...

    def push_commit(self, repo: str, base: BaseCommit, files: dict[str, str], branch: str, message: str) -> str: ...

    def open_pull(self, repo: str, branch: str, base: str, title: str, body: str) -> int: ...

    def add_label(self, repo: str, number: int, label: str) -> None: ...

    def request_reviewer(self, repo: str, number: int, login: str, accept: frozenset[str] = ...) -> bool: ...

    def comment(self, repo: str, number: int, body: str) -> int | None: ...

    def poll(self, repo: str, number: int, states: dict[str, ChannelState], reactions: bool = ...,
             head_sha: str | None = ..., trigger_comment: int | None = ...) -> bool: ...

    def close_pull(self, repo: str, number: int, *, policy: RetryPolicy | None = ..., pace: bool = ...) -> None: ...

    def delete_branch(self, repo: str, branch: str, *, policy: RetryPolicy | None = ..., pace: bool = ...) -> bool: ...

    def pull_is_open(self, repo: str, number: int, *, policy: RetryPolicy | None = ...) -> bool: ...

