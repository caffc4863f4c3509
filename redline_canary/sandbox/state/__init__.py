"""Domain operations on the sandbox world, with GitHub's validation rules and messages.

Every HTTP route and every simulated reviewer goes through these methods under one
re-entrant lock, so a reviewer posting on a background thread can never interleave with a
half-applied request. Error texts are the ones recorded from GitHub (docs/github.md §2,
§2.1, §8) where a recording or a first-hand quote exists; the few that are not confirmed
say so next to them.

One module per resource, layered (each uses only those before it): ``base`` (lock, clock,
ids, events), ``users`` (users, teams), ``git`` (blobs, trees, commits, refs), ``repos``,
``issues`` (labels, assignees, comments, reactions), ``pulls`` (review requests, diff),
``reviews`` (reviews, inline comments). Check runs are plain JSON on the repository,
posted by reviewers and read by one route, so they need no layer.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from redline_canary.sandbox.state.base import Event, EventKind
from redline_canary.sandbox.state.git import valid_ref_name, valid_tree_path
from redline_canary.sandbox.state.reviews import Reviews

__all__ = ["Event", "EventKind", "State", "valid_ref_name", "valid_tree_path"]


class State(Reviews):
    """The sandbox's GitHub: one viewer (the token's user), repos, and a shared object store.

    ``clock`` is injectable so tests can age a world without sleeping.
    """

    def __init__(self, login: str, clock: Callable[[], float] = time.time) -> None:
        super().__init__(clock)
        self.viewer = self.ensure_user(login)
