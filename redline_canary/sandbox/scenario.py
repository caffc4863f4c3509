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

What a scenario is (the specs below) lives here; reading a file is ``scenario_files``, the
validation ``scenario_validation``, and building the world in a sandbox ``scenario_build``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from redline_canary.errors import BadInput
from redline_canary.sandbox.policies import ReviewRequestMode

ReviewerKind = Literal["bandit", "silent", "none"]
REVIEWER_KINDS: tuple[str, ...] = get_args(ReviewerKind)
# The opt-in topic; equal to github_api.CANARY_TOPIC (a test pins it), kept literal here
# so the sandbox package stays independent of the product it tests.
CANARY_TOPIC = "redline-canary"
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

