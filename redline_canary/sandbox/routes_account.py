"""The routes about the caller rather than a repository's content: ``/rate_limit``, ``/user``,
``/users/{username}``, the two a GitHub App uses to find its installation and buy installation
tokens, and the three ``doctor`` reads to check an App (``/app``, ``/app/installations``,
``/installation/repositories``). They sit apart from the git, pull and issue routes because
they read the app's rate bucket, its App registry and the users, not a repository's git data
or conversation.
"""

from __future__ import annotations

from redline_canary.sandbox.apps import NOT_AN_INSTALLATION, render_app, render_installation, render_token
from redline_canary.sandbox.model import ApiError, not_found
from redline_canary.sandbox.routing import Call, R, Reply, RouteTable, paged

TABLE = RouteTable()
route = TABLE.route


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


@route("GET", "/app", f"{D_APPS}#get-the-authenticated-app")
def get_app(call: Call) -> Reply:
    assert call.principal is not None  # the App's JWT only
    app = call.principal.app
    count = sum(i.app_id == app.id for i in call.server.apps.installations.values())
    return Reply(200, render_app(app, call.r.html, call.r.user(app.owner), count))


@route("GET", "/app/installations", f"{D_APPS}#list-installations-for-the-authenticated-app")
def list_app_installations(call: Call) -> Reply:
    assert call.principal is not None
    app = call.principal.app
    mine = sorted((i for i in call.server.apps.installations.values() if i.app_id == app.id), key=lambda i: i.id)
    return paged(call, mine, lambda i: render_installation(i, app, call.r.api, call.r.html, call.r.user(i.account)),
                 None)


D_INSTALLATIONS = "https://docs.github.com/rest/apps/installations"


@route("GET", "/installation/repositories",
       f"{D_INSTALLATIONS}#list-repositories-accessible-to-the-app-installation")
def installation_repositories(call: Call) -> Reply:
    """The installation's repositories, wrapped as GitHub wraps them; only an installation
    token may ask (the app layer refuses anything else)."""
    inst = call.principal.installation if call.principal is not None else None
    if inst is None:
        raise ApiError(403, NOT_AN_INSTALLATION, doc=call.route.doc)
    repos = sorted((r for r in call.state.repos.values() if inst.covers(r.full_name)), key=lambda r: r.id)
    page = paged(call, repos, call.r.repo, None)
    body = {"total_count": len(repos), "repositories": page.body,
            "repository_selection": "all" if inst.repos is None else "selected"}
    return Reply(200, body, link=page.link)
