"""One WSGI app, two hosts: on a socket (wsgiref) and in-process (httpx) it answers alike.

What a client sees of the host itself: HTTP/1.1 with kept-alive connections, the interim
``100 Continue`` before a body is sent, chunked bodies, and a dropped-connection fault that
really drops (no byte on the socket; the same httpx error in-process).
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator

import httpx
import pytest

from redline_canary.sandbox import Sandbox
from tests.helpers.sandboxing import TOKEN

REPO = "acme/wire"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture(params=["socket", "in-process"])
def client(request: pytest.FixtureRequest) -> Iterator[tuple[Sandbox, httpx.Client]]:
    with Sandbox(token=TOKEN, listen=request.param == "socket") as sb:
        sb.create_repo(REPO, files={"README.md": "hi\n"})
        transport = None if sb.listening else sb.transport()
        with httpx.Client(base_url=sb.url, headers=AUTH, transport=transport) as c:
            yield sb, c


def _raw(sb: Sandbox, data: bytes, *, expect_interim: bool = False) -> tuple[bytes, bytes]:
    """Send ``data`` on a fresh connection; (interim answer if waited for, everything after)."""
    host, port = sb.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=5) as s:
        interim = b""
        if expect_interim:
            head, _, rest = data.partition(b"\r\n\r\n")
            s.sendall(head + b"\r\n\r\n")
            interim = s.recv(1024)
            data = rest
        s.sendall(data)
        s.shutdown(socket.SHUT_WR)
        chunks = []
        while chunk := s.recv(65536):
            chunks.append(chunk)
        return interim, b"".join(chunks)


def test_same_answers_in_process_and_on_a_socket(client: tuple[Sandbox, httpx.Client]) -> None:
    sb, c = client
    first = c.get(f"/repos/{REPO}")
    assert first.status_code == 200 and first.json()["full_name"] == REPO
    assert first.headers["x-ratelimit-used"] == "1" and first.headers["etag"].startswith('W/"')
    again = c.get(f"/repos/{REPO}", headers={"If-None-Match": first.headers["etag"]})
    assert again.status_code == 304 and again.content == b"" and "content-length" not in again.headers
    assert again.headers["x-ratelimit-used"] == "1"  # a 304 is not charged
    made = c.post(f"/repos/{REPO}/labels", json={"name": "x", "color": "zz"})
    assert made.status_code == 422 and made.json()["message"] == "Validation Failed"
    assert c.get("/nowhere").status_code == 404
    assert [(r.method, r.status, r.charged) for r in sb.requests] == [
        ("GET", 200, True), ("GET", 304, False), ("POST", 422, True), ("GET", 404, True)]


def test_a_dropped_connection_is_httpx_remote_protocol_error_on_both_hosts(
    client: tuple[Sandbox, httpx.Client],
) -> None:
    sb, c = client
    sb.inject_fault("GET", "/repos/{owner}/{repo}", drop=True, times=1)
    with pytest.raises(httpx.RemoteProtocolError):
        c.get(f"/repos/{REPO}")
    assert c.get(f"/repos/{REPO}").status_code == 200  # the next request is served
    assert [r.status for r in sb.requests] == [0, 200]


def test_a_dropped_connection_sends_not_one_byte() -> None:
    with Sandbox(token=TOKEN) as sb:
        sb.create_repo(REPO)
        sb.inject_fault("GET", "/repos/{owner}/{repo}", drop=True, times=1)
        request = f"GET /repos/{REPO} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n\r\n".encode()
        assert _raw(sb, request) == (b"", b"")


def test_http_1_1_keep_alive_100_continue_and_chunked_bodies() -> None:
    with Sandbox(token=TOKEN) as sb:
        sb.create_repo(REPO)
        body = json.dumps({"name": "chunked", "color": "ededed"}).encode()
        chunked = f"{len(body):x}\r\n".encode() + body + b"\r\n0\r\n\r\n"
        request = (f"POST /repos/{REPO}/labels HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n"
                   "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
                   "Expect: 100-continue\r\n\r\n").encode() + chunked
        second = f"GET /repos/{REPO}/labels/chunked HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode()
        interim, rest = _raw(sb, request + second, expect_interim=True)
        assert interim == b"HTTP/1.1 100 Continue\r\n\r\n"
        answers = rest.split(b"HTTP/1.1 ")[1:]
        assert [a.split(b"\r\n", 1)[0] for a in answers] == [b"201 Created", b"200 OK"]  # one connection
        assert b"\r\nServer: redline-canary-sandbox\r\n" in rest
        assert json.loads(answers[1].split(b"\r\n\r\n", 1)[1])["name"] == "chunked"
