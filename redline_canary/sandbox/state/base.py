"""What every resource of the sandbox world shares: the lock, the clock, ids, events.

``World`` holds the data (users, repositories, teams, the object store) and the two rules
every layer needs: a read-only repository refuses writes, and a change a reviewer may
wake on is emitted to the listeners. The resources build on it one layer at a time
(users, git data, repositories, issues, pulls, reviews), each in its own module, each
calling only the layers below it; ``State`` is the top.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Literal

from redline_canary.sandbox import gitstore as g
from redline_canary.sandbox.model import ApiError, Repo, Team, User
from redline_canary.sandbox.policies import Policies

EventKind = Literal["opened", "review_requested", "comment"]


@dataclass(frozen=True)
class Event:
    """Something a reviewer may wake up on."""

    kind: EventKind
    repo: str
    number: int
    actor: str
    requested: tuple[str, ...] = ()
    comment_id: int | None = None
    body: str = ""


@dataclass
class _Counters:
    repo: Iterator[int] = field(default_factory=lambda: itertools.count(812_000_001))
    user: Iterator[int] = field(default_factory=lambda: itertools.count(191_000_001))
    issue: Iterator[int] = field(default_factory=lambda: itertools.count(3_100_000_001))
    pull: Iterator[int] = field(default_factory=lambda: itertools.count(2_400_000_001))
    issue_comment: Iterator[int] = field(default_factory=lambda: itertools.count(3_200_000_001))
    review: Iterator[int] = field(default_factory=lambda: itertools.count(2_900_000_001))
    review_comment: Iterator[int] = field(default_factory=lambda: itertools.count(2_100_000_001))
    label: Iterator[int] = field(default_factory=lambda: itertools.count(8_800_000_001))
    reaction: Iterator[int] = field(default_factory=lambda: itertools.count(310_000_001))
    team: Iterator[int] = field(default_factory=lambda: itertools.count(12_000_001))


class World:
    """The data of the sandbox's GitHub under one re-entrant lock. ``viewer`` (the token's
    user) is set by ``State``, once users can be made."""

    viewer: User

    def __init__(self, clock: Callable[[], float]) -> None:
        self.lock = threading.RLock()
        self.clock = clock
        self.store = g.ObjectStore()
        self.ids = _Counters()
        self.users: dict[str, User] = {}
        self.repos: dict[str, Repo] = {}
        self.teams: dict[tuple[str, str], Team] = {}
        self.listeners: list[Callable[[Event], None]] = []
        self._diff_cache: dict[tuple[str, str], dict[str, g.FileDiff]] = {}
        self.tree_payload_cap: int | None = None  # bytes of inline content per POST /git/trees
        self.policies = Policies()

    def check_writable(self, repo: Repo, doc: str) -> None:
        if not repo.writable:
            raise ApiError(403, "Resource not accessible by personal access token", doc=doc)

    def emit(self, event: Event) -> None:
        for listener in list(self.listeners):
            listener(event)
