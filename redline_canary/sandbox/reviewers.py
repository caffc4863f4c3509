"""Simulated PR reviewers that live inside the sandbox and answer over time.

A canary is only as good as its test bed's reviewers: they must wake the way real ones do
(PR opened, review requested from their login, a trigger phrase in a comment), answer after
a delay on their own thread, use their real identities (Copilot's two logins with one id),
and sometimes say nothing at all. Posting goes straight into the sandbox state, not over
HTTP, so reviewer traffic never pollutes the product's request counts.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from redline_canary.sandbox.model import ApiError, Issue, Repo, User
from redline_canary.sandbox.state import Event, EventKind, State

log = logging.getLogger("redline_canary.sandbox.reviewers")

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


class SilentReviewer(Reviewer):
    """Wakes and says nothing: the "entitlement lapsed" case a canary must call silent."""

    kind = "silent"

    def act(self, ctx: ReviewContext) -> None:
        return None


@dataclass
class Batch:
    """What a scripted reviewer says at one moment.

    ``after`` is seconds after the previous batch (the first: after the reviewer woke).
    Inline comments travel in the batch's first review (an empty COMMENTED review when the
    batch names none), as every inline comment on GitHub belongs to a review. An inline
    dict may carry ``reply_to=k``: the k-th inline comment this reviewer posted on the PR.
    ``edit_issue_comments`` rewrites earlier issue comments (by index) in place.
    """

    after: float = 0.0
    inline: list[dict[str, Any]] = field(default_factory=list)
    reviews: list[dict[str, Any]] = field(default_factory=list)
    issue_comments: list[str] = field(default_factory=list)
    edit_issue_comments: dict[int, str] = field(default_factory=dict)


class ScriptedReviewer(Reviewer):
    """Says exactly what it is told, batch by batch: streams, silence, errors, done signals."""

    kind = "scripted"

    def __init__(self, batches: Sequence[Batch] = (), **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.batches = list(batches)

    def act(self, ctx: ReviewContext) -> None:
        for batch in self.batches:
            if not ctx.sleep(batch.after):
                return
            reviews = list(batch.reviews)
            if batch.inline and not reviews:
                reviews = [{"body": "", "state": "COMMENTED"}]
            for i, rv in enumerate(reviews):
                ctx.post_review(
                    str(rv.get("body", "")),
                    str(rv.get("state", "COMMENTED")),
                    batch.inline if i == 0 else (),
                )
            for text in batch.issue_comments:
                ctx.post_issue_comment(text)
            for index, text in batch.edit_issue_comments.items():
                if 0 <= index < len(ctx.posted_issue_comments):
                    ctx.edit_issue_comment(ctx.posted_issue_comments[index], text)


SEVERITY = {"HIGH": "BLOCKER", "MEDIUM": "MAJOR", "LOW": "MINOR"}


class BanditReviewer(Reviewer):
    """Runs the real bandit on the PR head's Python files and posts one redline review.

    Findings on lines the diff lets a review target become inline comments; the rest are
    cited as ``path:line`` in the review body, as real bots do when GitHub refuses a line.
    """

    kind = "bandit"

    def __init__(
        self,
        *,
        identity: Identity = BANDIT_BOT,
        command: Sequence[str] | None = None,
        timeout: float = 60.0,
        **kwargs: Any,
    ) -> None:
        super().__init__(identity=identity, **kwargs)
        self.command = list(command) if command else [sys.executable, "-m", "bandit"]
        self.timeout = timeout

    def act(self, ctx: ReviewContext) -> None:
        files = {p: b for p, b in ctx.files().items() if p.endswith(".py")}
        try:
            findings = self.scan(files)
        except (OSError, ValueError, subprocess.SubprocessError) as exc:
            ctx.post_issue_comment(f"Bandit review failed: {exc}")
            return
        inline: list[dict[str, Any]] = []
        cited: list[str] = []
        for f in findings:
            body = f"[{f['severity']}] {f['test_id']}: {f['text']} (bandit {f['test_id']})"
            if f["line"] in ctx.commentable(f["path"]):
                spec: dict[str, Any] = {
                    "path": f["path"],
                    "line": f["line"],
                    "side": "RIGHT",
                    "body": body,
                }
                if f["start_line"] is not None:
                    spec["start_line"] = f["start_line"]
                    spec["start_side"] = "RIGHT"
                inline.append(spec)
            else:
                cited.append(f"- {f['path']}:{f['line']} {body}")
        if not findings:
            ctx.post_review("No issues found.", "COMMENTED")
            return
        nfiles = len({f["path"] for f in findings})
        summary = f"Bandit found {len(findings)} issue(s) in {nfiles} file(s)."
        if cited:
            summary += "\n\nOutside the diff:\n" + "\n".join(cited)
        ctx.post_review(summary, "COMMENTED", inline)

    def scan(self, files: Mapping[str, bytes]) -> list[dict[str, Any]]:
        """Bandit's findings as (path, line, start_line, severity, test_id, text), sorted."""
        if not files:
            return []
        with tempfile.TemporaryDirectory(prefix="sandbox-bandit-") as tmp:
            root = Path(tmp)
            for rel, data in files.items():
                target = root / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
            proc = subprocess.run(
                [*self.command, "-f", "json", "-q", "-r", str(root)],
                capture_output=True,
                timeout=self.timeout,
                check=False,
            )
            text = proc.stdout.decode("utf-8", "replace").strip()
            if not text.startswith("{"):
                err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
                raise ValueError(err[-1] if err else f"bandit exited {proc.returncode}")
            report = json.loads(text)
            out = []
            for res in report.get("results", []):
                path = Path(res["filename"]).resolve().relative_to(root.resolve()).as_posix()
                lines = [int(x) for x in res.get("line_range") or [res["line_number"]]]
                line = int(res["line_number"])
                end = max([line, *lines])
                out.append(
                    {
                        "path": path,
                        "line": end,
                        "start_line": line if end != line else None,
                        "severity": SEVERITY.get(str(res.get("issue_severity")), "INFO"),
                        "test_id": str(res.get("test_id")),
                        "text": str(res.get("issue_text", "")).strip(),
                    }
                )
        out.sort(key=lambda f: (f["path"], f["line"], f["test_id"]))
        return out


class ReplayReviewer(Reviewer):
    """Posts a saved capture's reviews, inline comments and issue comments on a new PR.

    Authors, bodies and positions are kept as captured (an outdated comment keeps its null
    ``line``); commit ids are rewritten to the new head and replies re-linked to the new ids.
    """

    kind = "replay"

    def __init__(self, capture: Mapping[str, Any], *, identity: Identity | None = None, **kwargs: Any) -> None:
        super().__init__(identity=identity or _identity_from(capture), **kwargs)
        self.capture = dict(capture)

    def act(self, ctx: ReviewContext) -> None:
        hub = ctx.hub
        state = hub.state
        comments = sorted(self.capture.get("review_comments") or [], key=lambda c: c.get("id", 0))
        reviews = sorted(
            self.capture.get("reviews") or [],
            key=lambda r: (str(r.get("submitted_at") or ""), r.get("id", 0)),
        )
        by_review: dict[Any, list[dict[str, Any]]] = {}
        for c in comments:
            by_review.setdefault(c.get("pull_request_review_id"), []).append(c)
        known = {r.get("id") for r in reviews}
        orphans = [k for k in by_review if k not in known]
        new_ids: dict[int, int] = {}
        plan: list[tuple[dict[str, Any] | None, list[dict[str, Any]]]] = [
            (r, by_review.get(r.get("id"), [])) for r in reviews
        ]
        plan += [(None, by_review[k]) for k in orphans]
        with state.lock:
            for rv, group in plan:
                author = hub.user_from_json(rv["user"]) if rv and rv.get("user") else None
                if author is None and group and group[0].get("user"):
                    author = hub.user_from_json(group[0]["user"])
                author = author or ctx.review_user
                rv_state = str(rv.get("state") or "COMMENTED") if rv else "COMMENTED"
                review = state.create_review(
                    ctx.repo,
                    ctx.number,
                    author,
                    {
                        "body": (rv.get("body") or "") if rv else "",
                        "event": {"APPROVED": "APPROVE", "CHANGES_REQUESTED": "REQUEST_CHANGES"}.get(
                            rv_state, "COMMENT"
                        ),
                        "comments": [],
                    },
                    validate=False,
                )
                hub.note(ctx, "review", review.id, len(group))
                for c in group:
                    spec = dict(c)
                    parent = c.get("in_reply_to_id")
                    spec["in_reply_to_id"] = new_ids.get(parent) if isinstance(parent, int) else None
                    spec.pop("original_commit_id", None)
                    user = hub.user_from_json(c["user"]) if c.get("user") else author
                    made = state.add_review_comment(
                        ctx.repo,
                        ctx.issue,
                        user or author,
                        spec,
                        review_id=review.id,
                        commit_id=ctx.head_sha,
                        raw=True,
                    )
                    if isinstance(c.get("id"), int):
                        new_ids[c["id"]] = made.id
            for ic in sorted(self.capture.get("issue_comments") or [], key=lambda c: c.get("id", 0)):
                user = hub.user_from_json(ic["user"]) if ic.get("user") else ctx.review_user
                made_ic = state.add_issue_comment(
                    ctx.repo, ctx.number, user or ctx.review_user, str(ic.get("body") or "")
                )
                hub.note(ctx, "issue_comment", made_ic.id)


def _identity_from(capture: Mapping[str, Any]) -> Identity:
    for key in ("reviews", "review_comments", "issue_comments"):
        for item in capture.get(key) or []:
            user = item.get("user") or {}
            if user.get("login") and isinstance(user.get("id"), int):
                return Identity(login=str(user["login"]), user_id=int(user["id"]), type=str(user.get("type") or "Bot"))
    return REDLINE_BOT


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


__all__ = [
    "BANDIT_BOT",
    "COPILOT",
    "REDLINE_BOT",
    "Activity",
    "BanditReviewer",
    "Batch",
    "Identity",
    "ReplayReviewer",
    "ReviewContext",
    "Reviewer",
    "ReviewerHub",
    "ScriptedReviewer",
    "SilentReviewer",
]


def _iso(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))
