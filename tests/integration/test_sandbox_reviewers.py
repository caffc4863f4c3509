"""Simulated reviewers: wake-ups, timing, identities, bandit, replay."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from redline_canary.sandbox import (
    COPILOT,
    BanditReviewer,
    Batch,
    Identity,
    ReplayReviewer,
    Sandbox,
    ScriptedReviewer,
    SilentReviewer,
)

REPO = "acme/canary-python"
VULNERABLE = """import subprocess


def run(x):
    return subprocess.call(x, shell=True)
"""


@pytest.fixture
def sb() -> Iterator[Sandbox]:
    with Sandbox() as sandbox:
        sandbox.create_repo(REPO, files={"README.md": "hi\n"})
        yield sandbox


@pytest.fixture
def client(sb: Sandbox) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=sb.url, headers={"Authorization": "token t"}, timeout=5) as c:
        yield c


def _activity(client: httpx.Client, n: int) -> tuple[int, int, int]:
    base = f"/repos/{REPO}"
    return (
        len(client.get(f"{base}/pulls/{n}/comments").json()),
        len(client.get(f"{base}/pulls/{n}/reviews").json()),
        len(client.get(f"{base}/issues/{n}/comments").json()),
    )


def _wait_for(pred: Any, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not pred():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.02)


def test_scripted_batches_arrive_over_time(sb: Sandbox, client: httpx.Client) -> None:
    line = {"path": "app.py", "side": "RIGHT"}
    sb.attach_reviewer(
        REPO,
        ScriptedReviewer(
            latency=0.0,
            batches=[
                Batch(after=0.1, inline=[{**line, "line": 1, "body": "[MAJOR] one"}]),
                Batch(after=0.4, inline=[{**line, "line": 2, "body": "[MINOR] two", "reply_to": 0}]),
                Batch(
                    after=0.4,
                    reviews=[{"body": "Review complete.", "state": "COMMENTED"}],
                    issue_comments=["<!-- done -->"],
                ),
            ],
        ),
    )
    n = sb.create_pull(REPO, "feature", title="t", files={"app.py": "a\nb\nc\n"})
    assert _activity(client, n) == (0, 0, 0)
    _wait_for(lambda: _activity(client, n)[0] == 1)
    assert _activity(client, n) == (1, 1, 0)  # inline comments travel in a review
    _wait_for(lambda: _activity(client, n)[0] == 2)
    assert _activity(client, n)[2] == 0
    assert sb.wait_for_reviewers(5)
    assert _activity(client, n) == (2, 3, 1)
    comments = client.get(f"/repos/{REPO}/pulls/{n}/comments").json()
    assert comments[1]["in_reply_to_id"] == comments[0]["id"]
    assert "in_reply_to_id" not in comments[0]
    acts = sb.reviewer_activity(REPO, n)
    assert [a.kind for a in acts] == ["review", "review", "review", "issue_comment"]
    assert [a.inline for a in acts] == [1, 1, 0, 0]
    assert acts[1].at - acts[0].at >= 0.35 and acts[-1].at >= acts[-2].at


def test_silent_reviewer_wakes_and_says_nothing(sb: Sandbox, client: httpx.Client) -> None:
    silent = SilentReviewer(latency=0.0)
    sb.attach_reviewer(REPO, silent)
    n = sb.create_pull(REPO, "feature", title="t", files={"app.py": "x = 1\n"})
    assert sb.wait_for_reviewers(5)
    assert [e.kind for e in silent.wakes] == ["opened"]
    assert _activity(client, n) == (0, 0, 0)


def test_one_answer_per_head_and_wake_on_request(sb: Sandbox, client: httpx.Client) -> None:
    reviewer = ScriptedReviewer(latency=0.0, batches=[Batch(reviews=[{"body": "ok"}])], wake_on=("review_requested",))
    sb.attach_reviewer(REPO, reviewer)
    n = sb.create_pull(REPO, "feature", title="t", files={"app.py": "x = 1\n"})
    assert sb.wait_for_reviewers(5) and _activity(client, n) == (0, 0, 0)
    req = f"/repos/{REPO}/pulls/{n}/requested_reviewers"
    assert client.post(req, json={"reviewers": ["redline-reviewer[bot]"]}).status_code == 201
    assert sb.wait_for_reviewers(5)
    assert _activity(client, n) == (0, 1, 0)
    assert client.get(req).json()["users"] == []  # a reviewer who reviewed is no longer listed
    assert client.post(req, json={"reviewers": ["redline-reviewer[bot]"]}).status_code == 201
    assert sb.wait_for_reviewers(5)
    assert _activity(client, n) == (0, 1, 0)  # same head: no second review


def test_trigger_phrase_with_ack_reaction(sb: Sandbox, client: httpx.Client) -> None:
    sb.attach_reviewer(
        REPO,
        ScriptedReviewer(
            latency=0.0,
            wake_on=("comment",),
            trigger_phrases=["@redline review"],
            ack_reaction="eyes",
            batches=[Batch(issue_comments=["Error: review failed (rate limited)."])],
        ),
    )
    n = sb.create_pull(REPO, "feature", title="t", files={"app.py": "x = 1\n"})
    url = f"/repos/{REPO}/issues/{n}/comments"
    client.post(url, json={"body": "unrelated chatter"})
    assert sb.wait_for_reviewers(5) and len(client.get(url).json()) == 1
    trigger = client.post(url, json={"body": "Please @Redline Review this"}).json()
    assert sb.wait_for_reviewers(5)
    bodies = [c["body"] for c in client.get(url).json()]
    assert bodies[-1] == "Error: review failed (rate limited)."
    reactions = client.get(f"/repos/{REPO}/issues/comments/{trigger['id']}/reactions").json()
    assert [(x["content"], x["user"]["login"]) for x in reactions] == [("eyes", "redline-reviewer[bot]")]


def test_copilot_login_pair_with_one_id(sb: Sandbox, client: httpx.Client) -> None:
    sb.attach_reviewer(
        REPO,
        ScriptedReviewer(
            identity=COPILOT,
            latency=0.0,
            wake_on=("review_requested",),
            ack_reaction="eyes",
            batches=[
                Batch(
                    inline=[{"path": "app.py", "line": 1, "side": "RIGHT", "body": "Consider x"}],
                    reviews=[{"body": "## Pull request overview\n\nCopilot reviewed 1 file."}],
                )
            ],
        ),
    )
    n = sb.create_pull(REPO, "feature", title="t", files={"app.py": "x = 1\n"})
    client.post(
        f"/repos/{REPO}/pulls/{n}/requested_reviewers",
        json={"reviewers": ["copilot-pull-request-reviewer[bot]"]},
    ).raise_for_status()
    assert sb.wait_for_reviewers(5)
    review = client.get(f"/repos/{REPO}/pulls/{n}/reviews").json()[0]
    comment = client.get(f"/repos/{REPO}/pulls/{n}/comments").json()[0]
    assert review["user"]["login"] == "copilot-pull-request-reviewer[bot]"
    assert comment["user"]["login"] == "Copilot"
    assert review["user"]["id"] == comment["user"]["id"] == 175728472
    assert review["user"]["type"] == comment["user"]["type"] == "Bot"
    assert review["user"]["node_id"] == comment["user"]["node_id"] == "BOT_kgDOCnlnWA"
    assert comment["user"]["url"].endswith("/users/Copilot")
    assert review["user"]["url"].endswith("/users/copilot-pull-request-reviewer%5Bbot%5D")
    assert comment["user"]["html_url"] == "https://github.com/apps/copilot-pull-request-reviewer"
    assert review["state"] == "COMMENTED" and review["author_association"] == "NONE"
    assert comment["pull_request_review_id"] == review["id"]
    seen = client.get(f"/repos/{REPO}/issues/{n}/reactions").json()
    assert [(x["content"], x["user"]["login"]) for x in seen] == [("eyes", COPILOT.login)]


def test_bandit_reviews_real_findings(sb: Sandbox, client: httpx.Client) -> None:
    sb.attach_reviewer(REPO, BanditReviewer(latency=0.0))
    n = sb.create_pull(
        REPO,
        "feature",
        title="t",
        files={"pkg/run.py": VULNERABLE, "pkg/clean.py": "def add(a, b):\n    return a + b\n"},
    )
    assert sb.wait_for_reviewers(30)
    reviews = client.get(f"/repos/{REPO}/pulls/{n}/reviews").json()
    assert len(reviews) == 1 and reviews[0]["user"]["login"] == "bandit-reviewer[bot]"
    comments = client.get(f"/repos/{REPO}/pulls/{n}/comments").json()
    by_id = {c["body"].split("]")[1].split(":")[0].strip(): c for c in comments}
    assert set(by_id) >= {"B602", "B404"}
    b602 = by_id["B602"]
    assert b602["body"].startswith("[BLOCKER] B602: subprocess call with shell=True")
    assert b602["body"].endswith("(bandit B602)")
    assert (b602["path"], b602["line"], b602["side"]) == ("pkg/run.py", 5, "RIGHT")
    assert by_id["B404"]["body"].startswith("[MINOR] B404:")
    assert all(c["pull_request_review_id"] == reviews[0]["id"] for c in comments)
    assert {c["path"] for c in comments} == {"pkg/run.py"}


def test_bandit_no_findings_and_missing_tool(sb: Sandbox, client: httpx.Client) -> None:
    sb.attach_reviewer(REPO, BanditReviewer(latency=0.0))
    n = sb.create_pull(REPO, "clean", title="t", files={"ok.py": "VALUE = 1\n"})
    assert sb.wait_for_reviewers(30)
    assert [r["body"] for r in client.get(f"/repos/{REPO}/pulls/{n}/reviews").json()] == ["No issues found."]
    sb.create_repo("acme/broken")
    broken = Identity(login="broken-bandit[bot]", user_id=190_000_099)
    sb.attach_reviewer(
        "acme/broken",
        BanditReviewer(latency=0.0, identity=broken, command=["/nonexistent/bandit"]),
    )
    m = sb.create_pull("acme/broken", "f", title="t", files={"ok.py": "VALUE = 1\n"})
    assert sb.wait_for_reviewers(10)
    notes = client.get(f"/repos/acme/broken/issues/{m}/comments").json()
    assert len(notes) == 1 and notes[0]["body"].startswith("Bandit review failed:")


def test_replay_reposts_a_capture_on_a_new_head(sb: Sandbox, client: httpx.Client) -> None:
    sb.attach_reviewer(
        REPO,
        ScriptedReviewer(
            identity=COPILOT,
            latency=0.0,
            batches=[
                Batch(
                    inline=[
                        {"path": "app.py", "line": 2, "start_line": 1, "side": "RIGHT", "body": "[MAJOR] range"},
                        {"path": "app.py", "line": 2, "side": "RIGHT", "body": "reply", "reply_to": 0},
                    ],
                    reviews=[{"body": "overview"}],
                    issue_comments=["summary app.py:2"],
                )
            ],
        ),
    )
    n = sb.create_pull(REPO, "first", title="t", files={"app.py": "a\nb\n"})
    assert sb.wait_for_reviewers(5)
    capture = sb.capture(REPO, n)

    sb.create_repo("acme/replayed")
    sb.attach_reviewer("acme/replayed", ReplayReviewer(capture, latency=0.0))
    m = sb.create_pull("acme/replayed", "second", title="t", files={"app.py": "a\nb\nc\n"})
    assert sb.wait_for_reviewers(5)
    again = sb.capture("acme/replayed", m)
    head = again["head_sha"]
    assert head != capture["head_sha"]
    assert [c["body"] for c in again["review_comments"]] == ["[MAJOR] range", "reply"]
    assert {c["commit_id"] for c in again["review_comments"]} == {head}
    first, reply = again["review_comments"]
    assert (first["start_line"], first["line"]) == (1, 2)
    assert reply["in_reply_to_id"] == first["id"]
    assert {c["user"]["login"] for c in again["review_comments"]} == {"Copilot"}
    assert [r["user"]["login"] for r in again["reviews"]] == ["copilot-pull-request-reviewer[bot]"]
    assert [c["body"] for c in again["issue_comments"]] == ["summary app.py:2"]
    assert [a.kind for a in sb.reviewer_activity("acme/replayed", m)] == ["review", "issue_comment"]
    bare = httpx.post(
        f"{sb.url}/repos/acme/replayed/pulls/{m}/requested_reviewers",
        json={"reviewers": ["Copilot"]},
        headers={"Authorization": "token t"},
    )
    assert bare.status_code == 422  # replaying Copilot's comments never makes "Copilot" requestable
