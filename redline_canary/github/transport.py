"""The request layer under :class:`~redline_canary.github.client.GitHubClient`: every request
of the product goes through :meth:`ApiSession._send`.

What it owns: the one httpx client and the token, and so how a request is sent, what its
answer means (``_decipher``), what is retried (:class:`RetryPolicy`), what is paced (every
content-creating request takes a :class:`Pacer` slot), how a list is paged, and how a final
failure becomes the exit-code exceptions the CLI understands. Why apart from the client:
the client names the ~20 routes the product asks for and what each answer is read as; this
module decides, once for all of them, where the token may go:

* the token rides only in the ``Authorization`` header of requests to the API origin; a
  redirect is followed without it, a pagination ``Link`` is followed only to the API's own
  scheme, host and port, at most ``MAX_PAGES`` pages and never the same URL twice;
* nothing raised here contains a request header, and every message passes GitHub's text
  through ``decipher.clean`` (control characters out, length bounded);
* creates look before they retry (:meth:`ApiSession._create`): a 5xx, a dropped connection
  or a garbled body may hide a write that happened, so the object is looked up first and
  reused when it exists.
"""

from __future__ import annotations

import os
import re
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, TypeVar
from urllib.parse import quote, urlsplit

import httpx

from redline_canary import __version__
from redline_canary.errors import BadInput, InfraFailure, mask, register_secret
from redline_canary.github.clock import Clock, RealClock
from redline_canary.github.decipher import ApiFailure, decipher, decode_json
from redline_canary.github.doctor_checks import Answer
from redline_canary.github.pacing import Pacer
from redline_canary.github.recorder import Recorder
from redline_canary.github.retry import RetryPolicy, time_scale_from_env

DEFAULT_API_URL = "https://api.github.com"
TOKEN_VARS = ("REDLINE_CANARY_TOKEN", "GITHUB_TOKEN")
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
    text = repr(mask(value))  # masked before it is cut: a cut secret is no longer found
    return text if len(text) <= 80 else text[:77] + "..."


def check_api_url(url: str) -> str:
    """An http(s) URL with a host and nothing that could smuggle credentials or a query."""
    return (validate_api_url(url) or DEFAULT_API_URL).strip().rstrip("/")


def _origin(url: str | httpx.URL) -> tuple[str, str, int | None]:
    u = httpx.URL(str(url))
    port = u.port or (443 if u.scheme == "https" else 80)
    return u.scheme, u.host, port


class ApiSession:
    """One authenticated connection to the API: the token, the httpx client, the retry
    policy, the pacer and the per-route request counts."""

    def __init__(self, token: str | TokenSource, api_url: str | None = None, *, clock: Clock | None = None,
                 policy: RetryPolicy | None = None, pacer: Pacer | None = None,
                 timeout: float = 30.0, transport: httpx.BaseTransport | None = None,
                 recorder: Recorder | None = None) -> None:
        """``transport`` replaces the network (the sandbox mounted in-process, in tests);
        ``recorder`` writes every answer, scrubbed of the token (``run --record``).
        ``token`` may be a :data:`TokenSource`, asked before every request (it must check and
        register what it returns, as a fixed token is checked and registered here)."""
        # An installation token GitHub refuses (401) before its announced expiry was revoked
        # or outlived a drifting clock: a source that can refresh gets one chance per request.
        refresh: Callable[[str], str] | None = getattr(token, "refresh", None)
        if refresh is not None and recorder is not None:
            inner = refresh

            def refresh(stale: str) -> str:
                value = inner(stale)
                recorder.add_secret(value)
                return value

        self._refresh = refresh
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
            token = self._token()
            resp = self._request(what, method, url, token, body, params, headers)
            if resp.status_code == 401 and self._refresh is not None:
                # One refresh and one retry: a second 401 is an authentication error (below),
                # never a loop.
                fresh = self._refresh(token)
                if fresh != token:
                    resp = self._request(what, method, url, fresh, body, params, headers)
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

    def _request(self, what: str, method: str, url: str, token: str, body: Any,
                 params: dict[str, Any] | None, headers: dict[str, str] | None) -> httpx.Response:
        """One request with ``token`` in its header, redirects followed without it."""
        self._count(what)
        resp = self._http.request(method, url, json=body, params=params,
                                  headers={"Authorization": f"Bearer {token}", **(headers or {})})
        for _hop in range(MAX_REDIRECTS):
            nxt = resp.next_request
            if not resp.is_redirect or nxt is None:
                break
            nxt.headers.pop("Authorization", None)  # a redirect never carries the token
            resp = self._http.send(nxt)
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

    # --- the doctor's GET: a read whose failures are answers ------------------------
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


def _decipher(resp: httpx.Response, what: str) -> None:
    decipher(resp.status_code, resp.reason_phrase, resp.headers, resp.content, what)


def _decode(resp: httpx.Response, what: str) -> Any:
    return decode_json(resp.status_code, resp.content, what)
