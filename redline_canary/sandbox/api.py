"""The REST routes the product touches, each a small function from a request to a reply.

Templates are GitHub's own (OpenAPI path spelling), because the request log and fault
injection are keyed by them and tests read better when they quote the docs. The handlers live
in ``routes_account``, ``routes_git``, ``routes_pulls`` and ``routes_issues``; this module
holds the one table they make and answers which route a request is.
"""

from __future__ import annotations

from urllib.parse import unquote

from redline_canary.sandbox import routes_account, routes_git, routes_issues, routes_pulls
from redline_canary.sandbox.routing import Route

ROUTES: list[Route] = [
    *routes_account.TABLE.routes,
    *routes_git.TABLE.routes,
    *routes_pulls.TABLE.routes,
    *routes_issues.TABLE.routes,
]


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
