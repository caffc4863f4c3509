"""The sandbox's GitHub world: users, repositories, issues/PRs, comments, reviews.

Plain mutable records guarded by one lock in :class:`~.state.State`. Times are epoch
floats and are rendered to GitHub's second-resolution ISO strings only at the edge, so
ordering never depends on string formatting.
"""

from __future__ import annotations

import base64
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

DOCS = "https://docs.github.com/rest"


class ApiError(Exception):
    """A GitHub error response: status, ``message``, optional ``errors[]``, doc link.

    ``status`` goes into the body as a string, as GitHub has sent it since late 2024
    (docs/github.md §1.7).
    """

    def __init__(
        self,
        status: int,
        message: str,
        *,
        errors: list[Any] | None = None,
        doc: str | None = None,
        headers: dict[str, str] | None = None,
        with_status: bool = True,
    ) -> None:
        super().__init__(f"{status} {message}")
        self.status = status
        self.message = message
        self.errors = errors
        self.doc = doc
        self.headers = headers or {}
        self.with_status = with_status

    def body(self, default_doc: str) -> dict[str, Any]:
        out: dict[str, Any] = {"message": self.message}
        if self.errors is not None:
            out["errors"] = self.errors
        out["documentation_url"] = self.doc or default_doc
        if self.with_status:
            out["status"] = str(self.status)
        return out


def not_found(doc: str | None = None) -> ApiError:
    return ApiError(404, "Not Found", doc=doc)


def validation_failed(errors: list[Any], doc: str | None = None) -> ApiError:
    return ApiError(422, "Validation Failed", errors=errors, doc=doc)


def iso(ts: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))


def http_date(ts: float) -> str:
    return time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(ts))


def parse_iso(value: str) -> float | None:
    """GitHub's ``since`` values; ``None`` when unparseable (GitHub ignores those too)."""
    text = value.strip().replace("Z", "+00:00")
    try:
        dt = datetime.fromisoformat(text)
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.timestamp()


def node_id(prefix: str, ident: int) -> str:
    raw = base64.urlsafe_b64encode(ident.to_bytes(8, "big")).decode().rstrip("=")
    return f"{prefix}_kwDO{raw}"


@dataclass
class User:
    login: str
    id: int
    node_id: str
    type: str = "User"  # User | Bot | Organization
    html_url: str | None = None  # None: derived from the sandbox's html base
    avatar_url: str | None = None
    name: str | None = None
    email: str | None = None
    site_admin: bool = False
    created_at: float = field(default_factory=time.time)


@dataclass
class Team:
    id: int
    node_id: str
    org: str
    slug: str
    name: str


@dataclass
class Label:
    id: int
    node_id: str
    name: str
    color: str
    description: str | None
    default: bool = False


@dataclass
class Reaction:
    id: int
    node_id: str
    user: User
    content: str
    created_at: float


REACTION_CONTENTS = ("+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes")


@dataclass
class IssueComment:
    id: int
    node_id: str
    user: User
    body: str
    created_at: float
    updated_at: float
    reactions: list[Reaction] = field(default_factory=list)


@dataclass
class Review:
    id: int
    node_id: str
    user: User
    body: str
    state: str  # APPROVED | CHANGES_REQUESTED | COMMENTED | DISMISSED | PENDING
    commit_id: str | None
    submitted_at: float | None  # None while PENDING: the key is then absent


@dataclass
class ReviewComment:
    id: int
    node_id: str
    review_id: int | None
    user: User
    body: str
    path: str
    commit_id: str
    original_commit_id: str
    diff_hunk: str
    line: int | None
    original_line: int | None
    start_line: int | None
    original_start_line: int | None
    side: str | None
    start_side: str | None
    position: int | None
    original_position: int | None
    subject_type: str
    in_reply_to_id: int | None
    created_at: float
    updated_at: float
    reactions: list[Reaction] = field(default_factory=list)


@dataclass
class PullData:
    id: int
    node_id: str
    head_repo: Repo
    head_ref: str
    head_sha: str
    base_ref: str
    base_sha: str
    draft: bool = False
    maintainer_can_modify: bool = False
    requested_reviewers: list[User] = field(default_factory=list)
    requested_teams: list[Team] = field(default_factory=list)
    reviews: list[Review] = field(default_factory=list)
    review_comments: list[ReviewComment] = field(default_factory=list)
    merged: bool = False


@dataclass
class Issue:
    """An issue; with ``pull`` set it is a pull request ("every pull request is an issue")."""

    id: int
    node_id: str
    number: int
    title: str
    body: str | None
    user: User
    state: str
    created_at: float
    updated_at: float
    closed_at: float | None = None
    labels: list[Label] = field(default_factory=list)
    assignees: list[User] = field(default_factory=list)
    comments: list[IssueComment] = field(default_factory=list)
    reactions: list[Reaction] = field(default_factory=list)
    locked: bool = False
    state_reason: str | None = None
    closed_by: User | None = None
    pull: PullData | None = None

    @property
    def pr(self) -> PullData:
        """The pull-request half; only called where the route already proved it is one."""
        if self.pull is None:
            raise LookupError(f"issue #{self.number} is not a pull request")
        return self.pull


@dataclass
class Repo:
    id: int
    node_id: str
    owner: User
    name: str
    default_branch: str
    private: bool
    writable: bool
    created_at: float
    updated_at: float
    pushed_at: float
    description: str | None = None
    fork_of: Repo | None = None
    has_issues: bool = True  # off: every issue route answers 410 (pull requests still work)
    topics: list[str] = field(default_factory=list)
    refs: dict[str, str] = field(default_factory=dict)  # "refs/heads/main" -> sha
    ref_nodes: dict[str, str] = field(default_factory=dict)
    ref_times: dict[str, float] = field(default_factory=dict)
    labels: dict[str, Label] = field(default_factory=dict)  # lower-cased name -> label
    issues: dict[int, Issue] = field(default_factory=dict)
    next_number: int = 1
    check_runs: list[dict[str, Any]] = field(default_factory=list)  # GitHub JSON, any head sha
    copilot_review: bool = False  # a repository ruleset asks Copilot to review every PR

    @property
    def full_name(self) -> str:
        return f"{self.owner.login}/{self.name}"

    def branch_sha(self, branch: str) -> str | None:
        return self.refs.get(f"refs/heads/{branch}")

    def pulls(self) -> list[Issue]:
        return [i for i in self.issues.values() if i.pull is not None]
