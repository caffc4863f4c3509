"""The pull-request routes: pull requests, requested reviewers, review comments, reviews, and the
check runs reviewers leave on a head commit, which is everything a canary polls while it waits. They sit apart
from the issue routes because they serve a pull request's review traffic (reviews, inline comments,
who was asked), which plain issues do not have.
"""

from __future__ import annotations

import re
from typing import Any

from redline_canary.sandbox.model import Issue, Repo, not_found
from redline_canary.sandbox.routing import Call, R, Reply, RouteTable, created, paged, since_time, wants_desc

TABLE = RouteTable()
route = TABLE.route


# --- pull requests --------------------------------------------------------------------

D_PULLS = "https://docs.github.com/rest/pulls/pulls"
P_READ = "pull_requests=read; contents=read"
P_WRITE = "pull_requests=write"


@route("GET", f"{R}/pulls", f"{D_PULLS}#list-pull-requests", P_READ)
def list_pulls(call: Call) -> Reply:
    repo = call.repo
    state = call.q("state") or "open"
    head, base = call.q("head"), call.q("base")
    items = [i for i in repo.pulls() if state == "all" or i.state == state]
    if head:
        owner, sep, ref = head.partition(":")
        if sep:
            items = [
                i
                for i in items
                if i.pull is not None
                and i.pull.head_repo.owner.login.lower() == owner.lower()
                and i.pull.head_ref == ref
            ]
        else:
            items = [i for i in items if i.pull is not None and i.pull.head_ref == head]
    if base:
        items = [i for i in items if i.pull is not None and i.pull.base_ref == base]
    sort = call.q("sort") or "created"
    if sort == "updated":
        items.sort(key=lambda i: (i.updated_at, i.number))
    else:
        items.sort(key=lambda i: i.number)
    if wants_desc(call, "desc"):
        items.reverse()
    return paged(call, items, lambda i: call.r.pull(repo, i, full=False), repo)


@route("POST", f"{R}/pulls", f"{D_PULLS}#create-a-pull-request", P_WRITE)
def create_pull(call: Call) -> Reply:
    repo = call.repo
    issue = call.state.create_pull(repo, call.viewer, call.obj(), via_api=True)
    body = call.r.pull(repo, issue)
    return created(body, body["url"])


@route("GET", f"{R}/pulls/{{pull_number}}", f"{D_PULLS}#get-a-pull-request", P_READ)
def get_pull(call: Call) -> Reply:
    repo = call.repo
    issue = call.state.get_pull(repo, call.num("pull_number"), call.route.doc)
    return Reply(200, call.r.pull(repo, issue))


@route("PATCH", f"{R}/pulls/{{pull_number}}", f"{D_PULLS}#update-a-pull-request", P_WRITE)
def update_pull(call: Call) -> Reply:
    repo = call.repo
    issue = call.state.update_pull(repo, call.num("pull_number"), call.obj())
    return Reply(200, call.r.pull(repo, issue))


D_RR = "https://docs.github.com/rest/pulls/review-requests"


@route(
    "GET",
    f"{R}/pulls/{{pull_number}}/requested_reviewers",
    f"{D_RR}#get-all-requested-reviewers-for-a-pull-request",
    P_READ,
)
def list_requested(call: Call) -> Reply:
    repo = call.repo
    issue = call.state.get_pull(repo, call.num("pull_number"), call.route.doc)
    return Reply(
        200,
        {
            "users": [call.r.user(u) for u in issue.pr.requested_reviewers],
            "teams": [call.r.team(t) for t in issue.pr.requested_teams],
        },
    )


@route(
    "POST",
    f"{R}/pulls/{{pull_number}}/requested_reviewers",
    f"{D_RR}#request-reviewers-for-a-pull-request",
    P_WRITE,
)
def request_reviewers(call: Call) -> Reply:
    repo = call.repo
    b = call.obj()
    issue = call.state.request_reviewers(
        repo, call.num("pull_number"), call.viewer, b.get("reviewers"), b.get("team_reviewers")
    )
    return Reply(201, call.r.pull(repo, issue, full=False))


# --- review comments and reviews --------------------------------------------------------

D_RC = "https://docs.github.com/rest/pulls/comments"
D_REVIEWS = "https://docs.github.com/rest/pulls/reviews"


def _sorted_comments(call: Call, items: list[Any]) -> list[Any]:
    since = since_time(call)
    if since is not None:
        items = [c for c in items if c.updated_at >= since]
    if (call.q("sort") or "created") == "updated":
        items = sorted(items, key=lambda c: (c.updated_at, c.id))
    else:
        items = sorted(items, key=lambda c: c.id)
    if wants_desc(call, "asc"):
        items.reverse()
    return items


@route(
    "GET",
    f"{R}/pulls/{{pull_number}}/comments",
    f"{D_RC}#list-review-comments-on-a-pull-request",
    P_READ,
)
def list_review_comments(call: Call) -> Reply:
    repo = call.repo
    issue = call.state.get_pull(repo, call.num("pull_number"), call.route.doc)
    items = _sorted_comments(call, list(_visible_comments(call, issue)))
    return paged(call, items, lambda c: call.r.review_comment(repo, issue, c), repo)


@route(
    "POST",
    f"{R}/pulls/{{pull_number}}/comments",
    f"{D_RC}#create-a-review-comment-for-a-pull-request",
    P_WRITE,
)
def create_review_comment(call: Call) -> Reply:
    """A lone inline comment: on GitHub it arrives wrapped in its own COMMENTED review."""
    repo = call.repo
    number = call.num("pull_number")
    spec = dict(call.obj())
    if "in_reply_to" in spec:
        issue = call.state.get_pull(repo, number, call.route.doc)
        parent = next((c for c in issue.pr.review_comments if c.id == spec["in_reply_to"]), None)
        if parent is None:
            raise not_found(call.route.doc)
        spec.update(path=parent.path, line=parent.line, side=parent.side, in_reply_to_id=parent.id)
    body = {"event": "COMMENT", "body": "", "comments": [spec]}
    if isinstance(spec.get("commit_id"), str):
        body["commit_id"] = spec["commit_id"]
    review = call.state.create_review(repo, number, call.viewer, body, validate="in_reply_to" not in spec)
    issue = call.state.get_pull(repo, number)
    made = next(c for c in reversed(issue.pr.review_comments) if c.review_id == review.id)
    out = call.r.review_comment(repo, issue, made)
    return created(out, out["url"])


def _visible_comments(call: Call, issue: Issue) -> list[Any]:
    """Comments of a PENDING review are only visible to its author, as on GitHub."""
    pending = {r.id for r in issue.pr.reviews if r.state == "PENDING" and r.user.id != call.viewer.id}
    return [c for c in issue.pr.review_comments if c.review_id not in pending]


@route(
    "GET",
    f"{R}/pulls/comments/{{comment_id}}",
    f"{D_RC}#get-a-review-comment-for-a-pull-request",
    P_READ,
)
def get_review_comment(call: Call) -> Reply:
    repo = call.repo
    issue, c = call.state.find_review_comment(repo, call.num("comment_id"))
    return Reply(200, call.r.review_comment(repo, issue, c))


@route(
    "GET",
    f"{R}/pulls/{{pull_number}}/reviews",
    f"{D_REVIEWS}#list-reviews-for-a-pull-request",
    P_READ,
)
def list_reviews(call: Call) -> Reply:
    repo = call.repo
    issue = call.state.get_pull(repo, call.num("pull_number"), call.route.doc)
    items = [rv for rv in issue.pr.reviews if rv.state != "PENDING" or rv.user.id == call.viewer.id]
    return paged(call, items, lambda rv: call.r.review(repo, issue, rv), repo)


@route(
    "POST",
    f"{R}/pulls/{{pull_number}}/reviews",
    f"{D_REVIEWS}#create-a-review-for-a-pull-request",
    P_WRITE,
)
def create_review(call: Call) -> Reply:
    repo = call.repo
    number = call.num("pull_number")
    review = call.state.create_review(repo, number, call.viewer, call.obj())
    issue = call.state.get_pull(repo, number)
    return Reply(200, call.r.review(repo, issue, review))


def _find_review(call: Call) -> tuple[Repo, Issue, Any]:
    repo = call.repo
    issue = call.state.get_pull(repo, call.num("pull_number"), call.route.doc)
    rid = call.num("review_id")
    for rv in issue.pr.reviews:
        if rv.id == rid and (rv.state != "PENDING" or rv.user.id == call.viewer.id):
            return repo, issue, rv
    raise not_found(call.route.doc)


@route(
    "GET",
    f"{R}/pulls/{{pull_number}}/reviews/{{review_id}}",
    f"{D_REVIEWS}#get-a-review-for-a-pull-request",
    P_READ,
)
def get_review(call: Call) -> Reply:
    repo, issue, rv = _find_review(call)
    return Reply(200, call.r.review(repo, issue, rv))


# --- check runs (read-only: simulated reviewers post them in-process) ------------------

D_CHECKS = "https://docs.github.com/rest/checks/runs#list-check-runs-for-a-git-reference"


@route("GET", f"{R}/commits/{{ref}}/check-runs", D_CHECKS, "checks=read")
def list_check_runs(call: Call) -> Reply:
    repo = call.repo
    ref = call.params["ref"]
    sha = ref if re.fullmatch(r"[0-9a-f]{40}", ref) else repo.branch_sha(ref.removeprefix("heads/"))
    runs = [r for r in repo.check_runs if r["head_sha"] == sha]
    name = call.q("check_name")
    if name:
        runs = [r for r in runs if r["name"] == name]
    return Reply(200, {"total_count": len(runs), "check_runs": runs})

