"""The sandbox's wire-level knobs: scripted faults, the primary and secondary rate limits.

Plain data with the arithmetic GitHub applies (window rolls, per-minute and per-hour
counts); the WSGI app (``app.py``) consults them under its lock for every request.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field
from typing import Any, NamedTuple

NO_RESPONSE = 0  # status recorded for a dropped connection


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
    """GitHub's content-creation limit: more than N writes per window -> 403 or 429, per token.

    ``per_hour`` counts over 60 windows. ``scale`` runs simulated time faster, for benchmarks
    of many targets: the windows last ``window / scale`` real seconds (``scale=60``: one
    simulated hour per real minute) and ``retry-after`` is given in simulated seconds, so a
    client on the same time scale waits as long as GitHub would make it.

    ``send_retry_after=False`` omits the ``retry-after`` header; GitHub's docs then tell
    the client to "wait for at least one minute" (docs/github.md §5.2). The block still
    lifts when the window has passed.
    """

    per_minute: int | None
    per_hour: int | None = None
    window: float = 60.0
    retry_after: int | None = None
    status: int = 403
    methods: frozenset[str] = frozenset({"POST", "PATCH", "PUT"})
    send_retry_after: bool = True
    scale: float = 1.0
    # One budget per token, as GitHub counts it (an App installation's tokens share one).
    buckets: dict[str, deque[float]] = field(default_factory=dict)

    def check(self, method: str, now: float, bucket: str = "") -> int | None:
        """Seconds to wait if this request is over ``bucket``'s limit, else None (and count it)."""
        if method not in self.methods:
            return None
        stamps = self.buckets.setdefault(bucket, deque())
        minute = self.window / self.scale
        hour = max(minute * 60, minute)
        while stamps and now - stamps[0] >= hour:
            stamps.popleft()
        recent = sorted(t for t in stamps if now - t < minute)
        if self.per_minute is not None and len(recent) >= self.per_minute:
            wait = minute - (now - recent[0]) if recent else minute
            return self.retry_after if self.retry_after is not None else self._seconds(wait)
        # Count by time, never by position: a caller's clock may not be monotonic.
        in_hour = sorted(t for t in stamps if now - t < hour)
        if self.per_hour is not None and len(in_hour) >= self.per_hour:
            wait = hour - (now - in_hour[0]) if in_hour else hour
            return self.retry_after if self.retry_after is not None else self._seconds(wait)
        stamps.append(now)
        return None

    def _seconds(self, wait: float) -> int:
        """``retry-after`` in simulated seconds: a client on the same time scale waits as long."""
        return max(1, math.ceil(wait * self.scale))
