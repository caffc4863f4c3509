"""The one place that decides whether and how long to wait before trying GitHub again.

GitHub tells us when to come back: ``Retry-After`` on secondary limits and 429s,
``x-ratelimit-reset`` when the primary budget is spent. We honour those, back off
exponentially with jitter on 5xx and dropped connections, and stop after a bounded number
of attempts *and* a bounded total wait. A POST is never retried blindly: its caller looks
for the object first (see ``GitHubClient``), because a 502 may hide a success.
"""

from __future__ import annotations

import email.utils
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TypeVar

import tenacity

from redline_canary.clock import Clock, RealClock

T = TypeVar("T")


class ApiFailure(Exception):
    """A non-2xx answer (or no answer: ``status`` 0) from GitHub, without secrets."""

    def __init__(self, status: int, message: str, headers: Mapping[str, str] | None = None,
                 what: str = "") -> None:
        self.status = status
        self.message = message
        self.headers = {k.lower(): v for k, v in (headers or {}).items()}
        self.what = what
        super().__init__(f"{what}: HTTP {status} {message}".strip(": "))

    @property
    def rate_limited(self) -> bool:
        if self.status == 429:
            return True
        if self.status != 403:
            return False
        return (
            "retry-after" in self.headers
            or self.headers.get("x-ratelimit-remaining") == "0"
            or "rate limit" in self.message.lower()
        )

    @property
    def transient(self) -> bool:
        """A server or network failure that may succeed later."""
        return self.status == 0 or self.status in (500, 502, 503, 504)


@dataclass
class RetryPolicy:
    max_attempts: int = 5
    max_total_wait: float = 300.0  # seconds spent sleeping across attempts
    base: float = 1.0
    cap: float = 60.0
    clock: Clock = field(default_factory=RealClock)
    wall_time: Callable[[], float] | None = None  # epoch seconds, for x-ratelimit-reset
    jitter: Callable[[], float] = random.random

    def delay_for(self, failure: ApiFailure, attempt: int) -> float:
        """Seconds to wait before attempt ``attempt + 1``."""
        retry_after = failure.headers.get("retry-after")
        if retry_after is not None:
            seconds = _parse_retry_after(retry_after, self._epoch())
            if seconds is not None:
                return seconds
        if failure.rate_limited and failure.headers.get("x-ratelimit-remaining") == "0":
            reset = failure.headers.get("x-ratelimit-reset", "")
            if reset.isdigit():
                return max(1.0, int(reset) - self._epoch() + 1)
        if failure.rate_limited:
            return 60.0  # GitHub: "wait at least one minute" for secondary limits
        backoff = min(self.cap, self.base * 2.0 ** (attempt - 1))
        return float(backoff / 2 + backoff / 2 * self.jitter())

    def _epoch(self) -> float:
        if self.wall_time is not None:
            return self.wall_time()
        import time

        return time.time()

    def call(self, fn: Callable[[], T], *, retry_transient: bool = True) -> T:
        """Run ``fn`` until it succeeds or the policy gives up (then re-raise)."""

        def should_retry(exc: BaseException) -> bool:
            if not isinstance(exc, ApiFailure):
                return False
            return exc.rate_limited or (retry_transient and exc.transient)

        def wait(state: tenacity.RetryCallState) -> float:
            exc = state.outcome.exception() if state.outcome else None
            assert isinstance(exc, ApiFailure)
            return self.delay_for(exc, state.attempt_number)

        def stop(state: tenacity.RetryCallState) -> bool:
            if state.attempt_number >= self.max_attempts:
                return True
            upcoming = wait(state)
            return state.idle_for + upcoming > self.max_total_wait

        retrying = tenacity.Retrying(
            retry=tenacity.retry_if_exception(should_retry),
            wait=wait,
            stop=stop,
            sleep=self.clock.sleep,
            reraise=True,
        )
        return retrying(fn)


def _parse_retry_after(value: str, now: float) -> float | None:
    value = value.strip()
    if value.isdigit():
        return float(value)
    parsed = email.utils.parsedate_to_datetime(value) if value else None
    if parsed is None:
        return None
    return max(0.0, parsed.timestamp() - now)
