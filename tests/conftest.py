"""Test tiers and the guard that keeps the unit tier honest.

* ``unit``: the pure core, in-process, no sockets, no sleeping: a unit test that opens a
  connection or calls ``time.sleep`` fails (autouse guard below);
* ``contract``: the sandbox checked against GitHub's recorded traffic and OpenAPI excerpt;
* ``integration``: everything else — the real CLI, the sandbox over real sockets, files,
  subprocesses.

Run one tier with ``pytest -m unit`` (seconds), ``-m contract`` or ``-m integration``.
"""

from __future__ import annotations

import socket
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from redline_canary.sandbox import Sandbox

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from sandboxing import TOKEN  # noqa: E402  (found through the path just added)

UNIT = {
    "test_actions_render", "test_markers", "test_matching", "test_profiles_checks", "test_profiles_config",
    "test_profiles_locations", "test_profiles_severity", "test_profiles_signals", "test_publication",
    "test_report_model", "test_retrying", "test_sanitisers", "test_scoring", "test_verdict", "test_core_purity",
    "test_regression_issue", "test_pacing", "test_redline_parity", "test_record", "test_citations",
    "test_doctor_checks", "test_recordings",
}
CONTRACT = {"test_sandbox_contract", "test_sandbox_openapi", "test_sandbox_routes"}


def pytest_configure(config: pytest.Config) -> None:
    for name, what in (("unit", "pure core, no network and no sleeping"),
                       ("contract", "the sandbox against recorded GitHub traffic"),
                       ("integration", "the real CLI, sockets, files and subprocesses")):
        config.addinivalue_line("markers", f"{name}: {what}")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        module = item.path.stem
        tier = "unit" if module in UNIT else "contract" if module in CONTRACT else "integration"
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
