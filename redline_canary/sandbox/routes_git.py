"""The repository and git-data routes: the repository, its branches and branch rules, refs, trees
and commits, which is what the product reads and writes to push a branch. They sit apart from the pull and
issue routes because they touch only the git store and refs, never the conversation on a pull
request or issue.
"""

from __future__ import annotations

import re
from typing import Any

from redline_canary.sandbox.model import ApiError, Repo, not_found
from redline_canary.sandbox.routing import Call, R, Reply, RouteTable, created, paged

TABLE = RouteTable()
route = TABLE.route


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

