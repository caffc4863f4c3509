"""The failure modes real GitHub shows and recordings rarely do, over real sockets.

Each test drives the sandbox the way the product does (httpx or PyGithub) and asserts what
a client would see: the status, the exact body, the headers, and whether the write
really happened behind the error.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import httpx
import pytest
from github import Auth, Github, GithubException, InputGitTreeElement

from redline_canary.sandbox import Sandbox, ScriptedReviewer
from redline_canary.sandbox.reviewers import Identity

REPO = "acme/canary-python"
PULLS = "/repos/{owner}/{repo}/pulls"
REFS = "/repos/{owner}/{repo}/git/refs"
D_PULLS = "https://docs.github.com/rest/pulls/pulls#create-a-pull-request"
SECONDARY = (
    "You have exceeded a secondary rate limit and have been temporarily blocked from content "
    "creation. Please retry your request again later."
)


@pytest.fixture
def sb() -> Iterator[Sandbox]:
    with Sandbox() as sandbox:
        sandbox.create_repo(REPO, files={"README.md": "hi\n"})
        yield sandbox


@pytest.fixture
def client(sb: Sandbox) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=sb.url, headers={"Authorization": "token t"}, timeout=5) as c:
        yield c


def _github(sb: Sandbox) -> Github:
    return Github(
        base_url=sb.url,
        auth=Auth.Token("t"),
        retry=None,
        seconds_between_requests=None,
        seconds_between_writes=None,
    )


def _open(client: httpx.Client, head: str, title: str = "t") -> httpx.Response:
    return client.post(f"/repos/{REPO}/pulls", json={"title": title, "head": head, "base": "main"})


def _new_ref(client: httpx.Client, sb: Sandbox, branch: str) -> httpx.Response:
    """A branch with one commit, made through the API the way the product makes one."""
    main = sb.state.get_repo_by_name(REPO).branch_sha("main")
    tree = client.post(
        f"/repos/{REPO}/git/trees",
        json={"tree": [{"path": f"{branch}.py", "mode": "100644", "type": "blob", "content": "x = 1\n"}],
              "base_tree": main},
    ).json()["sha"]
    commit = client.post(f"/repos/{REPO}/git/commits", json={"message": "m", "tree": tree, "parents": [main]})
    return client.post(f"/repos/{REPO}/git/refs", json={"ref": f"refs/heads/{branch}", "sha": commit.json()["sha"]})


# --- after_write: the write happened, the answer says it did not -----------------------


def test_after_write_creates_the_pull_then_answers_502(sb: Sandbox, client: httpx.Client) -> None:
    sb.commit_files(REPO, "feature", {"app.py": "x = 1\n"})
    sb.inject_fault("POST", PULLS, status=502, after_write=True)
    first = _open(client, "feature")
    assert first.status_code == 502
    assert first.json() == {"message": "Server Error", "documentation_url": D_PULLS, "status": "502"}
    assert [p.head for p in sb.open_pulls(REPO)] == ["feature"]  # it exists all the same
    listed = client.get(f"/repos/{REPO}/pulls", params={"head": "acme:feature"}).json()
    assert [p["number"] for p in listed] == [1]

    retry = _open(client, "feature")  # a blind retry meets the PR it already made
    assert retry.status_code == 422
    assert retry.json()["errors"][0]["message"] == "A pull request already exists for acme:feature."
    assert [r.status for r in sb.requests if r.route == PULLS and r.method == "POST"] == [502, 422]


def test_after_write_fault_waits_for_a_write_that_succeeds(sb: Sandbox, client: httpx.Client) -> None:
    fault = sb.inject_fault("POST", PULLS, status=500, after_write=True)
    refused = _open(client, "no-such-branch")
    assert refused.status_code == 422 and refused.json()["errors"][0]["field"] == "head"
    assert fault.hits == 0 and not fault.exhausted  # nothing was written, nothing replaced
    sb.commit_files(REPO, "feature", {"app.py": "x = 1\n"})
    assert _open(client, "feature").status_code == 500
    assert fault.exhausted and len(sb.open_pulls(REPO)) == 1
    assert _open(client, "other").status_code == 422  # the fault is spent


def test_after_write_drop_loses_the_answer_but_keeps_the_ref(sb: Sandbox, client: httpx.Client) -> None:
    sb.inject_fault("POST", REFS, drop=True, after_write=True)
    with pytest.raises(httpx.RemoteProtocolError):
        _new_ref(client, sb, "canary/lost-answer")
    assert "canary/lost-answer" in sb.branches(REPO)
    got = client.get(f"/repos/{REPO}/git/ref/heads/canary/lost-answer")
    assert got.status_code == 200
    again = client.post(f"/repos/{REPO}/git/refs", json={"ref": "refs/heads/canary/lost-answer",
                                                          "sha": got.json()["object"]["sha"]})
    assert again.status_code == 422 and again.json()["message"] == "Reference already exists"


def test_fault_limited_to_one_repo(sb: Sandbox, client: httpx.Client) -> None:
    sb.create_repo("acme/product")
    fault = sb.inject_fault("GET", "/repos/{owner}/{repo}", status=503, repo="acme/product", times=None)
    assert client.get(f"/repos/{REPO}").status_code == 200
    assert client.get("/repos/ACME/product").status_code == 503
    repo_id = client.get(f"/repos/{REPO}").json()["id"]
    assert client.get(f"/repositories/{repo_id}").status_code == 200  # id form resolves to the same repo
    assert fault.hits == 1


def test_fault_validation_catches_typos(sb: Sandbox) -> None:
    with pytest.raises(ValueError, match="serves no route"):
        sb.inject_fault("POST", "/repos/{owner}/{repo}/pull", status=502)
    with pytest.raises(ValueError, match="not POST"):
        sb.inject_fault("POST", "/repos/{owner}/{repo}", status=502)
    with pytest.raises(ValueError, match="after_write"):
        sb.inject_fault("POST", PULLS, after_write=True)


# --- header-only faults and malformed bodies on list routes ------------------------------


@pytest.mark.parametrize("link_to", ["evil", "self"])
def test_header_only_fault_adds_a_link_to_a_real_list(sb: Sandbox, client: httpx.Client, link_to: str) -> None:
    n = sb.create_pull(REPO, "feature", title="t", files={"app.py": "x = 1\n"})
    sb.add_issue_comment(REPO, n, "hello", author="alice")
    url = f"/repos/{REPO}/issues/{n}/comments"
    target = "http://evil.example/x" if link_to == "evil" else f"{sb.url}{url}?page=1"
    link = f'<{target}>; rel="next"'
    sb.inject_fault("GET", "/repos/{owner}/{repo}/issues/{issue_number}/comments", headers={"Link": link},
                    times=None)
    for _ in range(2):  # times=None: every page answer carries it
        r = client.get(url)
        assert r.status_code == 200 and [c["body"] for c in r.json()] == ["hello"]
        assert r.headers["link"] == link
    assert "link" not in client.get(f"/repos/{REPO}/pulls/{n}/comments").headers  # other routes clean


def test_malformed_body_and_delay(sb: Sandbox, client: httpx.Client) -> None:
    n = sb.create_pull(REPO, "feature", title="t", files={"app.py": "x = 1\n"})
    sb.inject_fault("GET", "/repos/{owner}/{repo}/pulls/{pull_number}/comments", status=200, body="{not json")
    r = client.get(f"/repos/{REPO}/pulls/{n}/comments")
    assert r.status_code == 200 and r.content == b"{not json"
    assert r.headers["content-type"].startswith("application/json")
    with pytest.raises(json.JSONDecodeError):
        r.json()
    assert client.get(f"/repos/{REPO}/pulls/{n}/comments").json() == []  # times=1: healed

    sb.inject_fault("GET", "/repos/{owner}/{repo}/issues/{issue_number}/comments", delay=0.5)
    with pytest.raises(httpx.ReadTimeout):
        client.get(f"/repos/{REPO}/issues/{n}/comments", timeout=0.1)


# --- a ref the pulls API cannot see yet ---------------------------------------------------


def test_new_ref_invisible_to_pulls_for_n_attempts(sb: Sandbox, client: httpx.Client) -> None:
    sb.ref_visibility_lag(2)
    assert _new_ref(client, sb, "canary/run-1").status_code == 201
    invalid_head = {
        "message": "Validation Failed",
        "errors": [{"resource": "PullRequest", "field": "head", "code": "invalid"}],
        "documentation_url": D_PULLS,
        "status": "422",
    }
    attempts = [_open(client, "canary/run-1") for _ in range(3)]
    assert [a.status_code for a in attempts] == [422, 422, 201]
    assert attempts[0].json() == attempts[1].json() == invalid_head
    assert client.get(f"/repos/{REPO}/branches/canary/run-1").status_code == 200  # the ref exists

    sb.commit_files(REPO, "pushed-in-process", {"b.py": "y = 2\n"})  # not made via POST /git/refs
    assert _open(client, "pushed-in-process").status_code == 201


# --- "was submitted too quickly" -------------------------------------------------------------


def test_too_quickly_on_the_third_pull_for_two_attempts(sb: Sandbox, client: httpx.Client) -> None:
    limit = sb.submitted_too_quickly(after=2, times=2)
    for i in range(4):
        sb.commit_files(REPO, f"b{i}", {f"f{i}.py": "x = 1\n"})
    codes = [_open(client, f"b{i}").status_code for i in range(3)]
    again = _open(client, "b2")
    assert codes == [201, 201, 422] and again.status_code == 422
    assert again.json() == {
        "message": "Validation Failed",
        "errors": [{"resource": "PullRequest", "code": "custom", "message": "was submitted too quickly"}],
        "documentation_url": D_PULLS,
        "status": "422",
    }
    assert [p.head for p in sb.open_pulls(REPO)] == ["b0", "b1"]
    assert _open(client, "b2").status_code == 201 and limit.refused == 2

    sb.submitted_too_quickly(times=None)  # from now on, every one...
    assert _open(client, "b3").status_code == 422
    sb.clear_policies()  # ...until GitHub calms down
    assert _open(client, "b3").status_code == 201


def test_too_quickly_but_created(sb: Sandbox) -> None:
    sb.submitted_too_quickly(times=1, created=True)
    sb.commit_files(REPO, "feature", {"app.py": "x = 1\n"})
    repo = _github(sb).get_repo(REPO)
    with pytest.raises(GithubException) as exc:
        repo.create_pull(base="main", head="feature", title="t")
    assert exc.value.status == 422
    assert exc.value.data["errors"] == [{"resource": "PullRequest", "code": "custom",
                                         "message": "was submitted too quickly"}]
    assert [p.number for p in repo.get_pulls(state="open", head="acme:feature")] == [1]


# --- secondary limits: 403 or 429, with or without retry-after ------------------------------


@pytest.mark.parametrize("status", [403, 429])
@pytest.mark.parametrize("send_retry_after", [True, False])
def test_secondary_limit_status_and_retry_after(
    sb: Sandbox, client: httpx.Client, status: int, send_retry_after: bool
) -> None:
    n = sb.create_issue(REPO, "x")
    sb.secondary_limit(per_minute=1, window=0.3, status=status, send_retry_after=send_retry_after)
    url = f"/repos/{REPO}/issues/{n}/comments"
    assert client.post(url, json={"body": "one"}).status_code == 201
    blocked = client.post(url, json={"body": "two"})
    assert blocked.status_code == status
    assert blocked.json()["message"] == SECONDARY
    assert ("retry-after" in blocked.headers) is send_retry_after
    assert int(blocked.headers["x-ratelimit-remaining"]) > 0  # not the primary limit
    time.sleep(0.35)
    assert client.post(url, json={"body": "three"}).status_code == 201


def test_secondary_fault_without_retry_after(sb: Sandbox, client: httpx.Client) -> None:
    sb.inject_fault("POST", PULLS, status=429, secondary=True)
    r = _open(client, "whatever")
    assert r.status_code == 429 and "retry-after" not in r.headers
    assert r.json()["message"] == SECONDARY
    with pytest.raises(ValueError):
        sb.secondary_limit(per_minute=1, status=500)


# --- fine-grained token without a permission --------------------------------------------


def test_fine_grained_token_push_true_but_pulls_refused(sb: Sandbox, client: httpx.Client) -> None:
    sb.fine_grained_token(missing={"pull_requests"})
    gh = _github(sb)
    repo = gh.get_repo(REPO)
    assert repo.permissions.push is True
    expiry = client.get(f"/repos/{REPO}").headers["github-authentication-token-expiration"]
    assert expiry.endswith(" UTC") and len(expiry) == len("2026-09-19 08:26:39 UTC")
    ref = _new_ref(client, sb, "canary/fg")  # contents=write: granted
    assert ref.status_code == 201
    with pytest.raises(GithubException) as exc:
        repo.create_pull(base="main", head="canary/fg", title="t")
    assert exc.value.status == 403
    assert exc.value.data == {
        "message": "Resource not accessible by personal access token",
        "documentation_url": D_PULLS,
        "status": "403",
    }
    assert exc.value.headers is not None
    assert exc.value.headers["x-accepted-github-permissions"] == "pull_requests=write"
    assert sb.open_pulls(REPO) == []

    n = sb.create_pull(REPO, "canary/fg", title="made by a person")
    assert repo.get_pull(n).title == "made by a person"  # reads still work
    close = client.patch(f"/repos/{REPO}/pulls/{n}", json={"state": "closed"})
    assert close.status_code == 403 and sb.open_pulls(REPO) != []
    # Labels accept issues=write as an alternative to pull_requests=write.
    assert client.post(f"/repos/{REPO}/issues/{n}/labels", json={"labels": ["x"]}).status_code == 200

    sb.fine_grained_token()
    assert client.patch(f"/repos/{REPO}/pulls/{n}", json={"state": "closed"}).status_code == 200


def test_fine_grained_token_only_on_selected_repos(sb: Sandbox, client: httpx.Client) -> None:
    sb.create_repo("acme/other")
    sb.fine_grained_token(missing={"contents"}, repos=["acme/other"])
    assert _new_ref(client, sb, "canary/ok").status_code == 201
    blocked = client.post("/repos/acme/other/git/trees", json={"tree": []})
    assert blocked.status_code == 403
    assert blocked.headers["x-accepted-github-permissions"] == "contents=write"
    with pytest.raises(ValueError, match="unknown permission"):
        sb.fine_grained_token(missing={"pull-requests"})


# --- reviewer requests that are accepted but never registered --------------------------------

BOT = Identity(login="acme-review[bot]", user_id=190_000_077)


@pytest.mark.parametrize(("mode", "wakes"), [("registered", True), ("dropped", False), ("hidden", True)])
def test_review_request_modes(sb: Sandbox, client: httpx.Client, mode: str, wakes: bool) -> None:
    reviewer = ScriptedReviewer(identity=BOT, wake_on=("review_requested",), latency=0.0)
    sb.attach_reviewer(REPO, reviewer)
    sb.add_user(BOT.login, type="Bot", id=BOT.user_id)
    sb.review_requests(REPO, BOT.login, mode)  # type: ignore[arg-type]
    n = sb.create_pull(REPO, "feature", title="t", files={"app.py": "x = 1\n"})
    answered = client.post(f"/repos/{REPO}/pulls/{n}/requested_reviewers", json={"reviewers": [BOT.login]})
    assert answered.status_code == 201 and answered.json()["number"] == n  # in every mode
    listed = [u["login"] for u in answered.json()["requested_reviewers"]]
    users, _ = _github(sb).get_repo(REPO).get_pull(n).get_review_requests()
    assert sb.wait_for_reviewers(5)
    assert (listed == [BOT.login]) is (mode == "registered")
    assert ([u.login for u in users] == [BOT.login]) is (mode == "registered")
    assert bool(reviewer.wakes) is wakes


def test_review_request_rejected(sb: Sandbox) -> None:
    sb.review_requests(REPO, "copilot-pull-request-reviewer[bot]", "rejected")
    n = sb.create_pull(REPO, "feature", title="t", files={"app.py": "x = 1\n"})
    pr = _github(sb).get_repo(REPO).get_pull(n)
    with pytest.raises(GithubException) as exc:
        pr.create_review_request(reviewers=["copilot-pull-request-reviewer[bot]"])
    assert exc.value.status == 422
    assert exc.value.data["message"] == (
        "Reviews may only be requested from collaborators. One or more of the users or teams "
        f"you specified is not a collaborator of the {REPO} repository."
    )
    with pytest.raises(ValueError):
        sb.review_requests(REPO, "x", "ignored")  # type: ignore[arg-type]


# --- what GitHub refuses: malformed tree paths and ref names --------------------------------


@pytest.mark.parametrize(
    "path", ["../escape.py", "pkg/../../x.py", "/abs.py", "a//b.py", "dir/", "./a.py", ".git/config",
             "pkg/.GIT/hooks", "nul\0byte", ""]
)
def test_tree_paths_github_refuses(sb: Sandbox, client: httpx.Client, path: str) -> None:
    r = client.post(f"/repos/{REPO}/git/trees",
                    json={"tree": [{"path": path, "mode": "100644", "type": "blob", "content": "x"}]})
    assert r.status_code == 422
    assert r.json() == {
        "message": "tree.path contains a malformed path component",
        "documentation_url": "https://docs.github.com/rest/git/trees#create-a-tree",
        "status": "422",
    }


def test_tree_paths_that_look_odd_but_are_fine(sb: Sandbox) -> None:
    repo = _github(sb).get_repo(REPO)
    ok = ["a..b.py", ".github/workflows/ci.yml", "dir/.hidden", "x.git/y"]
    tree = repo.create_git_tree([InputGitTreeElement(p, "100644", "blob", content="x") for p in ok])
    assert {e.path for e in tree.tree} == {"a..b.py", ".github", "dir", "x.git"}


@pytest.mark.parametrize(
    "ref",
    ["refs/heads/a..b", "refs/heads/a~1", "refs/heads/a^", "refs/heads/a:b", "refs/heads/a?", "refs/heads/a*",
     "refs/heads/a[b", "refs/heads/a\\b", "refs/heads/a b", "refs/heads/a\tb", "refs/heads/x.lock",
     "refs/heads/x/", "refs/heads/", "refs/heads/a@{1}", "refs/heads/.hidden", "refs/heads/a//b",
     "refs/heads/end."],
)
def test_ref_names_git_refuses(sb: Sandbox, client: httpx.Client, ref: str) -> None:
    sha = sb.state.get_repo_by_name(REPO).branch_sha("main")
    r = client.post(f"/repos/{REPO}/git/refs", json={"ref": ref, "sha": sha})
    assert r.status_code == 422
    assert r.json() == {
        "message": f"{ref} is not a valid ref name.",
        "documentation_url": "https://docs.github.com/rest/git/refs#create-a-reference",
        "status": "422",
    }
    assert sb.branches(REPO) == ["main"]


def test_ref_that_collides_with_a_directory_of_refs(sb: Sandbox, client: httpx.Client) -> None:
    sha = sb.state.get_repo_by_name(REPO).branch_sha("main")
    assert client.post(f"/repos/{REPO}/git/refs", json={"ref": "refs/heads/rc/2.4", "sha": sha}).status_code == 201
    for ref in ("refs/heads/rc", "refs/heads/rc/2.4/fix", "refs/heads/main/x"):
        r = client.post(f"/repos/{REPO}/git/refs", json={"ref": ref, "sha": sha})
        assert r.status_code == 422 and r.json()["message"] == "Reference update failed", ref
    assert sb.branches(REPO) == ["main", "rc/2.4"]


def test_ref_names_git_accepts(sb: Sandbox) -> None:
    repo = _github(sb).get_repo(REPO)
    sha = repo.get_branch("main").commit.sha
    for name in ["canary/run-20261201.1_x", "rc/2.5-hotfix", "a.b/c-d", "UPPER/ünïcode"]:
        repo.create_git_ref(f"refs/heads/{name}", sha)
    assert len(sb.branches(REPO)) == 5
