"""Simulated PR reviewers that live inside the sandbox and answer over time.

A canary is only as good as its test bed's reviewers: they must wake the way real ones do
(PR opened, review requested from their login, a trigger phrase in a comment), answer after
a delay on their own thread, use their real identities (Copilot's two logins with one id),
and sometimes say nothing at all. Posting goes straight into the sandbox state, not over
HTTP, so reviewer traffic never pollutes the product's request counts.

This module holds what every reviewer is built from: who it is (``Identity`` and the known bots),
when it wakes (``Reviewer``) and how it answers (``ReviewContext``). The stock reviewers are in
``reviewer_kinds``, and the hub that wakes them and runs their answers is in ``reviewer_hub``.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from redline_canary.sandbox.model import Issue, Repo
from redline_canary.sandbox.state import Event, EventKind

if TYPE_CHECKING:
    from redline_canary.sandbox.reviewer_hub import ReviewerHub

WAKE_ALL: tuple[EventKind, ...] = ("opened", "review_requested", "comment")


@dataclass(frozen=True)
class Identity:
    """Who a reviewer is on GitHub. ``comment_login`` differs only for Copilot-like bots."""

    login: str
    user_id: int
    comment_login: str | None = None
    type: str = "Bot"
    node_id: str | None = None
    html_url: str | None = None
    avatar_url: str | None = None


COPILOT = Identity(
    login="copilot-pull-request-reviewer[bot]",
    user_id=175728472,
    comment_login="Copilot",
    node_id="BOT_kgDOCnlnWA",
    html_url="https://github.com/apps/copilot-pull-request-reviewer",
    avatar_url="https://avatars.githubusercontent.com/in/946600?v=4",
)
REDLINE_BOT = Identity(login="redline-reviewer[bot]", user_id=190_000_001)
BANDIT_BOT = Identity(login="bandit-reviewer[bot]", user_id=190_000_002)

class ReviewContext:
    """One PR as a reviewer sees it, plus the ways it can answer."""

    def __init__(
        self,
        hub: ReviewerHub,
        reviewer: Reviewer,
        repo: Repo,
        issue: Issue,
        event: Event,
    ) -> None:
        self.hub = hub
        self._state = hub.state
        self.reviewer = reviewer
        self.repo = repo
        self.issue = issue
        self.event = event
        self.review_user, self.comment_user = hub.users_for(reviewer.identity)
        self.posted_inline: list[int] = []
        self.posted_issue_comments: list[int] = []

    @property
    def number(self) -> int:
        return self.issue.number

    @property
    def head_sha(self) -> str:
        return self.issue.pr.head_sha

    def files(self, *, changed_only: bool = True) -> dict[str, bytes]:
        """Head-tree files (the PR's changed ones by default), as a reviewer would read them."""
        with self._state.lock:
            _, head_tree = self._state.pull_trees(self.issue)
            everything = self._state.store.files(head_tree)
            if not changed_only:
                return everything
            changed = self._state.diff(self.issue)
            return {p: b for p, b in everything.items() if p in changed}

    def commentable(self, path: str) -> frozenset[int]:
        with self._state.lock:
            fd = self._state.diff(self.issue).get(path)
            return fd.commentable if fd else frozenset()

    def sleep(self, seconds: float) -> bool:
        """Wait; False when the sandbox is shutting down and the reviewer must stop."""
        return not self.hub.stopping.wait(max(seconds, 0.0))

    def post_review(
        self,
        body: str = "",
        state: str = "COMMENTED",
        comments: Sequence[Mapping[str, Any]] = (),
    ) -> int:
        events = {"APPROVED": "APPROVE", "CHANGES_REQUESTED": "REQUEST_CHANGES"}
        payload: dict[str, Any] = {"body": body, "comments": []}
        if state != "PENDING":
            payload["event"] = events.get(state, "COMMENT")
        with self._state.lock:
            review = self._state.create_review(
                self.repo,
                self.number,
                self.review_user,
                payload,
                comment_user=self.comment_user,
                validate=False,
            )
            for c in comments:
                spec = dict(c)
                reply_to = spec.pop("reply_to", None)
                if isinstance(reply_to, int) and 0 <= reply_to < len(self.posted_inline):
                    spec["in_reply_to_id"] = self.posted_inline[reply_to]
                made = self._state.add_review_comment(
                    self.repo,
                    self.issue,
                    self.comment_user,
                    spec,
                    review_id=review.id,
                    commit_id=self.head_sha,
                )
                self.posted_inline.append(made.id)
            self.hub.note(self, "review", review.id, len(comments))
            return review.id

    def post_issue_comment(self, body: str) -> int:
        comment = self._state.add_issue_comment(self.repo, self.number, self.review_user, body)
        self.posted_issue_comments.append(comment.id)
        self.hub.note(self, "issue_comment", comment.id)
        return comment.id

    def edit_issue_comment(self, comment_id: int, body: str) -> None:
        with self._state.lock:
            _, comment = self._state.find_issue_comment(self.repo, comment_id)
            self._state.edit_issue_comment(comment, body)
        self.hub.note(self, "edit", comment_id)

    def post_check_run(self, name: str, summary: str, *, status: str = "completed",
                       conclusion: str | None = "neutral", title: str = "") -> None:
        """A check run on the PR's head commit, as the reviewer's app (Bugbot's "finished")."""
        ident = self.reviewer.identity
        with self._state.lock:
            run_id = 4_000_000 + len(self.repo.check_runs) + 1
            self.repo.check_runs.append({
                "id": run_id, "name": name, "head_sha": self.head_sha, "status": status,
                "conclusion": conclusion if status == "completed" else None,
                "started_at": _iso(self._state.clock()),
                "completed_at": _iso(self._state.clock()) if status == "completed" else None,
                "output": {"title": title or name, "summary": summary, "text": None,
                           "annotations_count": 0},
                "app": {"id": ident.user_id, "slug": ident.login.removesuffix("[bot]"),
                        "name": ident.login.removesuffix("[bot]")},
                "pull_requests": [{"number": self.number}],
            })
        self.hub.note(self, "check_run", run_id)

    def react_to_pull(self, content: str) -> None:
        """A reaction on the PR itself: how Codex says "reviewed, nothing to report"."""
        with self._state.lock:
            self._state.add_reaction(self.repo, self.issue.reactions, self.review_user, content)
        self.hub.note(self, "reaction", self.issue.number)

    def react(self, comment_id: int, content: str) -> None:
        with self._state.lock:
            _, comment = self._state.find_issue_comment(self.repo, comment_id)
            self._state.add_reaction(self.repo, comment.reactions, self.review_user, content)


class Reviewer:
    """Base class: when to wake, who to be, how long to think. Subclasses implement ``act``.

    ``once_per_head`` makes a reviewer answer a given head commit once, however many
    triggers arrive (opening the PR and then requesting the review must not double-post).
    ``ack_reaction`` (e.g. "eyes") is the side channel many bots use to say "seen": it goes
    on the trigger comment, or on the PR when the wake-up was an open or a review request.
    """

    kind = "base"

    def __init__(
        self,
        *,
        identity: Identity = REDLINE_BOT,
        latency: float = 0.05,
        wake_on: Sequence[EventKind] = WAKE_ALL,
        trigger_phrases: Sequence[str] = (),
        ack_reaction: str | None = None,
        review_drafts: bool = False,
        once_per_head: bool = True,
    ) -> None:
        self.identity = identity
        self.latency = latency
        self.wake_on = tuple(wake_on)
        self.trigger_phrases = tuple(trigger_phrases)
        self.ack_reaction = ack_reaction
        self.review_drafts = review_drafts
        self.once_per_head = once_per_head
        self.wakes: list[Event] = []

    def wants(self, event: Event, issue: Issue) -> bool:
        if event.kind not in self.wake_on or issue.pull is None:
            return False
        if event.kind == "opened":
            return self.review_drafts or not issue.pull.draft
        if event.kind == "review_requested":
            mine = {self.identity.login.lower()}
            return any(x.lower() in mine for x in event.requested)
        logins = {self.identity.login.lower(), (self.identity.comment_login or "").lower()}
        if event.actor.lower() in logins:
            return False
        text = event.body.lower()
        return any(p.lower() in text for p in self.trigger_phrases)

    def act(self, ctx: ReviewContext) -> None:
        raise NotImplementedError


__all__ = [
    "BANDIT_BOT",
    "COPILOT",
    "REDLINE_BOT",
    "Identity",
    "ReviewContext",
    "Reviewer",
]


def _iso(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))
