"""What a GitHub answer means, decided without I/O (in the manner of gidgethub's
``decipher_response``): a pure function of status, headers and body bytes, so the client,
the tests and any future transport agree on one reading.

GitHub's words are hostile input like any other: ``clean`` masks every registered secret
(an answer may quote the credential it refused), then strips control characters and
bounds the length before a message can reach a terminal, a log or a record. Masking comes
first: a secret cut in half by the bound would no longer be found, and its first half
(a JWT's header and claims) would be shown.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from redline_canary.errors import mask

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]+")


def clean(text: object, limit: int = 200) -> str:
    """Outside words, safe for a one-line message: no secret, no control characters, bounded."""
    out = _CONTROL.sub(" ", mask(str(text))).strip()
    return out if len(out) <= limit else out[: limit - 1] + "…"


class ApiFailure(Exception):
    """A non-2xx answer, a malformed body, or no answer (``status`` 0) from GitHub.

    Holds no request headers, so it can never carry the token; ``message`` is GitHub's
    (hostile) text, already stripped of control characters and shortened by the client.
    """

    def __init__(self, status: int, message: str, headers: Mapping[str, str] | None = None,
                 what: str = "", *, malformed: bool = False, body: Any = None) -> None:
        self.status = status
        self.message = message
        self.headers = {str(k).lower(): str(v) for k, v in (headers or {}).items()}
        self.what = what
        self.malformed = malformed
        self.body = body if isinstance(body, dict) else {}
        super().__init__(f"{what}: HTTP {status} {message}".strip(": "))

    @property
    def rate_limited(self) -> bool:
        if self.status == 429:
            return True
        if self.status == 422 and self.too_quickly:
            return True
        if self.status != 403 or self.permission_denied:
            return False
        return (
            "retry-after" in self.headers
            or self.headers.get("x-ratelimit-remaining") == "0"
            or "rate limit" in self.message.lower()
        )

    @property
    def transient(self) -> bool:
        """A server or network failure (or a garbled body) that may succeed later."""
        return self.malformed or self.status == 0 or self.status in (500, 502, 503, 504)

    @property
    def permission_denied(self) -> bool:
        """A fine-grained token (or an App) without the permission a route needs."""
        return self.status == 403 and self.message.lower().startswith("resource not accessible by")

    @property
    def missing_permission(self) -> str:
        """What GitHub says the route needs (``x-accepted-github-permissions``), made safe to print."""
        raw = self.headers.get("x-accepted-github-permissions", "")
        safe = "".join(c for c in raw if c.isalnum() or c in "_=,; ")[:120].strip()
        return safe or "unknown (GitHub did not say)"

    @property
    def too_quickly(self) -> bool:
        """422 "was submitted too quickly": GitHub's content-creation limit on PRs."""
        return self.status == 422 and "too quickly" in self._error_text()

    @property
    def head_not_ready(self) -> bool:
        """422 on ``head`` right after the ref was made: the pulls API does not see it yet."""
        if self.status != 422:
            return False
        errors = self.body.get("errors")
        return isinstance(errors, list) and any(
            isinstance(e, dict) and e.get("field") == "head" and e.get("code") == "invalid" for e in errors)

    def _error_text(self) -> str:
        parts = [self.message]
        errors = self.body.get("errors")
        if isinstance(errors, list):
            parts += [str(e.get("message", "")) for e in errors if isinstance(e, dict)]
        return " ".join(parts).lower()




def decipher(status: int, reason: str, headers: Mapping[str, str], content: bytes, what: str) -> None:
    """Return for 2xx/304; raise :class:`ApiFailure` with GitHub's own (cleaned) words otherwise."""
    if 200 <= status < 300 or status == 304:
        return
    try:
        data = json.loads(content) if content else None
    except (ValueError, UnicodeDecodeError, RecursionError):
        data = None
    message = data.get("message") if isinstance(data, dict) else None
    text = clean(message if isinstance(message, str) else reason)
    if isinstance(data, dict):
        errors = data.get("errors")
        if isinstance(errors, list) and errors and isinstance(errors[0], dict):
            detail = errors[0].get("message") or errors[0].get("code") or ""
            text += f" ({clean(detail, 120)})" if detail else ""
    raise ApiFailure(status, text, dict(headers), what, body=data)


def decode_json(status: int, content: bytes, what: str) -> Any:
    """The body as JSON (None when empty); a garbled body is a transient failure, since the
    same request usually answers properly the next time."""
    if status == 204 or not content:
        return None
    try:
        return json.loads(content)
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise ApiFailure(status, "malformed JSON body", what=what, malformed=True) from None
