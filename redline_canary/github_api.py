"""The one seam to GitHub: PyGithub for writes, httpx for conditional polling reads.

Every request goes through :class:`RetryPolicy` (one module decides waits) and every
content-creating request takes a :class:`Pacer` slot. Creates are idempotent: on a
conflict or a transient failure we look for the object before trying again, so a retried
run never leaves a second branch or PR behind. Tokens go to the HTTP clients only: they
are never formatted into messages, logs or exceptions.
"""

from __future__ import annotations

import os
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar
from urllib.parse import quote

import httpx
from github import Auth, Github, GithubException, InputGitTreeElement
from github.GitCommit import GitCommit
from github.GitTree import GitTree
from github.Repository import Repository

from redline_canary import __version__
from redline_canary.clock import Clock, RealClock
from redline_canary.errors import BadInput, InfraFailure
from redline_canary.pacing import Pacer
from redline_canary.retrying import ApiFailure, RetryPolicy

DEFAULT_API_URL = "https://api.github.com"
TOKEN_VARS = ("REDLINE_CANARY_TOKEN", "GITHUB_TOKEN")
# A repository opts in to receiving seeded PRs by carrying this topic, so a typo in the
# targets can never open a PR full of vulnerabilities on a real project.
CANARY_TOPIC = "redline-canary"
CHANNEL_PATHS = {
    "review_comments": "pulls/{n}/comments",
    "reviews": "pulls/{n}/reviews",
    "issue_comments": "issues/{n}/comments",
}
REACTIONS_PATH = "issues/{n}/reactions"
PER_PAGE = 100  # GitHub's maximum
T = TypeVar("T")


def token_from_env() -> str:
    for var in TOKEN_VARS:
        value = os.environ.get(var, "").strip()
        if value:
            return value
    raise BadInput(f"no token: set {' or '.join(TOKEN_VARS)}")


def _failure(exc: GithubException, what: str) -> ApiFailure:
    data = exc.data if isinstance(exc.data, dict) else {}
    message = str(data.get("message") or "")
    errors = data.get("errors")
    if isinstance(errors, list) and errors and isinstance(errors[0], dict):
        message += f" ({errors[0].get('message') or errors[0].get('code') or ''})"
    return ApiFailure(exc.status, message, dict(exc.headers or {}), what)


@dataclass(frozen=True)
class BaseCommit:
    branch: str
    sha: str
    tree_sha: str


@dataclass
class ChannelState:
    etag: str | None = None
    items: list[dict[str, Any]] | None = None


class GitHubClient:
    """Everything the product asks of GitHub, counted per route."""

    def __init__(self, token: str, api_url: str | None = None, *, clock: Clock | None = None,
                 policy: RetryPolicy | None = None, pacer: Pacer | None = None,
                 timeout: float = 30.0) -> None:
        self.api_url = (api_url or DEFAULT_API_URL).rstrip("/")
        self.clock = clock or RealClock()
        self.policy = policy or RetryPolicy(clock=self.clock)
        self.pacer = pacer or Pacer(self.clock)
        # PyGithub must neither retry on its own (a blind POST retry could duplicate)
        # nor sleep between requests: pacing and retries live in one place, here.
        self._gh = Github(auth=Auth.Token(token), base_url=self.api_url, retry=None,
                          seconds_between_requests=None, seconds_between_writes=None,
                          timeout=int(timeout), user_agent=f"redline-canary/{__version__}", lazy=True)
        self._http = httpx.Client(
            base_url=self.api_url, timeout=timeout,
            headers={"Authorization": f"Bearer {token}", "Accept": "application/vnd.github+json",
                     "X-GitHub-Api-Version": "2022-11-28",
                     "User-Agent": f"redline-canary/{__version__}"},
        )
        self.counts: Counter[str] = Counter()  # "METHOD route" -> requests, "... 304" separately
        self._lock = threading.Lock()

    def close(self) -> None:
        self._http.close()

    # --- plumbing -----------------------------------------------------------------
    def _count(self, key: str) -> None:
        with self._lock:
            self.counts[key] += 1

    def _gh_call(self, what: str, fn: Callable[[], T], *, write: bool = False,
                 retry_transient: bool = True) -> T:
        def once() -> T:
            if write:
                self.pacer.acquire()
            self._count(what)
            try:
                return fn()
            except GithubException as exc:
                raise _failure(exc, what) from None
            except (OSError, httpx.TransportError) as exc:
                raise ApiFailure(0, exc.__class__.__name__, what=what) from None
            except Exception as exc:  # requests' connection errors, raised through PyGithub
                if exc.__class__.__module__.startswith(("requests", "urllib3")):
                    raise ApiFailure(0, exc.__class__.__name__, what=what) from None
                raise

        return self.policy.call(once, retry_transient=retry_transient)

    def _repo(self, full_name: str) -> Repository:
        return self._gh.get_repo(full_name)

    @contextmanager
    def _infra(self, what: str) -> Iterator[None]:
        """Turn a final ApiFailure into the exit-code exceptions the CLI understands."""
        try:
            yield
        except ApiFailure as exc:
            if exc.status in (401, 404):
                raise BadInput(f"{what}: GitHub answered {exc.status} {exc.message} "
                               "(check the repository name, the API URL and the token)") from None
            raise InfraFailure(f"{what}: {exc}") from None

    # --- reads --------------------------------------------------------------------
    def preflight(self, repo: str, base: str | None) -> BaseCommit:
        """The base branch's head; BadInput when the token cannot push there."""
        with self._infra(f"{repo}: preflight"):
            data = self._gh_call("GET /repos/{o}/{r}", lambda: self._gh.get_repo(repo).raw_data)
            perms = data.get("permissions")
            if isinstance(perms, dict) and not perms.get("push", False):
                raise BadInput(f"{repo}: the token cannot push to this repository")
            if data.get("archived"):
                raise BadInput(f"{repo}: the repository is archived")
            if CANARY_TOPIC not in (data.get("topics") or []):
                raise BadInput(f"{repo}: not a canary repository: add the topic '{CANARY_TOPIC}' to it "
                               "(repository settings, About, Topics) to allow seeded pull requests")
            branch = base or str(data.get("default_branch") or "main")
            r = self._repo(repo)
            sha = self._gh_call("GET /repos/{o}/{r}/git/ref/{ref}",
                                lambda: r.get_git_ref(f"heads/{branch}").object.sha)
            tree = self._gh_call("GET /repos/{o}/{r}/git/commits/{sha}",
                                 lambda: r.get_git_commit(sha).tree.sha)
            return BaseCommit(branch, str(sha), str(tree))

    def poll(self, repo: str, number: int, states: dict[str, ChannelState],
             reactions: bool = False, head_sha: str | None = None) -> bool:
        """Refresh the three channels (plus the PR's reactions and the head commit's check
        runs, for bots that answer that way) with conditional GETs; True when anything changed."""
        changed = False
        channels: dict[str, tuple[str, str | None]] = {
            ch: (f"/repos/{repo}/{path.format(n=number)}", None) for ch, path in CHANNEL_PATHS.items()}
        if reactions:
            channels["reactions"] = (f"/repos/{repo}/{REACTIONS_PATH.format(n=number)}", None)
        if head_sha:
            channels["check_runs"] = (f"/repos/{repo}/commits/{head_sha}/check-runs", "check_runs")
        for channel, (url, key) in channels.items():
            state = states.setdefault(channel, ChannelState())
            with self._infra(f"{repo}#{number}: poll {channel}"):
                try:
                    fresh = self.policy.call(partial(self._get_all, url, state, key))
                except ApiFailure as exc:
                    # Check runs need the `checks: read` permission many tokens lack:
                    # without it we simply do not see them, as before.
                    if channel != "check_runs" or exc.status not in (403, 404):
                        raise
                    fresh = []
            if fresh is not None:
                changed = changed or fresh != state.items
                state.items = fresh
        return changed

    def _get_all(self, url: str, state: ChannelState, key: str | None = None) -> list[dict[str, Any]] | None:
        """All pages of a list, or None when page 1 answered 304 Not Modified.

        Lists are in ascending id order, so new comments land on the *last* page: page 1's
        ETag only proves "unchanged" while everything fits on it. A longer list is re-read.
        """
        single_page = state.items is not None and len(state.items) < PER_PAGE
        headers = {"If-None-Match": state.etag} if state.etag and single_page else {}
        items: list[dict[str, Any]] = []
        next_url: str | None = url
        params: dict[str, Any] | None = {"per_page": PER_PAGE}
        first = True
        route = "GET " + "/".join(url.split("/")[-2:])
        while next_url:
            try:
                resp = self._http.get(next_url, params=params, headers=headers if first else {})
            except httpx.TransportError as exc:
                raise ApiFailure(0, exc.__class__.__name__, what=route) from None
            if resp.status_code == 304:
                self._count(route + " 304")
                return None
            self._count(route)
            if resp.status_code >= 400:
                raise ApiFailure(resp.status_code, _message(resp), dict(resp.headers), route)
            page = resp.json()
            if key is not None and isinstance(page, dict):
                page = page.get(key)  # check runs come wrapped: {"total_count", "check_runs"}
            if not isinstance(page, list):
                raise ApiFailure(resp.status_code, "expected a JSON list", what=route)
            items.extend(page)
            if first:
                state.etag = resp.headers.get("etag")
            first = False
            params = None
            nxt = resp.links.get("next", {}).get("url")
            next_url = nxt or None
        return items

    def pull(self, repo: str, number: int) -> dict[str, Any]:
        with self._infra(f"{repo}#{number}"):
            return self._gh_call("GET /repos/{o}/{r}/pulls/{n}",
                                 lambda: self._repo(repo).get_pull(number).raw_data)

    def capture(self, repo: str, number: int) -> dict[str, Any]:
        """The raw JSON of a PR, its comment channels, reactions and check runs (``score --repo``)."""
        pull = self.pull(repo, number)
        head = pull.get("head")
        sha = head.get("sha") if isinstance(head, dict) else None
        states: dict[str, ChannelState] = {}
        self.poll(repo, number, states, reactions=True, head_sha=sha if isinstance(sha, str) else None)
        return {
            "repo": repo,
            "pull": pull,
            **{ch: list(state.items or []) for ch, state in states.items()},
            "manifest": {},
        }

    # --- writes -------------------------------------------------------------------
    def ensure_label(self, repo: str, name: str, color: str = "ededed",
                     description: str = "") -> None:
        r = self._repo(repo)
        with self._infra(f"{repo}: label {name}"):
            try:
                self._gh_call("GET /repos/{o}/{r}/labels/{name}", lambda: r.get_label(name).raw_data)
                return
            except ApiFailure as exc:
                if exc.status != 404:
                    raise
            try:
                self._gh_call("POST /repos/{o}/{r}/labels",
                              lambda: r.create_label(name, color, description), write=True)
            except ApiFailure as exc:
                if exc.status != 422:  # created meanwhile by a concurrent target
                    raise

    def push_commit(self, repo: str, base: BaseCommit, files: dict[str, str], branch: str,
                    message: str) -> str:
        """One commit holding every file (tree with inline content + commit + ref)."""
        r = self._repo(repo)
        requester = r._requester  # PyGithub objects known by sha need no GET
        base_tree = GitTree(requester, attributes={"sha": base.tree_sha}, completed=True)
        parent = GitCommit(requester, attributes={"sha": base.sha}, completed=True)
        elements = [InputGitTreeElement(path, "100644", "blob", content=text)
                    for path, text in sorted(files.items())]
        with self._infra(f"{repo}: push {branch}"):
            tree = self._gh_call("POST /repos/{o}/{r}/git/trees",
                                 lambda: r.create_git_tree(elements, base_tree=base_tree), write=True)
            commit = self._gh_call("POST /repos/{o}/{r}/git/commits",
                                   lambda: r.create_git_commit(message, tree, [parent]), write=True)
            self._create_or_move_ref(r, branch, commit.sha)
            return str(commit.sha)

    def _create_or_move_ref(self, r: Repository, branch: str, sha: str) -> None:
        try:
            self._gh_call("POST /repos/{o}/{r}/git/refs",
                          lambda: r.create_git_ref(f"refs/heads/{branch}", sha),
                          write=True, retry_transient=False)
            return
        except ApiFailure as exc:
            if exc.status != 422 and not exc.transient:
                raise
        # It exists (an earlier attempt of this run, or a 5xx that hid a success): move it.
        ref = self._gh_call("GET /repos/{o}/{r}/git/ref/{ref}",
                            lambda: r.get_git_ref(f"heads/{branch}"))
        if ref.object.sha != sha:
            self._gh_call("PATCH /repos/{o}/{r}/git/refs/{ref}",
                          lambda: ref.edit(sha, force=True), write=True)

    def open_pull(self, repo: str, branch: str, base: str, title: str, body: str) -> int:
        r = self._repo(repo)
        owner = repo.split("/")[0]

        def existing() -> int | None:
            pulls = self._gh_call("GET /repos/{o}/{r}/pulls",
                                  lambda: [p.number for p in r.get_pulls(state="open",
                                                                         head=f"{owner}:{branch}")])
            return pulls[0] if pulls else None

        with self._infra(f"{repo}: open PR from {branch}"):
            for _attempt in range(self.policy.max_attempts):
                try:
                    return int(self._gh_call(
                        "POST /repos/{o}/{r}/pulls",
                        lambda: r.create_pull(base=base, head=branch, title=title, body=body).number,
                        write=True, retry_transient=False))
                except ApiFailure as exc:
                    if not (exc.status == 422 or exc.transient):
                        raise
                    found = existing()
                    if found is not None:
                        return found
                    if exc.status == 422:
                        raise
                    self.clock.sleep(self.policy.delay_for(exc, _attempt + 1))
            raise InfraFailure(f"{repo}: could not open a PR from {branch}")

    def add_label(self, repo: str, number: int, label: str) -> None:
        issue = self._repo(repo).get_issue(number)
        with self._infra(f"{repo}#{number}: label"):
            self._gh_call("POST /repos/{o}/{r}/issues/{n}/labels",
                          lambda: issue.add_to_labels(label), write=True)

    def request_reviewer(self, repo: str, number: int, login: str) -> None:
        pr = self._repo(repo).get_pull(number)
        with self._infra(f"{repo}#{number}: request review from {login}"):
            self._gh_call("POST /repos/{o}/{r}/pulls/{n}/requested_reviewers",
                          lambda: pr.create_review_request(reviewers=[login]), write=True)

    def comment(self, repo: str, number: int, body: str) -> None:
        issue = self._repo(repo).get_issue(number)
        with self._infra(f"{repo}#{number}: comment"):
            self._gh_call("POST /repos/{o}/{r}/issues/{n}/comments",
                          lambda: issue.create_comment(body), write=True, retry_transient=False)

    def close_pull(self, repo: str, number: int) -> None:
        pr = self._repo(repo).get_pull(number)
        with self._infra(f"{repo}#{number}: close"):
            self._gh_call("PATCH /repos/{o}/{r}/pulls/{n}", lambda: pr.edit(state="closed"),
                          write=True)

    def delete_branch(self, repo: str, branch: str) -> bool:
        """Delete ``branch``; False when it was already gone."""
        r = self._repo(repo)
        url = f"{r.url}/git/refs/heads/{quote(branch, safe='/')}"  # the documented route
        with self._infra(f"{repo}: delete {branch}"):
            try:
                self._gh_call("DELETE /repos/{o}/{r}/git/refs/{ref}",
                              lambda: r._requester.requestJsonAndCheck("DELETE", url), write=True)
                return True
            except ApiFailure as exc:
                if exc.status in (404, 422):
                    return False
                raise

    # --- janitor ------------------------------------------------------------------
    def repo_flags(self, repo: str) -> RepoFlags:
        """The repository's topics and archived flag: the janitor, like ``run``'s preflight,
        works only on a repository that opted in with the canary topic."""
        with self._infra(f"{repo}: read repository"):
            data = self._gh_call("GET /repos/{o}/{r}", lambda: self._gh.get_repo(repo).raw_data)
        topics = data.get("topics") if isinstance(data, dict) else None
        return RepoFlags(
            topics=tuple(t for t in topics or () if isinstance(t, str)),
            archived=bool(isinstance(data, dict) and data.get("archived")),
        )

    def open_pulls(self, repo: str) -> list[dict[str, Any]]:
        r = self._repo(repo)
        with self._infra(f"{repo}: list PRs"):
            return self._gh_call("GET /repos/{o}/{r}/pulls",
                                 lambda: [p.raw_data for p in r.get_pulls(state="open")])

    def branches_with_prefix(self, repo: str, prefix: str) -> dict[str, str]:
        """branch name -> head sha for every branch starting with ``prefix``."""
        r = self._repo(repo)
        with self._infra(f"{repo}: list branches"):
            refs = self._gh_call("GET /repos/{o}/{r}/git/matching-refs/{ref}",
                                 lambda: [(x.ref, x.object.sha)
                                          for x in r.get_git_matching_refs(f"heads/{prefix}")])
        return {ref.removeprefix("refs/heads/"): sha for ref, sha in refs}

    def commit_info(self, repo: str, sha: str) -> CommitInfo:
        """A commit's committer date and message: the janitor deletes an orphan branch only
        when its head commit carries the run marker, and only once it is old enough."""
        r = self._repo(repo)
        with self._infra(f"{repo}: commit {sha[:7]}"):
            raw = self._gh_call("GET /repos/{o}/{r}/git/commits/{sha}",
                                lambda: r.get_git_commit(sha).raw_data)
        committer = raw.get("committer") if isinstance(raw, dict) else None
        date = committer.get("date") if isinstance(committer, dict) else None
        message = raw.get("message") if isinstance(raw, dict) else None
        return CommitInfo(date=date if isinstance(date, str) else "",
                          message=message if isinstance(message, str) else "")


@dataclass(frozen=True)
class RepoFlags:
    """What the janitor reads of a repository before it touches anything."""

    topics: tuple[str, ...]
    archived: bool


@dataclass(frozen=True)
class CommitInfo:
    """A branch head as the janitor judges it: how old, and who made it (the run marker)."""

    date: str  # ISO-8601 as GitHub sends it; "" when absent
    message: str


def _message(resp: httpx.Response) -> str:
    try:
        data = resp.json()
    except ValueError:
        return resp.reason_phrase
    return str(data.get("message", "")) if isinstance(data, dict) else resp.reason_phrase
