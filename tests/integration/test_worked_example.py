"""The gate issue's worked example, end to end through the real CLI against the sandbox.

A reviewer finds all six BLOCKERs of a small stack but rates them one level lower (CRITICAL),
never finds B6, and misses B5 in weeks 2 and 4. Six weekly runs are recorded once; the gate
colour each week is then read under each gate setting, with the same pure verdict the run
uses. What a team sees:

=========================================  =====  =====  =====  =====  =====  =====
setting                                      w1     w2     w3     w4     w5     w6
=========================================  =====  =====  =====  =====  =====  =====
caught (default)                            FAIL   FAIL   FAIL   FAIL   FAIL   FAIL
found                                       FAIL   FAIL   FAIL   FAIL   FAIL   FAIL
found + B6 acknowledged                     pass   FAIL   pass   FAIL   pass   pass
found + B6 acknowledged + window:3          pass   FAIL   pass   pass   pass   pass
=========================================  =====  =====  =====  =====  =====  =====

With a rolling window the week-4 miss of B5 is *intermittent* (caught, missed, caught before
it): a warning, not a red build. Week 2's is *newly missed* (caught every run before): red.

The runs themselves use the last setting (that is what the weekly workflow would be configured
with), and after each the workflow's ``issue`` step runs against the metrics repository: the
regression issue is opened in week 2 and closed with a comment in week 3; weeks 4 to 6 leave
it closed and open no other.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from redline_canary.corpus.model import publish
from redline_canary.run.corpus_files import load_corpus
from redline_canary.sandbox import Sandbox
from redline_canary.sandbox.reviewers import ReviewContext, Reviewer
from redline_canary.score.acknowledgements import parse
from redline_canary.score.record import Record
from redline_canary.score.verdict import GateOptions, decide, final_attempts
from tests.helpers.clirun import ROOT, cli_main
from tests.helpers.sandboxing import TOKEN, canary_sandbox

REPO = "acme/canary-worked"
METRICS = "acme/metrics"
SEEDED = '''"""Account service."""

import sqlite3
import subprocess

API_KEY = "wk_7c1e9a04b2d84f6e91a3c5d7e8f0b2a4"  # SEED 1 [BLOCKER] (core/hardcoded-secrets) key in source


def find(conn: sqlite3.Connection, name: str) -> list:
    # SEED 2 [BLOCKER] (core/sql-injection) name interpolated into SQL
    return conn.execute(f"SELECT * FROM users WHERE name = '{name}'").fetchall()


def archive(path: str) -> None:
    # SEED 3 [BLOCKER] (core/command-injection) path passed to a shell command
    subprocess.run(f"tar czf /backups/a.tgz {path}", shell=True, check=True)


def load(blob: bytes) -> object:
    import pickle
    # SEED 4 [BLOCKER] (core/unsafe-deserialization) pickle of request bytes
    return pickle.loads(blob)


def invoice(conn: sqlite3.Connection, user: int, invoice_id: int) -> tuple:
    # SEED 5 [BLOCKER] (core/idor) invoice read by id alone, never checked against the user
    return conn.execute("SELECT * FROM invoices WHERE id = ?", (invoice_id,)).fetchone()


def delete_user(conn: sqlite3.Connection, caller_role: str, user: int) -> None:
    # SEED 6 [BLOCKER] (core/missing-authorization) any caller may delete any user: no authorization check
    conn.execute("DELETE FROM users WHERE id = ?", (user,))


def page(items: list, start: int, size: int) -> list:
    # SEED 7 [MAJOR] (core/off-by-one) drops the last item of every page
    return items[start : start + size - 1]
'''
CLEAN = '''"""Account service."""

import json
import os
import shutil
import sqlite3

API_KEY = os.environ["ACCOUNT_API_KEY"]


def find(conn: sqlite3.Connection, name: str) -> list:
    return conn.execute("SELECT * FROM users WHERE name = ?", (name,)).fetchall()


def archive(path: str) -> None:
    shutil.make_archive("/backups/a", "gztar", root_dir=path)


def load(blob: bytes) -> object:
    return json.loads(blob)


def invoice(conn: sqlite3.Connection, user: int, invoice_id: int) -> tuple:
    return conn.execute("SELECT * FROM invoices WHERE id = ? AND user_id = ?", (invoice_id, user)).fetchone()


def delete_user(conn: sqlite3.Connection, caller_role: str, user: int) -> None:
    if caller_role != "admin":
        raise PermissionError("only admins may delete users")
    conn.execute("DELETE FROM users WHERE id = ?", (user,))


def page(items: list, start: int, size: int) -> list:
    return items[start : start + size]
'''
WEEKS = 6
B5_MISSED_IN = {2, 4}


@pytest.fixture()
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "seeds"
    for kind, text in (("seeded", SEEDED), ("clean", CLEAN)):
        (root / kind / "acct").mkdir(parents=True)
        (root / kind / "acct" / "svc.py").write_text(text)
    (root / "rules.yml").write_text((ROOT / "tests" / "data" / "corpus" / "rules.yml").read_text())
    assert cli_main("corpus", "lint", "--corpus", str(root)).returncode == 0
    return root


class WeeklyReviewer(Reviewer):
    """Comments on the seeded PR only (it recognises the seeded file), as scripted for the week."""

    kind = "scripted"

    def __init__(self, corpus: Path) -> None:
        super().__init__(latency=0.01)
        files, markers = publish(load_corpus(corpus), "acct", "seeded", "blind")
        self.seeded_text = files[0].text.encode()
        self.lines = {m.marker.n: m.line for m in markers}
        self.week = 1

    def act(self, ctx: ReviewContext) -> None:
        if ctx.files().get("svc.py") != self.seeded_text:
            ctx.post_review("Looks good to me.", "COMMENTED")
            return
        found = [n for n in range(1, 6) if not (n == 5 and self.week in B5_MISSED_IN)]
        comments = [{"path": "svc.py", "line": self.lines[n], "body": f"[CRITICAL] problem {n}"} for n in found]
        comments.append({"path": "svc.py", "line": self.lines[7], "body": "[MAJOR] off by one"})
        ctx.post_review("Review done.", "COMMENTED", comments)


@pytest.fixture()
def sb() -> Iterator[Sandbox]:
    yield from canary_sandbox(REPO)


ACKS = """acknowledgements:
  - {reviewer: redline, stack: acct, seed: 6, reason: never flags it, until: 2099-01-01, by: alice}
"""


def _weeks(sb: Sandbox, corpus: Path, hist: Path) -> tuple[list[list[dict[str, Any]]], list[int], list[str]]:
    reviewer = WeeklyReviewer(corpus)
    sb.attach_reviewer(REPO, reviewer)
    sb.create_repo(METRICS)
    acks = hist.parent / "acknowledgements.yml"
    acks.write_text(ACKS)
    runs, codes, issue_lines = [], [], []
    for week in range(1, WEEKS + 1):
        reviewer.week = week
        res = cli_main("run", "--repo", REPO, "--stack", "acct", "--corpus", str(corpus), "--api-url", sb.url,
                  "--history", str(hist), "--run-id", f"w{week}", "--poll-interval", "0.05",
                  "--stable-polls", "2", "--timeout-minutes", "0.5", "--confirm", "0",
                  "--blocker-gate", "found", "--acknowledgements", str(acks), "--baseline", "window:3",
                  env={"GITHUB_TOKEN": TOKEN})
        codes.append(res.returncode)
        runs.append([json.loads(line) for line in hist.read_text().splitlines() if f'"run_id":"w{week}"' in line])
        issue = cli_main("issue", "--repo", METRICS, "--history", str(hist), "--run-id", f"w{week}",
                    "--api-url", sb.url, "--run-url", f"https://ci.example/runs/{week}", env={"GITHUB_TOKEN": TOKEN})
        assert issue.returncode == 0, issue.stderr
        issue_lines.append(issue.stdout.strip())
    return runs, codes, issue_lines


def _colours(runs: list[list[dict[str, Any]]], options: GateOptions) -> list[str]:
    colours, history = [], []
    for week in runs:
        records = [Record.from_json(r) for r in week]
        seeded = next(r for r in final_attempts(records) if r.kind == "seeded")
        colours.append("pass" if decide(seeded, options, history=history).passed else "FAIL")
        history.extend(records)
    return colours


def test_six_weeks_under_each_gate_setting(sb: Sandbox, corpus: Path, tmp_path: Path) -> None:
    runs, codes, issue_lines = _weeks(sb, corpus, tmp_path / "h.jsonl")
    assert codes == [0, 1, 0, 0, 0, 0]  # the runs' own gate: found + B6 acknowledged + window:3
    ack = parse({"acknowledgements": [{"reviewer": "redline", "stack": "acct", "seed": 6, "until": "2099-01-01",
                                       "reason": "never flags it", "by": "alice"}]}, "2026-12-01")
    assert _colours(runs, GateOptions()) == ["FAIL"] * 6
    assert _colours(runs, GateOptions(blocker_gate="found")) == ["FAIL"] * 6
    found_ack = GateOptions(blocker_gate="found", acknowledgements=ack)
    assert _colours(runs, found_ack) == ["pass", "FAIL", "pass", "FAIL", "pass", "pass"]
    window = GateOptions(blocker_gate="found", acknowledgements=ack, baseline="window:3")
    assert _colours(runs, window) == ["pass", "FAIL", "pass", "pass", "pass", "pass"]

    week4 = next(r for r in runs[3] if r["kind"] == "seeded")
    v = decide(Record.from_json(week4), window, history=[Record.from_json(r) for week in runs[:3] for r in week])
    assert v.warnings[-1] == "SEED 5 [BLOCKER] intermittent: missed now, caught in 2 of the last 3 runs"
    assert any("acknowledged by alice" in w for w in v.warnings)
    # Every week the records say what the reviewer found and at which level.
    found = [next(r for r in week if r["kind"] == "seeded")["blocker_found"] for week in runs]
    assert found == [0.6667 if w in B5_MISSED_IN else 0.8333 for w in range(1, WEEKS + 1)]

    # The regression issue's life in the metrics repository.
    issues = sb.issues(METRICS)
    assert len(issues) == 1, issue_lines
    only = issues[0]
    assert only.state == "closed" and "regressed on acme/canary-worked acct" in only.title
    assert "SEED 5" in only.body and "https://ci.example/runs/2" in only.body
    assert len(only.comments) == 1 and "https://ci.example/runs/3" in only.comments[0]
    assert [line.split(": ", 1)[1].split(" ", 1)[0] for line in issue_lines] == [
        "nothing", "opened", "closed", "nothing", "nothing", "nothing"], issue_lines

    # The report's calibration table: 6 weeks x 6 BLOCKERs, 28 found at CRITICAL, 8 missed.
    md = cli_main("report", str(tmp_path / "h.jsonl")).stdout
    assert "✅ PASS (acknowledged: SEED 6)" in md  # the scoreboard says the pass rests on an acknowledgement
    table = md.split("## Calibration", 1)[1]
    assert "| BLOCKER | 28 | · | 8 | 36 |" in table, table
