"""Scenario files: a whole sandbox world (repos, human work, reviewers, faults) as data.

``sandbox serve --scenario FILE`` and in-process tests build the same world from the same
YAML or JSON file, so a failure seen from outside (a subprocess, curl, the real CLI) can
be replayed inside a test and vice versa. Validation is strict and names the file and
the key path of the first problem (``faults[2].status: must be an integer 100-599``):
a scenario that silently ignores a typo tests nothing.

Shape (every key but ``repos`` optional)::

    login: redline-canary          # the token's user
    human: octocat                 # who made the pre-existing branches and PRs
    repos:
      - name: acme/canary-python   # OWNER/NAME, each once
        topic: true                # carries the opt-in topic (default true)
        reviewer: bandit           # bandit | silent | none (default: serve's --reviewer)
        latency: 0.5               # reviewer answer delay, seconds (default: --latency)
        default_branch: main
        writable: true             # false: permissions.push false, writes 403
        files: {README.md: "hi\\n"} # initial files of the default branch
        empty: false               # true: no commit, no branch at all (a freshly created repo)
        labels: [redline-exempt]   # labels that exist before the canary runs
        copilot_review: false      # true: a ruleset requests Copilot's review of every PR
        branches: [rc/2.4]         # one commit each by `human`, from the default branch
        pulls: [{head: rc/2.4, title: Hotfix, base: main, body: "", draft: false, author: octocat,
                 reviewed_by: ["coderabbitai[bot]"]}]   # a COMMENTED review by each login
        review_requests: {"copilot-pull-request-reviewer[bot]": hidden}  # registered|dropped|hidden|rejected
    faults:                        # route = OpenAPI template the sandbox serves; times omitted = always
      - {method: POST, route: "/repos/{owner}/{repo}/pulls", status: 502, after_write: true, times: 1}
      # keys: method route repo status headers body delay drop times after_write secondary
    secondary_limit: {per_minute: 5, per_hour: null, window: 60, retry_after: null,
                      status: 403, send_retry_after: true, methods: [POST, PATCH, PUT]}
    primary_limit: {limit: 5000, remaining: 0, reset_in: 30, status: 403}
    ref_visibility_lag: {attempts: 2, repo: acme/canary-python}   # or just: 2
    too_quickly: {after: 9, times: 3, created: false, repo: acme/canary-python}
    fine_grained_token: {missing: [pull_requests], repos: [acme/canary-python]}
    token: {kind: fine_grained, expires_in_days: 5, no_access: [checks]}   # or
    token: {kind: classic, scopes: [public_repo], expires_in_days: null}   # the headers doctor reads
    tree_payload_cap: 2000000
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NoReturn, get_args

import yaml

from redline_canary.errors import BadInput
from redline_canary.sandbox.api import route_problem
from redline_canary.sandbox.policies import PERMISSIONS, REVIEW_REQUEST_MODES, TOKEN_KINDS, ReviewRequestMode
from redline_canary.sandbox.state import valid_ref_name, valid_tree_path

if TYPE_CHECKING:
    from redline_canary.sandbox.core import Sandbox

ReviewerKind = Literal["bandit", "silent", "none"]
REVIEWER_KINDS: tuple[str, ...] = get_args(ReviewerKind)
# The opt-in topic; equal to github_api.CANARY_TOPIC (a test pins it), kept literal here
# so the sandbox package stays independent of the product it tests.
CANARY_TOPIC = "redline-canary"
METHODS = ("GET", "POST", "PATCH", "PUT", "DELETE")
DEFAULT_HUMAN = "octocat"


class ScenarioError(BadInput):
    """A scenario file problem: exit 2, message ``FILE: key.path: what is wrong``."""


@dataclass(frozen=True)
class PullSpec:
    head: str
    title: str
    base: str | None = None  # None: the repo's default branch
    body: str = ""
    draft: bool = False
    author: str | None = None  # None: the scenario's human
    reviewed_by: tuple[str, ...] = ()


@dataclass(frozen=True)
class RepoSpec:
    name: str
    topic: bool = True
    reviewer: ReviewerKind | None = None  # None: the caller's default
    latency: float | None = None
    default_branch: str = "main"
    writable: bool = True
    files: tuple[tuple[str, str], ...] | None = None  # None: a README
    branches: tuple[str, ...] = ()
    pulls: tuple[PullSpec, ...] = ()
    review_requests: tuple[tuple[str, ReviewRequestMode], ...] = ()
    empty: bool = False
    labels: tuple[str, ...] = ()
    copilot_review: bool = False


@dataclass(frozen=True)
class FaultSpec:
    method: str | None = None
    route: str | None = None
    status: int | None = None
    headers: tuple[tuple[str, str], ...] = ()
    body: Any = None
    delay: float = 0.0
    drop: bool = False
    times: int | None = None  # scenario default: always
    after_write: bool = False
    secondary: bool = False
    repo: str | None = None


@dataclass(frozen=True)
class SecondarySpec:
    per_minute: int | None = None
    per_hour: int | None = None
    window: float = 60.0
    retry_after: int | None = None
    status: int = 403
    send_retry_after: bool = True
    methods: tuple[str, ...] = ("POST", "PATCH", "PUT")


@dataclass(frozen=True)
class PrimarySpec:
    limit: int | None = None
    remaining: int | None = None
    reset_in: float | None = None
    status: int = 403


@dataclass(frozen=True)
class RefLagSpec:
    attempts: int
    repo: str | None = None


@dataclass(frozen=True)
class TooQuicklySpec:
    after: int = 0
    times: int | None = None
    created: bool = False
    repo: str | None = None


@dataclass(frozen=True)
class TokenSpec:
    missing: frozenset[str]
    repos: tuple[str, ...] | None = None


@dataclass(frozen=True)
class CredentialSpec:
    kind: str = "fine_grained"
    expires_in_days: float | None = None
    scopes: tuple[str, ...] = ("repo", "workflow")
    no_access: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Scenario:
    repos: tuple[RepoSpec, ...]
    faults: tuple[FaultSpec, ...] = ()
    login: str = "redline-canary"
    human: str = DEFAULT_HUMAN
    secondary_limit: SecondarySpec | None = None
    primary_limit: PrimarySpec | None = None
    ref_visibility_lag: RefLagSpec | None = None
    too_quickly: TooQuicklySpec | None = None
    fine_grained_token: TokenSpec | None = None
    tree_payload_cap: int | None = None
    token: CredentialSpec | None = None
    source: str = field(default="<scenario>", compare=False)


# --- reading ---------------------------------------------------------------------------


class _UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader that refuses a key given twice, which PyYAML would silently overwrite."""


def _construct_mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"key {key!r} given twice", key_node.start_mark
            )
        seen.add(key)
    return dict(loader.construct_mapping(node, deep=deep))


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def load_scenario(path: str | Path) -> Scenario:
    """Read and validate a YAML (``.yaml``/``.yml``/other) or JSON (``.json``) scenario."""
    p = Path(path)
    source = str(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ScenarioError(f"{source}: cannot read: {getattr(exc, 'strerror', None) or exc}") from exc
    try:
        if p.suffix.lower() == ".json":
            data = json.loads(text, object_pairs_hook=_unique_json_object)
        else:
            data = yaml.load(text, Loader=_UniqueKeyLoader)
    except (ValueError, yaml.YAMLError) as exc:
        detail = " ".join(str(exc).split())
        kind = "JSON" if p.suffix.lower() == ".json" else "YAML"
        raise ScenarioError(f"{source}: not valid {kind}: {detail}") from exc
    return parse_scenario(data, source)


def _unique_json_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise ValueError(f"key {k!r} given twice")
        out[k] = v
    return out


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


# --- building ------------------------------------------------------------------------------


def apply_scenario(
    sb: Sandbox,
    scenario: Scenario,
    *,
    default_reviewer: ReviewerKind = "bandit",
    latency: float = 1.0,
) -> None:
    """Build ``scenario``'s world in ``sb``: repos, human branches and PRs, then reviewers
    (attached last, so pre-existing human PRs are not reviewed at start-up), then policies
    and faults (last, so setup never trips over them)."""
    from redline_canary.sandbox.reviewers import BanditReviewer, Reviewer, SilentReviewer

    human = sb.state.ensure_user(scenario.human)
    for spec in scenario.repos:
        sb.create_repo(
            spec.name,
            files={} if spec.empty else dict(spec.files) if spec.files is not None else None,
            default_branch=spec.default_branch,
            writable=spec.writable,
            topics=[CANARY_TOPIC] if spec.topic else [],
        )
        repo = sb.state.get_repo_by_name(spec.name)
        for branch in spec.branches:
            note = f"notes/{branch.replace('/', '-')}.md"
            sb.state.commit_files(repo, branch, {note: f"Work on {branch}\n"}, f"Start {branch}", author=human)
        repo.copilot_review = spec.copilot_review
        for label in spec.labels:
            sb.add_label(spec.name, label)
        for pull in spec.pulls:
            number = sb.create_pull(
                spec.name,
                pull.head,
                base=pull.base,
                title=pull.title,
                body=pull.body,
                author=pull.author or scenario.human,
                draft=pull.draft,
            )
            for login in pull.reviewed_by:
                sb.add_review(spec.name, number, login)
        for login, mode in spec.review_requests:
            sb.review_requests(spec.name, login, mode)
    for spec in scenario.repos:
        kind = spec.reviewer or default_reviewer
        delay = spec.latency if spec.latency is not None else latency
        reviewer: Reviewer | None = None
        if kind == "bandit":
            reviewer = BanditReviewer(latency=delay)
        elif kind == "silent":
            reviewer = SilentReviewer(latency=delay)
        if reviewer is not None:
            sb.attach_reviewer(spec.name, reviewer)

    if scenario.secondary_limit is not None:
        s = scenario.secondary_limit
        sb.secondary_limit(
            s.per_minute,
            s.per_hour,
            window=s.window,
            retry_after=s.retry_after,
            status=s.status,
            methods=s.methods,
            send_retry_after=s.send_retry_after,
        )
    if scenario.primary_limit is not None:
        p = scenario.primary_limit
        sb.primary_limit(limit=p.limit, remaining=p.remaining, reset_in=p.reset_in, status=p.status)
    if scenario.ref_visibility_lag is not None:
        sb.ref_visibility_lag(scenario.ref_visibility_lag.attempts, repo=scenario.ref_visibility_lag.repo)
    if scenario.too_quickly is not None:
        q = scenario.too_quickly
        sb.submitted_too_quickly(after=q.after, times=q.times, created=q.created, repo=q.repo)
    if scenario.fine_grained_token is not None:
        sb.fine_grained_token(scenario.fine_grained_token.missing, repos=scenario.fine_grained_token.repos)
    if scenario.token is not None:
        t = scenario.token
        sb.token_kind(t.kind, expires_in_days=t.expires_in_days, scopes=t.scopes, no_access=t.no_access)
    if scenario.tree_payload_cap is not None:
        sb.tree_payload_cap(scenario.tree_payload_cap)
    for f in scenario.faults:
        sb.inject_fault(
            f.method,
            f.route,
            status=f.status,
            headers=dict(f.headers),
            body=f.body,
            delay=f.delay,
            drop=f.drop,
            times=f.times,
            after_write=f.after_write,
            secondary=f.secondary,
            repo=f.repo,
        )


def as_scenario(value: Scenario | Mapping[str, Any] | str | Path) -> Scenario:
    """A Scenario from itself, a decoded mapping, or a file path."""
    if isinstance(value, Scenario):
        return value
    if isinstance(value, (str, Path)):
        return load_scenario(value)
    return parse_scenario(dict(value))
