"""Python's cycle collector, kept out of a long read (docs/record.md#reading-fast).

Reading a history makes hundreds of thousands of objects that all stay alive and hold no
cycles; every few hundred allocations the collector would walk all of them again. These two
context managers pause it and always leave it as they found it.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Callable, Iterator


@contextlib.contextmanager
def collector_settled() -> Iterator[Callable[[], None]]:
    """For a command that reads a whole history and then works from it (``report``): the
    cycle collector is off until the caller calls the function it is given (after reading
    and building), which freezes everything made so far out of the collector's sight and
    turns it back on for the rest (rendering, chart workers). Why: a collector pass walks
    every live object, and a 10 000-record history is a million of them, walked again at
    each of the next passes for nothing (records hold no cycles). Whatever happens,
    everything is unfrozen and the collector is on again (if it was) when the block ends."""
    was_on = gc.isenabled()
    gc.disable()

    def settle() -> None:
        gc.freeze()
        if was_on:
            gc.enable()

    try:
        yield settle
    finally:
        gc.unfreeze()
        if was_on:
            gc.enable()


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cycle collector off while a history is read. Why: reading makes hundreds of
    thousands of objects that all stay alive, and every few hundred of them the collector
    walks the ones made so far, again and again: a third of reading a long history went
    there (docs/record.md#reading-fast). Records hold no cycles; it is turned back on
    (if it was on) however the read ends. Settled at once when the read ends: everything
    made while paused goes straight to the oldest generation (freeze, then unfreeze on the
    way out), so the collector's next pass does not walk the whole history once more."""
    with collector_settled() as settle:
        yield
        settle()
