"""The sandbox serves what the product calls and what GitHub was recorded answering, no more.

Every route the sandbox serves is a route to keep faithful (docs/github.md §11), so a route
nobody calls is cost without a user. The product's routes are read from the one GitHub
seam (``github_api.py``: its request helpers name METHOD and route template literally,
and the poll only reads); the recorded ones by routing each recording's request
(``tests/data/github-fixtures``, public recordings copied into the repository). The few
routes only tests use are listed below,
each with its reason.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

from redline_canary.github import client as github_api
from redline_canary.sandbox import api

FIXTURES = Path(__file__).resolve().parents[1] / "data" / "github-fixtures"
R = "/repos/{owner}/{repo}"
Route = tuple[str, str]

TEST_ONLY: dict[Route, str] = {
    ("POST", f"{R}/pulls/{{pull_number}}/comments"): (
        "a person's inline comment, to check the diff-line rules every reviewer's comment obeys"
    ),
}


def _served() -> set[Route]:
    return {(rt.method, rt.template) for rt in api.ROUTES}


def _product() -> set[Route]:
    """``_get``/``_paginate``/``_probe`` are GETs of their first argument; ``_json``/``_send``/``_create``
    name the method, then the route; every route ``poll`` builds is read with GET."""
    tree = ast.parse(Path(github_api.__file__).read_text())
    found: set[Route] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == "poll":
            found |= {("GET", c.value) for c in ast.walk(node)
                      if isinstance(c, ast.Constant) and isinstance(c.value, str) and c.value.startswith("/repos/")}
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        args = [a.value if isinstance(a, ast.Constant) and isinstance(a.value, str) else None for a in node.args]
        if node.func.attr in ("_get", "_paginate", "_probe") and args and args[0]:
            found.add(("GET", args[0]))
        elif node.func.attr in ("_json", "_send", "_create") and len(args) >= 2 and args[0] and args[1]:
            found.add((args[0], args[1]))
    found |= {("GET", f"{R}/" + github_api._template(p)) for p in github_api.CHANNEL_PATHS.values()}
    return {(m, t) for m, t in found if not t.endswith("/")}  # "/repos/{owner}/{repo}/" is a prefix


def _recorded() -> set[Route]:
    found: set[Route] = set()
    for path in sorted(FIXTURES.glob("*.json")):
        if path.name.startswith("openapi-excerpt"):
            continue
        request = json.loads(path.read_text())["request"]
        target = request["path"].split("?")[0]
        if target.startswith("/repositories/"):  # pagination links name the repository by id
            target = "/repos/o/r/" + target.split("/", 3)[3]
        rt, _ = api.match(request["method"], target)
        if rt is not None:
            found.add((rt.method, rt.template))
    return found


def test_every_route_the_product_calls_is_served() -> None:
    product = _product()
    assert len(product) >= 20, "the route scan found too little: has github_api.py changed shape?"
    assert product - _served() == set()


def test_every_served_route_is_called_by_the_product_or_recorded_or_listed() -> None:
    unexplained = _served() - _product() - _recorded() - set(TEST_ONLY)
    assert unexplained == set(), "serve these only if the product calls them (or list why a test needs them)"


def test_the_test_only_list_names_only_served_routes_nobody_else_calls() -> None:
    assert set(TEST_ONLY) <= _served()
    assert set(TEST_ONLY) & (_product() | _recorded()) == set()
