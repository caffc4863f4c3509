"""The sandbox's WSGI app on a real socket: wsgiref, one thread per connection, keep-alive.

wsgiref serves one request per connection as HTTP/1.0; clients that keep connections
alive (httpx, PyGithub's urllib3) and a cycle that polls from several threads at once
want GitHub's HTTP/1.1, so the handler loops over requests on a connection, answers
``Expect: 100-continue`` at once, reads chunked bodies, and really shuts the socket for a
dropped-connection fault. Everything else is the app's (``app.py``).
"""

from __future__ import annotations

import contextlib
import io
import logging
import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler
from socketserver import ThreadingMixIn
from typing import IO, Any, cast
from wsgiref.simple_server import ServerHandler, WSGIRequestHandler, WSGIServer

from redline_canary.sandbox.app import RAW_URI, ConnectionDropped, SandboxApp
from redline_canary.sandbox.state import State

log = logging.getLogger("redline_canary.sandbox")
SERVER_NAME = "redline-canary-sandbox"
MAX_REQUEST_LINE = 65536


class _Server(ThreadingMixIn, WSGIServer):
    daemon_threads = True
    allow_reuse_address = True
    connections: set[socket.socket]
    connections_lock: threading.Lock

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up (timeout, injected delay) is normal here, not a traceback."""
        exc = sys.exc_info()[1]
        if isinstance(exc, (ConnectionError, TimeoutError)):
            log.debug("client %s went away: %s", client_address, exc)
            return
        log.exception("sandbox request from %s failed", client_address)


class _ServerHandler(ServerHandler):
    """wsgiref's response writer, speaking HTTP/1.1 and adding nothing GitHub does not send."""

    http_version = "1.1"
    server_software = SERVER_NAME
    request_handler: WSGIRequestHandler
    dropped = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.os_environ = {}  # the process environment (tokens!) never enters a request's environ

    def finish_content(self) -> None:
        """No ``content-length: 0`` on a 204 or 304: the app sets lengths where they belong."""
        if not getattr(self, "headers_sent", False):
            self.send_headers()

    def handle_error(self) -> None:
        if isinstance(sys.exc_info()[1], ConnectionDropped):
            self.dropped = True
            return
        super().handle_error()


class _Handler(WSGIRequestHandler):
    protocol_version = "HTTP/1.1"
    # One buffered write per response and no Nagle: otherwise headers and body leave in two
    # segments and every request waits ~40 ms for a delayed ACK.
    wbufsize = 1 << 16
    disable_nagle_algorithm = True
    server_version = SERVER_NAME
    sys_version = ""
    server: _Server

    def setup(self) -> None:
        super().setup()
        with self.server.connections_lock:
            self.server.connections.add(self.connection)

    def finish(self) -> None:
        with self.server.connections_lock:
            self.server.connections.discard(self.connection)
        with contextlib.suppress(OSError):
            super().finish()

    def handle(self) -> None:
        """Requests until the client closes (wsgiref's own ``handle`` serves only one)."""
        BaseHTTPRequestHandler.handle(self)

    def handle_expect_100(self) -> bool:
        """Flush the interim 100 now: the buffered writer would otherwise hold it back."""
        ok = super().handle_expect_100()
        self.wfile.flush()
        return ok

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the stdlib access log: it would print paths to stderr on every request."""

    def get_stderr(self) -> Any:
        return _LogStream()

    def handle_one_request(self) -> None:
        self.raw_requestline = self.rfile.readline(MAX_REQUEST_LINE + 1)
        if len(self.raw_requestline) > MAX_REQUEST_LINE:
            self.send_error(414)
            return
        if not self.raw_requestline:
            self.close_connection = True
            return
        if not self.parse_request():
            return
        body = self._read_body()
        environ = self.get_environ()
        environ[RAW_URI] = self.path
        environ["CONTENT_LENGTH"] = str(len(body))
        environ.pop("HTTP_TRANSFER_ENCODING", None)  # the body is de-chunked already
        app = self.server.get_app()
        assert app is not None
        handler = _ServerHandler(io.BytesIO(body), cast(IO[bytes], self.wfile), self.get_stderr(), environ,
                                 multithread=True)
        handler.request_handler = self
        handler.run(app)
        if handler.dropped:
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)
            return
        self.wfile.flush()

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


class _LogStream(io.StringIO):
    """wsgi.errors: what the host writes about a failing app goes to the sandbox's log."""

    def write(self, text: str) -> int:
        if text.strip():
            log.error("%s", text.rstrip())
        return len(text)


class SandboxServer:
    """Owns the listening socket and serves the sandbox's WSGI app on it.

    The socket is bound in the constructor, so ``url`` (and the app, whose bodies carry
    it) is known before ``start()``. The world lives in State, the wire rules in ``app``.
    """

    def __init__(self, state: State, host: str = "127.0.0.1", port: int = 0, token: str | None = None) -> None:
        self.httpd = _Server((host, port), _Handler)
        self.httpd.connections = set()
        self.httpd.connections_lock = threading.Lock()
        bound_host, bound_port = self.httpd.server_address[:2]
        self.url = f"http://{bound_host!s}:{bound_port}"
        self.app = SandboxApp(state, self.url, token)
        self.httpd.set_app(self.app)
        self._thread: threading.Thread | None = None

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
        with self.httpd.connections_lock:
            conns = list(self.httpd.connections)
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
