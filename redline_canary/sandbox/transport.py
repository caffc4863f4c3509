"""The sandbox mounted in-process: an httpx transport that calls the WSGI app directly.

For tests where sockets are not the point (most cycle tests): the same app, the same
State, the same faults and request log, no port, no threads per connection. A
dropped-connection fault surfaces as the error httpx raises when a server hangs up
without answering, so the client's handling of it is exercised as on a socket.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import httpx

from redline_canary.sandbox.app import RAW_URI, ConnectionDropped, SandboxApp, StartResponse

# What httpx's HTTP/1.1 transport says when the server closes without a response.
DISCONNECTED = "Server disconnected without sending a response."


class SandboxTransport(httpx.BaseTransport):
    def __init__(self, app: SandboxApp) -> None:
        self.app = app

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        raw = request.url.raw_path.decode("ascii")

        def app(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
            environ[RAW_URI] = raw  # as sent: PATH_INFO is percent-decoded already
            return self.app(environ, start_response)

        try:
            return httpx.WSGITransport(app=app).handle_request(request)
        except ConnectionDropped:
            raise httpx.RemoteProtocolError(DISCONNECTED, request=request) from None
