"""Test tiers and the guard that keeps the unit tier honest.

* ``unit``: the pure core, in-process, no sockets, no sleeping: a unit test that opens a
  connection or calls ``time.sleep`` fails (autouse guard below);
* ``contract``: the sandbox checked against GitHub's recorded traffic and OpenAPI excerpt;
* ``integration``: everything else — the real CLI, the sandbox over real sockets, files,
  subprocesses.

The tier is the folder a test lives in (``tests/unit/``, ``tests/contract/``,
``tests/integration/``): nothing to list by hand. Run one tier with ``pytest tests/unit``
(or ``-m unit``), ``tests/contract`` or ``tests/integration``. Shared helpers are the
``tests.helpers`` package.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from redline_canary.sandbox import Sandbox
from tests.helpers.sandboxing import TOKEN

ROOT = Path(__file__).resolve().parent.parent
TIERS = ("unit", "contract", "integration")


def pytest_configure(config: pytest.Config) -> None:
    for name, what in (("unit", "pure core, no network and no sleeping"),
                       ("contract", "the sandbox against recorded GitHub traffic"),
                       ("integration", "the real CLI, sockets, files and subprocesses")):
        config.addinivalue_line("markers", f"{name}: {what}")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        tier = item.path.parent.name
        if tier not in TIERS:
            raise pytest.UsageError(f"{item.path}: a test lives in tests/unit, tests/contract or tests/integration")
        item.add_marker(tier)


@pytest.fixture(autouse=True)
def _unit_tests_touch_no_network_and_never_sleep(request: pytest.FixtureRequest,
                                                monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    if request.node.get_closest_marker("unit") is None:
        yield
        return

    def no_sleep(seconds: float) -> None:
        raise AssertionError(f"a unit test slept {seconds} s: inject a clock (FakeClock) instead")

    _forbid_connections(monkeypatch, "a unit test opened a network connection: make it an integration test")
    monkeypatch.setattr(time, "sleep", no_sleep)
    yield


def _forbid_connections(monkeypatch: pytest.MonkeyPatch, why: str) -> None:
    def no_network(*_args: Any, **_kwargs: Any) -> None:
        raise AssertionError(why)

    monkeypatch.setattr(socket.socket, "connect", no_network)
    monkeypatch.setattr(socket.socket, "connect_ex", no_network)


@pytest.fixture()
def in_process_sandbox(monkeypatch: pytest.MonkeyPatch) -> Iterator[Sandbox]:
    """A sandbox that does not listen: clients reach its WSGI app through
    ``sb.transport()`` (``GitHubClient(..., transport=sb.transport())``, ``run_in_process``).
    Opening any connection in this process fails the test: nothing may bypass the transport."""
    with Sandbox(token=TOKEN, listen=False) as sb:
        _forbid_connections(monkeypatch, "an in-process sandbox test opened a connection: pass sb.transport()")
        yield sb


@pytest.fixture()
def mini_corpus() -> Path:
    return ROOT / "tests" / "data" / "corpus"


# Time per tier, printed at the end of every run (CI's log included): the unit tier must stay
# under a minute on 2 shared cores, and a figure in every log shows it creeping up long
# before it gets there. Reported, never asserted (timings are not test results).
_TIER_SECONDS: dict[str, float] = {}
_TIER_TESTS: dict[str, int] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    parts = Path(report.nodeid.split("::")[0]).parts
    tier = parts[1] if len(parts) > 2 and parts[0] == "tests" else "other"
    _TIER_SECONDS[tier] = _TIER_SECONDS.get(tier, 0.0) + report.duration
    if report.when == "call":
        _TIER_TESTS[tier] = _TIER_TESTS.get(tier, 0) + 1


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if _TIER_SECONDS:
        shown = ", ".join(f"{t} {_TIER_TESTS.get(t, 0)} tests {_TIER_SECONDS[t]:.1f} s"
                          for t in (*TIERS, "other") if t in _TIER_SECONDS)
        terminalreporter.write_line(f"time per tier (setup, call and teardown): {shown}")
