"""Everything the product asks of GitHub, one public method per question: the cycle's reads
and writes, the regression issue, the doctor's probes, the App's installation and the
janitor's listings.

What it owns: the routes (each named with its METHOD and template, so the sandbox's route
test reads them off this file), what each answer is read as, and the rules that make a
write safe to repeat (a create looks first, a ref is moved rather than created twice).
How a request is sent, paced, retried, paged and turned into an exit code, and where the
token may go, is :mod:`~redline_canary.github.transport`'s.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from redline_canary.errors import BadInput, InfraFailure, mask_json, register_secret
from redline_canary.github.decipher import ApiFailure
from redline_canary.github.doctor_checks import Answer
from redline_canary.github.forge import CHANNEL_PATHS, BaseCommit, ChannelState
from redline_canary.github.retry import RetryPolicy
from redline_canary.github.transport import PER_PAGE, ApiSession, check_token

# A repository opts in to receiving seeded PRs by carrying this topic, so a typo in the
# targets can never open a PR full of vulnerabilities on a real project.
CANARY_TOPIC = "redline-canary"
REACTIONS_PATH = "issues/{n}/reactions"


class GitHubClient(ApiSession):
    """Everything the product asks of GitHub, counted per route."""

    # --- doctor: reads whose failures are answers (``_probe``) ----------------------
    def whoami(self) -> Answer:
        return self._probe("/user", "/user")

    def repository_answer(self, repo: str) -> Answer:
        return self._probe("/repos/{owner}/{repo}", self._repo_url(repo))

    def ref_answer(self, repo: str, branch: str) -> Answer:
        return self._probe("/repos/{owner}/{repo}/git/ref/{ref}",
                           self._repo_url(repo, f"git/ref/heads/{quote(branch, safe='/')}"))

    def label_answer(self, repo: str, label: str) -> Answer:
        return self._probe("/repos/{owner}/{repo}/labels/{name}",
                           self._repo_url(repo, f"labels/{quote(label, safe='')}"))

    def check_runs_answer(self, repo: str, sha: str) -> Answer:
        return self._probe("/repos/{owner}/{repo}/commits/{ref}/check-runs",
                           self._repo_url(repo, f"commits/{quote(sha, safe='')}/check-runs"), params={"per_page": 1})

    def branch_rules_answer(self, repo: str, branch: str) -> Answer:
        """The rules in force on ``branch`` (rulesets): Copilot's automatic review is one."""
        return self._probe("/repos/{owner}/{repo}/rules/branches/{branch}",
                           self._repo_url(repo, f"rules/branches/{quote(branch, safe='/')}"))

    def recent_pulls_answer(self, repo: str, count: int) -> Answer:
        return self._probe("/repos/{owner}/{repo}/pulls", self._repo_url(repo, "pulls"),
                           params={"state": "all", "sort": "updated", "direction": "desc", "per_page": count})

    def conversation_answers(self, repo: str, number: int) -> dict[str, Answer]:
        """Page 1 of a PR's reviews, review comments and issue comments (newest reviewers
        show up there; doctor needs one sign, not every page)."""
        return {channel: self._probe("/repos/{owner}/{repo}/" + _template(path),
                                     self._repo_url(repo, path.format(n=number)), params={"per_page": PER_PAGE})
                for channel, path in CHANNEL_PATHS.items()}

    # --- doctor, as a GitHub App: the JWT's reads, then the installation token's ------
    def app_answer(self) -> Answer:
        """The App the JWT proves; a 401 means the id, the key or the clock is wrong."""
        return self._probe("/app", "/app")

    def installation_answer(self, repo: str) -> Answer:
        """The installation covering ``repo``: its permissions and repository selection."""
        return self._probe("/repos/{owner}/{repo}/installation", self._repo_url(repo, "installation"))

    def app_installations_answer(self) -> Answer:
        """Page 1 of the App's installations: whether an owner has one that leaves a repository out."""
        return self._probe("/app/installations", "/app/installations", params={"per_page": PER_PAGE})

    def installation_repositories_answer(self) -> Answer:
        """Page 1 of the repositories an installation token reaches (selected or all)."""
        return self._probe("/installation/repositories", "/installation/repositories", params={"per_page": PER_PAGE})

    # --- reads --------------------------------------------------------------------
    def repository(self, repo: str) -> dict[str, Any]:
        with self._infra(f"{repo}", not_found_is_config=True):
            data = self._get("/repos/{owner}/{repo}", self._repo_url(repo))
        if not isinstance(data, dict):
            raise InfraFailure(f"{repo}: GitHub answered a repository that is not a JSON object")
        return data

    def preflight(self, repo: str, base: str | None) -> BaseCommit:
        """The base branch's head; BadInput when the token cannot push there."""
        data = self.repository(repo)
        perms = data.get("permissions")
        if isinstance(perms, dict) and not perms.get("push", False):
            raise BadInput(f"{repo}: the token cannot push to this repository")
        if data.get("archived"):
            raise BadInput(f"{repo}: the repository is archived")
        require_topic(repo, data)
        default = data.get("default_branch")
        branch = base or (default if isinstance(default, str) and default else "main")
        with self._infra(f"{repo}: preflight", not_found_is_config=True):
            ref = self._get("/repos/{owner}/{repo}/git/ref/{ref}",
                            self._repo_url(repo, f"git/ref/heads/{quote(branch, safe='/')}"))
            sha = _dig(ref, "object", "sha")
            commit = self._get("/repos/{owner}/{repo}/git/commits/{commit_sha}",
                               self._repo_url(repo, f"git/commits/{sha}"))
            tree = _dig(commit, "tree", "sha")
        return BaseCommit(branch, sha, tree)

    def poll(self, repo: str, number: int, states: dict[str, ChannelState],
             reactions: bool = False, head_sha: str | None = None, trigger_comment: int | None = None) -> bool:
        """Refresh the three channels (plus the PR's reactions and the head commit's check
        runs, for bots that answer that way) with conditional GETs; True when anything changed."""
        changed = False
        channels: dict[str, tuple[str, str, str | None]] = {
            ch: ("/repos/{owner}/{repo}/" + _template(path), self._repo_url(repo, path.format(n=number)), None)
            for ch, path in CHANNEL_PATHS.items()}
        if reactions:
            channels["reactions"] = ("/repos/{owner}/{repo}/issues/{issue_number}/reactions",
                                     self._repo_url(repo, REACTIONS_PATH.format(n=number)), None)
        if trigger_comment:
            channels["trigger_reactions"] = ("/repos/{owner}/{repo}/issues/comments/{comment_id}/reactions",
                                             self._repo_url(repo, f"issues/comments/{trigger_comment}/reactions"),
                                             None)
        if head_sha:
            channels["check_runs"] = ("/repos/{owner}/{repo}/commits/{ref}/check-runs",
                                      self._repo_url(repo, f"commits/{head_sha}/check-runs"), "check_runs")
        for channel, (route, url, key) in channels.items():
            state = states.setdefault(channel, ChannelState())
            with self._infra(f"{repo}#{number}: poll {channel}"):
                try:
                    fresh = self.policy.call(lambda: self._read_channel(route, url, state, key),  # noqa: B023
                                             on_rate_limit=lambda s: _add_wait(state, s))  # noqa: B023
                except ApiFailure as exc:
                    # Check runs need the `checks: read` permission many tokens lack:
                    # without it we simply do not see them, as before.
                    if channel != "check_runs" or exc.status not in (403, 404):
                        raise
                    fresh = []
            if fresh is not None:
                fresh = mask_json(fresh)  # a comment quoting the token never reaches a capture or record
                changed = changed or fresh != state.items
                state.items = fresh
        return changed

    def _read_channel(self, route: str, url: str, state: ChannelState,
                      key: str | None) -> list[dict[str, Any]] | None:
        """Lists ascend by id, so new comments land on the *last* page: page 1's ETag only
        proves "unchanged" while everything fits on it. A longer list is re-read in full."""
        single_page = state.items is not None and len(state.items) < PER_PAGE
        items, etag = self._paginate(route, url, key=key, etag=state.etag if single_page else None)
        if items is not None:
            state.etag = etag
        return items

    def pull(self, repo: str, number: int) -> dict[str, Any]:
        with self._infra(f"{repo}#{number}", not_found_is_config=True):
            data = self._get("/repos/{owner}/{repo}/pulls/{pull_number}", self._repo_url(repo, f"pulls/{number}"))
        if not isinstance(data, dict):
            raise InfraFailure(f"{repo}#{number}: GitHub answered a pull request that is not a JSON object")
        return data

    def capture(self, repo: str, number: int) -> dict[str, Any]:
        """The raw JSON of a PR, its comment channels, reactions and check runs (``score --repo``)."""
        pull = self.pull(repo, number)
        head = pull.get("head")
        sha = head.get("sha") if isinstance(head, dict) else None
        states: dict[str, ChannelState] = {}
        self.poll(repo, number, states, reactions=True,
                  head_sha=sha if isinstance(sha, str) and _SHA.match(sha) else None)
        return {
            "repo": repo,
            "pull": pull,
            **{ch: list(state.items or []) for ch, state in states.items()},
            "manifest": {},
        }

    # --- writes -------------------------------------------------------------------
    def ensure_label(self, repo: str, name: str, color: str = "ededed", description: str = "") -> None:
        url = self._repo_url(repo, f"labels/{quote(name, safe='')}")
        with self._infra(f"{repo}: label {name}"):
            try:
                self._get("/repos/{owner}/{repo}/labels/{name}", url)
                return
            except ApiFailure as exc:
                if exc.status != 404:
                    raise

            def look() -> bool | None:
                try:
                    self._get("/repos/{owner}/{repo}/labels/{name}", url)
                    return True
                except ApiFailure as exc:
                    if exc.status == 404:
                        return None
                    raise

            self._create("POST", "/repos/{owner}/{repo}/labels", self._repo_url(repo, "labels"),
                         {"name": name, "color": color, "description": description}, look, lambda _d: True,
                         # 422: created meanwhile by a concurrent target
                         on_failure=lambda exc: True if exc.status == 422 and not exc.too_quickly else None)

    def push_commit(self, repo: str, base: BaseCommit, files: dict[str, str], branch: str,
                    message: str) -> str:
        """One commit holding every file (tree with inline content + commit + ref).

        Git objects are content-addressed, so a retried tree or commit leaves at most an
        unreferenced object behind, never a second branch: only the ref needs looking first.
        """
        elements = [{"path": path, "mode": "100644", "type": "blob", "content": text}
                    for path, text in sorted(files.items())]
        with self._infra(f"{repo}: push {branch}"):
            tree = self.policy.call(lambda: _dig(self._json(
                "POST", "/repos/{owner}/{repo}/git/trees", self._repo_url(repo, "git/trees"),
                body={"base_tree": base.tree_sha, "tree": elements}), "sha"))
            commit = self.policy.call(lambda: _dig(self._json(
                "POST", "/repos/{owner}/{repo}/git/commits", self._repo_url(repo, "git/commits"),
                body={"message": message, "tree": tree, "parents": [base.sha]}), "sha"))
            self._create_or_move_ref(repo, branch, commit)
            return commit

    def _ref_sha(self, repo: str, branch: str, policy: RetryPolicy | None = None) -> str | None:
        try:
            data = self._get("/repos/{owner}/{repo}/git/ref/{ref}",
                             self._repo_url(repo, f"git/ref/heads/{quote(branch, safe='/')}"), policy=policy)
        except ApiFailure as exc:
            if exc.status == 404:
                return None
            raise
        return _dig(data, "object", "sha")

    def _create_or_move_ref(self, repo: str, branch: str, sha: str) -> None:
        def moved(current: str | None) -> bool | None:
            if current is None:
                return None
            if current != sha:  # an earlier attempt of this run, or a 5xx that hid a success
                self.policy.call(lambda: self._json(
                    "PATCH", "/repos/{owner}/{repo}/git/refs/{ref}",
                    self._repo_url(repo, f"git/refs/heads/{quote(branch, safe='/')}"),
                    body={"sha": sha, "force": True}))
            return True

        def on_failure(exc: ApiFailure) -> bool | None:
            if exc.status == 422 and "already exists" in exc.message.lower():
                return moved(self._ref_sha(repo, branch))
            if exc.transient:  # a timeout or a 5xx: GitHub may still create it (delete_branch looks)
                self.unsettled_refs.add((repo, branch))
            return None

        self._create("POST", "/repos/{owner}/{repo}/git/refs", self._repo_url(repo, "git/refs"),
                     {"ref": f"refs/heads/{branch}", "sha": sha},
                     lambda: moved(self._ref_sha(repo, branch)), lambda _d: True, on_failure=on_failure)

    def find_open_pull(self, repo: str, branch: str) -> int | None:
        owner = repo.split("/")[0]
        items, _ = self.policy.call(lambda: self._paginate(
            "/repos/{owner}/{repo}/pulls", self._repo_url(repo, "pulls"),
            params={"state": "open", "head": f"{owner}:{branch}"}))
        for item in items or []:
            number = item.get("number")
            head = item.get("head")
            if isinstance(number, int) and isinstance(head, dict) and head.get("ref") == branch:
                return number
        return None

    def open_pull(self, repo: str, branch: str, base: str, title: str, body: str) -> int:
        def on_failure(exc: ApiFailure) -> int | None:
            if exc.status == 422 and "already exists" in exc._error_text():
                return self.find_open_pull(repo, branch)
            return None

        with self._infra(f"{repo}: could not open a PR from {branch}"):
            number = self._create("POST", "/repos/{owner}/{repo}/pulls", self._repo_url(repo, "pulls"),
                                  {"title": title, "head": branch, "base": base, "body": body},
                                  lambda: self.find_open_pull(repo, branch),
                                  lambda d: _int(_dig_any(d, "number"), "number"), on_failure=on_failure)
        return number

    def add_label(self, repo: str, number: int, label: str) -> None:
        # Adding a label is idempotent on GitHub: a blind retry cannot duplicate it.
        with self._infra(f"{repo}#{number}: label"):
            self.policy.call(lambda: self._json(
                "POST", "/repos/{owner}/{repo}/issues/{issue_number}/labels",
                self._repo_url(repo, f"issues/{number}/labels"), body={"labels": [label]}))

    def request_reviewer(self, repo: str, number: int, login: str, accept: frozenset[str] = frozenset()) -> bool:
        """Ask ``login`` for a review; True when GitHub lists the request afterwards.

        A bot whose review is not enabled is accepted with 2xx and silently dropped; the
        caller then waits a bounded time for any sign of it instead of the full timeout.
        A 422 (not a collaborator, not enabled) is final: :class:`ReviewerNotEnabled`.
        """
        url = self._repo_url(repo, f"pulls/{number}/requested_reviewers")
        what = f"{repo}#{number}: request review from {login}"
        try:
            data = self.policy.call(lambda: self._json(
                "POST", "/repos/{owner}/{repo}/pulls/{pull_number}/requested_reviewers", url,
                body={"reviewers": [login]}))
        except ApiFailure as exc:
            if exc.status == 422:
                raise ReviewerNotEnabled(f"{what}: GitHub refused the request ({exc.message}): "
                                         "review by this reviewer is not enabled for the repository") from None
            with self._infra(what):
                raise
        requested = data.get("requested_reviewers") if isinstance(data, dict) else None
        if not isinstance(requested, list):
            with self._infra(what):
                requested = _dig_any(self._get("/repos/{owner}/{repo}/pulls/{pull_number}/requested_reviewers",
                                               url), "users")
        names = {_norm_login(u.get("login")) for u in requested or [] if isinstance(u, dict)}
        wanted = {_norm_login(login)} | {_norm_login(x) for x in accept}
        return bool(names & wanted)

    def comment(self, repo: str, number: int, body: str) -> int | None:
        """Post an issue comment; its id (None if GitHub's answer did not say)."""
        url = self._repo_url(repo, f"issues/{number}/comments")

        def comment_id(data: Any) -> int | None:
            cid = data.get("id") if isinstance(data, dict) else None
            return cid if isinstance(cid, int) and not isinstance(cid, bool) else None

        def look() -> int | None:
            items, _ = self.policy.call(lambda: self._paginate(
                "/repos/{owner}/{repo}/issues/{issue_number}/comments", url))
            return next((comment_id(i) or -1 for i in items or [] if i.get("body") == body), None)

        with self._infra(f"{repo}#{number}: comment"):
            made = self._create("POST", "/repos/{owner}/{repo}/issues/{issue_number}/comments", url,
                                {"body": body}, look, lambda d: comment_id(d) or -1)
        return made if made > 0 else None

    def close_pull(self, repo: str, number: int, *, policy: RetryPolicy | None = None,
                   pace: bool = True) -> None:
        # Closing is idempotent: a retry after a hidden success closes a closed PR.
        with self._infra(f"{repo}#{number}: close"):
            (policy or self.policy).call(lambda: self._json(
                "PATCH", "/repos/{owner}/{repo}/pulls/{pull_number}", self._repo_url(repo, f"pulls/{number}"),
                body={"state": "closed"}, pace=pace))

    def pull_is_open(self, repo: str, number: int, *, policy: RetryPolicy | None = None) -> bool:
        with self._infra(f"{repo}#{number}"):
            data = self._get("/repos/{owner}/{repo}/pulls/{pull_number}", self._repo_url(repo, f"pulls/{number}"),
                             policy=policy)
        return not (isinstance(data, dict) and data.get("state") == "closed")

    def delete_branch(self, repo: str, branch: str, *, policy: RetryPolicy | None = None,
                      pace: bool = True) -> bool:
        """Delete ``branch``; False when it was already gone (also after a hidden success)."""
        url = self._repo_url(repo, f"git/refs/heads/{quote(branch, safe='/')}")

        def once() -> bool:
            try:
                # GitHub answers 204; a body that does not parse may hide a failed delete.
                self._json("DELETE", "/repos/{owner}/{repo}/git/refs/{ref}", url, pace=pace)
                return True
            except ApiFailure as exc:
                if exc.status in (404, 422):
                    return False
                # A push refused for a missing permission (a 403 on the tree, the commit or
                # the ref) made no branch, and the same permission refuses its delete: gone
                # is gone, whatever the delete was told.
                if exc.status == 403 and self._ref_sha(repo, branch, chosen) is None:
                    return False
                raise

        chosen = policy or self.policy
        with self._infra(f"{repo}: delete {branch}"):
            deleted = chosen.call(once)
            if (repo, branch) in self.unsettled_refs:
                deleted = self._delete_late_ref(repo, branch, chosen, once) or deleted
            return deleted

    def _delete_late_ref(self, repo: str, branch: str, policy: RetryPolicy, delete: Callable[[], bool]) -> bool:
        """A creation of this ref we gave up on (a timeout, a 5xx) may still be running on
        GitHub's side and create the ref after teardown deleted or missed it: a ghost canary
        branch. So look again for as long as a request gets (``request_timeout``), eleven
        times, deleting it whenever it is there. Bounded, and cut short by a signal's
        deadline (docs/github.md#53-retries-and-pacing-in-clients)."""
        self.unsettled_refs.discard((repo, branch))
        step = self.request_timeout / 10
        deleted = False
        for _ in range(11):
            if policy.deadline is not None and policy.clock.now() + step > policy.deadline:
                break
            policy.clock.sleep(step)
            if self._ref_sha(repo, branch, policy) is None:
                continue
            deleted = policy.call(delete) or deleted
        return deleted

    # --- issues (the regression issue on the metrics repository) -------------------
    def labelled_issues(self, repo: str, label: str, state: str = "open") -> list[dict[str, Any]]:
        """Issues carrying ``label``, oldest first. GitHub's issues list also returns pull
        requests (each with a ``pull_request`` key): they are left out here, so nothing
        downstream can mistake a PR for an issue and comment on or close it."""
        with self._infra(f"{repo}: list issues labelled {label!r}", not_found_is_config=True):
            items, _ = self.policy.call(lambda: self._paginate(
                "/repos/{owner}/{repo}/issues", self._repo_url(repo, "issues"),
                params={"labels": label, "state": state, "sort": "created", "direction": "asc"}))
        return [i for i in items or [] if "pull_request" not in i
                and isinstance(i.get("number"), int) and not isinstance(i.get("number"), bool)]

    def issue_comments(self, repo: str, number: int) -> list[dict[str, Any]]:
        with self._infra(f"{repo}#{number}: list comments"):
            items, _ = self.policy.call(lambda: self._paginate(
                "/repos/{owner}/{repo}/issues/{issue_number}/comments",
                self._repo_url(repo, f"issues/{number}/comments")))
        return items or []

    def find_open_issue(self, repo: str, label: str, marker: str) -> dict[str, Any] | None:
        """The oldest open issue with ``label`` whose body carries ``marker``: an issue a
        person opened with the same title but no marker is never ours."""
        return next((i for i in self.labelled_issues(repo, label)
                     if isinstance(i.get("body"), str) and marker in i["body"]), None)

    def open_issue(self, repo: str, title: str, body: str, label: str, marker: str) -> dict[str, Any]:
        """Open an issue labelled ``label`` (GitHub creates a missing label on the fly).
        Look-first: after a failure that may hide a success, the open issue with the label
        and ``marker`` is looked up and reused, so a retry never opens a second one."""
        def parse(data: Any) -> dict[str, Any]:
            _int(_dig_any(data, "number"), "number")
            return dict(data)

        with self._infra(f"{repo}: open issue"):
            return self._create("POST", "/repos/{owner}/{repo}/issues", self._repo_url(repo, "issues"),
                                {"title": title, "body": body, "labels": [label]},
                                lambda: self.find_open_issue(repo, label, marker), parse)

    def close_issue(self, repo: str, number: int, state_reason: str = "completed") -> None:
        # Closing is idempotent on GitHub (a closed issue stays closed, closed_at unchanged).
        with self._infra(f"{repo}#{number}: close issue"):
            self.policy.call(lambda: self._json(
                "PATCH", "/repos/{owner}/{repo}/issues/{issue_number}", self._repo_url(repo, f"issues/{number}"),
                body={"state": "closed", "state_reason": state_reason}))

    # --- GitHub App (a client whose token source is the App's JWT) ----------------
    def app_installation(self, repo: str) -> int:
        """The id of the App's installation that covers ``repo`` (its owner's, in practice)."""
        try:
            data = self._get("/repos/{owner}/{repo}/installation", self._repo_url(repo, "installation"))
        except ApiFailure as exc:
            if exc.status == 404:
                raise BadInput(f"{repo}: the GitHub App is not installed on {repo.split('/')[0]} or cannot see "
                               "this repository (install it there, with access to the canary repository)") from None
            raise _app_failure(exc, f"{repo}: find the GitHub App's installation") from None
        try:
            return _int(_dig_any(data, "id"), "id")
        except ApiFailure as exc:
            raise InfraFailure(f"{repo}: find the GitHub App's installation: {exc}") from None

    def installation_token(self, installation_id: int) -> tuple[str, str]:
        """A new installation access token and its ``expires_at`` (ISO 8601, as GitHub sends it).
        Not paced: a token is not content, and the secondary limit does not count it."""
        what = f"GitHub App installation {installation_id}: create an access token"
        try:
            data = self.policy.call(lambda: self._json(
                "POST", "/app/installations/{installation_id}/access_tokens",
                f"/app/installations/{installation_id}/access_tokens", body={}, pace=False))
            token, expires = _dig(data, "token"), _dig(data, "expires_at")
        except ApiFailure as exc:
            raise _app_failure(exc, what) from None
        register_secret(token)  # before anything could quote it
        check_token(token, what)
        return token, expires

    # --- janitor ------------------------------------------------------------------
    def repo_flags(self, repo: str) -> RepoFlags:
        """The repository's topics and archived flag: the janitor, like ``run``'s preflight,
        works only on a repository that opted in with the canary topic."""
        data = self.repository(repo)
        topics = data.get("topics")
        return RepoFlags(
            topics=tuple(t for t in topics or () if isinstance(t, str)),
            archived=bool(data.get("archived")),
        )

    def open_pulls(self, repo: str) -> list[dict[str, Any]]:
        with self._infra(f"{repo}: list PRs"):
            items, _ = self.policy.call(lambda: self._paginate(
                "/repos/{owner}/{repo}/pulls", self._repo_url(repo, "pulls"), params={"state": "open"}))
        return items or []

    def branches_with_prefix(self, repo: str, prefix: str) -> dict[str, str]:
        """branch name -> head sha for every branch starting with ``prefix``."""
        with self._infra(f"{repo}: list branches"):
            items, _ = self.policy.call(lambda: self._paginate(
                "/repos/{owner}/{repo}/git/matching-refs/{ref}",
                self._repo_url(repo, f"git/matching-refs/heads/{quote(prefix, safe='/')}")))
        out: dict[str, str] = {}
        for item in items or []:
            ref, obj = item.get("ref"), item.get("object")
            sha = obj.get("sha") if isinstance(obj, dict) else None
            if isinstance(ref, str) and ref.startswith("refs/heads/") and isinstance(sha, str):
                out[ref.removeprefix("refs/heads/")] = sha
        return out

    def commit_info(self, repo: str, sha: str) -> CommitInfo:
        """A commit's committer date and message: the janitor deletes an orphan branch only
        when its head commit carries the run marker, and only once it is old enough."""
        with self._infra(f"{repo}: commit {sha[:7]}"):
            raw = self._get("/repos/{owner}/{repo}/git/commits/{commit_sha}",
                            self._repo_url(repo, f"git/commits/{quote(sha, safe='')}"))
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


class ReviewerNotEnabled(InfraFailure):
    """The reviewer was asked but GitHub did not register the request (exit 4, outcome error)."""


def require_topic(repo: str, data: dict[str, Any]) -> None:
    topics = data.get("topics")
    if not isinstance(topics, list) or CANARY_TOPIC not in topics:
        raise BadInput(f"{repo}: not a canary repository: add the topic '{CANARY_TOPIC}' to it "
                       "(repository settings, About, Topics) to allow seeded pull requests")


def _app_failure(exc: ApiFailure, what: str) -> BadInput | InfraFailure:
    """401 on an App route means the JWT was refused: the id, the key or the clock is wrong."""
    if exc.status == 401:
        return BadInput(f"{what}: GitHub refused the App's JWT (401 {exc.message}): check --app-id, "
                        "--app-private-key and this machine's clock")
    if exc.status in (403, 404):
        return BadInput(f"{what}: GitHub answered {exc.status} {exc.message}")
    return InfraFailure(f"{what}: {exc}")


_SHA = re.compile(r"^[0-9a-f]{7,64}$")


def _template(path: str) -> str:
    return path.replace("pulls/{n}", "pulls/{pull_number}").replace("issues/{n}", "issues/{issue_number}")


def _norm_login(login: object) -> str:
    return str(login or "").lower().removesuffix("[bot]")


def _dig_any(data: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(data, dict):
            raise ApiFailure(200, f"expected an object with {key!r}", malformed=True)
        data = data.get(key)
    return data


def _dig(data: Any, *keys: str) -> str:
    value = _dig_any(data, *keys)
    if not isinstance(value, str) or not value:
        raise ApiFailure(200, f"expected a string at {'.'.join(keys)}", malformed=True)
    return value


def _int(value: Any, key: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ApiFailure(200, f"expected a positive integer at {key}", malformed=True)
    return value


def _add_wait(state: ChannelState, seconds: float) -> None:
    state.rate_limit_wait += seconds
