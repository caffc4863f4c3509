"""A shared budget for content-creating requests across concurrent targets.

GitHub's secondary limit trips at about 80 content-creating requests a minute and 500 an
hour. Every POST/PATCH/DELETE of every target takes a slot here first, so twenty targets
running at once slow down instead of being locked out.
"""

from __future__ import annotations

import threading
from collections import deque

from redline_canary.clock import Clock


class Pacer:
    def __init__(self, clock: Clock, per_minute: int = 80, per_hour: int = 500) -> None:
        self.clock = clock
        self.limits = ((60.0, per_minute), (3600.0, per_hour))
        self.stamps: deque[float] = deque()
        self.lock = threading.Lock()
        self.waited = 0.0

    def acquire(self) -> None:
        while True:
            with self.lock:
                now = self.clock.now()
                while self.stamps and now - self.stamps[0] >= 3600.0:
                    self.stamps.popleft()
                wait = 0.0
                for window, limit in self.limits:
                    recent = [t for t in self.stamps if now - t < window]
                    if len(recent) >= limit:
                        wait = max(wait, recent[-limit] + window - now)
                if wait <= 0:
                    self.stamps.append(now)
                    return
                self.waited += wait
            self.clock.sleep(wait)
