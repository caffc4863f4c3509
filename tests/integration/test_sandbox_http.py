"""httpx against the sandbox: conditional requests, pagination, faults, limits, git data."""

from __future__ import annotations

import logging
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from redline_canary.sandbox import Sandbox

REPO = "acme/canary-python"
COMMENTS = "/repos/{owner}/{repo}/issues/{issue_number}/comments"
PULLS = "/repos/{owner}/{repo}/pulls"


@pytest.fixture
def sb() -> Iterator[Sandbox]:
    with Sandbox() as sandbox:
        sandbox.create_repo(REPO, files={"README.md": "hi\n"})
        yield sandbox


@pytest.fixture
def client(sb: Sandbox) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=sb.url, headers={"Authorization": "token t"}, timeout=5) as c:
        yield c


def _pr(sb: Sandbox, branch: str = "feature") -> int:
    return sb.create_pull(REPO, branch, title="t", files={"app.py": "print(1)\n"})


def test_etag_then_304_is_not_charged(sb: Sandbox, client: httpx.Client) -> None:
    n = _pr(sb)
    url = f"/repos/{REPO}/issues/{n}/comments"
    first = client.get(url)
    etag = first.headers["etag"]
    assert first.status_code == 200 and etag.startswith('W/"')
    used = int(first.headers["x-ratelimit-used"])

    again = client.get(url, headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.content == b""
    assert again.headers["etag"] == etag
    assert int(again.headers["x-ratelimit-used"]) == used
    assert again.headers["x-ratelimit-resource"] == "core"

    sb.add_issue_comment(REPO, n, "new activity", author="someone")
    changed = client.get(url, headers={"If-None-Match": etag})
    assert changed.status_code == 200 and changed.headers["etag"] != etag
    assert int(changed.headers["x-ratelimit-used"]) == used + 1

    assert sb.request_counts("not_modified") == {f"GET {COMMENTS}": 1}
    assert sb.request_counts("charged")[f"GET {COMMENTS}"] == 2
    assert sb.request_counts()[f"GET {COMMENTS}"] == 3
    rate = client.get("/rate_limit").json()
    assert rate["resources"]["core"]["used"] == rate["rate"]["used"] == used + 1


def test_link_pagination_default_max_and_repository_id_form(sb: Sandbox, client: httpx.Client) -> None:
    n = sb.create_issue(REPO, "busy")
    for i in range(205):
        sb.add_issue_comment(REPO, n, f"c{i}")
    first = client.get(f"/repos/{REPO}/issues/{n}/comments")
    assert len(first.json()) == 30
    assert 'rel="next"' in first.headers["link"] and 'rel="prev"' not in first.headers["link"]

    capped = client.get(f"/repos/{REPO}/issues/{n}/comments", params={"per_page": 500})
    assert len(capped.json()) == 100
    links = dict((part.split("; ")[1], part.split("; ")[0].strip("<>")) for part in capped.headers["link"].split(", "))
    assert list(links) == ['rel="next"', 'rel="last"']
    repo_id = client.get(f"/repos/{REPO}").json()["id"]
    assert links['rel="next"'] == (f"{sb.url}/repositories/{repo_id}/issues/{n}/comments?per_page=500&page=2")
    assert links['rel="last"'].endswith("page=3")

    seen, url = [], f"/repos/{REPO}/issues/{n}/comments?per_page=100"
    while url:
        page = client.get(url)
        seen += [c["body"] for c in page.json()]
        nxt = [p for p in page.headers.get("link", "").split(", ") if p.endswith('rel="next"')]
        url = nxt[0].split(";")[0].strip("<>") if nxt else ""
    assert seen == [f"c{i}" for i in range(205)]
    assert 'rel="first"' in page.headers["link"] and 'rel="prev"' in page.headers["link"]


def test_fault_status_n_times_then_recovers(sb: Sandbox, client: httpx.Client) -> None:
    sb.commit_files(REPO, "feature", {"app.py": "x = 1\n"})
    fault = sb.inject_fault("POST", PULLS, status=502, times=2)
    body = {"title": "t", "head": "feature", "base": "main"}
    statuses = [client.post(f"/repos/{REPO}/pulls", json=body).status_code for _ in range(3)]
    assert statuses == [502, 502, 201] and fault.hits == 2 and fault.exhausted
    assert client.get(f"/repos/{REPO}/pulls").status_code == 200  # other routes untouched
    assert [r.status for r in sb.requests if r.route == PULLS and r.method == "POST"] == [
        502,
        502,
        201,
    ]


def test_fault_headers_retry_after_and_always(sb: Sandbox, client: httpx.Client) -> None:
    sb.inject_fault("GET", "/repos/{owner}/{repo}", status=403, headers={"Retry-After": "7"}, times=None)
    for _ in range(2):
        r = client.get(f"/repos/{REPO}")
        assert r.status_code == 403 and r.headers["retry-after"] == "7"
        assert r.json()["message"].startswith("You have exceeded a secondary rate limit")
    sb.clear_faults()
    assert client.get(f"/repos/{REPO}").status_code == 200

    reset = str(int(time.time()) + 30)
    sb.inject_fault(
        "GET",
        "/repos/{owner}/{repo}",
        status=403,
        headers={"x-ratelimit-remaining": "0", "x-ratelimit-reset": reset},
    )
    r = client.get(f"/repos/{REPO}")
    assert r.headers["x-ratelimit-remaining"] == "0" and r.headers["x-ratelimit-reset"] == reset
    assert r.json()["message"].lower().startswith("api rate limit exceeded")


def test_fault_drop_and_delay(sb: Sandbox, client: httpx.Client) -> None:
    sb.inject_fault("GET", "/repos/{owner}/{repo}", drop=True)
    with pytest.raises(httpx.RemoteProtocolError):
        client.get(f"/repos/{REPO}")
    assert sb.requests[-1].status == 0 and not sb.requests[-1].charged

    sb.inject_fault("GET", "/repos/{owner}/{repo}", delay=0.3)
    t0 = time.monotonic()
    assert client.get(f"/repos/{REPO}").status_code == 200
    assert time.monotonic() - t0 >= 0.3


def test_secondary_limit_on_content_creation(sb: Sandbox, client: httpx.Client) -> None:
    n = sb.create_issue(REPO, "x")
    sb.secondary_limit(per_minute=3, window=0.6)
    url = f"/repos/{REPO}/issues/{n}/comments"
    codes = [client.post(url, json={"body": f"b{i}"}).status_code for i in range(3)]
    blocked = client.post(url, json={"body": "too many"})
    assert codes == [201, 201, 201] and blocked.status_code == 403
    assert 1 <= int(blocked.headers["retry-after"]) <= 1
    assert blocked.json() == {
        "message": "You have exceeded a secondary rate limit and have been temporarily "
        "blocked from content creation. Please retry your request again later.",
        "documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"
        "#about-secondary-rate-limits",
        "status": "403",
    }
    assert client.get(url).status_code == 200  # reads are not content creation
    time.sleep(0.65)
    assert client.post(url, json={"body": "later"}).status_code == 201


@pytest.mark.parametrize("status", [403, 429])
def test_primary_limit_exhausted(sb: Sandbox, client: httpx.Client, status: int) -> None:
    sb.primary_limit(remaining=0, reset_in=5, status=status)
    r = client.get(f"/repos/{REPO}")
    assert r.status_code == status and r.headers["x-ratelimit-remaining"] == "0"
    assert int(r.headers["x-ratelimit-reset"]) >= int(time.time()) + 4
    assert r.json()["message"].startswith("API rate limit exceeded for user ID")
    assert client.get("/rate_limit").json()["resources"]["core"]["remaining"] == 0
    assert not any(rec.charged for rec in sb.requests)


def test_tokens_are_checked_and_never_echoed(caplog: pytest.LogCaptureFixture) -> None:
    secret = "ghp_sandboxTokenThatMustNotLeak1234"
    caplog.set_level(logging.DEBUG)
    with Sandbox(token=secret) as sb, httpx.Client(base_url=sb.url, timeout=5) as c:
        sb.create_repo(REPO)
        bad = c.get("/user", headers={"Authorization": "token wrong"})
        assert bad.status_code == 401 and bad.json()["message"] == "Bad credentials"
        assert c.get("/user").status_code == 401
        ok = c.get("/user", headers={"Authorization": f"Bearer {secret}"})
        assert ok.status_code == 200 and ok.json()["login"] == "redline-canary"
        r = c.post(
            f"/repos/{REPO}/issues",
            json={"title": secret},
            headers={"Authorization": f"token {secret}x"},
        )
        assert r.status_code == 401
        for resp in (bad, ok, r):
            assert secret not in resp.text and secret not in str(resp.headers)
        assert secret not in repr(sb.requests)
    assert secret not in caplog.text


def test_branch_delete_makes_branch_and_ref_404(sb: Sandbox, client: httpx.Client) -> None:
    sb.commit_files(REPO, "canary/x", {"a.txt": "a\n"})
    assert client.get(f"/repos/{REPO}/branches/canary/x").status_code == 200
    assert client.delete(f"/repos/{REPO}/git/refs/heads/canary/x").status_code == 204
    gone = client.get(f"/repos/{REPO}/branches/canary/x")
    assert gone.status_code == 404 and gone.json()["message"] == "Branch not found"
    assert client.get(f"/repos/{REPO}/git/ref/heads/canary/x").status_code == 404
    again = client.delete(f"/repos/{REPO}/git/ref/heads/canary/x")
    assert again.status_code == 422 and again.json()["message"] == "Reference does not exist"
    listed = client.get(f"/repos/{REPO}/git/matching-refs/heads/canary")
    assert listed.status_code == 200 and listed.json() == []


def test_tree_rules_and_real_git_ids(sb: Sandbox, client: httpx.Client, tmp_path: Path) -> None:
    base = client.get(f"/repos/{REPO}/git/ref/heads/main").json()["object"]["sha"]
    url = f"/repos/{REPO}/git/trees"
    made = client.post(
        url,
        json={
            "base_tree": base,
            "tree": [
                {"path": "src/pkg/mod.py", "mode": "100644", "type": "blob", "content": "x = 1\n"},
                {"path": "README.md", "mode": "100644", "type": "blob", "sha": None},
            ],
        },
    )
    assert made.status_code == 201 and made.headers["location"] == made.json()["url"]
    top = made.json()["tree"]
    assert [(e["path"], e["mode"], e["type"]) for e in top] == [("src", "040000", "tree")]
    both = client.post(
        url, json={"tree": [{"path": "a", "mode": "100644", "type": "blob", "sha": "0" * 40, "content": "x"}]}
    )
    assert both.status_code == 422
    missing = client.post(
        url, json={"base_tree": base, "tree": [{"path": "nope.txt", "mode": "100644", "type": "blob", "sha": None}]}
    )
    assert missing.status_code == 422

    if shutil.which("git") is None:
        pytest.skip("git not installed: cannot cross-check object ids")
    work = tmp_path / "w"
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    (work / "src" / "pkg").mkdir(parents=True)
    (work / "src" / "pkg" / "mod.py").write_text("x = 1\n")
    subprocess.run(["git", "-C", str(work), "add", "-A"], check=True)
    real = subprocess.run(
        ["git", "-C", str(work), "write-tree"], check=True, capture_output=True, text=True
    ).stdout.strip()
    assert made.json()["sha"] == real


def test_inline_review_comment_must_be_in_the_diff(sb: Sandbox, client: httpx.Client) -> None:
    n = sb.create_pull(REPO, "feature", title="t", author="alice", files={"app.py": "a\nb\nc\n"})
    url = f"/repos/{REPO}/pulls/{n}/reviews"
    ok = client.post(
        url,
        json={
            "event": "COMMENT",
            "body": "",
            "comments": [{"path": "app.py", "line": 2, "side": "RIGHT", "body": "[MINOR] b"}],
        },
    )
    assert ok.status_code == 200 and ok.json()["state"] == "COMMENTED"
    bad = client.post(url, json={"event": "COMMENT", "comments": [{"path": "README.md", "line": 1, "body": "outside"}]})
    assert bad.status_code == 422
    pending = client.post(url, json={"body": "draft"})
    assert pending.status_code == 200 and "submitted_at" not in pending.json()
    assert client.post(url, json={"body": "second draft"}).status_code == 422
    comment = client.get(f"/repos/{REPO}/pulls/{n}/comments").json()[0]
    assert "in_reply_to_id" not in comment and comment["start_line"] is None
    assert comment["diff_hunk"].startswith("@@ -0,0 +1,3 @@")
    reply = client.post(f"/repos/{REPO}/pulls/{n}/comments", json={"body": "agreed", "in_reply_to": comment["id"]})
    assert reply.status_code == 201 and reply.headers["location"] == reply.json()["url"]
    assert reply.json()["in_reply_to_id"] == comment["id"] and reply.json()["line"] == 2
