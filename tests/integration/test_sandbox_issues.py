"""The issues API as the regression issue uses it: create, list by label, comment, close.

Shapes and codes follow GitHub: 201 + ``Location`` on create with labels made on the fly,
one number sequence shared with pull requests, pull requests listed by the issues endpoint
with a ``pull_request`` key, paginated with the exact ``link`` format, 404 for a missing
issue, 422 for a bad state or a missing title, 410 when the repository has issues off.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from redline_canary.sandbox import Sandbox
from tests.helpers.sandboxing import assert_no_canary_left

REPO = "acme/metrics"
BASE = f"/repos/{REPO}"


@pytest.fixture
def sb() -> Iterator[Sandbox]:
    with Sandbox() as sandbox:
        sandbox.create_repo(REPO, files={"README.md": "metrics\n"})
        yield sandbox
        # The PRs these tests open are a person's ("feature"); none is a canary's.
        for repo in sandbox.state.repos:
            assert_no_canary_left(sandbox, repo)


@pytest.fixture
def client(sb: Sandbox) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=sb.url, headers={"Authorization": "token t"}, timeout=5) as c:
        yield c


def test_create_answers_201_with_location_and_makes_missing_labels(sb: Sandbox, client: httpx.Client) -> None:
    resp = client.post(f"{BASE}/issues", json={"title": "t", "body": "b", "labels": ["Regression", "x"]})
    assert resp.status_code == 201
    issue = resp.json()
    assert resp.headers["location"] == issue["url"] == f"{sb.url}{BASE}/issues/1"
    assert issue["number"] == 1 and issue["state"] == "open" and issue["body"] == "b"
    assert issue["html_url"].endswith(f"/{REPO}/issues/1")
    assert issue["user"]["login"] == "redline-canary" and issue["created_at"].endswith("Z")
    assert [(lab["name"], lab["color"], lab["default"]) for lab in issue["labels"]] == [
        ("Regression", "ededed", False), ("x", "ededed", False)]
    assert "pull_request" not in issue and issue["state_reason"] is None
    assert client.get(f"{BASE}/labels/regression").status_code == 200  # created, case kept


def test_issue_and_pull_numbers_share_one_sequence(sb: Sandbox, client: httpx.Client) -> None:
    first = client.post(f"{BASE}/issues", json={"title": "one"}).json()["number"]
    pr = sb.create_pull(REPO, "feature", title="a PR", files={"a.py": "a = 1\n"})
    third = client.post(f"{BASE}/issues", json={"title": "three"}).json()["number"]
    assert (first, pr, third) == (1, 2, 3)


def test_list_by_label_includes_pull_requests_marked_and_paginates(sb: Sandbox, client: httpx.Client) -> None:
    for i in range(3):
        sb.create_issue(REPO, f"issue {i}", labels=["watch"])
    sb.create_issue(REPO, "unlabelled")
    pr = sb.create_pull(REPO, "feature", title="a PR", files={"a.py": "a = 1\n"})
    sb.state.add_labels(sb.state.get_repo_by_name(REPO), pr, ["Watch"])

    page1 = client.get(f"{BASE}/issues", params={"labels": "watch", "per_page": 2})
    assert page1.status_code == 200
    assert [i["number"] for i in page1.json()] == [pr, 3]  # newest first
    assert page1.json()[0]["pull_request"]["url"] == f"{sb.url}{BASE}/pulls/{pr}"
    assert page1.json()[0]["html_url"].endswith(f"/pull/{pr}")
    repo_id = sb.state.get_repo_by_name(REPO).id
    nxt = f"{sb.url}/repositories/{repo_id}/issues?labels=watch&per_page=2&page=2"
    last = nxt  # two pages
    assert page1.headers["link"] == f'<{nxt}>; rel="next", <{last}>; rel="last"'
    page2 = client.get(nxt)
    assert [i["number"] for i in page2.json()] == [2, 1] and "pull_request" not in page2.json()[0]
    assert client.get(f"{BASE}/issues", params={"labels": "nobody-has-this"}).json() == []


def test_state_filter_and_close_with_state_reason(sb: Sandbox, client: httpx.Client) -> None:
    n = sb.create_issue(REPO, "to close", labels=["watch"])
    closed = client.patch(f"{BASE}/issues/{n}", json={"state": "closed", "state_reason": "completed"})
    assert closed.status_code == 200
    body = closed.json()
    assert body["state"] == "closed" and body["state_reason"] == "completed" and body["closed_at"]
    assert body["closed_by"]["login"] == "redline-canary"
    assert client.get(f"{BASE}/issues", params={"labels": "watch"}).json() == []
    closed_list = client.get(f"{BASE}/issues", params={"labels": "watch", "state": "closed"}).json()
    assert [i["number"] for i in closed_list] == [n]
    assert len(client.get(f"{BASE}/issues", params={"state": "all"}).json()) == 1
    # Closing again changes nothing; reopening says so.
    again = client.patch(f"{BASE}/issues/{n}", json={"state": "closed"}).json()
    assert again["closed_at"] == body["closed_at"]
    reopened = client.patch(f"{BASE}/issues/{n}", json={"state": "open"}).json()
    assert reopened["state"] == "open" and reopened["state_reason"] == "reopened" and reopened["closed_at"] is None


def test_comment_on_a_plain_issue(sb: Sandbox, client: httpx.Client) -> None:
    n = sb.create_issue(REPO, "plain")
    resp = client.post(f"{BASE}/issues/{n}/comments", json={"body": "still failing"})
    assert resp.status_code == 201
    comment = resp.json()
    assert resp.headers["location"] == comment["url"]
    assert comment["html_url"].endswith(f"/issues/{n}#issuecomment-{comment['id']}")
    assert [c["body"] for c in client.get(f"{BASE}/issues/{n}/comments").json()] == ["still failing"]
    listed = next(i for i in client.get(f"{BASE}/issues").json() if i["number"] == n)
    assert listed["comments"] == 1
    assert sb.issues(REPO)[0].comments == ("still failing",)


def test_errors_as_github_answers_them(sb: Sandbox, client: httpx.Client) -> None:
    assert client.patch(f"{BASE}/issues/99", json={"state": "closed"}).status_code == 404
    assert client.post(f"{BASE}/issues/99/comments", json={"body": "x"}).status_code == 404
    missing = client.post(f"{BASE}/issues", json={"body": "no title"})
    assert missing.status_code == 422
    assert missing.json()["errors"] == [{"resource": "Issue", "code": "missing_field", "field": "title"}]
    n = sb.create_issue(REPO, "x")
    bad = client.patch(f"{BASE}/issues/{n}", json={"state": "gone"})
    assert bad.status_code == 422 and bad.json()["errors"][0]["field"] == "state"
    reason = client.patch(f"{BASE}/issues/{n}", json={"state": "closed", "state_reason": "bored"})
    assert reason.status_code == 422 and sb.issues(REPO)[0].state == "open"
    long_body = client.post(f"{BASE}/issues", json={"title": "t", "body": "x" * 65537})
    assert long_body.status_code == 422
    assert long_body.json()["errors"][0]["message"] == "body is too long (maximum is 65536 characters)"
    assert client.post(f"{BASE}/issues", json={"title": "t" * 257}).status_code == 422
    assert client.post(f"{BASE}/issues/{n}/comments", json={"body": "x" * 65537}).status_code == 422
    assert client.post(f"{BASE}/issues", json={"title": "t", "labels": "watch"}).status_code == 422


def test_issues_disabled_is_410_but_pull_requests_still_talk(sb: Sandbox, client: httpx.Client) -> None:
    sb.create_repo("acme/quiet", has_issues=False)
    pr = sb.create_pull("acme/quiet", "feature", title="a PR", files={"a.py": "a = 1\n"})
    resp = client.post("/repos/acme/quiet/issues", json={"title": "t"})
    assert resp.status_code == 410 and resp.json()["message"] == "Issues are disabled for this repo"
    assert client.get("/repos/acme/quiet/issues").status_code == 410
    assert client.post(f"/repos/acme/quiet/issues/{pr}/comments", json={"body": "hi"}).status_code == 201
    assert client.get("/repos/acme/quiet").json()["has_issues"] is False


def test_fine_grained_token_without_issues_write_cannot_open_one(sb: Sandbox, client: httpx.Client) -> None:
    sb.fine_grained_token(missing={"issues"})
    resp = client.post(f"{BASE}/issues", json={"title": "t"})
    assert resp.status_code == 403
    assert resp.headers["x-accepted-github-permissions"] == "issues=write"
    assert client.get(f"{BASE}/issues").status_code == 200  # reads still work
