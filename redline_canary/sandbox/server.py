"""HTTP edge of the sandbox: sockets, headers, rate limits, conditional requests, faults.

Everything a client could observe on the wire that is not an object shape lives here:
status lines, ``x-ratelimit-*`` on every response, weak ETags and uncharged 304s, the
``link`` header, secondary-limit 403s with ``retry-after``, injected faults (status,
headers, delay, dropped connection) and the request log that benchmarks count.
Tokens are read to authenticate and never stored, logged or echoed.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import logging
import math
import os
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, NamedTuple
from urllib.parse import parse_qsl, urlsplit

from redline_canary.sandbox import api
from redline_canary.sandbox.model import DOCS, ApiError, User
from redline_canary.sandbox.render import Renderer
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
NO_RESPONSE = 0  # status recorded for a dropped connection
MAX_RECORDS = 200_000


class RequestRecord(NamedTuple):
    """One request as the product's budget sees it. ``status`` 0 = connection dropped."""

    method: str
    route: str
    status: int
    charged: bool


@dataclass
class Fault:
    """A scripted failure for requests matching ``method`` and ``route`` (None = any).

    ``times=None`` fires forever. With no ``status`` the request is served normally after
    ``delay``, with ``headers`` added (a ``Link`` to another host, or back at the same
    page); ``drop`` closes the socket without a response. A ``str``/``bytes`` ``body`` is
    sent raw (``"{not json"`` with status 200 is a malformed body); a JSON value is sent
    as JSON; None picks GitHub's body for the status.

    ``after_write``: the handler runs first, so the write really happens, and then its
    answer is replaced by this fault (``status``, or ``drop``), after ``delay``: "a write
    that succeeded but answered 5xx". Only successful answers are replaced; a request the
    handler refuses gets its real error. ``secondary``: the default body is the
    secondary-rate-limit message even without a ``retry-after`` header, as GitHub sends
    it when it wants the client to wait "at least one minute". ``repo`` (an OWNER/NAME)
    limits the fault to one repository's requests.
    """

    method: str | None = None
    route: str | None = None
    status: int | None = None
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None
    delay: float = 0.0
    drop: bool = False
    times: int | None = 1
    after_write: bool = False
    secondary: bool = False
    repo: str | None = None
    hits: int = 0

    def __post_init__(self) -> None:
        if self.status is not None and not 100 <= self.status <= 599:
            raise ValueError(f"fault status must be 100-599, got {self.status}")
        if self.after_write and self.status is None and not self.drop:
            raise ValueError("after_write needs a status (or drop) to answer with")
        if self.delay < 0:
            raise ValueError("fault delay must be >= 0")
        if self.times is not None and self.times < 1:
            raise ValueError("fault times must be >= 1 (None = always)")

    def matches(self, method: str, route: str, repo: str | None = None) -> bool:
        if self.times is not None and self.hits >= self.times:
            return False
        if self.method is not None and self.method.upper() != method:
            return False
        if self.repo is not None and (repo is None or repo.lower() != self.repo.lower()):
            return False
        return self.route is None or self.route == route

    @property
    def exhausted(self) -> bool:
        return self.times is not None and self.hits >= self.times


@dataclass
class RateWindow:
    """The primary ``core`` bucket: one per sandbox (the sandbox serves one token's view)."""

    limit: int = 5000
    used: int = 0
    reset: int = 0
    window: int = 3600
    status: int = 403

    def roll(self, now: float) -> None:
        if self.reset == 0 or now >= self.reset:
            self.used = 0
            self.reset = int(now) + self.window

    @property
    def remaining(self) -> int:
        return max(self.limit - self.used, 0)

    def headers(self) -> dict[str, str]:
        return {
            "x-ratelimit-limit": str(self.limit),
            "x-ratelimit-remaining": str(self.remaining),
            "x-ratelimit-reset": str(self.reset),
            "x-ratelimit-used": str(self.used),
            "x-ratelimit-resource": "core",
        }


@dataclass
class SecondaryLimit:
    """GitHub's content-creation limit: more than N writes per window -> 403 or 429.

    ``send_retry_after=False`` omits the ``retry-after`` header; GitHub's docs then tell
    the client to "wait for at least one minute" (github-api.md §5.2). The block still
    lifts when the window has passed.
    """

    per_minute: int | None
    per_hour: int | None = None
    window: float = 60.0
    retry_after: int | None = None
    status: int = 403
    methods: frozenset[str] = frozenset({"POST", "PATCH", "PUT"})
    send_retry_after: bool = True
    stamps: deque[float] = field(default_factory=deque)

    def check(self, method: str, now: float) -> int | None:
        """Seconds to wait if this request is over the limit, else None (and count it)."""
        if method not in self.methods:
            return None
        hour = max(self.window * 60, self.window)
        while self.stamps and now - self.stamps[0] >= hour:
            self.stamps.popleft()
        recent = [t for t in self.stamps if now - t < self.window]
        if self.per_minute is not None and len(recent) >= self.per_minute:
            wait = self.window - (now - recent[0]) if recent else self.window
            return self.retry_after if self.retry_after is not None else max(1, math.ceil(wait))
        if self.per_hour is not None and len(self.stamps) >= self.per_hour:
            wait = hour - (now - self.stamps[0]) if self.stamps else hour
            return self.retry_after if self.retry_after is not None else max(1, math.ceil(wait))
        self.stamps.append(now)
        return None


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    owner: SandboxServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up (timeout, injected delay) is normal here, not a traceback."""
        exc = sys.exc_info()[1]
        if isinstance(exc, (ConnectionError, TimeoutError)):
            log.debug("client %s went away: %s", client_address, exc)
            return
        log.exception("sandbox request from %s failed", client_address)


class SandboxServer:
    """Owns the listening socket and every wire-level policy; the world lives in State."""

    def __init__(
        self,
        state: State,
        host: str = "127.0.0.1",
        port: int = 0,
        token: str | None = None,
    ) -> None:
        self.state = state
        self.httpd = _HTTPServer((host, port), _Handler)
        self.httpd.owner = self
        bound_host, bound_port = self.httpd.server_address[:2]
        self.url = f"http://{bound_host!s}:{bound_port}"
        self.renderer = Renderer(state, self.url, self.url)
        self._token_digest = _digest(token) if token else None
        self.rate = RateWindow()
        self.secondary: SecondaryLimit | None = None
        expiry = time.gmtime(time.time() + 30 * 86400)
        self.token_expiry = time.strftime("%Y-%m-%d %H:%M:%S UTC", expiry)
        self.faults: list[Fault] = []
        # Bounded so a long `sandbox serve` session cannot grow without limit.
        self.records: deque[RequestRecord] = deque(maxlen=MAX_RECORDS)
        self.lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self.connections: set[socket.socket] = set()

    # --- lifecycle ---------------------------------------------------------------------

    def start(self) -> None:
        self._thread = threading.Thread(
            target=self.httpd.serve_forever,
            kwargs={"poll_interval": 0.01},  # shutdown latency, paid once per sandbox
            name="sandbox-http",
            daemon=True,
        )
        self._thread.start()

    def stop(self) -> None:
        """Stop accepting, then cut kept-alive connections so no client talks to a corpse."""
        if self._thread is not None:
            self.httpd.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self.httpd.server_close()
        with self.lock:
            conns = list(self.connections)
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)

    # --- knobs -------------------------------------------------------------------------

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
        if not header:
            return None, None
        scheme, _, credential = header.strip().partition(" ")
        if scheme.lower() not in ("token", "bearer", "basic") or not credential:
            return None, ApiError(401, "Bad credentials", doc=DOCS)
        if (
            self._token_digest is not None
            and scheme.lower() != "basic"
            and not _same(_digest(credential.strip()), self._token_digest)
        ):
            return None, ApiError(401, "Bad credentials", doc=DOCS)
        return self.state.viewer, None


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


def _same(a: bytes, b: bytes) -> bool:
    return hmac.compare_digest(a, b)


def _request_id() -> str:
    raw = os.urandom(10).hex().upper()
    return f"{raw[0:4]}:{raw[4:9]}:{raw[9:16]}:{raw[16:20]}:{int(time.time()):X}"


def _etag_matches(header: str, etag: str) -> bool:
    if header.strip() == "*":
        return True
    bare = etag.removeprefix("W/")
    return any(t.strip().removeprefix("W/") == bare for t in header.split(","))


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # One buffered write per response and no Nagle: otherwise headers and body leave in two
    # segments and every request waits ~40 ms for a delayed ACK.
    wbufsize = 1 << 16
    disable_nagle_algorithm = True
    server_version = "redline-canary-sandbox"
    sys_version = ""
    server: _HTTPServer

    def setup(self) -> None:
        super().setup()
        with self.server.owner.lock:
            self.server.owner.connections.add(self.connection)

    def finish(self) -> None:
        with self.server.owner.lock:
            self.server.owner.connections.discard(self.connection)
        with contextlib.suppress(OSError):
            super().finish()

    def handle_expect_100(self) -> bool:
        """Flush the interim 100 now: the buffered writer would otherwise hold it back."""
        ok = super().handle_expect_100()
        self.wfile.flush()
        return ok

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the stdlib access log: it would print paths to stderr on every request."""

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def do_PATCH(self) -> None:
        self._dispatch("PATCH")

    def do_PUT(self) -> None:
        self._dispatch("PUT")

    def do_DELETE(self) -> None:
        self._dispatch("DELETE")

    # --- plumbing ------------------------------------------------------------------------

    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            return b"".join(chunks)
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _send(self, status: int, headers: dict[str, str], payload: bytes | None) -> None:
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        if status not in (204, 304):
            self.send_header("content-length", str(len(payload or b"")))
        self.end_headers()
        if payload and status not in (204, 304):
            self.wfile.write(payload)

    def _base_headers(self, sb: SandboxServer) -> dict[str, str]:
        h = {
            "x-github-media-type": "github.v3; format=json",
            "x-github-api-version-selected": "2022-11-28",
            "access-control-expose-headers": EXPOSE,
            "access-control-allow-origin": "*",
            "x-content-type-options": "nosniff",
            "x-frame-options": "deny",
            "x-github-request-id": _request_id(),
        }
        h.update(sb.rate.headers())
        if sb.state.policies.token is not None:
            # Fine-grained and other expiring tokens announce their expiry on every answer
            # (recorded in the 2026 PyGithub fixtures, e.g. git-ref_update_200).
            h["github-authentication-token-expiration"] = sb.token_expiry
        return h

    def _dispatch(self, method: str) -> None:
        sb = self.server.owner
        state = sb.state
        split = urlsplit(self.path)
        raw_path = split.path
        query = parse_qsl(split.query, keep_blank_values=True)
        raw_body = self._read_body()

        path = raw_path
        if raw_path.startswith("/repositories/"):
            parts = raw_path.split("/", 3)
            repo = state.repo_by_id(int(parts[2])) if parts[2].isdigit() else None
            if repo is not None:
                path = f"/repos/{repo.full_name}" + (f"/{parts[3]}" if len(parts) > 3 else "")
        rt, params = api.match(method, path)
        template = rt.template if rt else raw_path
        doc = rt.doc if rt else DOCS

        full_name = f"{params['owner']}/{params['repo']}" if "owner" in params and "repo" in params else None
        fault = sb.take_fault(method, template, full_name)
        if fault is not None and not fault.after_write:
            if fault.delay:
                time.sleep(fault.delay)
            if fault.drop:
                self._drop(sb, method, template, False)
                return
            if fault.status is not None:
                self._fault_reply(sb, method, template, fault, doc)
                return

        now = state.clock()
        with sb.lock:
            sb.rate.roll(now)
            exhausted = sb.rate.remaining <= 0 and template not in UNCHARGED_ROUTES
            if not exhausted and template not in UNCHARGED_ROUTES:
                sb.rate.used += 1
            base = self._base_headers(sb)
        if fault is not None and not fault.after_write:
            base.update({k.lower(): v for k, v in fault.headers.items()})

        def fail(err: ApiError, charged: bool) -> None:
            if fault is not None and fault.after_write:
                sb.release_fault(fault)  # nothing was written: keep it for the next try
            payload = json.dumps(err.body(doc)).encode()
            headers = {**base, "content-type": "application/json; charset=utf-8", **err.headers}
            self._send(err.status, headers, payload)
            sb.record(RequestRecord(method, template, err.status, charged))

        if exhausted:
            msg = f"API rate limit exceeded for user ID {state.viewer.id}."
            fail(ApiError(sb.rate.status, msg, doc=RATE_DOC), False)
            return
        user, auth_err = sb.authenticate(self.headers.get("Authorization"))
        if auth_err is not None:
            fail(auth_err, True)
            return
        if user is None and (method != "GET" or template == "/user"):
            fail(ApiError(401, "Requires authentication", doc=doc), True)
            return
        if sb.secondary is not None:
            with sb.lock:
                wait = sb.secondary.check(method, now)
            if wait is not None:
                assert sb.secondary is not None
                err = ApiError(
                    sb.secondary.status,
                    SECONDARY_MESSAGE,
                    doc=f"{RATE_DOC}#about-secondary-rate-limits",
                    headers={"retry-after": str(wait)} if sb.secondary.send_retry_after else {},
                )
                fail(err, True)
                return
        if rt is None:
            fail(ApiError(404, "Not Found", doc=doc), True)
            return
        token = state.policies.token
        if token is not None and token.denies(rt.perm, method, full_name):
            err = ApiError(
                403,
                "Resource not accessible by personal access token",
                doc=doc,
                headers={"x-accepted-github-permissions": rt.perm or ""},
            )
            fail(err, True)
            return
        try:
            body = json.loads(raw_body) if raw_body.strip() else None
        except ValueError:
            fail(ApiError(400, "Problems parsing JSON", doc=doc), True)
            return

        call = api.Call(
            method=method,
            path=path,
            query=query,
            body=body,
            params=params,
            viewer=user or state.viewer,
            state=state,
            r=sb.renderer,
            server=sb,
            route=rt,
        )
        try:
            with state.lock:
                reply = rt.handler(call)
                payload = None if reply.body is None else json.dumps(reply.body).encode()
        except ApiError as err:
            fail(err, True)
            return
        except Exception:
            log.exception("sandbox handler failed for %s %s", method, template)
            fail(ApiError(500, "Server Error", doc=doc), True)
            return

        headers = dict(base)
        if rt.perm:
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
            inm = self.headers.get("If-None-Match")
            if method == "GET" and inm and _etag_matches(inm, headers["etag"]):
                if template not in UNCHARGED_ROUTES:
                    with sb.lock:
                        sb.rate.used = max(sb.rate.used - 1, 0)
                        headers.update(sb.rate.headers())
                if fault is not None and fault.after_write:
                    sb.release_fault(fault)
                keep = {"content-type", "content-length", "link"}
                self._send(304, {k: v for k, v in headers.items() if k not in keep}, None)
                sb.record(RequestRecord(method, template, 304, False))
                return
        if fault is not None and fault.after_write and 200 <= reply.status < 300:
            if fault.delay:
                time.sleep(fault.delay)
            if fault.drop:
                self._drop(sb, method, template, True)
            else:
                self._fault_reply(sb, method, template, fault, doc, charge=False)
            return
        if fault is not None and fault.after_write:
            sb.release_fault(fault)
        elif fault is not None:
            headers.update({k.lower(): v for k, v in fault.headers.items()})
        self._send(reply.status, headers, payload)
        sb.record(RequestRecord(method, template, reply.status, template not in UNCHARGED_ROUTES))

    def _drop(self, sb: SandboxServer, method: str, template: str, charged: bool) -> None:
        """Close the socket without a response; ``charged`` when the request was served."""
        sb.record(RequestRecord(method, template, NO_RESPONSE, charged))
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)

    def _fault_reply(
        self,
        sb: SandboxServer,
        method: str,
        template: str,
        fault: Fault,
        doc: str,
        *,
        charge: bool = True,
    ) -> None:
        """Answer with the fault; ``charge=False`` when the served request already paid."""
        status = fault.status
        assert status is not None
        with sb.lock:
            sb.rate.roll(sb.state.clock())
            if charge:
                sb.rate.used += 1
            headers = self._base_headers(sb)
        extra = {k.lower(): v for k, v in fault.headers.items()}
        if isinstance(fault.body, (bytes, str)):
            # Raw bytes under GitHub's JSON content type: what a truncated or garbled JSON
            # answer looks like on the wire. The fault's headers may say otherwise.
            payload = fault.body.encode() if isinstance(fault.body, str) else fault.body
            headers["content-type"] = "application/json; charset=utf-8"
        else:
            body = (
                fault.body
                if fault.body is not None
                else _default_fault_body(status, extra, sb.state.viewer.id, doc, secondary=fault.secondary)
            )
            payload = json.dumps(body).encode()
            headers["content-type"] = "application/json; charset=utf-8"
        headers.update(extra)
        self._send(status, headers, None if status in (204, 304) else payload)
        sb.record(RequestRecord(method, template, status, True))


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


Clock = Callable[[], float]
