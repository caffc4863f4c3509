"""The reviewer hub: it wires the reviewers attached to a repository to the sandbox's events, runs
each answer on its own thread, keeps the bots' users (and Copilot's second, unregistered
login) and the ``Activity`` log that benchmarks time verdicts by. It is separate from the
reviewers because it owns threads, locks and shutdown, which no reviewer has to know about.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from redline_canary.sandbox.model import ApiError, Issue, Repo, User
from redline_canary.sandbox.reviewers import Identity, ReviewContext, Reviewer
from redline_canary.sandbox.state import Event, State

log = logging.getLogger("redline_canary.sandbox.reviewers")  # the reviewers' logger, as before the hub had a module


@dataclass(frozen=True)
class Activity:
    """One thing a simulated reviewer did, stamped with ``time.monotonic()``.

    Benchmarks need the moment of a reviewer's last word to measure verdict latency;
    GitHub's second-resolution ``created_at`` is too coarse for sub-second test runs.
    """

    repo: str
    number: int
    login: str
    kind: str  # review | issue_comment | edit
    object_id: int
    inline: int
    at: float


class ReviewerHub:
    """Wires reviewers to sandbox events and runs each answer on its own thread."""

    def __init__(self, state: State) -> None:
        self.state = state
        self.attached: dict[str, list[Reviewer]] = {}
        self.stopping = threading.Event()
        self._threads: list[threading.Thread] = []
        self._done: set[tuple[int, str, int, str]] = set()
        self._active = 0
        self._cond = threading.Condition()
        self._aliases: dict[str, User] = {}
        self.activity: list[Activity] = []
        state.listeners.append(self.on_event)

    def attach(self, repo: str, reviewer: Reviewer) -> Reviewer:
        self.state.get_repo_by_name(repo)
        self.users_for(reviewer.identity)
        self.attached.setdefault(repo.lower(), []).append(reviewer)
        return reviewer

    def note(self, ctx: ReviewContext, kind: str, object_id: int, inline: int = 0) -> None:
        rec = Activity(
            ctx.repo.full_name,
            ctx.number,
            ctx.review_user.login,
            kind,
            object_id,
            inline,
            time.monotonic(),
        )
        with self._cond:
            self.activity.append(rec)

    def activity_snapshot(self) -> list[Activity]:
        with self._cond:
            return list(self.activity)

    def users_for(self, ident: Identity) -> tuple[User, User]:
        """(review author, inline-comment author): two logins, one id for Copilot."""
        with self.state.lock:
            review = self.state.find_user(ident.login) or self.state.ensure_user(
                ident.login,
                type=ident.type,
                id=ident.user_id,
                node=ident.node_id,
                html_url=ident.html_url,
                avatar_url=ident.avatar_url,
            )
            if not ident.comment_login:
                return review, review
            key = ident.comment_login.lower()
            comment = self._aliases.get(key)
            if comment is None:
                # Kept out of State.users: the bare login must stay unrequestable (§8).
                comment = User(
                    login=ident.comment_login,
                    id=review.id,
                    node_id=review.node_id,
                    type=review.type,
                    html_url=review.html_url,
                    avatar_url=review.avatar_url,
                )
                self._aliases[key] = comment
            return review, comment

    def user_from_json(self, obj: Mapping[str, Any]) -> User | None:
        """A captured author. A second login for a known id (Copilot's ``Copilot``) becomes an
        unregistered alias, so replaying a capture never makes the bare name requestable."""
        login = obj.get("login")
        if not isinstance(login, str):
            return None
        uid = obj.get("id") if isinstance(obj.get("id"), int) else None
        existing = self.state.find_user(login) or self._aliases.get(login.lower())
        if existing is not None:
            return existing
        same_id = next((u for u in self.state.users.values() if uid is not None and u.id == uid), None)
        if same_id is not None:
            alias = User(
                login=login,
                id=same_id.id,
                node_id=same_id.node_id,
                type=str(obj.get("type") or same_id.type),
                html_url=obj.get("html_url") if isinstance(obj.get("html_url"), str) else same_id.html_url,
                avatar_url=same_id.avatar_url,
            )
            self._aliases[login.lower()] = alias
            return alias
        return self.state.ensure_user(
            login,
            type=str(obj.get("type") or "User"),
            id=uid,
            node=obj.get("node_id") if isinstance(obj.get("node_id"), str) else None,
            html_url=obj.get("html_url") if isinstance(obj.get("html_url"), str) else None,
            avatar_url=obj.get("avatar_url") if isinstance(obj.get("avatar_url"), str) else None,
        )

    def on_event(self, event: Event) -> None:
        if self.stopping.is_set():
            return
        reviewers = self.attached.get(event.repo.lower(), [])
        if not reviewers:
            return
        repo = self.state.get_repo_by_name(event.repo)
        issue = repo.issues.get(event.number)
        if issue is None or issue.pull is None:
            return
        for reviewer in reviewers:
            if not reviewer.wants(event, issue):
                continue
            key = (id(reviewer), repo.full_name, issue.number, issue.pull.head_sha)
            if reviewer.ack_reaction:
                self._ack(repo, issue, event, reviewer.ack_reaction, reviewer)
            if reviewer.once_per_head and key in self._done:
                continue
            self._done.add(key)
            reviewer.wakes.append(event)
            ctx = ReviewContext(self, reviewer, repo, issue, event)
            with self._cond:
                self._active += 1
            t = threading.Thread(
                target=self._run,
                args=(reviewer, ctx),
                name=f"reviewer-{reviewer.kind}",
                daemon=True,
            )
            self._threads = [x for x in self._threads if x.is_alive()]
            self._threads.append(t)
            t.start()

    def _ack(self, repo: Repo, issue: Issue, event: Event, content: str, reviewer: Reviewer) -> None:
        """The side-channel "seen it" (👀) on the trigger comment, or on the PR itself."""
        user, _ = self.users_for(reviewer.identity)
        target = issue.reactions
        if event.kind == "comment" and event.comment_id is not None:
            try:
                target = self.state.find_issue_comment(repo, event.comment_id)[1].reactions
            except ApiError:
                return
        self.state.add_reaction(repo, target, user, content)

    def _run(self, reviewer: Reviewer, ctx: ReviewContext) -> None:
        try:
            if ctx.sleep(reviewer.latency):
                reviewer.act(ctx)
        except Exception:
            log.exception("simulated reviewer %s failed", reviewer.kind)
        finally:
            with self._cond:
                self._active -= 1
                self._cond.notify_all()

    def wait_idle(self, timeout: float) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: self._active == 0, timeout=timeout)

    def close(self, timeout: float = 5.0) -> None:
        self.stopping.set()
        for t in list(self._threads):
            t.join(timeout=timeout)

