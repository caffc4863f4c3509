"""Run many targets concurrently, with signals, progress and one summary (``run``, ``demo``).

The main thread only waits: cycles run on worker threads, and SIGINT/SIGTERM set a cancel
event their clocks watch, so every cycle reaches its ``finally`` and tears down. GitHub
Actions sends SIGKILL 7.5 s after SIGINT; teardown is bounded to fit inside that.
"""

from __future__ import annotations

import os
import shlex
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any, TextIO

import httpx

from redline_canary.corpus.model import CorpusData
from redline_canary.errors import (
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    CanaryError,
    TargetEnd,
    TeardownIncomplete,
    mask,
    run_exit_code,
)
from redline_canary.github.app_auth import Auth
from redline_canary.github.client import GitHubClient
from redline_canary.github.clock import Cancelled, RealClock
from redline_canary.github.pacing import Pacer
from redline_canary.github.recorder import Recorder
from redline_canary.report.text import blockers_text, fmt_rate, inert_line
from redline_canary.run.crash import crash_line, write_crash_log
from redline_canary.run.cycle import CycleOptions, TargetCycle
from redline_canary.run.history import append_records
from redline_canary.run.targets import Target
from redline_canary.score.record import Record
from redline_canary.score.verdict import record_exit_code


@dataclass
class RunResult:
    records: list[Record] = field(default_factory=list)
    failures: list[tuple[Target, CanaryError]] = field(default_factory=list)
    exit_code: int = 0
    leftovers: bool = False


class ProgressPrinter:
    """One line per change; on a TTY the latest line per target is redrawn in place."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr  # looked up now: sys.stderr may have been replaced
        self.lock = threading.Lock()
        self.tty = self.stream.isatty()

    def __call__(self, label: str, text: str) -> None:
        text = inert_line(mask(text))  # outside words: one line no terminal or runner acts on
        with self.lock:
            if self.tty:
                self.stream.write(f"\r\033[K[{label}] {text}")
                if "->" in text or "opened" in text or "gate" in text:
                    self.stream.write("\n")
            else:
                self.stream.write(f"[{label}] {text}\n")
            self.stream.flush()


@contextmanager
def cancel_on_signals(clock: RealClock) -> Iterator[None]:
    """SIGINT/SIGTERM cancel ``clock`` (only possible from the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, _frame: FrameType | None) -> None:
        clock.request_cancel()

    previous = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)


def run_targets(
    targets: list[Target], corpus: CorpusData, options: CycleOptions, *, token: str | None = None,
    api_url: str | None, parallel: int = 4, history: Path | None = None,
    progress: Callable[[str, str], None] | None = None, clock: RealClock | None = None,
    writes_per_minute: int = 80, writes_per_hour: int = 500, budget_share: int = 1,
    transport: httpx.BaseTransport | None = None, recorder: Recorder | None = None, auth: Auth | None = None,
) -> RunResult:
    """``transport``: every target's client talks through it instead of the network (tests
    mount the sandbox's WSGI app in-process this way). ``auth`` (a GitHub App) replaces
    ``token``: each target then gets its owner's installation token."""
    clock = clock or RealClock()
    if auth is None:
        if token is None:
            raise ValueError("run_targets needs a token or an auth")
        auth = Auth(token=token)
    # One pacer per budget GitHub keeps: the token's, or each App installation's (per owner),
    # shared by every target that spends it.
    pacers: dict[str, Pacer] = {}
    result = RunResult()
    lock = threading.Lock()
    ends: list[TargetEnd] = []
    printer = progress or ProgressPrinter()

    def pacer_for(repo: str) -> Pacer:
        key = auth.budget_key(repo)
        with lock:
            if key not in pacers:
                pacers[key] = Pacer(clock, writes_per_minute, writes_per_hour, budget_share)
            return pacers[key]

    def one(target: Target) -> None:
        cycle: TargetCycle | None = None
        client: GitHubClient | None = None
        records: list[Record] = []
        codes: list[int] = []
        try:
            client = GitHubClient(auth.for_repo(target.repo), api_url, clock=clock, pacer=pacer_for(target.repo),
                                  transport=transport, recorder=recorder)
            cycle = TargetCycle(client, target, corpus, options, clock, printer)
            records = cycle.run()
            codes = [record_exit_code(r) for r in records]
        except Cancelled:
            codes = [EXIT_INTERRUPTED]
        except CanaryError as exc:
            codes = [exc.exit_code]
            with lock:
                result.failures.append((target, exc))
            printer(target.label, f"failed: {exc}")
        except Exception as exc:  # a bug in one target never costs another target its records
            codes = [EXIT_INTERNAL]
            line = crash_line(exc, write_crash_log(exc, target.label))
            with lock:
                result.failures.append((target, CanaryError(line)))
            printer(target.label, line)
        finally:
            if client is not None:
                client.close()
        leftovers = cycle is not None and bool(cycle.leftovers)
        if cycle is not None:
            records = cycle.records
            for unsaved in cycle.unsaved:  # a file asked for and not written: named again in the summary
                codes.append(unsaved.exit_code)
                with lock:
                    result.failures.append((target, unsaved))
            if cycle.leftovers:
                left = TeardownIncomplete(target.repo, cycle.leftovers.pulls, cycle.leftovers.branches)
                with lock:
                    result.failures.append((target, left))
                    result.leftovers = True
                printer(target.label, str(left))
        if history and records:
            try:
                append_records(history, records, warn=lambda message: printer(target.label, message))
            except CanaryError as exc:
                codes.append(exc.exit_code)
                with lock:
                    result.failures.append((target, exc))
                printer(target.label, f"records NOT written: {exc}")
        with lock:
            result.records.extend(records)
            ends.append(TargetEnd(tuple(codes), leftovers))

    with cancel_on_signals(clock), ThreadPoolExecutor(max_workers=max(1, parallel)) as pool:
        futures = [pool.submit(one, t) for t in targets]
        for f in futures:
            while not f.done():
                _wait(f)
            if f.exception() is not None:
                ends.append(TargetEnd((EXIT_INTERNAL,)))
                printer("run", crash_line(f.exception() or Exception(), None))
    result.exit_code = run_exit_code(ends, cancelled=clock.cancel.is_set())
    return result


def _wait(future: Any) -> None:
    """Wait in short slices so the main thread stays responsive to signals."""
    try:
        future.result(timeout=0.2)
    except Exception:
        return


def summary_table(records: Sequence[Record]) -> str:
    """target, outcome, blockers (found · rated BLOCKER), recall (n, CI), undercalls, clean FPs, gate."""
    head = ["target", "kind", "outcome", "blockers", "recall", "undercalls", "clean FPs", "gate"]
    rows = [head]
    for r in records:
        b = r.blocker
        scored = r.outcome == "scored"
        seeded = r.kind == "seeded"
        rows.append([
            f"{r.repo} {r.stack}" + (f" (attempt {r.attempt})" if r.attempt > 1 else ""),
            r.kind, r.outcome,
            blockers_text(r) if scored and seeded and b.markers else "-",
            fmt_rate(r.caught, r.markers, r.recall_ci95) if scored and seeded else "-",
            str(r.undercalled) if scored and seeded else "-",
            str(r.clean_false_positives) if scored and not seeded else "-",
            "PASS" if r.gate.passed else "FAIL",
        ])
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
             for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def run_id_lines(run_id: str, history: Path | str | None, *, issue: bool = True) -> list[str]:
    """The run id, and the commands that take it (``gate`` and ``issue`` ask for ``--run-id``):
    what ``run`` and ``demo`` print last, on stderr."""
    lines = [f"run id: {run_id}"]
    if history:
        rid, hist = shlex.quote(run_id), shlex.quote(str(history))
        lines.append(f"  next: redline-canary gate --run-id {rid} {hist}")
        if issue:
            lines.append(f"        redline-canary issue --repo OWNER/METRICS-REPO --history {hist} --run-id {rid}")
    return [inert_line(line) for line in lines]


def default_run_id(env: Mapping[str, str] | None = None) -> str:
    """``GITHUB_RUN_ID-GITHUB_RUN_ATTEMPT`` on Actions, else a UTC timestamp."""
    env = os.environ if env is None else env
    run = env.get("GITHUB_RUN_ID")
    if run:
        return f"{run}-{env.get('GITHUB_RUN_ATTEMPT', '1')}"
    from redline_canary.github.clock import utc_now_iso

    return "local-" + utc_now_iso().replace(":", "").replace("-", "").lower()
