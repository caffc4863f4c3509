"""Scenario validation: a decoded scenario (a mapping from YAML or JSON) checked strictly and
turned into typed specs, failing with the file and the key path of the first problem
(``faults[2].status: must be an integer 100-599``). It is separate from reading the file and from
building the world because it is the part that knows every key, its type and the rules between
keys, and nothing about files or sandboxes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NoReturn

from redline_canary.sandbox.api import route_problem
from redline_canary.sandbox.policies import PERMISSIONS, REVIEW_REQUEST_MODES, TOKEN_KINDS, ReviewRequestMode
from redline_canary.sandbox.scenario import (
    DEFAULT_HUMAN,
    REVIEWER_KINDS,
    CredentialSpec,
    FaultSpec,
    PrimarySpec,
    PullSpec,
    RefLagSpec,
    RepoSpec,
    Scenario,
    ScenarioError,
    SecondarySpec,
    TokenSpec,
    TooQuicklySpec,
)
from redline_canary.sandbox.state import valid_ref_name, valid_tree_path

METHODS = ("GET", "POST", "PATCH", "PUT", "DELETE")


class _Check:
    """Typed readers that fail with ``source: key.path: problem``."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, key: str, problem: str) -> NoReturn:
        raise ScenarioError(f"{self.source}: {key}: {problem}" if key else f"{self.source}: {problem}")

    def mapping(self, key: str, value: Any, allowed: tuple[str, ...], required: tuple[str, ...] = ()) -> dict[str, Any]:
        if not isinstance(value, dict):
            self.fail(key, "must be a mapping")
        for k in value:
            if not isinstance(k, str) or k not in allowed:
                self.fail(_join(key, str(k)), f"unknown key (allowed: {', '.join(allowed)})")
        for r in required:
            if r not in value:
                self.fail(_join(key, r), "is required")
        return value

    def free_mapping(self, key: str, value: Any) -> dict[str, Any]:
        """A mapping whose keys are data (paths, logins, header names): strings only."""
        if not isinstance(value, dict):
            self.fail(key, "must be a mapping")
        for k in value:
            if not isinstance(k, str) or not k:
                self.fail(_join(key, str(k)), "keys must be non-empty strings")
        return value

    def items(self, key: str, value: Any) -> list[Any]:
        if not isinstance(value, list):
            self.fail(key, "must be a list")
        return value

    def integer(self, key: str, value: Any, lo: int, hi: int | None = None) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < lo or (hi is not None and value > hi):
            self.fail(key, f"must be an integer {lo}-{hi}" if hi is not None else f"must be an integer >= {lo}")
        return value

    def opt_integer(self, key: str, value: Any, lo: int, hi: int | None = None) -> int | None:
        return None if value is None else self.integer(key, value, lo, hi)

    def number(self, key: str, value: Any, lo: float, hi: float) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not lo <= value <= hi:
            self.fail(key, f"must be a number {lo:g}-{hi:g}")
        return float(value)

    def boolean(self, key: str, value: Any) -> bool:
        if not isinstance(value, bool):
            self.fail(key, "must be true or false")
        return value

    def string(self, key: str, value: Any) -> str:
        if not isinstance(value, str) or not value:
            self.fail(key, "must be a non-empty string")
        return value

    def status(self, key: str, value: Any, options: tuple[int, ...]) -> int:
        if isinstance(value, bool) or value not in options:
            self.fail(key, f"must be one of {', '.join(map(str, options))}")
        return int(value)

    def choice(self, key: str, value: Any, options: tuple[str, ...]) -> str:
        if value not in options:
            self.fail(key, f"must be one of {', '.join(options)}")
        return str(value)

    def repo_name(self, key: str, value: Any) -> str:
        name = self.string(key, value)
        owner, _, rest = name.partition("/")
        if not owner or not rest or "/" in rest or any(c.isspace() for c in name):
            self.fail(key, f"must be OWNER/NAME, got {name!r}")
        return name

    def branch(self, key: str, value: Any) -> str:
        name = self.string(key, value)
        if name.startswith("refs/") or not valid_ref_name(f"refs/heads/{name}"):
            self.fail(key, f"{name!r} is not a valid branch name")
        return name


def _join(prefix: str, key: str) -> str:
    return f"{prefix}.{key}" if prefix else key


_TOP = (
    "login", "human", "repos", "faults", "secondary_limit", "primary_limit",
    "ref_visibility_lag", "too_quickly", "fine_grained_token", "tree_payload_cap", "token",
)  # fmt: skip
_REPO = (
    "name", "topic", "reviewer", "latency", "default_branch", "writable", "files",
    "branches", "pulls", "review_requests", "empty", "labels", "copilot_review",
)  # fmt: skip
_SECONDARY = ("per_minute", "per_hour", "window", "retry_after", "status", "send_retry_after", "methods")
_PULL = ("head", "title", "base", "body", "draft", "author", "reviewed_by")
_FAULT = (
    "method", "route", "repo", "status", "headers", "body", "delay", "drop", "times", "after_write", "secondary",
)  # fmt: skip


def parse_scenario(data: Any, source: str = "<scenario>") -> Scenario:
    """Validate a decoded scenario (a mapping from YAML/JSON) into typed specs."""
    c = _Check(source)
    top = c.mapping("", data, _TOP, required=("repos",))
    repos = tuple(_repo(c, f"repos[{i}]", r) for i, r in enumerate(c.items("repos", top["repos"])))
    if not repos:
        c.fail("repos", "must name at least one repository")
    seen: dict[str, int] = {}
    for i, spec in enumerate(repos):
        if spec.name.lower() in seen:
            c.fail(f"repos[{i}].name", f"{spec.name} is already repos[{seen[spec.name.lower()]}]")
        seen[spec.name.lower()] = i
    names = {r.name.lower() for r in repos}

    def known_repo(key: str, value: Any) -> str:
        name = c.repo_name(key, value)
        if name.lower() not in names:
            c.fail(key, f"{name} is not one of the scenario's repos")
        return name

    faults = tuple(
        _fault(c, f"faults[{i}]", f, known_repo) for i, f in enumerate(c.items("faults", top.get("faults", [])))
    )
    login = c.string("login", top.get("login", "redline-canary"))
    human = c.string("human", top.get("human", DEFAULT_HUMAN))
    if human.lower() == login.lower():
        c.fail("human", "must differ from login: human work is what the token's user did not make")

    secondary = None
    if top.get("secondary_limit") is not None:
        key = "secondary_limit"
        m = c.mapping(key, top[key], _SECONDARY)
        per_minute = c.opt_integer(f"{key}.per_minute", m.get("per_minute"), 1)
        per_hour = c.opt_integer(f"{key}.per_hour", m.get("per_hour"), 1)
        if per_minute is None and per_hour is None:
            c.fail(key, "needs per_minute or per_hour")
        methods = tuple(
            c.choice(f"{key}.methods[{i}]", str(x).upper(), METHODS)
            for i, x in enumerate(c.items(f"{key}.methods", m.get("methods", ["POST", "PATCH", "PUT"])))
        )
        secondary = SecondarySpec(
            per_minute=per_minute,
            per_hour=per_hour,
            window=c.number(f"{key}.window", m.get("window", 60.0), 0.001, 86400),
            retry_after=c.opt_integer(f"{key}.retry_after", m.get("retry_after"), 0, 86400),
            status=c.status(f"{key}.status", m.get("status", 403), (403, 429)),
            send_retry_after=c.boolean(f"{key}.send_retry_after", m.get("send_retry_after", True)),
            methods=methods,
        )

    primary = None
    if top.get("primary_limit") is not None:
        key = "primary_limit"
        m = c.mapping(key, top[key], ("limit", "remaining", "reset_in", "status"))
        primary = PrimarySpec(
            limit=c.opt_integer(f"{key}.limit", m.get("limit"), 1),
            remaining=c.opt_integer(f"{key}.remaining", m.get("remaining"), 0),
            reset_in=None if m.get("reset_in") is None else c.number(f"{key}.reset_in", m["reset_in"], 0, 86400),
            status=c.status(f"{key}.status", m.get("status", 403), (403, 429)),
        )

    lag = None
    raw_lag = top.get("ref_visibility_lag")
    if raw_lag is not None:
        key = "ref_visibility_lag"
        if isinstance(raw_lag, dict):
            m = c.mapping(key, raw_lag, ("attempts", "repo"), required=("attempts",))
            repo = known_repo(f"{key}.repo", m["repo"]) if m.get("repo") is not None else None
            lag = RefLagSpec(c.integer(f"{key}.attempts", m["attempts"], 0, 1000), repo)
        else:
            lag = RefLagSpec(c.integer(key, raw_lag, 0, 1000))

    quickly = None
    if top.get("too_quickly") is not None:
        key = "too_quickly"
        m = c.mapping(key, top[key], ("after", "times", "created", "repo"))
        quickly = TooQuicklySpec(
            after=c.integer(f"{key}.after", m.get("after", 0), 0),
            times=c.opt_integer(f"{key}.times", m.get("times"), 1),
            created=c.boolean(f"{key}.created", m.get("created", False)),
            repo=known_repo(f"{key}.repo", m["repo"]) if m.get("repo") is not None else None,
        )

    token = None
    if top.get("fine_grained_token") is not None:
        key = "fine_grained_token"
        m = c.mapping(key, top[key], ("missing", "repos"), required=("missing",))
        missing = frozenset(
            c.choice(f"{key}.missing[{i}]", x, tuple(sorted(PERMISSIONS)))
            for i, x in enumerate(c.items(f"{key}.missing", m["missing"]))
        )
        selected = None
        if m.get("repos") is not None:
            listed = c.items(f"{key}.repos", m["repos"])
            selected = tuple(known_repo(f"{key}.repos[{i}]", x) for i, x in enumerate(listed))
        token = TokenSpec(missing, selected)

    credential = None
    if top.get("token") is not None:
        key = "token"
        m = c.mapping(key, top[key], ("kind", "expires_in_days", "scopes", "no_access"))
        kind = c.choice(f"{key}.kind", m.get("kind", "fine_grained"), TOKEN_KINDS)
        days = m.get("expires_in_days")
        scopes = tuple(c.string(f"{key}.scopes[{i}]", x)
                       for i, x in enumerate(c.items(f"{key}.scopes", m.get("scopes", ["repo", "workflow"]))))
        no_access = frozenset(
            c.choice(f"{key}.no_access[{i}]", x, tuple(sorted(PERMISSIONS)))
            for i, x in enumerate(c.items(f"{key}.no_access", m.get("no_access", [])))
        )
        if kind == "classic" and no_access:
            c.fail(f"{key}.no_access", "only fine-grained tokens have permissions; a classic token has scopes")
        if kind == "fine_grained" and "scopes" in m:
            c.fail(f"{key}.scopes", "only classic tokens have scopes; a fine-grained token has permissions")
        if kind == "classic" and token is not None:
            c.fail(f"{key}.kind", "fine_grained_token describes a fine-grained token, not a classic one")
        credential = CredentialSpec(
            kind=kind,
            expires_in_days=None if days is None else c.number(f"{key}.expires_in_days", days, -3650, 3650),
            scopes=scopes,
            no_access=no_access,
        )

    cap = c.opt_integer("tree_payload_cap", top.get("tree_payload_cap"), 1)
    return Scenario(
        repos=repos,
        faults=faults,
        login=login,
        human=human,
        secondary_limit=secondary,
        primary_limit=primary,
        ref_visibility_lag=lag,
        too_quickly=quickly,
        fine_grained_token=token,
        tree_payload_cap=cap,
        token=credential,
        source=source,
    )


def _repo(c: _Check, key: str, value: Any) -> RepoSpec:
    m = c.mapping(key, value, _REPO, required=("name",))
    name = c.repo_name(f"{key}.name", m["name"])
    default_branch = c.branch(f"{key}.default_branch", m.get("default_branch", "main"))
    files = None
    if m.get("files") is not None:
        pairs = []
        for path, content in c.free_mapping(f"{key}.files", m["files"]).items():
            if not valid_tree_path(path):
                c.fail(f"{key}.files.{path}", "is not a valid repository path")
            if not isinstance(content, str):
                c.fail(f"{key}.files.{path}", "must be a string (the file's text)")
            pairs.append((path, content))
        if not pairs:
            c.fail(f"{key}.files", "must name at least one file (omit it for a README)")
        files = tuple(pairs)
    branches: list[str] = []
    for i, b in enumerate(c.items(f"{key}.branches", m.get("branches", []))):
        bkey = f"{key}.branches[{i}]"
        branch = c.branch(bkey, b)
        if branch == default_branch or branch in branches:
            c.fail(bkey, f"{branch} is already a branch of {name}")
        branches.append(branch)
    pulls: list[PullSpec] = []
    for i, p in enumerate(c.items(f"{key}.pulls", m.get("pulls", []))):
        pkey = f"{key}.pulls[{i}]"
        pm = c.mapping(pkey, p, _PULL, required=("head",))
        head = c.string(f"{pkey}.head", pm["head"])
        if head not in branches:
            c.fail(f"{pkey}.head", f"{head} is not one of {name}'s branches ({', '.join(branches) or 'none'})")
        base = c.string(f"{pkey}.base", pm["base"]) if pm.get("base") is not None else None
        if base is not None and base != default_branch and base not in branches:
            c.fail(f"{pkey}.base", f"{base} is not a branch of {name}")
        if base == head:
            c.fail(f"{pkey}.base", "must differ from head")
        if any(q.head == head and (q.base or default_branch) == (base or default_branch) for q in pulls):
            c.fail(f"{pkey}.head", f"a pull request already exists for {head}")
        body = pm.get("body", "")
        if not isinstance(body, str):
            c.fail(f"{pkey}.body", "must be a string")
        pulls.append(
            PullSpec(
                head=head,
                title=c.string(f"{pkey}.title", pm.get("title", f"Work on {head}")),
                base=base,
                body=body,
                draft=c.boolean(f"{pkey}.draft", pm.get("draft", False)),
                author=c.string(f"{pkey}.author", pm["author"]) if pm.get("author") is not None else None,
                reviewed_by=tuple(c.string(f"{pkey}.reviewed_by[{j}]", x)
                                  for j, x in enumerate(c.items(f"{pkey}.reviewed_by", pm.get("reviewed_by", [])))),
            )
        )
    requests: list[tuple[str, ReviewRequestMode]] = []
    if m.get("review_requests") is not None:
        for login, mode in c.free_mapping(f"{key}.review_requests", m["review_requests"]).items():
            rkey = f"{key}.review_requests.{login}"
            requests.append((c.string(rkey, login), c.choice(rkey, mode, REVIEW_REQUEST_MODES)))  # type: ignore[arg-type]
    reviewer = None
    if m.get("reviewer") is not None:
        reviewer = c.choice(f"{key}.reviewer", m["reviewer"], REVIEWER_KINDS)
    empty = c.boolean(f"{key}.empty", m.get("empty", False))
    if empty and (files is not None or branches):
        c.fail(f"{key}.empty", "an empty repository has no files and no branches")
    labels: list[str] = []
    for i, x in enumerate(c.items(f"{key}.labels", m.get("labels", []))):
        label = c.string(f"{key}.labels[{i}]", x)
        if label.lower() in {y.lower() for y in labels}:
            c.fail(f"{key}.labels[{i}]", f"{label} is already a label of {name}")
        labels.append(label)
    return RepoSpec(
        name=name,
        topic=c.boolean(f"{key}.topic", m.get("topic", True)),
        reviewer=reviewer,  # type: ignore[arg-type]
        latency=None if m.get("latency") is None else c.number(f"{key}.latency", m["latency"], 0, 3600),
        default_branch=default_branch,
        writable=c.boolean(f"{key}.writable", m.get("writable", True)),
        files=files,
        branches=tuple(branches),
        pulls=tuple(pulls),
        review_requests=tuple(requests),
        empty=empty,
        labels=tuple(labels),
        copilot_review=c.boolean(f"{key}.copilot_review", m.get("copilot_review", False)),
    )


def _fault(c: _Check, key: str, value: Any, known_repo: Callable[[str, Any], str]) -> FaultSpec:
    m = c.mapping(key, value, _FAULT)
    repo = known_repo(f"{key}.repo", m["repo"]) if m.get("repo") is not None else None
    method = None
    if m.get("method") is not None:
        method = c.choice(f"{key}.method", str(m["method"]).upper(), METHODS)
    route = c.string(f"{key}.route", m["route"]) if m.get("route") is not None else None
    problem = route_problem(method, route)
    if problem:
        c.fail(f"{key}.route", problem)
    status = c.opt_integer(f"{key}.status", m.get("status"), 100, 599)
    headers: list[tuple[str, str]] = []
    if m.get("headers") is not None:
        for name, v in c.free_mapping(f"{key}.headers", m["headers"]).items():
            if isinstance(v, bool) or not isinstance(v, (str, int, float)):
                c.fail(f"{key}.headers.{name}", "must be a string")
            headers.append((str(name), str(v)))
    delay = c.number(f"{key}.delay", m.get("delay", 0), 0, 3600)
    drop = c.boolean(f"{key}.drop", m.get("drop", False))
    after_write = c.boolean(f"{key}.after_write", m.get("after_write", False))
    secondary = c.boolean(f"{key}.secondary", m.get("secondary", False))
    times = c.opt_integer(f"{key}.times", m.get("times"), 1)
    if drop and status is not None:
        c.fail(f"{key}.drop", "a dropped connection has no status; give one of drop, status")
    if after_write and status is None and not drop:
        c.fail(f"{key}.after_write", "needs a status (or drop) to answer with once the write is done")
    if status is None and not drop and not headers and not delay:
        c.fail(key, "does nothing: give status, headers, delay or drop")
    if (secondary or "body" in m) and status is None:
        c.fail(f"{key}.{'secondary' if secondary else 'body'}", "only applies with a status")
    return FaultSpec(
        method=method,
        route=route,
        status=status,
        headers=tuple(headers),
        body=m.get("body"),
        delay=delay,
        drop=drop,
        times=times,
        after_write=after_write,
        secondary=secondary,
        repo=repo,
    )
