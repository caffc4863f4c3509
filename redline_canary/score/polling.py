"""When to stop waiting for the reviewer (docs/architecture.md#one-walk-of-data). Pure: the caller brings the time.

A reviewer has finished when it says so (the profile's done, clean, skipped or error
signal) or when its activity has not changed for ``stable_polls`` consecutive polls after
it did something. No activity before the timeout means *silent*, which is never a score.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from redline_canary.review.comments import Comment
from redline_canary.review.extraction import Extraction, Signal
from redline_canary.score.defaults import default

FINAL_SIGNALS: tuple[Signal, ...] = ("done", "clean", "skipped", "error")
NO_TRACE = hashlib.sha256().hexdigest()  # the activity fingerprint of a reviewer that said nothing


@dataclass(frozen=True)
class PollConfig:
    interval: float = float(default("--poll-interval"))
    stable_polls: int = int(default("--stable-polls"))
    timeout: float = float(default("--timeout-minutes")) * 60
    # A trigger that may not have taken (a review request GitHub accepted but did not list,
    # or a trigger comment a vendor that always acknowledges has not answered): wait this
    # long for any trace of the reviewer, then end as `error`, not as a 40-minute silent.
    # Not at once: reports say Copilot sometimes reviews without ever being listed.
    unconfirmed_timeout: float = 10 * 60.0


@dataclass
class PollState:
    started_at: float
    polls: int = 0
    activity: int = 0
    fingerprint: str | None = None
    stable: int = 0
    verdict: str | None = None  # done | stable | timeout | unconfirmed | rate_limited
    # Seconds GitHub's rate limit held this PR's polls up: a deadline that passes during
    # such a wait, before any trace of the reviewer, is ours (`rate_limited`), not silence
    # (docs/matching.md#when-a-review-is-done).
    rate_limit_wait: float = 0.0
    finished_at: float | None = None
    # Why the trigger may not have taken (None: no doubt); any trace of the reviewer clears it.
    unconfirmed: str | None = None


def activity_fingerprint(comments: Sequence[Comment], is_reviewer: Callable[[Comment], bool]) -> str:
    """Changes whenever the reviewer adds, edits or removes anything. ``is_reviewer`` is the
    profile's own test (``profile.is_reviewer``): polling needs no more of the profile."""
    digest = hashlib.sha256()
    for c in sorted((c for c in comments if is_reviewer(c)),
                    key=lambda c: (c.channel, c.id)):
        digest.update(f"{c.channel}:{c.id}:{c.state}:{len(c.body)}:".encode())
        digest.update(c.body.encode())
    return digest.hexdigest()


def observe(state: PollState, config: PollConfig, now: float, fingerprint: str,
            extraction: Extraction, *, rate_limited: float = 0.0) -> PollState:
    """Record one poll and decide whether the PR is finished. ``rate_limited``: seconds this
    poll waited on GitHub's rate limit (its reads of one channel then happened long after
    those of another, and the reviewer may have spoken in between, unseen)."""
    state.polls += 1
    state.rate_limit_wait += rate_limited
    state.activity = extraction.activity
    if extraction.activity and fingerprint == state.fingerprint:
        state.stable += 1
    else:
        state.stable = 0
    state.fingerprint = fingerprint
    if fingerprint != NO_TRACE:
        state.unconfirmed = None  # the reviewer said something, even only "working…"
    if any(extraction.has(s) for s in FINAL_SIGNALS):
        state.verdict = "done"
    elif extraction.activity and state.stable >= config.stable_polls:
        state.verdict = "stable"
    elif state.unconfirmed and now - state.started_at >= min(config.unconfirmed_timeout, config.timeout):
        state.verdict = "unconfirmed"
    elif now - state.started_at >= config.timeout:
        state.verdict = "rate_limited" if rate_limited and not extraction.activity else "timeout"
    if state.verdict:
        state.finished_at = now
    return state


def describe(state: PollState, config: PollConfig, now: float) -> str:
    """One progress line: elapsed, reviewer comments so far, stable count."""
    elapsed = int(now - state.started_at)
    return (f"{elapsed // 60}m{elapsed % 60:02d}s elapsed, {state.activity} reviewer comment(s), "
            f"stable {state.stable}/{config.stable_polls}"
            + (f" -> {state.verdict}" if state.verdict else ""))
