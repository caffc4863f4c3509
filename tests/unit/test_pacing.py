"""The content-creation budget a token shares: per job, and adapting to GitHub's answers.

A matrix of four jobs on one token must not spend four budgets, and a token that meets a
secondary limit (another tool spending it, or GitHub's undisclosed limits being lower)
must slow down on its own instead of meeting it again on every request.
"""

from __future__ import annotations

from redline_canary.github.clock import FakeClock
from redline_canary.github.pacing import MAX_FLIGHT, MIN_FACTOR, RECOVERY, Pacer


def writes_in_first_minute(pacer: Pacer, clock: FakeClock, n: int = 200) -> int:
    stamps = []
    for _ in range(n):
        pacer.release(pacer.acquire())
        stamps.append(clock.now())
    return sum(1 for t in stamps if t < 60.0)


def test_one_job_gets_githubs_whole_minute_budget() -> None:
    clock = FakeClock()
    assert writes_in_first_minute(Pacer(clock), clock) == 80


def test_four_jobs_on_one_token_each_take_a_quarter() -> None:
    clock = FakeClock()
    assert writes_in_first_minute(Pacer(clock, share=4), clock) == 20
    hourly = Pacer(FakeClock(), share=4)
    assert hourly.limits() == ((60.0, 20), (3600.0, 125))


def test_a_secondary_limit_halves_the_rate_and_quiet_minutes_give_it_back() -> None:
    clock = FakeClock()
    pacer = Pacer(clock)
    pacer.slow_down()
    assert pacer.limits()[0] == (60.0, 40)
    clock.t += 0.5
    pacer.slow_down()  # answers to requests already in flight: the same congestion, one decrease
    assert pacer.limits()[0] == (60.0, 40)
    clock.t += 2.0
    pacer.slow_down()
    assert pacer.limits()[0] == (60.0, 20)
    clock.t += RECOVERY * 3
    pacer.acquire()  # recovery is noticed on the next request
    assert pacer.limits()[0] == (60.0, 44)  # (0.25 + 3 x 0.1) x 80
    clock.t += RECOVERY * 20
    pacer.acquire()
    assert pacer.limits()[0] == (60.0, 80)  # never above the share


def test_the_rate_never_falls_to_nothing() -> None:
    clock = FakeClock()
    pacer = Pacer(clock, share=8)
    for _ in range(30):
        clock.t += 2.0
        pacer.slow_down()
    assert pacer.factor == MIN_FACTOR
    assert all(limit >= 1 for _, limit in pacer.limits())
    pacer.acquire()  # still makes progress


def test_a_slow_request_holds_its_slot_until_it_is_answered() -> None:
    """GitHub counts a request when it arrives, which may be late in its flight: the pacer
    counts it until the answer, so the next minute's requests cannot overtake it."""
    clock = FakeClock()
    pacer = Pacer(clock, per_minute=2, per_hour=500)
    slow = pacer.acquire()
    fast = pacer.acquire()
    pacer.release(fast)
    clock.sleep(30.0)
    pacer.release(slow)  # answered 30 s after it was sent: it may have arrived at 29 s
    pacer.release(pacer.acquire())  # one slot frees at 60 s (fast's), so this one goes then
    assert clock.now() == 60.0
    pacer.acquire()  # the slow request's slot frees a minute after its answer, not after its send
    assert clock.now() == 90.0


def test_a_request_in_flight_holds_its_slot_but_never_forever() -> None:
    clock = FakeClock()
    pacer = Pacer(clock, per_minute=1, per_hour=500)
    pacer.acquire()  # never answered (a bug upstream): GitHub may count it any moment
    clock.sleep(70.0)
    pacer.acquire()
    assert clock.now() == MAX_FLIGHT + 60.0  # held while in flight, up to MAX_FLIGHT, then a minute
