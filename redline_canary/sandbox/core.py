"""The Sandbox facade: one object that tests, ``demo`` and ``sandbox serve`` hold.

It owns the world (State), the HTTP behaviour (SandboxApp, on a SandboxServer socket unless
``listen=False``) and the reviewers (ReviewerHub),
and offers the in-process knobs a test needs to set a scene and check the aftermath
without going through the API it is testing.

This module holds its lifecycle, the world setup and the reviewers; the knobs that make GitHub
misbehave come from ``knobs`` (``SandboxKnobs``) and the aftermath from ``observation``
(``SandboxObservation``), both mixed into ``Sandbox``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

import httpx

from redline_canary.sandbox.app import SandboxApp
from redline_canary.sandbox.knobs import SandboxKnobs
from redline_canary.sandbox.model import Repo
from redline_canary.sandbox.observation import SandboxObservation
from redline_canary.sandbox.reviewer_hub import Activity, ReviewerHub
from redline_canary.sandbox.reviewers import Reviewer
from redline_canary.sandbox.scenario import ReviewerKind, Scenario
from redline_canary.sandbox.scenario_build import apply_scenario
from redline_canary.sandbox.scenario_files import as_scenario
from redline_canary.sandbox.server import SandboxServer
from redline_canary.sandbox.state import State
from redline_canary.sandbox.transport import SandboxTransport

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


class Sandbox(SandboxKnobs, SandboxObservation):
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

    # --- a whole world from a scenario -------------------------------------------------

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
