"""The REST routes the product touches, each a small function from a request to a reply.

Templates are GitHub's own (OpenAPI path spelling), because the request log and fault
injection are keyed by them and tests read better when they quote the docs.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import unquote, urlencode

from redline_canary.sandbox.apps import render_installation, render_token
from redline_canary.sandbox.model import ApiError, Issue, Repo, User, not_found, parse_iso
from redline_canary.sandbox.render import Json, Renderer
from redline_canary.sandbox.state import State

if TYPE_CHECKING:
    from redline_canary.sandbox.app import SandboxApp
    from redline_canary.sandbox.apps import Principal

T = TypeVar("T")

R = "/repos/{owner}/{repo}"


@dataclass
class Reply:
    status: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    link: str | None = None
    etag: bool = True  # GET /rate_limit is "no-cache" and carries none


@dataclass
class Call:
    method: str
    path: str
    query: list[tuple[str, str]]
    body: Any
    params: dict[str, str]
    viewer: User
    state: State
    r: Renderer
    server: SandboxApp
    route: Route
    principal: Principal | None = None  # the App or installation a JWT or installation token proves

    def q(self, name: str) -> str | None:
        for k, v in self.query:
            if k == name:
                return v
        return None

    @property
    def repo(self) -> Repo:
        return self.state.get_repo(self.params["owner"], self.params["repo"])

    def num(self, name: str) -> int:
        return int(self.params[name])

    def obj(self) -> dict[str, Any]:
        return self.body if isinstance(self.body, dict) else {}


Handler = Callable[[Call], Reply]


@dataclass(frozen=True)
class Route:
    method: str
    template: str
    regex: re.Pattern[str]
    handler: Handler
    doc: str
    perm: str | None


ROUTES: list[Route] = []

_WIDE = {"ref", "branch", "path"}  # parameters that may contain "/"
_NUMERIC = {"pull_number", "issue_number", "comment_id", "review_id", "reaction_id"}


def _compile(template: str) -> re.Pattern[str]:
    out = ""
    for part in re.split(r"(\{[a-z_]+\})", template):
        if part.startswith("{"):
            name = part[1:-1]
            if name in _WIDE:
                out += f"(?P<{name}>.*)"
            elif name in _NUMERIC:
                out += f"(?P<{name}>[0-9]+)"
            else:
                out += f"(?P<{name}>[^/]+)"
        else:
            out += re.escape(part)
    return re.compile(f"^{out}/?$")


def route(method: str, template: str, doc: str, perm: str | None = None) -> Callable[[Handler], Handler]:
    def deco(fn: Handler) -> Handler:
        ROUTES.append(Route(method, template, _compile(template), fn, doc, perm))
        return fn

    return deco


def match(method: str, path: str) -> tuple[Route | None, dict[str, str]]:
    """First route whose template and method fit; GitHub answers 404 to a wrong method too."""
    for rt in ROUTES:
        if rt.method != method:
            continue
        m = rt.regex.match(path)
        if m is not None:
            return rt, {k: unquote(v) for k, v in m.groupdict().items()}
    return None, {}


def served_routes() -> dict[str, frozenset[str]]:
    """Every route template the sandbox serves, with the methods it answers."""
    out: dict[str, set[str]] = {}
    for rt in ROUTES:
        out.setdefault(rt.template, set()).add(rt.method)
    return {k: frozenset(v) for k, v in out.items()}


def route_problem(method: str | None, route: str | None) -> str | None:
    """Why a fault's method/route can never match a request, or None when it can."""
    routes = served_routes()
    if method is not None and method.upper() not in {"GET", "POST", "PATCH", "PUT", "DELETE"}:
        return f"unknown method {method!r}"
    if route is None:
        return None
    methods = routes.get(route)
    if methods is None:
        return f"the sandbox serves no route {route!r}"
    if method is not None and method.upper() not in methods:
        return f"{route} answers {', '.join(sorted(methods))}, not {method.upper()}"
    return None


# --- helpers ------------------------------------------------------------------------


def paged(call: Call, items: Sequence[T], render: Callable[[T], Any], repo: Repo | None) -> Reply:
    """Slice a list the way GitHub does and emit the exact ``link`` header format."""
    try:
        per_page = int(call.q("per_page") or 30)
    except ValueError:
        per_page = 30
    per_page = 30 if per_page <= 0 else min(per_page, 100)
    try:
        page = max(int(call.q("page") or 1), 1)
    except ValueError:
        page = 1
    last = max(math.ceil(len(items) / per_page), 1)
    chunk = items[(page - 1) * per_page : page * per_page]
    link = None
    if last > 1 or page > 1:
        if repo is not None:
            rest = "/".join(call.path.split("/")[4:])
            base = f"{call.r.api}/repositories/{repo.id}" + (f"/{rest}" if rest else "")
        else:
            base = call.r.api + call.path
        kept = [(k, v) for k, v in call.query if k != "page"]

        def url(n: int) -> str:
            return f"<{base}?{urlencode([*kept, ('page', str(n))])}>"

        rels = []
        if page > 1:
            rels.append(f'{url(min(page - 1, last))}; rel="prev"')
        if page < last:
            rels.append(f'{url(page + 1)}; rel="next"')
            rels.append(f'{url(last)}; rel="last"')
        if page > 1:
            rels.append(f'{url(1)}; rel="first"')
        link = ", ".join(rels)
    return Reply(200, [render(x) for x in chunk], link=link)


def created(body: Json, location: str) -> Reply:
    return Reply(201, body, headers={"location": location})


def _direction(call: Call, default: str) -> bool:
    return (call.q("direction") or default) == "desc"


def _since(call: Call) -> float | None:
    s = call.q("since")
    return parse_iso(s) if s else None


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


# --- top level -------------------------------------------------------------------------

D_RATE = "https://docs.github.com/rest/rate-limit/rate-limit#get-rate-limit-status-for-the-authenticated-user"


@route("GET", "/rate_limit", D_RATE)
def rate_limit(call: Call) -> Reply:
    rl = call.server.rate
    rl.roll(call.state.clock())
    body = call.r.rate_limit(rl.limit, rl.used, rl.reset, call.state.clock())
    return Reply(200, body, headers={"cache-control": "no-cache"}, etag=False)


@route("GET", "/user", "https://docs.github.com/rest/users/users#get-the-authenticated-user")
def get_viewer(call: Call) -> Reply:
    return Reply(200, call.r.user_full(call.viewer, private=True))


@route("GET", "/users/{username}", "https://docs.github.com/rest/users/users#get-a-user")
def get_user(call: Call) -> Reply:
    u = call.state.find_user(call.params["username"])
    if u is None:
        raise not_found(call.route.doc)
    return Reply(200, call.r.user_full(u, private=False))


# --- repository and branches -----------------------------------------------------------


@route("GET", R, "https://docs.github.com/rest/repos/repos#get-a-repository", "metadata=read")
def get_repo(call: Call) -> Reply:
    return Reply(200, call.r.repo(call.repo, full=True))


D_BRANCH = "https://docs.github.com/rest/branches/branches"


@route("GET", f"{R}/branches/{{branch}}", f"{D_BRANCH}#get-a-branch", "contents=read")
def get_branch(call: Call) -> Reply:
    repo = call.repo
    name = call.params["branch"]
    if f"refs/heads/{name}" not in repo.refs:
        raise ApiError(404, "Branch not found", doc=call.route.doc)
    return Reply(200, call.r.branch(repo, name))


D_RULES = "https://docs.github.com/rest/repos/rules#get-rules-for-a-branch"


@route("GET", f"{R}/rules/branches/{{branch}}", D_RULES, "metadata=read")
def get_branch_rules(call: Call) -> Reply:
    """Rules in force on a branch (any name: GitHub answers for branches that do not exist
    yet). Only the rule ``doctor`` looks for is modelled: Copilot's automatic review."""
    repo = call.repo
    rules: list[dict[str, Any]] = []
    if repo.copilot_review:
        rules.append({"type": "copilot_code_review", "parameters": {"review_on_push": False,
                                                                      "review_draft_pull_requests": False},
                      "ruleset_source_type": "Repository", "ruleset_source": repo.full_name, "ruleset_id": 1})
    return Reply(200, rules)


# --- git refs ----------------------------------------------------------------------------

D_REFS = "https://docs.github.com/rest/git/refs"


def _ref_or_404(call: Call, repo: Repo, ref: str) -> str:
    call.state.require_nonempty(repo)
    full = f"refs/{ref}" if not ref.startswith("refs/") else ref
    if full not in repo.refs:
        raise not_found(call.route.doc)
    return full


@route("GET", f"{R}/git/ref/{{ref}}", f"{D_REFS}#get-a-reference", "contents=read")
def get_ref(call: Call) -> Reply:
    repo = call.repo
    full = _ref_or_404(call, repo, call.params["ref"])
    return Reply(200, call.r.ref(repo, full), headers={"x-poll-interval": "300"})


@route("GET", f"{R}/git/refs", f"{D_REFS}#list-matching-references", "contents=read")
def list_refs(call: Call) -> Reply:
    repo = call.repo
    call.state.require_nonempty(repo)
    reply = paged(call, sorted(repo.refs), lambda x: call.r.ref(repo, x), repo)
    reply.headers["x-poll-interval"] = "300"
    return reply


@route("GET", f"{R}/git/matching-refs/{{ref}}", f"{D_REFS}#list-matching-references", "contents=read")
def matching_refs(call: Call) -> Reply:
    repo = call.repo
    call.state.require_nonempty(repo)
    prefix = "refs/" + call.params["ref"]
    items = sorted(x for x in repo.refs if x.startswith(prefix))
    reply = paged(call, items, lambda x: call.r.ref(repo, x), repo)
    reply.headers["x-poll-interval"] = "300"
    return reply


@route("POST", f"{R}/git/refs", f"{D_REFS}#create-a-reference", "contents=write")
def create_ref(call: Call) -> Reply:
    repo = call.repo
    b = call.obj()
    ref = call.state.create_ref(repo, b.get("ref"), b.get("sha"))
    body = call.r.ref(repo, ref)
    return created(body, body["url"])


def _update_ref(call: Call) -> Reply:
    repo = call.repo
    b = call.obj()
    ref = call.state.update_ref(repo, call.params["ref"], b.get("sha"), b.get("force", False))
    return Reply(200, call.r.ref(repo, ref))


def _delete_ref(call: Call) -> Reply:
    call.state.delete_ref(call.repo, call.params["ref"])
    return Reply(204)


_PATCH_PERM = "contents=write; contents=write,workflows=write"
route("PATCH", f"{R}/git/refs/{{ref}}", f"{D_REFS}#update-a-reference", _PATCH_PERM)(_update_ref)
route("DELETE", f"{R}/git/refs/{{ref}}", f"{D_REFS}#delete-a-reference", "contents=write")(_delete_ref)
route("DELETE", f"{R}/git/ref/{{ref}}", f"{D_REFS}#delete-a-reference", "contents=write")(_delete_ref)

# --- trees, blobs, commits ----------------------------------------------------------------

D_TREES = "https://docs.github.com/rest/git/trees"
D_COMMITS = "https://docs.github.com/rest/git/commits"


@route("POST", f"{R}/git/trees", f"{D_TREES}#create-a-tree", "contents=write")
def create_tree(call: Call) -> Reply:
    repo = call.repo
    b = call.obj()
    sha = call.state.create_tree(repo, b.get("tree"), b.get("base_tree"))
    body = call.r.tree(repo, sha)
    return created(body, body["url"])


@route("GET", f"{R}/git/trees/{{tree_sha}}", f"{D_TREES}#get-a-tree", "contents=read")
def get_tree(call: Call) -> Reply:
    repo = call.repo
    asked = call.params["tree_sha"]
    store = call.state.store
    sha = store.tree_of(asked)
    if sha is None and f"refs/heads/{asked}" in repo.refs:
        sha = store.tree_of(repo.refs[f"refs/heads/{asked}"])
    if sha is None:
        raise not_found(call.route.doc)
    recursive = call.q("recursive") not in (None, "", "0", "false")
    shown = asked if re.fullmatch(r"[0-9a-f]{40}", asked) else sha
    body = call.r.tree(repo, sha, shown_sha=shown, recursive=recursive)
    return Reply(200, body, headers={"cache-control": "private, max-age=86400, s-maxage=86400"})


@route("POST", f"{R}/git/commits", f"{D_COMMITS}#create-a-commit", "contents=write")
def create_commit(call: Call) -> Reply:
    repo = call.repo
    commit = call.state.create_commit(repo, call.obj(), call.viewer)
    body = call.r.commit(repo, commit)
    return created(body, body["url"])


@route("GET", f"{R}/git/commits/{{commit_sha}}", f"{D_COMMITS}#get-a-commit", "contents=read")
def get_commit(call: Call) -> Reply:
    repo = call.repo
    c = call.state.store.commits.get(call.params["commit_sha"])
    if c is None:
        raise not_found(call.route.doc)
    return Reply(200, call.r.commit(repo, c))


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
    if _direction(call, "desc"):
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
    since = _since(call)
    if since is not None:
        items = [c for c in items if c.updated_at >= since]
    if (call.q("sort") or "created") == "updated":
        items = sorted(items, key=lambda c: (c.updated_at, c.id))
    else:
        items = sorted(items, key=lambda c: c.id)
    if _direction(call, "asc"):
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


# --- issues, labels, issue comments, reactions ---------------------------------------------

D_ISSUES = "https://docs.github.com/rest/issues/issues"
D_LABELS = "https://docs.github.com/rest/issues/labels"
D_IC = "https://docs.github.com/rest/issues/comments"
D_REACT = "https://docs.github.com/rest/reactions/reactions"
I_READ = "issues=read; pull_requests=read"
I_WRITE = "issues=write; pull_requests=write"


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
    since = _since(call)
    if since is not None:
        items = [i for i in items if i.updated_at >= since]
    if (call.q("sort") or "created") == "updated":
        items.sort(key=lambda i: (i.updated_at, i.number))
    else:
        items.sort(key=lambda i: i.number)
    if _direction(call, "desc"):
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
    since = _since(call)
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


# --- GitHub Apps (the App's JWT finds its installation and buys installation tokens) ----

D_APPS = "https://docs.github.com/rest/apps/apps"


@route("GET", f"{R}/installation", f"{D_APPS}#get-a-repository-installation-for-the-authenticated-app")
def get_repo_installation(call: Call) -> Reply:
    repo = call.repo
    assert call.principal is not None  # the app layer lets only the App's JWT through
    inst = call.server.apps.installation_for(call.principal.app, repo.full_name)
    if inst is None:
        raise not_found(call.route.doc)
    return Reply(200, render_installation(inst, call.principal.app, call.r.api, call.r.html, call.r.user(inst.account)))


@route("POST", "/app/installations/{installation_id}/access_tokens",
       f"{D_APPS}#create-an-installation-access-token-for-an-app")
def create_installation_token(call: Call) -> Reply:
    assert call.principal is not None
    raw = call.params["installation_id"]
    inst = call.server.apps.installations.get(int(raw)) if raw.isdigit() and len(raw) < 16 else None
    if inst is None or inst.app_id != call.principal.app.id:
        raise not_found(call.route.doc)
    with call.server.lock:  # the registry's lock: requests authenticate against it concurrently
        token, expires = call.server.apps.issue_token(inst)
    return Reply(201, render_token(token, expires, inst), etag=False)
