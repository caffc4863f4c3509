"""The Sandbox facade: one object that tests, ``demo`` and ``sandbox serve`` hold.

It owns the world (State), the HTTP behaviour (SandboxApp, on a SandboxServer socket unless
``listen=False``) and the reviewers (ReviewerHub),
and offers the in-process knobs a test needs to set a scene and check the aftermath
without going through the API it is testing.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

import httpx

from redline_canary.sandbox import api
from redline_canary.sandbox.app import SandboxApp
from redline_canary.sandbox.limits import Fault, RequestRecord, SecondaryLimit
from redline_canary.sandbox.model import Repo
from redline_canary.sandbox.policies import (
    PERMISSIONS,
    REVIEW_REQUEST_MODES,
    TOKEN_KINDS,
    Credential,
    FineGrainedToken,
    Policies,
    RefVisibilityLag,
    ReviewRequestMode,
    TooQuickly,
)
from redline_canary.sandbox.reviewer_hub import Activity, ReviewerHub
from redline_canary.sandbox.reviewers import Reviewer
from redline_canary.sandbox.scenario import ReviewerKind, Scenario
from redline_canary.sandbox.scenario_build import apply_scenario
from redline_canary.sandbox.scenario_files import as_scenario
from redline_canary.sandbox.server import SandboxServer
from redline_canary.sandbox.state import State
from redline_canary.sandbox.transport import SandboxTransport

CountKind = Literal["all", "charged", "not_modified"]
# The base URL of a sandbox that does not listen: reserved for loopback (RFC 6761), so a
# client that bypasses the in-process transport fails at once instead of reaching a host.
IN_PROCESS_URL = "http://sandbox.localhost"


@dataclass(frozen=True)
class RepoHandle:
    full_name: str
    id: int
    default_branch: str
    api_url: str
    html_url: str


@dataclass(frozen=True)
class PullSummary:
    number: int
    title: str
    state: str
    head: str
    base: str
    head_sha: str
    labels: tuple[str, ...]
    body: str | None
    draft: bool
    user: str


@dataclass(frozen=True)
class IssueSummary:
    """An issue (or, with ``pull`` True, a pull request) as a test checks the aftermath."""

    number: int
    title: str
    state: str
    state_reason: str | None
    labels: tuple[str, ...]
    body: str | None
    user: str
    comments: tuple[str, ...]  # bodies, oldest first
    pull: bool


class Sandbox:
    """A fake api.github.com on 127.0.0.1 (ephemeral port) with simulated reviewers.

    The socket is bound in the constructor, so ``url`` is known before ``start()``; the
    context manager starts serving and always stops the server and reviewer threads.
    ``listen=False`` binds nothing: clients reach the app through ``transport()`` only.
    """

    def __init__(
        self,
        *,
        login: str = "redline-canary",
        token: str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        clock: Callable[[], float] = time.time,
        listen: bool = True,
    ) -> None:
        self.state = State(login, clock)
        self._server: SandboxServer | None = None
        if listen:
            self._server = SandboxServer(self.state, host, port, token)
            self.app = self._server.app
        else:
            self.app = SandboxApp(self.state, IN_PROCESS_URL, token)
        self.hub = ReviewerHub(self.state)
        self.url = self.app.url
        self.login = login
        self._running = False

    # --- lifecycle ---------------------------------------------------------------------

    def start(self) -> Sandbox:
        if not self._running:
            if self._server is not None:
                self._server.start()
            self._running = True
        return self

    def close(self) -> None:
        self.hub.close()
        if self._server is not None:
            self._server.stop()
        self._running = False

    @property
    def listening(self) -> bool:
        """On a socket (``url`` reachable by any client), or only through ``transport()``."""
        return self._server is not None

    def transport(self) -> httpx.BaseTransport:
        """The app mounted in-process, for ``GitHubClient(..., transport=...)``: no socket."""
        return SandboxTransport(self.app)

    def __enter__(self) -> Sandbox:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # --- world setup ---------------------------------------------------------------------

    def create_repo(
        self,
        full_name: str,
        files: Mapping[str, str | bytes] | None = None,
        *,
        default_branch: str = "main",
        private: bool = False,
        writable: bool = True,
        description: str | None = None,
        fork_of: str | None = None,
        topics: Iterable[str] = (),
        has_issues: bool = True,
    ) -> RepoHandle:
        """``files=None`` gives a README; ``files={}`` an empty repo (no branch yet)."""
        repo = self.state.create_repo(
            full_name,
            files=files,
            default_branch=default_branch,
            private=private,
            writable=writable,
            description=description,
            fork_of=fork_of,
        )
        repo.topics = list(topics)
        repo.has_issues = has_issues
        return self._handle(repo)

    def _handle(self, repo: Repo) -> RepoHandle:
        r = self.app.renderer
        return RepoHandle(repo.full_name, repo.id, repo.default_branch, r.repo_base(repo), r.repo_html(repo))

    def _repo(self, full_name: str) -> Repo:
        return self.state.get_repo_by_name(full_name)

    def add_user(self, login: str, *, type: str = "User", id: int | None = None) -> None:
        """A collaborator who may be requested as a reviewer or author PRs in-process."""
        self.state.ensure_user(login, type=type, id=id)

    def commit_files(
        self,
        repo: str,
        branch: str,
        files: Mapping[str, str | bytes | None],
        message: str = "Update files",
    ) -> str:
        """Push one commit (None deletes a path); creates the branch from the default one."""
        return self.state.commit_files(self._repo(repo), branch, files, message)

    def create_pull(
        self,
        repo: str,
        head: str,
        *,
        base: str | None = None,
        title: str = "Sandbox pull request",
        body: str = "",
        author: str | None = None,
        draft: bool = False,
        files: Mapping[str, str | bytes | None] | None = None,
    ) -> int:
        """Open a PR in-process (emits "opened"), optionally pushing ``files`` to ``head``."""
        r = self._repo(repo)
        if files is not None:
            self.state.commit_files(r, head, files, title)
        user = self.state.ensure_user(author) if author else self.state.viewer
        issue = self.state.create_pull(
            r,
            user,
            {"head": head, "base": base or r.default_branch, "title": title, "body": body, "draft": draft},
        )
        return issue.number

    def create_issue(self, repo: str, title: str, body: str = "", author: str | None = None,
                     labels: Iterable[str] = ()) -> int:
        """Open an issue in-process (a person's, with ``author``); missing labels are made."""
        user = self.state.ensure_user(author) if author else self.state.viewer
        return self.state.create_issue(self._repo(repo), user, title, body, labels).number

    def add_issue_comment(self, repo: str, number: int, body: str, author: str | None = None) -> int:
        user = self.state.ensure_user(author) if author else self.state.viewer
        return self.state.add_issue_comment(self._repo(repo), number, user, body).id

    def add_label(self, repo: str, name: str, color: str = "ededed") -> None:
        """A label that exists before anything runs (also on a read-only repository)."""
        r = self._repo(repo)
        with self.state.lock:
            if name.lower() not in r.labels:
                self.state._new_label(r, name, color, None)

    def add_review(self, repo: str, number: int, author: str, body: str = "Looks fine.") -> int:
        """A COMMENTED review by ``author`` (a Bot when the login ends in ``[bot]``): the
        trace an installed reviewer leaves on earlier PRs, which ``doctor`` looks for."""
        kind = "Bot" if author.lower().endswith("[bot]") else "User"
        user = self.state.ensure_user(author, type=kind)
        with self.state.lock:
            review = self.state.create_review(self._repo(repo), number, user, {"body": body, "event": "COMMENT"},
                                              validate=False)
        return review.id

    # --- reviewers -------------------------------------------------------------------------

    def attach_reviewer(self, repo: str, reviewer: Reviewer) -> Reviewer:
        return self.hub.attach(repo, reviewer)

    def reviewer_activity(self, repo: str | None = None, number: int | None = None) -> list[Activity]:
        """What simulated reviewers posted, in order, with monotonic timestamps."""
        items = self.hub.activity_snapshot()
        return [
            a
            for a in items
            if (repo is None or a.repo.lower() == repo.lower()) and (number is None or a.number == number)
        ]

    def wait_for_reviewers(self, timeout: float = 10.0) -> bool:
        """Block until no simulated reviewer is mid-answer (True) or the timeout passes."""
        return self.hub.wait_idle(timeout)

    # --- faults and limits -------------------------------------------------------------

    def inject_fault(
        self,
        method: str | None = None,
        route: str | None = None,
        *,
        status: int | None = None,
        headers: Mapping[str, str] | None = None,
        body: Any = None,
        delay: float = 0.0,
        drop: bool = False,
        times: int | None = 1,
        after_write: bool = False,
        secondary: bool = False,
        repo: str | None = None,
    ) -> Fault:
        """Make matching requests fail. ``route`` is a GitHub template, e.g.
        ``/repos/{owner}/{repo}/pulls``; None matches every route. ``times=None``: always.

        See :class:`Fault` for ``after_write`` (the write happens, the answer is the
        fault), ``secondary`` and ``repo`` (only that OWNER/NAME). A route or method the sandbox does not serve is a
        ValueError: a typo would otherwise make a fault that silently never fires.
        """
        problem = api.route_problem(method, route)
        if problem:
            raise ValueError(problem)
        fault = Fault(
            method=method.upper() if method else None,
            route=route,
            status=status,
            headers=dict(headers or {}),
            body=body,
            delay=delay,
            drop=drop,
            times=times,
            after_write=after_write,
            secondary=secondary,
            repo=repo,
        )
        return self.app.add_fault(fault)

    def clear_faults(self) -> None:
        with self.app.lock:
            self.app.faults.clear()

    def clear_policies(self) -> None:
        """Back to a well-behaved GitHub: no ref lag, no "too quickly", a token with every
        permission, every reviewer request registered (faults and limits untouched)."""
        with self.state.lock:
            self.state.policies = Policies()

    def secondary_limit(
        self,
        per_minute: int | None = None,
        per_hour: int | None = None,
        *,
        window: float = 60.0,
        retry_after: int | None = None,
        status: int = 403,
        methods: Iterable[str] = ("POST", "PATCH", "PUT"),
        send_retry_after: bool = True,
        scale: float = 1.0,
    ) -> None:
        """More than ``per_minute`` content-creating requests per ``window`` seconds (or
        ``per_hour`` per 60 windows) get ``status`` (403 or 429) + ``retry-after``, counted
        per token (per installation for an App's tokens), as GitHub counts them.
        ``send_retry_after=False`` omits the header (GitHub then means "wait at least a
        minute"). ``scale`` makes simulated time run faster (``scale=60``: a simulated hour
        per real minute; ``retry-after`` in simulated seconds). No limits given: off."""
        if status not in (403, 429):
            raise ValueError(f"secondary limits answer 403 or 429, not {status}")
        if not scale > 0:
            raise ValueError(f"scale must be > 0, not {scale}")
        with self.app.lock:
            if per_minute is None and per_hour is None:
                self.app.secondary = None
                return
            self.app.secondary = SecondaryLimit(
                per_minute=per_minute,
                per_hour=per_hour,
                window=window,
                retry_after=retry_after,
                status=status,
                methods=frozenset(m.upper() for m in methods),
                send_retry_after=send_retry_after,
                scale=scale,
            )

    def primary_limit(
        self,
        *,
        limit: int | None = None,
        remaining: int | None = None,
        reset_in: float | None = None,
        status: int = 403,
    ) -> None:
        """Shape the ``core`` bucket: e.g. ``remaining=0, reset_in=2`` for an exhausted one."""
        rl = self.app.rate
        with self.app.lock:
            rl.roll(self.state.clock())
            if limit is not None:
                rl.limit = limit
            if remaining is not None:
                rl.used = max(rl.limit - remaining, 0)
            if reset_in is not None:
                rl.reset = int(self.state.clock() + reset_in)
            rl.status = status

    def ref_visibility_lag(self, attempts: int, *, repo: str | None = None) -> None:
        """After ``POST /git/refs`` creates a branch, the next ``attempts`` ``POST /pulls``
        with that head answer 422 ``head`` ``invalid``, as if the ref did not exist yet
        (GitHub replicates refs asynchronously). ``0`` turns it off."""
        if attempts < 0:
            raise ValueError("attempts must be >= 0")
        with self.state.lock:
            self.state.policies.ref_lag = (
                RefVisibilityLag(attempts, repo.lower() if repo else None) if attempts else None
            )

    def submitted_too_quickly(
        self,
        *,
        after: int = 0,
        times: int | None = None,
        created: bool = False,
        repo: str | None = None,
    ) -> TooQuickly:
        """PR creation hits GitHub's content-creation limit: after ``after`` successful API
        PR creations, the next ``times`` (None = all) answer 422 "was submitted too
        quickly". ``created=True``: the PR is opened anyway and only the answer is the
        422. Returns the live counter (``attempts``, ``refused``)."""
        if after < 0 or (times is not None and times < 1):
            raise ValueError("after must be >= 0 and times >= 1 (or None)")
        limit = TooQuickly(after=after, times=times, created=created, repo=repo.lower() if repo else None)
        with self.state.lock:
            self.state.policies.too_quickly = limit
        return limit

    def fine_grained_token(self, missing: Iterable[str] = (), *, repos: Iterable[str] | None = None) -> None:
        """The token is a fine-grained PAT without write access to ``missing`` (e.g.
        ``{"pull_requests"}``): ``GET /repos/{o}/{r}`` still says ``permissions.push:
        true``, writes whose route needs only those answer 403 "Resource not accessible
        by personal access token" + ``x-accepted-github-permissions``. Empty: off."""
        names = frozenset(missing)
        unknown = sorted(names - PERMISSIONS)
        if unknown:
            raise ValueError(f"unknown permission(s) {unknown}; known: {sorted(PERMISSIONS)}")
        selected = frozenset(r.lower() for r in repos) if repos is not None else None
        with self.state.lock:
            self.state.policies.token = FineGrainedToken(names, selected) if names else None

    def token_kind(
        self,
        kind: str = "fine_grained",
        *,
        expires_in_days: float | None = None,
        scopes: Iterable[str] = ("repo", "workflow"),
        no_access: Iterable[str] = (),
    ) -> None:
        """Answer as GitHub answers this kind of token (see :class:`Credential`): classic
        ``x-oauth-scopes`` or fine-grained ``x-accepted-github-permissions``, and the
        expiry header when ``expires_in_days`` is given (negative: already expired)."""
        if kind not in TOKEN_KINDS:
            raise ValueError(f"kind must be one of {TOKEN_KINDS}, got {kind!r}")
        names = frozenset(no_access)
        unknown = sorted(names - PERMISSIONS)
        if unknown:
            raise ValueError(f"unknown permission(s) {unknown}; known: {sorted(PERMISSIONS)}")
        at = None if expires_in_days is None else self.state.clock() + expires_in_days * 86400
        with self.state.lock:
            self.state.policies.credential = Credential(kind, at, tuple(scopes), names)  # type: ignore[arg-type]

    def clear_credential(self) -> None:
        """Back to the default dialect: no scopes, no expiry (unless ``fine_grained_token``)."""
        with self.state.lock:
            self.state.policies.credential = None

    def review_requests(self, repo: str, login: str, mode: ReviewRequestMode) -> None:
        """What ``POST /pulls/{n}/requested_reviewers`` does for ``login`` on ``repo``:
        ``registered`` (normal), ``dropped`` (201, never listed, the bot is not woken: a
        bot whose review is not enabled), ``hidden`` (201, never listed, but the bot
        reviews: the Copilot report in github-api.md §8), ``rejected`` (422 "Reviews may
        only be requested from collaborators...")."""
        if mode not in REVIEW_REQUEST_MODES:
            raise ValueError(f"mode must be one of {REVIEW_REQUEST_MODES}, got {mode!r}")
        with self.state.lock:
            self.state.policies.review_requests[(repo.lower(), login.lower())] = mode

    @classmethod
    def from_scenario(
        cls,
        scenario: Scenario | Mapping[str, Any] | str | Path,
        *,
        token: str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        default_reviewer: ReviewerKind = "bandit",
        latency: float = 1.0,
    ) -> Sandbox:
        """A sandbox (not yet started) holding a scenario's world: the same file
        ``sandbox serve --scenario`` reads, or its decoded mapping. Bad input raises
        :class:`~.scenario.ScenarioError` (a ``BadInput``)."""
        sc = as_scenario(scenario)
        sb = cls(login=sc.login, token=token, host=host, port=port)
        try:
            apply_scenario(sb, sc, default_reviewer=default_reviewer, latency=latency)
        except BaseException:
            sb.close()
            raise
        return sb

    # --- GitHub Apps -----------------------------------------------------------------------

    def register_app(self, app_id: int, public_key_pem: str | bytes, *, slug: str = "redline-canary-app") -> None:
        """A GitHub App whose JWTs are checked against ``public_key_pem``; its installation
        tokens act as ``<slug>[bot]``. From then on JWTs and ``ghs_`` tokens are understood."""
        with self.state.lock:
            bot = self.state.ensure_user(f"{slug}[bot]", type="Bot")
        with self.app.lock:
            self.app.apps.register(app_id, public_key_pem, bot, slug)

    def install_app(self, app_id: int, owner: str, *, repos: Iterable[str] | None = None,
                    permissions: Mapping[str, str] | None = None) -> int:
        """Install App ``app_id`` on ``owner`` (all its repositories, or only ``repos``,
        full names); returns the installation id."""
        with self.state.lock:
            account = self.state.ensure_user(owner, type="Organization")
        with self.app.lock:
            return self.app.apps.install(app_id, account, repos, dict(permissions) if permissions else None).id

    def installation_token_lifetime(self, seconds: float) -> None:
        """How long an installation token lives (GitHub: 3600 s), for tests and scaled benchmarks."""
        if not seconds > 0:
            raise ValueError("the lifetime must be > 0")
        with self.app.lock:
            self.app.apps.token_lifetime = seconds

    def issued_tokens(self) -> list[str]:
        """Every installation token issued, oldest first: what a test greps outputs for."""
        with self.app.lock:
            return list(self.app.apps.issued)

    def tree_payload_cap(self, max_bytes: int | None) -> None:
        """Answer POST /git/trees carrying more inline content than this with GitHub's 422."""
        self.state.tree_payload_cap = max_bytes

    @property
    def rate(self) -> dict[str, int]:
        rl = self.app.rate
        with self.app.lock:
            return {"limit": rl.limit, "used": rl.used, "remaining": rl.remaining, "reset": rl.reset}

    # --- observation -----------------------------------------------------------------------

    @property
    def requests(self) -> list[RequestRecord]:
        with self.app.lock:
            return list(self.app.records)

    def reset_requests(self) -> None:
        with self.app.lock:
            self.app.records.clear()

    def request_counts(self, which: CountKind = "all") -> dict[str, int]:
        """``{"GET /repos/{owner}/{repo}/pulls/{pull_number}/comments": n, ...}``.

        ``charged``: requests that cost primary-limit budget; ``not_modified``: the 304s.
        """
        keep: Callable[[RequestRecord], bool] = {
            "all": lambda r: True,
            "charged": lambda r: r.charged,
            "not_modified": lambda r: r.status == 304,
        }[which]
        return dict(Counter(f"{r.method} {r.route}" for r in self.requests if keep(r)))

    def pulls(self, repo: str, state: str = "all") -> list[PullSummary]:
        with self.state.lock:
            out = []
            for i in sorted(self._repo(repo).pulls(), key=lambda x: x.number):
                p = i.pr
                if state != "all" and i.state != state:
                    continue
                out.append(
                    PullSummary(
                        number=i.number,
                        title=i.title,
                        state=i.state,
                        head=p.head_ref,
                        base=p.base_ref,
                        head_sha=p.head_sha,
                        labels=tuple(x.name for x in i.labels),
                        body=i.body,
                        draft=p.draft,
                        user=i.user.login,
                    )
                )
            return out

    def issues(self, repo: str, state: str = "all", *, pulls: bool = False) -> list[IssueSummary]:
        """Issues by number (with ``pulls``, pull requests too), comments included."""
        with self.state.lock:
            return [
                IssueSummary(
                    number=i.number,
                    title=i.title,
                    state=i.state,
                    state_reason=i.state_reason,
                    labels=tuple(x.name for x in i.labels),
                    body=i.body,
                    user=i.user.login,
                    comments=tuple(c.body for c in i.comments),
                    pull=i.pull is not None,
                )
                for i in sorted(self._repo(repo).issues.values(), key=lambda x: x.number)
                if (state == "all" or i.state == state) and (pulls or i.pull is None)
            ]

    def repo_names(self) -> list[str]:
        """Every repository's full name, in creation order."""
        with self.state.lock:
            return [r.full_name for r in self.state.repos.values()]

    def reviewer_kinds(self) -> dict[str, str]:
        """``{repo full name: reviewer kind}`` for repos with a simulated reviewer."""
        with self.state.lock:
            out = {}
            for r in self.state.repos.values():
                attached = self.hub.attached.get(r.full_name.lower(), [])
                if attached:
                    out[r.full_name] = "+".join(x.kind for x in attached)
            return out

    def open_pulls(self, repo: str) -> list[PullSummary]:
        return self.pulls(repo, "open")

    def branches(self, repo: str) -> list[str]:
        with self.state.lock:
            refs = self._repo(repo).refs
            return sorted(r[len("refs/heads/") :] for r in refs if r.startswith("refs/heads/"))

    def files(self, repo: str, ref: str) -> dict[str, bytes]:
        """The files at a branch tip (or commit sha), for asserting what was pushed."""
        with self.state.lock:
            r = self._repo(repo)
            sha = r.branch_sha(ref) or ref
            tree = self.state.store.tree_of(sha)
            if tree is None:
                raise KeyError(f"{repo}: no branch or commit {ref!r}")
            return self.state.store.files(tree)

    def capture(self, repo: str, number: int) -> dict[str, Any]:
        """The PR's three channels as GitHub JSON: what a scorer reads, what Replay takes."""
        with self.state.lock:
            r = self._repo(repo)
            issue = self.state.get_pull(r, number)
            p = issue.pr
            rd = self.app.renderer
            return {
                "repo": r.full_name,
                "pull": number,
                "head_sha": p.head_sha,
                "review_comments": [rd.review_comment(r, issue, c) for c in p.review_comments],
                "reviews": [rd.review(r, issue, rv) for rv in p.reviews],
                "issue_comments": [rd.issue_comment(r, issue, c) for c in issue.comments],
            }

