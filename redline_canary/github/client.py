"""The one seam to GitHub: every request of the product goes through :meth:`GitHubClient._send`.

One httpx client speaks the ~20 routes the cycle and the regression issue need, so one place decides what a
response means (``_decipher``), what is retried (:class:`RetryPolicy`), what is paced
(every content-creating request takes a :class:`Pacer` slot) and where the token may go:

* the token rides only in the ``Authorization`` header of requests to the API origin; a
  redirect is followed without it, a pagination ``Link`` is followed only to the API's own
  scheme, host and port, at most ``MAX_PAGES`` pages and never the same URL twice;
* nothing the client raises contains a request header, and every message passes GitHub's
  text through ``_clean`` (control characters out, length bounded);
* creates look before they retry: a 5xx, a dropped connection or a garbled body may hide a
  write that happened, so the object is looked up first and reused when it exists.
"""

from __future__ import annotations

import os
import re
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import quote, urlsplit

import httpx

from redline_canary import __version__
from redline_canary.clock import Clock, RealClock
from redline_canary.errors import BadInput, InfraFailure, register_secret
from redline_canary.github.decipher import ApiFailure, decipher, decode_json
from redline_canary.github.doctor_checks import Answer
from redline_canary.github.forge import CHANNEL_PATHS, BaseCommit, ChannelState
from redline_canary.github.pacing import Pacer
from redline_canary.github.recorder import Recorder
from redline_canary.github.retry import RetryPolicy, time_scale_from_env

DEFAULT_API_URL = "https://api.github.com"
TOKEN_VARS = ("REDLINE_CANARY_TOKEN", "GITHUB_TOKEN")
# A repository opts in to receiving seeded PRs by carrying this topic, so a typo in the
# targets can never open a PR full of vulnerabilities on a real project.
CANARY_TOPIC = "redline-canary"
REACTIONS_PATH = "issues/{n}/reactions"
PER_PAGE = 100  # GitHub's maximum
MAX_PAGES = 50  # 5 000 items per list: far beyond any review, short of a runaway loop
MAX_REDIRECTS = 3
T = TypeVar("T")
# A token, or where to get the current one: a GitHub App's installation token expires
# after an hour and is refreshed before that, so every request asks for it anew.
TokenSource = Callable[[], str]


def token_from_env(environ: Mapping[str, str] | None = None) -> str:
    env = os.environ if environ is None else environ
    for var in TOKEN_VARS:
        value = env.get(var, "").strip()
        if value:
            check_token(value, var)
            return value
    raise BadInput(f"no token: set {' or '.join(TOKEN_VARS)}")


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def check_token(token: str, source: str = "token") -> None:
    """A token must fit in an HTTP header; say so before it reaches an encoder's traceback."""
    if not token.isascii() or not token.isprintable() or any(c.isspace() for c in token):
        raise BadInput(f"{source}: the token contains characters HTTP headers cannot carry")


def validate_api_url(value: str | None, where: str = "--api-url") -> str | None:
    """An http(s) API root with a host; credentials, queries and fragments are refused
    (a password in a URL ends up in logs, and the token already authenticates)."""
    if value is None:
        return None
    if _CONTROL.search(value) or " " in value:
        raise BadInput(f"{where}: must not contain spaces or control characters")
    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError as exc:
        raise BadInput(f"{where}: not a valid URL ({exc})") from None
    if parts.scheme not in ("http", "https"):
        raise BadInput(f"{where}: expected an http:// or https:// URL, got {_shown(value)}")
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        raise BadInput(f"{where}: must not carry credentials (user:password@); the token "
                       "comes from REDLINE_CANARY_TOKEN")
    if not parts.hostname:
        raise BadInput(f"{where}: no host in {_shown(value)}")
    if parts.query or parts.fragment or value.endswith(("?", "#")):
        raise BadInput(f"{where}: must not have a query or fragment")
    if port == 0:
        raise BadInput(f"{where}: port 0 is not a server port")
    return value


def _shown(value: str) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def check_api_url(url: str) -> str:
    """An http(s) URL with a host and nothing that could smuggle credentials or a query."""
    return (validate_api_url(url) or DEFAULT_API_URL).strip().rstrip("/")


def _origin(url: str | httpx.URL) -> tuple[str, str, int | None]:
    u = httpx.URL(str(url))
    port = u.port or (443 if u.scheme == "https" else 80)
    return u.scheme, u.host, port


class GitHubClient:
    """Everything the product asks of GitHub, counted per route."""

    def __init__(self, token: str | TokenSource, api_url: str | None = None, *, clock: Clock | None = None,
                 policy: RetryPolicy | None = None, pacer: Pacer | None = None,
                 timeout: float = 30.0, transport: httpx.BaseTransport | None = None,
                 recorder: Recorder | None = None) -> None:
        """``transport`` replaces the network (the sandbox mounted in-process, in tests);
        ``recorder`` writes every answer, scrubbed of the token (``run --record``).
        ``token`` may be a :data:`TokenSource`, asked before every request (it must check and
        register what it returns, as a fixed token is checked and registered here)."""
        if isinstance(token, str):
            check_token(token)
            register_secret(token)
            if recorder is not None:
                recorder.add_secret(token)
            fixed = token
            self._token: TokenSource = lambda: fixed
        elif recorder is not None:
            source = token

            def recorded() -> str:
                value = source()
                recorder.add_secret(value)  # an installation token never reaches a recording either
                return value

            self._token = recorded
        else:
            self._token = token
        self.api_url = check_api_url(api_url or DEFAULT_API_URL)
        self._origin = _origin(self.api_url)
        self.clock = clock or RealClock()
        scale = time_scale_from_env()
        self.policy = policy or RetryPolicy(clock=self.clock, scale=scale)
        self.pacer = pacer or Pacer(self.clock)
        self._http = httpx.Client(
            base_url=self.api_url, timeout=max(timeout * scale, min(timeout, 1.0)), follow_redirects=False,
            transport=transport,
            headers={"Accept": "application/vnd.github+json",
                     "X-GitHub-Api-Version": "2022-11-28",
                     "User-Agent": f"redline-canary/{__version__}"},
            event_hooks={"response": [recorder.response]} if recorder is not None else None,
        )
        self.counts: Counter[str] = Counter()  # "METHOD route" -> requests, "... 304" separately
        self._lock = threading.Lock()

    def close(self) -> None:
        self._http.close()

    # --- plumbing -----------------------------------------------------------------
    def _count(self, key: str) -> None:
        with self._lock:
            self.counts[key] += 1

    def _send(self, method: str, route: str, url: str, *, body: Any = None,
              params: dict[str, Any] | None = None, headers: dict[str, str] | None = None,
              pace: bool = True) -> httpx.Response:
        """One request, one answer: an httpx.Response (2xx or 304) or an ApiFailure."""
        what = f"{method} {route}"
        slot = self.pacer.acquire() if pace and method != "GET" else None
        try:
            # after the pacer's wait, which may outlast a token: a source refreshes it per request
            auth = {"Authorization": f"Bearer {self._token()}"}
            self._count(what)
            resp = self._http.request(method, url, json=body, params=params, headers={**auth, **(headers or {})})
            for _hop in range(MAX_REDIRECTS):
                nxt = resp.next_request
                if not resp.is_redirect or nxt is None:
                    break
                nxt.headers.pop("Authorization", None)  # a redirect never carries the token
                resp = self._http.send(nxt)
        except httpx.HTTPError as exc:
            raise ApiFailure(0, exc.__class__.__name__, what=what) from None
        finally:
            if slot is not None:
                self.pacer.release(slot)
        try:
            _decipher(resp, what)
        except ApiFailure as exc:
            if exc.rate_limited and exc.headers.get("x-ratelimit-remaining") != "0":
                self.pacer.slow_down()  # a secondary limit: the token's budget is shared with more than us
            raise
        return resp

    def _json(self, method: str, route: str, url: str, *, body: Any = None,
              params: dict[str, Any] | None = None, pace: bool = True) -> Any:
        resp = self._send(method, route, url, body=body, params=params, pace=pace)
        return _decode(resp, f"{method} {route}")

    def _get(self, route: str, url: str, *, params: dict[str, Any] | None = None,
             policy: RetryPolicy | None = None) -> Any:
        return (policy or self.policy).call(lambda: self._json("GET", route, url, params=params))

    def _create(self, method: str, route: str, url: str, body: Any, look: Callable[[], T | None],
                parse: Callable[[Any], T], *, policy: RetryPolicy | None = None,
                on_failure: Callable[[ApiFailure], T | None] | None = None) -> T:
        """A content-creating request, retried by the look-first rule: after a failure that
        may hide a success, ``look`` for the object and reuse it; create again only if absent."""

        def once() -> T:
            try:
                return parse(self._json(method, route, url, body=body))
            except ApiFailure as exc:
                if on_failure is not None:
                    handled = on_failure(exc)
                    if handled is not None:
                        return handled
                if exc.transient:
                    found = look()
                    if found is not None:
                        return found
                raise

        return (policy or self.policy).call(once)

    def _paginate(self, route: str, url: str, *, params: dict[str, Any] | None = None,
                  key: str | None = None, etag: str | None = None,
                  ) -> tuple[list[dict[str, Any]] | None, str | None]:
        """All pages of a list (None when page 1 answered 304) and page 1's ETag.

        Follows ``rel="next"`` only on the API's own origin, at most MAX_PAGES pages, and
        stops on a URL it has already read (a Link pointing back at itself).
        """
        items: list[dict[str, Any]] = []
        seen: set[str] = set()
        next_url: str | None = url
        page_params: dict[str, Any] | None = {"per_page": PER_PAGE, **(params or {})}
        first_etag: str | None = None
        for page_number in range(MAX_PAGES):
            assert next_url is not None
            headers = {"If-None-Match": etag} if etag and page_number == 0 else None
            resp = self._send("GET", route, next_url, params=page_params, headers=headers)
            if resp.status_code == 304:
                self._count(f"GET {route} 304")
                return None, etag
            page = _decode(resp, f"GET {route}")
            if key is not None and isinstance(page, dict):
                page = page.get(key)  # check runs come wrapped: {"total_count", "check_runs"}
            if not isinstance(page, list) or not all(isinstance(x, dict) for x in page):
                raise ApiFailure(resp.status_code, "expected a JSON list of objects", what=f"GET {route}",
                                 malformed=True)
            items.extend(page)
            if page_number == 0:
                first_etag = resp.headers.get("etag")
            seen.add(str(resp.request.url))
            nxt = resp.links.get("next", {}).get("url")
            if not nxt:
                break
            absolute = resp.request.url.join(nxt)
            if _origin(absolute) != self._origin or str(absolute) in seen:
                break  # another host must never see the token; a loop must never spin
            next_url, page_params = str(absolute), None
        return items, first_etag

    def _repo_url(self, repo: str, tail: str = "") -> str:
        owner, _, name = repo.partition("/")
        return f"/repos/{quote(owner, safe='')}/{quote(name, safe='')}" + (f"/{tail}" if tail else "")

    @contextmanager
    def _infra(self, what: str, *, not_found_is_config: bool = False) -> Iterator[None]:
        """Turn a final ApiFailure into the exit-code exceptions the CLI understands."""
        try:
            yield
        except ApiFailure as exc:
            if exc.permission_denied:
                raise BadInput(f"{what}: the token lacks a permission this needs: {exc.missing_permission} "
                               f"(GitHub: {exc.message})") from None
            if exc.status == 401 or (exc.status == 404 and not_found_is_config):
                raise BadInput(f"{what}: GitHub answered {exc.status} {exc.message} "
                               "(check the repository name, the API URL and the token)") from None
            if exc.status == 410:  # issues turned off, or the issue deleted: no retry brings it back
                raise BadInput(f"{what}: GitHub answered 410 {exc.message}") from None
            raise InfraFailure(f"{what}: {exc}") from None

    # --- doctor: reads whose failures are answers ----------------------------------
    def _probe(self, route: str, url: str, *, params: dict[str, Any] | None = None) -> Answer:
        """A GET that never raises for GitHub's answer: ``doctor`` reports a 401, 403 or
        404 as a finding, so it gets the status, headers and body instead of an exception.
        Transient failures are retried by the one policy first."""
        def once() -> Answer:
            resp = self._send("GET", route, url, params=params)
            return Answer(resp.status_code, {k.lower(): v for k, v in resp.headers.items()},
                          _decode(resp, f"GET {route}") if resp.content else None)

        try:
            return self.policy.call(once)
        except ApiFailure as exc:
            return Answer(exc.status, dict(exc.headers), exc.body or None, exc.message)

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
                    fresh = self.policy.call(lambda: self._read_channel(route, url, state, key))  # noqa: B023
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

    def _ref_sha(self, repo: str, branch: str) -> str | None:
        try:
            data = self._get("/repos/{owner}/{repo}/git/ref/{ref}",
                             self._repo_url(repo, f"git/ref/heads/{quote(branch, safe='/')}"))
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
                raise

        with self._infra(f"{repo}: delete {branch}"):
            return (policy or self.policy).call(once)

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


def _decipher(resp: httpx.Response, what: str) -> None:
    decipher(resp.status_code, resp.reason_phrase, resp.headers, resp.content, what)


def _decode(resp: httpx.Response, what: str) -> Any:
    return decode_json(resp.status_code, resp.content, what)


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
