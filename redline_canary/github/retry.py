"""The one place that decides whether and how long to wait before trying GitHub again.

GitHub tells us when to come back: ``Retry-After`` on secondary limits and 429s,
``x-ratelimit-reset`` when the primary budget is spent. We honour those (parsed
defensively: a header is hostile input like any other), back off exponentially with
jitter on 5xx, dropped connections, timeouts and malformed bodies, and stop after a
bounded number of attempts, a bounded total wait *and*, when one is set, a deadline (the
runner's budget after a signal). A POST is never retried blindly: its caller looks for
the object first (see ``GitHubClient``), because a 502 may hide a success.
"""

from __future__ import annotations

import email.utils
import math
import os
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TypeVar

import tenacity

from redline_canary.github.clock import Clock, RealClock
from redline_canary.github.decipher import ApiFailure

T = TypeVar("T")

# GitHub: "if you are rate limited and there is no retry-after header, wait at least one minute".
SECONDARY_DEFAULT_WAIT = 60.0
MAX_RETRY_AFTER = 3600.0  # anything longer is not worth waiting for inside one run
TIME_SCALE_VAR = "REDLINE_CANARY_TIME_SCALE"


def time_scale_from_env() -> float:
    """Test mode (as stamina's): every retry wait and HTTP timeout is multiplied by this.

    Only the tool's own tests set it, so a fault scenario with ``Retry-After: 60`` runs in
    milliseconds through the real CLI. Anything unparseable means 1 (real time).
    """
    try:
        value = float(os.environ.get(TIME_SCALE_VAR, "1"))
    except ValueError:
        return 1.0
    return value if math.isfinite(value) and 0 < value <= 1 else 1.0


@dataclass
class RetryPolicy:
    max_attempts: int = 5
    max_total_wait: float = 300.0  # seconds spent sleeping across attempts of one call
    base: float = 1.0
    cap: float = 60.0
    clock: Clock = field(default_factory=RealClock)
    wall_time: Callable[[], float] = time.time  # epoch seconds, for x-ratelimit-reset and dates
    jitter: Callable[[], float] = random.random
    deadline: float | None = None  # clock.now() after which no wait starts (a signal's budget)
    scale: float = 1.0  # test mode: real sleeps are this fraction of the computed wait

    def with_deadline(self, deadline: float | None, *, max_attempts: int | None = None) -> RetryPolicy:
        return replace(self, deadline=deadline, max_attempts=max_attempts or self.max_attempts)

    def delay_for(self, failure: ApiFailure, attempt: int) -> float:
        """Seconds to wait before attempt ``attempt + 1`` (never negative, never NaN)."""
        retry_after = failure.headers.get("retry-after")
        if retry_after is not None:
            seconds = parse_retry_after(retry_after, self.wall_time())
            if seconds is not None:
                return seconds
        if failure.rate_limited and failure.headers.get("x-ratelimit-remaining") == "0":
            reset = failure.headers.get("x-ratelimit-reset", "").strip()
            if reset.isdigit() and len(reset) <= 12:
                return min(MAX_RETRY_AFTER, max(1.0, int(reset) - self.wall_time() + 1))
        if failure.rate_limited:
            return SECONDARY_DEFAULT_WAIT
        if failure.head_not_ready:
            return min(4.0, 0.5 * 2.0 ** (attempt - 1))
        backoff = min(self.cap, self.base * 2.0 ** (attempt - 1))
        return float(backoff / 2 + backoff / 2 * self.jitter())

    def retryable(self, exc: BaseException, *, retry_transient: bool = True) -> bool:
        if not isinstance(exc, ApiFailure):
            return False
        return exc.rate_limited or exc.head_not_ready or (retry_transient and exc.transient)

    def call(self, fn: Callable[[], T], *, retry_transient: bool = True,
             on_rate_limit: Callable[[float], None] | None = None) -> T:
        """Run ``fn`` until it succeeds or the policy gives up (then re-raise the last failure).

        ``on_rate_limit(seconds)`` is told of each wait a rate limit imposes, before it starts:
        a poll held up past its deadline by GitHub's limit is our failure to watch, and the
        cycle must not mistake it for a reviewer's silence."""

        def before_sleep(state: tenacity.RetryCallState) -> None:
            exc = state.outcome.exception() if state.outcome else None
            if on_rate_limit is not None and isinstance(exc, ApiFailure) and exc.rate_limited \
                    and state.next_action is not None:
                on_rate_limit(state.next_action.sleep)

        def wait(state: tenacity.RetryCallState) -> float:
            exc = state.outcome.exception() if state.outcome else None
            assert isinstance(exc, ApiFailure)
            return self.delay_for(exc, state.attempt_number)

        def stop(state: tenacity.RetryCallState) -> bool:
            if state.attempt_number >= self.max_attempts:
                return True
            upcoming = wait(state)
            if self.deadline is not None and self.clock.now() + upcoming * self.scale > self.deadline:
                return True
            return state.idle_for + upcoming > self.max_total_wait

        retrying = tenacity.Retrying(
            retry=tenacity.retry_if_exception(lambda e: self.retryable(e, retry_transient=retry_transient)),
            wait=wait,
            stop=stop,
            sleep=lambda seconds: self.clock.sleep(seconds * self.scale),
            before_sleep=before_sleep,
            reraise=True,
        )
        return retrying(fn)


def parse_retry_after(value: str, now: float) -> float | None:
    """Seconds from a ``Retry-After`` value: integer or decimal seconds, or an HTTP date.

    Negative values clamp to 0, huge ones to an hour; anything else (``soon``, ``nan``,
    garbage) is None, and the caller falls back to GitHub's documented default.
    """
    value = value.strip()[:64]
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        seconds = math.nan
        try:
            parsed = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError, OverflowError):
            parsed = None
        if parsed is not None:
            try:
                seconds = parsed.timestamp() - now
            except (OverflowError, OSError, ValueError):
                return None
    if not math.isfinite(seconds):
        return None
    return min(MAX_RETRY_AFTER, max(0.0, seconds))
