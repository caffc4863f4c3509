"""Behaviours real GitHub shows under load or with narrow tokens, as switchable policies.

Each one is a failure a canary must survive that recordings rarely show (docs/sandbox.md,
docs/github.md §5.2, §8, §9): a ref the pulls API cannot see yet, PR creation refused as
"submitted too quickly", a fine-grained token whose repository view says ``push: true``
while its writes are refused, and a reviewer request that is accepted but never
registered. They live apart from the world (State) because they are about *how* GitHub
answers, not *what* exists; State consults them only on API paths, so in-process setup
(``Sandbox.create_pull``, scenario files) never trips over them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, get_args

ReviewRequestMode = Literal["registered", "dropped", "hidden", "rejected"]
REVIEW_REQUEST_MODES: tuple[str, ...] = get_args(ReviewRequestMode)
TokenKind = Literal["fine_grained", "classic"]
TOKEN_KINDS: tuple[str, ...] = get_args(TokenKind)
# Classic scopes that let a token write to a repository (docs/github.md §2.2: x-accepted-oauth-scopes "repo").
REPO_SCOPES = frozenset({"repo", "public_repo"})

# Fine-grained repository permission names GitHub uses in x-accepted-github-permissions.
PERMISSIONS = frozenset(
    {
        "actions",
        "checks",
        "contents",
        "deployments",
        "issues",
        "metadata",
        "pages",
        "pull_requests",
        "statuses",
        "workflows",
    }
)


@dataclass
class RefVisibilityLag:
    """A ref created through ``POST /git/refs`` stays invisible to the pulls API for the
    next ``attempts`` ``POST /pulls`` naming it as head (422 ``head`` ``invalid``).

    Real GitHub replicates refs asynchronously; a PR opened right after the ref is created
    can be refused as if the branch did not exist. A count, not a clock, keeps tests
    deterministic and fast. ``repo`` (lower-cased full name) limits it to one repository.
    """

    attempts: int
    repo: str | None = None
    pending: dict[tuple[int, str], int] = field(default_factory=dict)

    def applies(self, full_name: str) -> bool:
        return self.attempts > 0 and (self.repo is None or self.repo == full_name.lower())

    def note_created(self, repo_id: int, branch: str) -> None:
        self.pending[(repo_id, branch)] = self.attempts

    def hides(self, repo_id: int, branch: str) -> bool:
        """True (and one attempt used up) while the new ref is still invisible."""
        left = self.pending.get((repo_id, branch), 0)
        if left <= 0:
            return False
        self.pending[(repo_id, branch)] = left - 1
        return True


@dataclass
class TooQuickly:
    """GitHub's content-creation limit on PR creation: 422 "was submitted too quickly".

    The first ``after`` API PR creations that pass validation succeed; the next ``times``
    (None = every later one) are refused. Seen in the wild on the ~10th PR in a row
    (docs/github.md §5.2). With ``created`` the PR is made anyway and only the answer is
    the 422, which is why a client must look before it retries.
    """

    after: int = 0
    times: int | None = None
    created: bool = False
    repo: str | None = None
    attempts: int = 0
    refused: int = 0

    def take(self, full_name: str) -> bool:
        """Count one attempt; True when this one is refused."""
        if self.repo is not None and self.repo != full_name.lower():
            return False
        self.attempts += 1
        if self.attempts <= self.after:
            return False
        if self.times is not None and self.refused >= self.times:
            return False
        self.refused += 1
        return True


@dataclass(frozen=True)
class FineGrainedToken:
    """A fine-grained PAT that lacks write access to some permissions.

    ``GET /repos/{o}/{r}`` still shows ``permissions.push: true`` (that field is the
    *user's* role, not the token's), but a write whose route needs only missing
    permissions answers 403 "Resource not accessible by personal access token" with
    ``x-accepted-github-permissions`` naming what it needs. Reads keep working: the token
    is modelled as read-only on the missing permissions. ``repos`` (lower-cased full
    names) limits it to the selected repositories; None = every repository.
    """

    missing: frozenset[str]
    repos: frozenset[str] | None = None

    def denies(self, perm: str | None, method: str, full_name: str | None) -> bool:
        """Whether this token cannot make a request whose route needs ``perm``.

        ``perm`` uses GitHub's header syntax: ``;`` separates alternatives, ``,`` joins
        permissions needed together, each ``name=read|write``. The request is allowed
        when one alternative is fully granted.
        """
        if perm is None or method == "GET" or not self.missing:
            return False
        if self.repos is not None and (full_name is None or full_name.lower() not in self.repos):
            return False
        for alternative in perm.split(";"):
            needs = [p.strip() for p in alternative.split(",") if p.strip()]
            if all(self._granted(p) for p in needs):
                return False
        return True

    def _granted(self, need: str) -> bool:
        name, _, level = need.partition("=")
        return name.strip() not in self.missing or level.strip() == "read"


@dataclass(frozen=True)
class Credential:
    """What kind of token the client holds, as GitHub's response headers tell it.

    Recorded traffic shows two dialects: classic PATs get ``x-oauth-scopes`` and
    ``x-accepted-oauth-scopes`` and no ``x-accepted-github-permissions``; fine-grained
    tokens get ``x-accepted-github-permissions`` and no scopes; either kind may carry
    ``github-authentication-token-expiration`` (``expires_at``, epoch seconds; None:
    never expires). ``doctor`` reads exactly these headers, so a test can build a
    misconfigured token from outside. ``no_access`` (fine-grained) are permissions the
    token does not have at all: reads of routes needing them answer 403 too. A classic
    token without ``repo``/``public_repo`` cannot write to a repository (404, as GitHub
    answers a token that may not see the write).
    """

    kind: TokenKind = "fine_grained"
    expires_at: float | None = None
    scopes: tuple[str, ...] = ("repo", "workflow")
    no_access: frozenset[str] = frozenset()

    def unreadable(self, perm: str | None, full_name: str | None) -> bool:
        """A fine-grained token without any access to what every alternative of ``perm`` needs."""
        if self.kind != "fine_grained" or perm is None or full_name is None or not self.no_access:
            return False
        for alternative in perm.split(";"):
            names = {p.partition("=")[0].strip() for p in alternative.split(",") if p.strip()}
            if not names & self.no_access:
                return False
        return True

    def cannot_write(self, method: str, full_name: str | None) -> bool:
        return (self.kind == "classic" and method != "GET" and full_name is not None
                and not REPO_SCOPES & set(self.scopes))


@dataclass
class Policies:
    """Everything switchable about how the sandbox answers writes; all off by default."""

    ref_lag: RefVisibilityLag | None = None
    too_quickly: TooQuickly | None = None
    token: FineGrainedToken | None = None
    credential: Credential | None = None  # None: headers as before (no scopes, no expiry unless ``token``)
    # (lower-cased repo full name, lower-cased login) -> what a reviewer request does.
    review_requests: dict[tuple[str, str], ReviewRequestMode] = field(default_factory=dict)

    def review_request_mode(self, full_name: str, login: str) -> ReviewRequestMode:
        return self.review_requests.get((full_name.lower(), login.lower()), "registered")
