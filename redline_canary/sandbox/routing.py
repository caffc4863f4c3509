"""The machinery every route module shares: what a handler is given (``Call``), what it answers
(``Reply``), how a template becomes a route (``RouteTable``), and GitHub's paging and list
parameters. It is separate so that the route modules (``routes_account``, ``routes_git``,
``routes_pulls``, ``routes_issues``) depend on it and never on one another, and so that ``api``,
which joins their tables into the one table requests are matched against, can import them all.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlencode

from redline_canary.sandbox.model import Repo, User, parse_iso
from redline_canary.sandbox.render import Renderer
from redline_canary.sandbox.render_people import Json
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


class RouteTable:
    """The routes one module declares, in declaration order (``api.match`` tries them in order)."""

    def __init__(self) -> None:
        self.routes: list[Route] = []

    def route(self, method: str, template: str, doc: str, perm: str | None = None) -> Callable[[Handler], Handler]:
        def deco(fn: Handler) -> Handler:
            self.routes.append(Route(method, template, _compile(template), fn, doc, perm))
            return fn

        return deco


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


def wants_desc(call: Call, default: str) -> bool:
    return (call.q("direction") or default) == "desc"


def since_time(call: Call) -> float | None:
    s = call.q("since")
    return parse_iso(s) if s else None
