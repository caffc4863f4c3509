"""The sandbox's HTTP behaviour as one WSGI application: headers, limits, conditional requests, faults.

Everything a client could observe on the wire that is not an object shape lives here:
status lines, ``x-ratelimit-*`` on every response, weak ETags and uncharged 304s, the
``link`` header, secondary-limit 403s with ``retry-after``, injected faults (status,
headers, delay, dropped connection) and the request log that benchmarks count. Being a
plain WSGI callable, the same app is served over sockets by ``server.py`` (wsgiref) and
mounted in-process by ``transport.py`` (httpx), so both see one behaviour.

A dropped connection cannot be said in WSGI: the app raises ``ConnectionDropped`` and
each host turns it into what a client sees (a socket shut without an answer; httpx's
``RemoteProtocolError``). Tokens are read to authenticate and never stored, logged or echoed.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from redline_canary.sandbox import api
from redline_canary.sandbox.apps import NOT_AN_INSTALLATION, AppRegistry, Principal, token_digest
from redline_canary.sandbox.limits import NO_RESPONSE, Fault, RateWindow, RequestRecord, SecondaryLimit
from redline_canary.sandbox.model import DOCS, ApiError, User
from redline_canary.sandbox.render import Renderer
from redline_canary.sandbox.routing import Call
from redline_canary.sandbox.state import State

log = logging.getLogger("redline_canary.sandbox")

RATE_DOC = "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"
SECONDARY_MESSAGE = (
    "You have exceeded a secondary rate limit and have been temporarily blocked from content "
    "creation. Please retry your request again later."
)
EXPOSE = (
    "ETag, Link, Location, Retry-After, X-GitHub-OTP, X-RateLimit-Limit, X-RateLimit-Remaining, "
    "X-RateLimit-Used, X-RateLimit-Resource, X-RateLimit-Reset, X-OAuth-Scopes, "
    "X-Accepted-OAuth-Scopes, X-Poll-Interval, X-GitHub-Media-Type, X-GitHub-SSO, "
    "X-GitHub-Request-Id, Deprecation, Sunset"
)
UNCHARGED_ROUTES = frozenset({"/rate_limit"})
MAX_RECORDS = 200_000
# Hosts put the request target as the client sent it here (gunicorn's name for it): PATH_INFO
# is already percent-decoded, and route parameters are decoded once, after matching.
RAW_URI = "RAW_URI"

StartResponse = Callable[[str, list[tuple[str, str]]], Any]


class ConnectionDropped(Exception):
    """The answer is no answer: the host must close the connection without a response."""


@dataclass
class Response:
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes | None = None


@dataclass(frozen=True)
class Request:
    method: str
    raw_path: str
    query: list[tuple[str, str]]
    body: bytes
    authorization: str | None
    if_none_match: str | None

    @classmethod
    def from_environ(cls, environ: dict[str, Any]) -> Request:
        target = environ.get(RAW_URI)
        if isinstance(target, str) and target:
            split = urlsplit(target)
            path, query = split.path, split.query
        else:
            path, query = str(environ.get("PATH_INFO") or "/"), str(environ.get("QUERY_STRING") or "")
        stream = environ["wsgi.input"]
        length = str(environ.get("CONTENT_LENGTH") or "")
        if length.isdigit():
            body = stream.read(int(length)) if int(length) else b""
        elif "chunked" in str(environ.get("HTTP_TRANSFER_ENCODING", "")).lower():
            body = stream.read()
        else:
            body = b""
        return cls(
            method=str(environ["REQUEST_METHOD"]).upper(),
            raw_path=path,
            query=parse_qsl(query, keep_blank_values=True),
            body=body,
            authorization=environ.get("HTTP_AUTHORIZATION"),
            if_none_match=environ.get("HTTP_IF_NONE_MATCH"),
        )


class SandboxApp:
    """The wire policies over one State: call it as ``app(environ, start_response)``."""

    def __init__(self, state: State, url: str, token: str | None = None) -> None:
        self.state = state
        self.url = url
        self.renderer = Renderer(state, url, url)
        self._token_digest = token_digest(token) if token else None
        self.rate = RateWindow()
        self.secondary: SecondaryLimit | None = None
        self.apps = AppRegistry(state.clock)  # GitHub Apps: JWTs, installations, installation tokens
        self.token_expiry = _expiry(time.time() + 30 * 86400)
        self.faults: list[Fault] = []
        # Bounded so a long `sandbox serve` session cannot grow without limit.
        self.records: deque[RequestRecord] = deque(maxlen=MAX_RECORDS)
        self.lock = threading.Lock()

    # --- WSGI ----------------------------------------------------------------------------

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        resp = self.handle(Request.from_environ(environ))
        try:
            phrase = HTTPStatus(resp.status).phrase
        except ValueError:
            phrase = ""
        headers = dict(resp.headers)
        payload = resp.body if resp.status not in (204, 304) else None
        if resp.status not in (204, 304):
            headers["content-length"] = str(len(payload or b""))
        start_response(f"{resp.status} {phrase}", list(headers.items()))
        return [payload] if payload else []

    # --- knobs ---------------------------------------------------------------------------

    def add_fault(self, fault: Fault) -> Fault:
        with self.lock:
            self.faults.append(fault)
        return fault

    def take_fault(self, method: str, route: str, repo: str | None = None) -> Fault | None:
        with self.lock:
            for f in self.faults:
                if f.matches(method, route, repo):
                    f.hits += 1
                    return f
        return None

    def release_fault(self, fault: Fault) -> None:
        """Give back a hit taken by an ``after_write`` fault that had nothing to replace."""
        with self.lock:
            fault.hits = max(fault.hits - 1, 0)

    def record(self, rec: RequestRecord) -> None:
        with self.lock:
            self.records.append(rec)

    def authenticate(self, header: str | None) -> tuple[User | None, ApiError | None]:
        user, err, _principal = self.authenticate_principal(header)
        return user, err

    def authenticate_principal(self, header: str | None) -> tuple[User | None, ApiError | None, Principal | None]:
        """The user, or the error; and the App or installation when the credential is one."""
        if not header:
            return None, None, None
        scheme, _, credential = header.strip().partition(" ")
        if scheme.lower() not in ("token", "bearer", "basic") or not credential:
            return None, ApiError(401, "Bad credentials", doc=DOCS), None
        if self.apps.active and scheme.lower() != "basic":
            with self.lock:
                found = self.apps.identify(credential.strip())
            if isinstance(found, ApiError):
                return None, found, None
            if found is not None:
                return found.app.bot, None, found
        user, err = self._authenticate_token(scheme, credential)
        return user, err, None

    def _authenticate_token(self, scheme: str, credential: str) -> tuple[User | None, ApiError | None]:
        if (
            self._token_digest is not None
            and scheme.lower() != "basic"
            and not hmac.compare_digest(token_digest(credential.strip()), self._token_digest)
        ):
            return None, ApiError(401, "Bad credentials", doc=DOCS)
        return self.state.viewer, None

    # --- dispatch ------------------------------------------------------------------------

    def _base_headers(self) -> dict[str, str]:
        h = {
            "x-github-media-type": "github.v3; format=json",
            "x-github-api-version-selected": "2022-11-28",
            "access-control-expose-headers": EXPOSE,
            "access-control-allow-origin": "*",
            "x-content-type-options": "nosniff",
            "x-frame-options": "deny",
            "x-github-request-id": _request_id(),
        }
        h.update(self.rate.headers())
        cred = self.state.policies.credential
        if cred is not None:
            if cred.expires_at is not None:
                h["github-authentication-token-expiration"] = _expiry(cred.expires_at)
            if cred.kind == "classic":  # classic PATs name their scopes on every answer (octokit recordings)
                h["x-oauth-scopes"] = ", ".join(cred.scopes)
        elif self.state.policies.token is not None:
            # Fine-grained and other expiring tokens announce their expiry on every answer
            # (recorded in the 2026 PyGithub fixtures, e.g. git-ref_update_200).
            h["github-authentication-token-expiration"] = self.token_expiry
        return h

    def handle(self, req: Request) -> Response:
        """One request to one response (or ``ConnectionDropped``), in GitHub's order:
        faults, primary limit, authentication, secondary limit, route, token scope, body."""
        state, method = self.state, req.method
        path = req.raw_path
        if path.startswith("/repositories/"):
            parts = path.split("/", 3)
            repo = state.repo_by_id(int(parts[2])) if parts[2].isdigit() else None
            if repo is not None:
                path = f"/repos/{repo.full_name}" + (f"/{parts[3]}" if len(parts) > 3 else "")
        rt, params = api.match(method, path)
        template = rt.template if rt else req.raw_path
        doc = rt.doc if rt else DOCS

        full_name = f"{params['owner']}/{params['repo']}" if "owner" in params and "repo" in params else None
        fault = self.take_fault(method, template, full_name)
        before = fault if fault is not None and not fault.after_write else None
        after = fault if fault is not None and fault.after_write else None
        if before is not None:
            if before.delay:
                time.sleep(before.delay)
            if before.drop:
                self._drop(method, template, charged=False)
            if before.status is not None:
                return self._fault_reply(method, template, before, doc)

        now = state.clock()
        with self.lock:
            self.rate.roll(now)
            exhausted = self.rate.remaining <= 0 and template not in UNCHARGED_ROUTES
            if not exhausted and template not in UNCHARGED_ROUTES:
                self.rate.used += 1
            base = self._base_headers()
        if before is not None:
            base.update({k.lower(): v for k, v in before.headers.items()})

        def fail(err: ApiError, charged: bool) -> Response:
            if after is not None:
                self.release_fault(after)  # nothing was written: keep it for the next try
            payload = json.dumps(err.body(doc)).encode()
            headers = {**base, "content-type": "application/json; charset=utf-8", **err.headers}
            self.record(RequestRecord(method, template, err.status, charged))
            return Response(err.status, headers, payload)

        if exhausted:
            msg = f"API rate limit exceeded for user ID {state.viewer.id}."
            return fail(ApiError(self.rate.status, msg, doc=RATE_DOC), False)
        user, auth_err, principal = self.authenticate_principal(req.authorization)
        if auth_err is not None:
            return fail(auth_err, True)
        if user is None and (method != "GET" or template == "/user"):
            return fail(ApiError(401, "Requires authentication", doc=doc), True)
        if self.secondary is not None and template not in APP_ROUTES:  # a token is not content
            bucket = principal.bucket if principal is not None else _bucket(req.authorization)
            with self.lock:  # counted when counted, on the clock read under the lock: in order
                limit = self.secondary
                wait = limit.check(method, state.clock(), bucket) if limit is not None else None
            if limit is not None and wait is not None:
                err = ApiError(
                    limit.status,
                    SECONDARY_MESSAGE,
                    doc=f"{RATE_DOC}#about-secondary-rate-limits",
                    headers={"retry-after": str(wait)} if limit.send_retry_after else {},
                )
                return fail(err, True)
        if rt is None:
            return fail(ApiError(404, "Not Found", doc=doc), True)
        cred = state.policies.credential
        if cred is not None and cred.unreadable(rt.perm, full_name):
            err = ApiError(403, "Resource not accessible by personal access token", doc=doc,
                           headers={"x-accepted-github-permissions": rt.perm or ""})
            return fail(err, True)
        if cred is not None and cred.cannot_write(method, full_name):
            return fail(ApiError(404, "Not Found", doc=doc, headers={"x-accepted-oauth-scopes": "repo"}), True)
        refused = _app_scope(template, full_name, principal, rt.perm)
        if refused is not None:
            return fail(refused, True)
        token = state.policies.token
        if token is not None and token.denies(rt.perm, method, full_name):
            err = ApiError(
                403,
                "Resource not accessible by personal access token",
                doc=doc,
                headers={"x-accepted-github-permissions": rt.perm or ""},
            )
            return fail(err, True)
        try:
            body = json.loads(req.body) if req.body.strip() else None
        except ValueError:
            return fail(ApiError(400, "Problems parsing JSON", doc=doc), True)

        call = Call(
            method=method,
            path=path,
            query=req.query,
            body=body,
            params=params,
            viewer=user or state.viewer,
            state=state,
            r=self.renderer,
            server=self,
            route=rt,
            principal=principal,
        )
        try:
            with state.lock:
                reply = rt.handler(call)
                payload = None if reply.body is None else json.dumps(reply.body).encode()
        except ApiError as err:
            return fail(err, True)
        except Exception:
            log.exception("sandbox handler failed for %s %s", method, template)
            return fail(ApiError(500, "Server Error", doc=doc), True)

        headers = dict(base)
        if cred is not None and cred.kind == "classic":
            headers["x-accepted-oauth-scopes"] = "repo" if full_name is not None else ""
        elif rt.perm:
            headers["x-accepted-github-permissions"] = rt.perm
        if payload is not None:
            headers["content-type"] = "application/json; charset=utf-8"
            headers["cache-control"] = "private, max-age=60, s-maxage=60"
            headers["vary"] = "Accept, Authorization, Cookie, X-GitHub-OTP, Accept-Encoding"
        if reply.link:
            headers["link"] = reply.link
        headers.update(reply.headers)
        if payload is not None and reply.etag and 200 <= reply.status < 300:
            digest = hashlib.sha256(payload + (reply.link or "").encode()).hexdigest()
            headers["etag"] = f'W/"{digest}"' if method == "GET" else f'"{digest}"'
            inm = req.if_none_match
            if method == "GET" and inm and _etag_matches(inm, headers["etag"]):
                if template not in UNCHARGED_ROUTES:
                    with self.lock:
                        self.rate.used = max(self.rate.used - 1, 0)
                        headers.update(self.rate.headers())
                if after is not None:
                    self.release_fault(after)
                keep = {"content-type", "content-length", "link"}
                self.record(RequestRecord(method, template, 304, False))
                return Response(304, {k: v for k, v in headers.items() if k not in keep})
        if after is not None and 200 <= reply.status < 300:
            if after.delay:
                time.sleep(after.delay)
            if after.drop:
                self._drop(method, template, charged=True)
            return self._fault_reply(method, template, after, doc, charge=False)
        if after is not None:
            self.release_fault(after)
        elif before is not None:
            headers.update({k.lower(): v for k, v in before.headers.items()})
        self.record(RequestRecord(method, template, reply.status, template not in UNCHARGED_ROUTES))
        return Response(reply.status, headers, payload)

    def _drop(self, method: str, template: str, *, charged: bool) -> None:
        """No response at all; ``charged`` when the request was served first."""
        self.record(RequestRecord(method, template, NO_RESPONSE, charged))
        raise ConnectionDropped(f"{method} {template}")

    def _fault_reply(self, method: str, template: str, fault: Fault, doc: str, *, charge: bool = True) -> Response:
        """Answer with the fault; ``charge=False`` when the served request already paid."""
        status = fault.status
        assert status is not None
        with self.lock:
            self.rate.roll(self.state.clock())
            if charge:
                self.rate.used += 1
            headers = self._base_headers()
        extra = {k.lower(): v for k, v in fault.headers.items()}
        if isinstance(fault.body, (bytes, str)):
            # Raw bytes under GitHub's JSON content type: what a truncated or garbled JSON
            # answer looks like on the wire. The fault's headers may say otherwise.
            payload = fault.body.encode() if isinstance(fault.body, str) else fault.body
        else:
            body = (
                fault.body
                if fault.body is not None
                else _default_fault_body(status, extra, self.state.viewer.id, doc, secondary=fault.secondary)
            )
            payload = json.dumps(body).encode()
        headers["content-type"] = "application/json; charset=utf-8"
        headers.update(extra)
        self.record(RequestRecord(method, template, status, True))
        return Response(status, headers, None if status in (204, 304) else payload)


def _expiry(at: float) -> str:
    """GitHub's spelling: ``2025-02-04 16:42:10 UTC`` (issue-comment_get_200.pygithub.json)."""
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(at))


# The routes only the App's JWT opens (doctor reads the first two; a run uses the last two).
APP_ROUTES = frozenset({"/app", "/app/installations", "/repos/{owner}/{repo}/installation",
                        "/app/installations/{installation_id}/access_tokens"})
INSTALLATION_ROUTES = frozenset({"/installation/repositories"})  # an installation token only


def _app_scope(template: str, full_name: str | None, principal: Principal | None,
               perm: str | None = None) -> ApiError | None:
    """What GitHub refuses by who asks: the App routes want the App's JWT (401 otherwise),
    the JWT opens nothing else (403), an installation token only its own repositories (404)
    and only what its permissions grant (403 "Resource not accessible by integration",
    naming the permission in ``x-accepted-github-permissions``)."""
    if template in APP_ROUTES:
        if principal is None or principal.installation is not None:
            return ApiError(401, "A JSON web token could not be decoded", doc=DOCS)
        return None
    if template in INSTALLATION_ROUTES and (principal is None or principal.installation is None):
        return ApiError(403, NOT_AN_INSTALLATION, doc=DOCS)
    if principal is None:
        return None
    if principal.installation is None or template == "/user":
        return ApiError(403, "Resource not accessible by integration", doc=DOCS)
    if full_name is not None and not principal.installation.covers(full_name):
        return ApiError(404, "Not Found", doc=DOCS)
    if full_name is not None and principal.installation.denies(perm):
        return ApiError(403, "Resource not accessible by integration", doc=DOCS,
                        headers={"x-accepted-github-permissions": perm or ""})
    return None


def _bucket(authorization: str | None) -> str:
    """A personal token's secondary-limit budget is its own: keyed by a digest, never the token."""
    if not authorization:
        return "anonymous"
    return "token:" + hashlib.sha256(authorization.strip().partition(" ")[2].strip().encode()).hexdigest()[:16]


def _request_id() -> str:
    raw = os.urandom(10).hex().upper()
    return f"{raw[0:4]}:{raw[4:9]}:{raw[9:16]}:{raw[16:20]}:{int(time.time()):X}"


def _etag_matches(header: str, etag: str) -> bool:
    if header.strip() == "*":
        return True
    bare = etag.removeprefix("W/")
    return any(t.strip().removeprefix("W/") == bare for t in header.split(","))


def _default_fault_body(
    status: int, headers: dict[str, str], user_id: int, doc: str, *, secondary: bool = False
) -> Any:
    if status in (403, 429) and (secondary or "retry-after" in headers):
        message = SECONDARY_MESSAGE
        doc = f"{RATE_DOC}#about-secondary-rate-limits"
    elif status in (403, 429) and headers.get("x-ratelimit-remaining") == "0":
        message = f"API rate limit exceeded for user ID {user_id}."
        doc = RATE_DOC
    elif status >= 500:
        message = "Server Error"
    else:
        try:
            message = HTTPStatus(status).phrase
        except ValueError:
            message = "Error"
    return {"message": message, "documentation_url": doc, "status": str(status)}
