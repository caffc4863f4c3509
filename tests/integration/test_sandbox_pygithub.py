"""The real PyGithub client, end to end against the sandbox over real sockets."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from github import Auth, Github, GithubException, InputGitTreeElement, UnknownObjectException
from github.Repository import Repository

from redline_canary.sandbox import COPILOT, Batch, Sandbox, ScriptedReviewer

REPO = "acme/canary-python"


@pytest.fixture
def sb() -> Iterator[Sandbox]:
    with Sandbox() as sandbox:
        sandbox.create_repo(REPO, files={"README.md": "hi\n"})
        yield sandbox


def _github(sb: Sandbox, per_page: int = 30) -> Github:
    return Github(
        base_url=sb.url,
        auth=Auth.Token("t"),
        per_page=per_page,
        retry=None,
        seconds_between_requests=None,
        seconds_between_writes=None,
    )


def _push_branch(repo: Repository, branch: str, files: dict[str, str]) -> str:
    base = repo.get_git_commit(repo.get_git_ref("heads/main").object.sha)
    elements = [InputGitTreeElement(p, "100644", "blob", content=c) for p, c in files.items()]
    tree = repo.create_git_tree(elements, base_tree=base.tree)
    commit = repo.create_git_commit("canary", tree, [base])
    repo.create_git_ref(f"refs/heads/{branch}", commit.sha)
    return commit.sha


def test_full_pr_lifecycle_through_pygithub(sb: Sandbox) -> None:
    inline = [{"path": "pkg/app.py", "line": n, "side": "RIGHT", "body": f"[MAJOR] finding {n}"} for n in range(1, 6)]
    sb.attach_reviewer(
        REPO,
        ScriptedReviewer(
            identity=COPILOT,
            wake_on=("review_requested",),
            latency=0.01,
            batches=[Batch(inline=inline, reviews=[{"body": "## Pull request overview"}])],
        ),
    )
    gh = _github(sb, per_page=2)
    repo = gh.get_repo(REPO)

    base = repo.get_git_commit(repo.get_git_ref("heads/main").object.sha)
    tree = repo.create_git_tree(
        [
            InputGitTreeElement("pkg/app.py", "100644", "blob", content="a\nb\nc\nd\ne\n"),
            InputGitTreeElement("data.bin", "100644", "blob", content="binary-ish\n"),
        ],
        base_tree=base.tree,
    )
    assert {e.path for e in tree.tree} == {"README.md", "data.bin", "pkg"}
    data = next(e for e in tree.tree if e.path == "data.bin")
    assert data.sha == "3fbdea2ed32311fd07377f78aa9ab539a3cd48af"  # git hash-object
    commit = repo.create_git_commit("one commit, many files", tree, [base])
    ref = repo.create_git_ref("refs/heads/canary/run-1", commit.sha)

    pr = repo.create_pull(base="main", head="canary/run-1", title="Routine update", body="b")
    assert pr.number == 1 and pr.head.sha == commit.sha and pr.changed_files == 2
    pr.add_to_labels("redline-exempt")
    pr.create_review_request(reviewers=["copilot-pull-request-reviewer[bot]"])
    assert sb.wait_for_reviewers(5)

    comments = pr.get_review_comments()
    assert comments.totalCount == 5
    bodies = [c.body for c in comments]  # three pages of 2, followed via /repositories/{id}
    assert bodies == [f"[MAJOR] finding {n}" for n in range(1, 6)]
    assert {c.user.login for c in comments} == {"Copilot"}
    reviews = list(pr.get_reviews())
    assert [r.user.login for r in reviews] == ["copilot-pull-request-reviewer[bot]"]
    assert reviews[0].user.id == comments[0].user.id == COPILOT.user_id
    assert [lab.name for lab in repo.get_pull(1).labels] == ["redline-exempt"]
    assert repo.get_label("redline-exempt").color == "ededed"
    pages = [r.route for r in sb.requests if r.route.endswith("/pulls/{pull_number}/comments")]
    assert len(pages) >= 3

    pr.edit(state="closed")
    assert repo.get_pull(1).state == "closed"
    ref.delete()
    assert sb.open_pulls(REPO) == [] and sb.branches(REPO) == ["main"]
    with pytest.raises(UnknownObjectException):
        repo.get_branch("canary/run-1")
    with pytest.raises(UnknownObjectException):
        repo.get_git_ref("heads/canary/run-1")


def test_pull_creation_422s_are_verbatim(sb: Sandbox) -> None:
    repo = _github(sb).get_repo(REPO)
    _push_branch(repo, "feature", {"x.py": "x = 1\n"})
    repo.create_pull(base="main", head="feature", title="t")
    doc = "https://docs.github.com/rest/pulls/pulls#create-a-pull-request"

    with pytest.raises(GithubException) as dup:
        repo.create_pull(base="main", head="feature", title="again")
    assert dup.value.status == 422
    assert dup.value.data == {
        "message": "Validation Failed",
        "errors": [
            {
                "resource": "PullRequest",
                "code": "custom",
                "message": "A pull request already exists for acme:feature.",
            }
        ],
        "documentation_url": doc,
        "status": "422",
    }

    repo.create_git_ref("refs/heads/empty", repo.get_git_ref("heads/main").object.sha)
    with pytest.raises(GithubException) as none:
        repo.create_pull(base="main", head="empty", title="nothing")
    assert none.value.data["errors"] == [
        {"resource": "PullRequest", "code": "custom", "message": "No commits between main and empty"}
    ]

    with pytest.raises(GithubException) as missing:
        repo.create_pull(base="main", head="no-such-branch", title="t")
    assert missing.value.data["errors"] == [{"resource": "PullRequest", "field": "head", "code": "invalid"}]


def test_review_requests_and_label_errors(sb: Sandbox) -> None:
    sb.attach_reviewer(REPO, ScriptedReviewer(identity=COPILOT))
    repo = _github(sb).get_repo(REPO)
    _push_branch(repo, "feature", {"x.py": "x = 1\n"})
    pr = repo.create_pull(base="main", head="feature", title="t")
    with pytest.raises(GithubException) as bare:
        pr.create_review_request(reviewers=["Copilot"])
    assert bare.value.data["message"].startswith("Reviews may only be requested from collaborators.")
    pr.create_review_request(reviewers=["copilot-pull-request-reviewer[bot]"])
    users, _teams = pr.get_review_requests()
    assert [u.login for u in users] == ["copilot-pull-request-reviewer[bot]"]
    with pytest.raises(GithubException) as own:
        pr.create_review_request(reviewers=["redline-canary"])
    assert own.value.data["message"] == "Review cannot be requested from pull request author."

    repo.create_label("redline-exempt", "ededed")
    with pytest.raises(GithubException) as exists:
        repo.create_label("Redline-Exempt", "ff0000")
    assert exists.value.data["errors"] == [{"resource": "Label", "code": "already_exists", "field": "name"}]


def test_conditional_refresh_and_git_ref_edit(sb: Sandbox) -> None:
    repo = _github(sb).get_repo(REPO)
    first = _push_branch(repo, "feature", {"x.py": "x = 1\n"})
    pr = repo.create_pull(base="main", head="feature", title="t")
    sb.reset_requests()
    assert pr.update() is False  # If-None-Match -> 304, nothing changed
    assert sb.request_counts("not_modified") == {"GET /repos/{owner}/{repo}/pulls/{pull_number}": 1}
    assert sb.request_counts("charged") == {}

    ref = repo.get_git_ref("heads/feature")
    tree = repo.create_git_tree(
        [InputGitTreeElement("y.py", "100644", "blob", content="y = 2\n")],
        base_tree=repo.get_git_commit(first).tree,
    )
    second = repo.create_git_commit("more", tree, [repo.get_git_commit(first)])
    ref.edit(second.sha)
    assert pr.update() is True and pr.head.sha == second.sha and pr.changed_files == 2
    with pytest.raises(GithubException) as ff:
        ref.edit(first)
    assert ff.value.data["message"] == "Update is not a fast forward"
    ref.edit(first, force=True)
    assert repo.get_git_ref("heads/feature").object.sha == first
