"""Time at the edge: the wall clock for records, and an interruptible monotonic clock
for waits. The pure core never reads either; the cycle receives a :class:`Clock`, so a
40-minute wait runs in milliseconds under :class:`FakeClock` in tests.
"""

from __future__ import annotations

import datetime as _dt
import threading
import time
from typing import Protocol


def utc_now_iso() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def wall_now() -> float:
    """Epoch seconds: for comparing with dates GitHub sends (a token's expiry)."""
    return time.time()


class Cancelled(Exception):
    """The run was asked to stop (SIGINT/SIGTERM); teardown must still happen."""


class Clock(Protocol):
    def now(self) -> float: ...

    def sleep(self, seconds: float) -> None: ...

    def check(self) -> None:
        """Raise :class:`Cancelled` if the run was asked to stop (between steps, not only in sleeps)."""


class RealClock:
    """Monotonic time; ``sleep`` wakes early and raises :class:`Cancelled` on cancel."""

    def __init__(self, cancel: threading.Event | None = None) -> None:
        self.cancel = cancel or threading.Event()
        self.cancelled_at: float | None = None

    def request_cancel(self) -> None:
        """What a signal handler calls: remember when, so teardown knows its budget."""
        if self.cancelled_at is None:
            self.cancelled_at = self.now()
        self.cancel.set()

    def now(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        if self.cancel.wait(max(0.0, seconds)):
            raise Cancelled()

    def check(self) -> None:
        if self.cancel.is_set():
            raise Cancelled()


class FakeClock:
    """Advances only when slept on: waits of any length take no real time."""

    def __init__(self, start: float = 0.0) -> None:
        self.t = start
        self.slept: list[float] = []
        self._lock = threading.Lock()

    def now(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        with self._lock:
            self.slept.append(seconds)
            self.t += max(0.0, seconds)

    def check(self) -> None:
        return None
