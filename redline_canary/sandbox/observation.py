"""The Sandbox's observation side: what a test reads back after the product ran, taken from the
state and the app directly (the request log and its counts, the rate bucket, pulls, issues,
branches, files, the three comment channels as GitHub JSON) and never over the API being tested.
It is a mixin of ``Sandbox``, kept apart from the knobs and the world setup because it only reads,
and it owns the summary records (``PullSummary``, ``IssueSummary``) it answers with.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from redline_canary.sandbox.app import SandboxApp
from redline_canary.sandbox.limits import RequestRecord
from redline_canary.sandbox.model import Repo
from redline_canary.sandbox.reviewer_hub import ReviewerHub
from redline_canary.sandbox.state import State

CountKind = Literal["all", "charged", "not_modified"]


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


class SandboxObservation:
    """The aftermath, read in-process; mixed into :class:`~.core.Sandbox`."""

    state: State
    app: SandboxApp
    hub: ReviewerHub

    if TYPE_CHECKING:

        def _repo(self, full_name: str) -> Repo: ...  # the Sandbox's: the repository a full name names

    @property
    def rate(self) -> dict[str, int]:
        rl = self.app.rate
        with self.app.lock:
            return {"limit": rl.limit, "used": rl.used, "remaining": rl.remaining, "reset": rl.reset}

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
