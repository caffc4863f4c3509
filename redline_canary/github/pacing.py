"""A shared budget for content-creating requests across concurrent targets and jobs.

GitHub's secondary limit trips at about 80 content-creating requests a minute and 500 an
hour *per token*. Every POST/PATCH/DELETE of every target takes a slot here first, so
twenty targets running at once slow down instead of being locked out. A matrix of jobs
shares one token, so each job paces itself at its ``share`` of the budget (the workflow
passes the matrix's parallelism). GitHub does not publish the exact limits, and other
tools may spend the same token, so the pacer also adapts: the first secondary-limit
answer halves its rate (multiplicative decrease) and each quiet minute gives back a tenth
of the share (additive increase), as TCP does with a congested link.

A request counts in the window from the moment it takes its slot until GitHub has answered
it (``release``): GitHub counts it when it arrives, somewhere in between, so a request
that waited for the interpreter, a connection or a slow network must not let a later one
through early. Measured: 200 targets on one token through the in-process sandbox drew one
secondary-limit answer when requests counted only from their slot.
"""

from __future__ import annotations

import math
import threading
from collections import deque
from dataclasses import dataclass

from redline_canary.github.clock import Clock

MIN_FACTOR = 1 / 16  # never slower than 1/16 of the share: a run must still finish
INCREASE_STEP = 0.1  # factor given back per quiet RECOVERY seconds
RECOVERY = 60.0
MAX_FLIGHT = 600.0  # a slot never released (a bug) stops counting as in flight after this (HTTP timeout: 30 s)


@dataclass
class Slot:
    """One content-creating request's place in the budget: taken at ``at``; once answered,
    ``at`` is when the answer came, since GitHub may count the request only then."""

    at: float
    answered: bool = False


class Pacer:
    def __init__(self, clock: Clock, per_minute: int = 80, per_hour: int = 500, share: int = 1) -> None:
        if share < 1:
            raise ValueError("share must be at least 1")
        self.clock = clock
        self.share = share
        self.base = ((60.0, per_minute / share), (3600.0, per_hour / share))
        self.slots: deque[Slot] = deque()
        self.lock = threading.Lock()
        self.waited = 0.0
        self.factor = 1.0
        self.slowdowns = 0
        self._last_change = clock.now()

    def limits(self) -> tuple[tuple[float, int], ...]:
        """(window seconds, requests allowed) now: the share scaled by the adaptive factor."""
        return tuple((window, max(1, math.floor(limit * self.factor))) for window, limit in self.base)

    def slow_down(self) -> None:
        """GitHub answered a secondary rate limit: halve the rate (at most once per window
        of answers: concurrent requests that were already in flight all see the same limit)."""
        with self.lock:
            now = self.clock.now()
            if self.slowdowns and now - self._last_change < 1.0:
                return
            self.factor = max(MIN_FACTOR, self.factor / 2)
            self.slowdowns += 1
            self._last_change = now

    def _recover(self, now: float) -> None:
        while self.factor < 1.0 and now - self._last_change >= RECOVERY:
            self.factor = round(min(1.0, self.factor + INCREASE_STEP), 6)
            self._last_change += RECOVERY

    def acquire(self) -> Slot:
        """Wait for a slot; the slot is returned for :meth:`release` once GitHub has answered."""
        while True:
            with self.lock:
                now = self.clock.now()
                self._recover(now)
                while self.slots and self.slots[0].answered and now - self.slots[0].at >= 3600.0:
                    self.slots.popleft()
                # a request still in flight counts as now: GitHub may not have counted it yet
                times = sorted(s.at if s.answered else min(now, s.at + MAX_FLIGHT) for s in self.slots)
                wait = 0.0
                for window, limit in self.limits():
                    recent = [t for t in times if now - t < window]
                    if len(recent) >= limit:
                        wait = max(wait, recent[-limit] + window - now)
                if wait <= 0:
                    slot = Slot(now)
                    self.slots.append(slot)
                    return slot
                self.waited += wait
            self.clock.sleep(wait)

    def release(self, slot: Slot) -> None:
        """The request of ``slot`` was answered (or failed): it counts until now, not only from
        when it was sent."""
        with self.lock:
            slot.at, slot.answered = max(slot.at, self.clock.now()), True
