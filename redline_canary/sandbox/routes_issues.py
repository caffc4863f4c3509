"""The issue routes: issues (pull requests included, as GitHub lists them), labels, issue comments
and reactions on either. They sit apart from the pull-request routes because they are the
conversation every issue has, with its own label and reaction rules, and none of a pull
request's review traffic.
"""

from __future__ import annotations

from typing import Any

from redline_canary.sandbox.model import ApiError, not_found
from redline_canary.sandbox.routing import Call, R, Reply, RouteTable, created, paged, since_time, wants_desc

TABLE = RouteTable()
route = TABLE.route


# --- issues, labels, issue comments, reactions ---------------------------------------------

D_ISSUES = "https://docs.github.com/rest/issues/issues"
D_LABELS = "https://docs.github.com/rest/issues/labels"
D_IC = "https://docs.github.com/rest/issues/comments"
D_REACT = "https://docs.github.com/rest/reactions/reactions"
I_READ = "issues=read; pull_requests=read"
I_WRITE = "issues=write; pull_requests=write"


def _names(body: Any) -> list[str]:
    if isinstance(body, dict):
        body = body.get("labels", [])
    if not isinstance(body, list):
        raise ApiError(422, "Invalid request.\n\nFor 'links/0/schema', is not an array.")
    out: list[str] = []
    for item in body:
        if isinstance(item, dict):
            item = item.get("name")
        if not isinstance(item, str):
            raise ApiError(422, "Invalid request.\n\nLabel names must be strings.")
        out.append(item)
    return out


@route("GET", f"{R}/issues", f"{D_ISSUES}#list-repository-issues", I_READ)
def list_issues(call: Call) -> Reply:
    """Issues *and* pull requests ("every pull request is an issue"): a PR carries a
    ``pull_request`` key. ``labels`` is a comma-separated list an item must carry all of
    (names compared case-insensitively); newest first by default."""
    repo = call.repo
    call.state.issues_enabled(repo)
    state = call.q("state") or "open"
    items = [i for i in repo.issues.values() if state == "all" or i.state == state]
    wanted = [x.strip().lower() for x in (call.q("labels") or "").split(",") if x.strip()]
    if wanted:
        items = [i for i in items if all(w in {lab.name.lower() for lab in i.labels} for w in wanted)]
    since = since_time(call)
    if since is not None:
        items = [i for i in items if i.updated_at >= since]
    if (call.q("sort") or "created") == "updated":
        items.sort(key=lambda i: (i.updated_at, i.number))
    else:
        items.sort(key=lambda i: i.number)
    if wants_desc(call, "desc"):
        items.reverse()
    return paged(call, items, lambda i: call.r.issue(repo, i), repo)


@route("POST", f"{R}/issues", f"{D_ISSUES}#create-an-issue", "issues=write")
def create_issue(call: Call) -> Reply:
    repo = call.repo
    b = call.obj()
    labels = _names(b.get("labels", []))
    issue = call.state.create_issue(repo, call.viewer, b.get("title"), b.get("body"), labels)
    body = call.r.issue(repo, issue, single=True)
    return created(body, body["url"])


@route("PATCH", f"{R}/issues/{{issue_number}}", f"{D_ISSUES}#update-an-issue", I_WRITE)
def update_issue(call: Call) -> Reply:
    repo = call.repo
    number = call.num("issue_number")
    b = call.obj()
    issue = call.state.get_issue(repo, number, call.route.doc)
    if issue.pull is not None:
        call.state.update_pull(repo, number, {k: v for k, v in b.items() if k in ("state", "title", "body")})
    else:
        call.state.update_issue(repo, number, call.viewer, b)
    if "labels" in b:
        call.state.set_labels(repo, number, _names(b["labels"]))
    return Reply(200, call.r.issue(repo, issue, single=True))


@route("POST", f"{R}/issues/{{issue_number}}/labels", f"{D_LABELS}#add-labels-to-an-issue", I_WRITE)
def add_labels(call: Call) -> Reply:
    repo = call.repo
    issue = call.state.add_labels(repo, call.num("issue_number"), _names(call.body))
    return Reply(200, [call.r.label(repo, x) for x in issue.labels])


@route("POST", f"{R}/labels", f"{D_LABELS}#create-a-label", I_WRITE)
def create_label(call: Call) -> Reply:
    repo = call.repo
    label = call.state.create_label(repo, call.obj())
    body = call.r.label(repo, label)
    return created(body, body["url"])


@route("GET", f"{R}/labels/{{name}}", f"{D_LABELS}#get-a-label", I_READ)
def get_label(call: Call) -> Reply:
    repo = call.repo
    label = repo.labels.get(call.params["name"].lower())
    if label is None:
        raise not_found(call.route.doc)
    return Reply(200, call.r.label(repo, label))


@route("GET", f"{R}/issues/{{issue_number}}/comments", f"{D_IC}#list-issue-comments", I_READ)
def list_issue_comments(call: Call) -> Reply:
    repo = call.repo
    issue = call.state.get_issue(repo, call.num("issue_number"), call.route.doc)
    call.state.issues_enabled(repo, issue)
    items = list(issue.comments)
    since = since_time(call)
    if since is not None:
        items = [c for c in items if c.updated_at >= since]
    return paged(call, items, lambda c: call.r.issue_comment(repo, issue, c), repo)


@route("POST", f"{R}/issues/{{issue_number}}/comments", f"{D_IC}#create-an-issue-comment", I_WRITE)
def create_issue_comment(call: Call) -> Reply:
    repo = call.repo
    number = call.num("issue_number")
    comment = call.state.add_issue_comment(repo, number, call.viewer, call.obj().get("body"))
    issue = call.state.get_issue(repo, number)
    body = call.r.issue_comment(repo, issue, comment)
    return created(body, body["url"])


@route("GET", f"{R}/issues/comments/{{comment_id}}", f"{D_IC}#get-an-issue-comment", I_READ)
def get_issue_comment(call: Call) -> Reply:
    repo = call.repo
    issue, c = call.state.find_issue_comment(repo, call.num("comment_id"))
    return Reply(200, call.r.issue_comment(repo, issue, c))


def _reaction_target(call: Call) -> list[Any]:
    repo = call.repo
    if "comment_id" in call.params:
        return call.state.find_issue_comment(repo, call.num("comment_id"))[1].reactions
    return call.state.get_issue(repo, call.num("issue_number"), call.route.doc).reactions


def _list_reactions(call: Call) -> Reply:
    items = list(_reaction_target(call))
    content = call.q("content")
    if content:
        items = [x for x in items if x.content == content]
    return paged(call, items, call.r.reaction, call.repo)


# The two reaction lists the product polls (a bot's 👍/👀 on the PR or on the trigger comment).
for _path, _slug in (
    (f"{R}/issues/comments/{{comment_id}}/reactions", "issue-comment"),
    (f"{R}/issues/{{issue_number}}/reactions", "issue"),
):
    route("GET", _path, f"{D_REACT}#list-reactions-for-an-{_slug}", I_READ)(_list_reactions)
