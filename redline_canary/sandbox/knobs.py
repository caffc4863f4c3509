"""The Sandbox's knobs: the in-process switches that make the fake GitHub misbehave the way the
real one does (injected faults, primary and secondary rate limits, ref lag, "submitted too
quickly", token kinds and permissions, review-request modes, tree payload caps) and the GitHub
Apps it knows. They are a mixin of ``Sandbox``, kept apart from its lifecycle and world setup
because each one only rewrites the app's or the state's policies under their lock and creates nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from redline_canary.sandbox import api
from redline_canary.sandbox.app import SandboxApp
from redline_canary.sandbox.limits import Fault, SecondaryLimit
from redline_canary.sandbox.policies import (
    PERMISSIONS,
    REVIEW_REQUEST_MODES,
    TOKEN_KINDS,
    Credential,
    FineGrainedToken,
    Policies,
    RefVisibilityLag,
    ReviewRequestMode,
    TooQuickly,
)
from redline_canary.sandbox.state import State


class SandboxKnobs:
    """Faults, limits, policies and Apps; mixed into :class:`~.core.Sandbox`."""

    state: State
    app: SandboxApp

    # --- faults and limits -------------------------------------------------------------

    def inject_fault(
        self,
        method: str | None = None,
        route: str | None = None,
        *,
        status: int | None = None,
        headers: Mapping[str, str] | None = None,
        body: Any = None,
        delay: float = 0.0,
        drop: bool = False,
        times: int | None = 1,
        after_write: bool = False,
        secondary: bool = False,
        repo: str | None = None,
    ) -> Fault:
        """Make matching requests fail. ``route`` is a GitHub template, e.g.
        ``/repos/{owner}/{repo}/pulls``; None matches every route. ``times=None``: always.

        See :class:`Fault` for ``after_write`` (the write happens, the answer is the
        fault), ``secondary`` and ``repo`` (only that OWNER/NAME). A route or method the sandbox does not serve is a
        ValueError: a typo would otherwise make a fault that silently never fires.
        """
        problem = api.route_problem(method, route)
        if problem:
            raise ValueError(problem)
        fault = Fault(
            method=method.upper() if method else None,
            route=route,
            status=status,
            headers=dict(headers or {}),
            body=body,
            delay=delay,
            drop=drop,
            times=times,
            after_write=after_write,
            secondary=secondary,
            repo=repo,
        )
        return self.app.add_fault(fault)

    def clear_faults(self) -> None:
        with self.app.lock:
            self.app.faults.clear()

    def clear_policies(self) -> None:
        """Back to a well-behaved GitHub: no ref lag, no "too quickly", a token with every
        permission, every reviewer request registered (faults and limits untouched)."""
        with self.state.lock:
            self.state.policies = Policies()

    def secondary_limit(
        self,
        per_minute: int | None = None,
        per_hour: int | None = None,
        *,
        window: float = 60.0,
        retry_after: int | None = None,
        status: int = 403,
        methods: Iterable[str] = ("POST", "PATCH", "PUT"),
        send_retry_after: bool = True,
        scale: float = 1.0,
    ) -> None:
        """More than ``per_minute`` content-creating requests per ``window`` seconds (or
        ``per_hour`` per 60 windows) get ``status`` (403 or 429) + ``retry-after``, counted
        per token (per installation for an App's tokens), as GitHub counts them.
        ``send_retry_after=False`` omits the header (GitHub then means "wait at least a
        minute"). ``scale`` makes simulated time run faster (``scale=60``: a simulated hour
        per real minute; ``retry-after`` in simulated seconds). No limits given: off."""
        if status not in (403, 429):
            raise ValueError(f"secondary limits answer 403 or 429, not {status}")
        if not scale > 0:
            raise ValueError(f"scale must be > 0, not {scale}")
        with self.app.lock:
            if per_minute is None and per_hour is None:
                self.app.secondary = None
                return
            self.app.secondary = SecondaryLimit(
                per_minute=per_minute,
                per_hour=per_hour,
                window=window,
                retry_after=retry_after,
                status=status,
                methods=frozenset(m.upper() for m in methods),
                send_retry_after=send_retry_after,
                scale=scale,
            )

    def primary_limit(
        self,
        *,
        limit: int | None = None,
        remaining: int | None = None,
        reset_in: float | None = None,
        status: int = 403,
    ) -> None:
        """Shape the ``core`` bucket: e.g. ``remaining=0, reset_in=2`` for an exhausted one."""
        rl = self.app.rate
        with self.app.lock:
            rl.roll(self.state.clock())
            if limit is not None:
                rl.limit = limit
            if remaining is not None:
                rl.used = max(rl.limit - remaining, 0)
            if reset_in is not None:
                rl.reset = int(self.state.clock() + reset_in)
            rl.status = status

    def ref_visibility_lag(self, attempts: int, *, repo: str | None = None) -> None:
        """After ``POST /git/refs`` creates a branch, the next ``attempts`` ``POST /pulls``
        with that head answer 422 ``head`` ``invalid``, as if the ref did not exist yet
        (GitHub replicates refs asynchronously). ``0`` turns it off."""
        if attempts < 0:
            raise ValueError("attempts must be >= 0")
        with self.state.lock:
            self.state.policies.ref_lag = (
                RefVisibilityLag(attempts, repo.lower() if repo else None) if attempts else None
            )

    def submitted_too_quickly(
        self,
        *,
        after: int = 0,
        times: int | None = None,
        created: bool = False,
        repo: str | None = None,
    ) -> TooQuickly:
        """PR creation hits GitHub's content-creation limit: after ``after`` successful API
        PR creations, the next ``times`` (None = all) answer 422 "was submitted too
        quickly". ``created=True``: the PR is opened anyway and only the answer is the
        422. Returns the live counter (``attempts``, ``refused``)."""
        if after < 0 or (times is not None and times < 1):
            raise ValueError("after must be >= 0 and times >= 1 (or None)")
        limit = TooQuickly(after=after, times=times, created=created, repo=repo.lower() if repo else None)
        with self.state.lock:
            self.state.policies.too_quickly = limit
        return limit

    def fine_grained_token(self, missing: Iterable[str] = (), *, repos: Iterable[str] | None = None) -> None:
        """The token is a fine-grained PAT without write access to ``missing`` (e.g.
        ``{"pull_requests"}``): ``GET /repos/{o}/{r}`` still says ``permissions.push:
        true``, writes whose route needs only those answer 403 "Resource not accessible
        by personal access token" + ``x-accepted-github-permissions``. Empty: off."""
        names = frozenset(missing)
        unknown = sorted(names - PERMISSIONS)
        if unknown:
            raise ValueError(f"unknown permission(s) {unknown}; known: {sorted(PERMISSIONS)}")
        selected = frozenset(r.lower() for r in repos) if repos is not None else None
        with self.state.lock:
            self.state.policies.token = FineGrainedToken(names, selected) if names else None

    def token_kind(
        self,
        kind: str = "fine_grained",
        *,
        expires_in_days: float | None = None,
        scopes: Iterable[str] = ("repo", "workflow"),
        no_access: Iterable[str] = (),
    ) -> None:
        """Answer as GitHub answers this kind of token (see :class:`Credential`): classic
        ``x-oauth-scopes`` or fine-grained ``x-accepted-github-permissions``, and the
        expiry header when ``expires_in_days`` is given (negative: already expired)."""
        if kind not in TOKEN_KINDS:
            raise ValueError(f"kind must be one of {TOKEN_KINDS}, got {kind!r}")
        names = frozenset(no_access)
        unknown = sorted(names - PERMISSIONS)
        if unknown:
            raise ValueError(f"unknown permission(s) {unknown}; known: {sorted(PERMISSIONS)}")
        at = None if expires_in_days is None else self.state.clock() + expires_in_days * 86400
        with self.state.lock:
            self.state.policies.credential = Credential(kind, at, tuple(scopes), names)  # type: ignore[arg-type]

    def clear_credential(self) -> None:
        """Back to the default dialect: no scopes, no expiry (unless ``fine_grained_token``)."""
        with self.state.lock:
            self.state.policies.credential = None

    def review_requests(self, repo: str, login: str, mode: ReviewRequestMode) -> None:
        """What ``POST /pulls/{n}/requested_reviewers`` does for ``login`` on ``repo``:
        ``registered`` (normal), ``dropped`` (201, never listed, the bot is not woken: a
        bot whose review is not enabled), ``hidden`` (201, never listed, but the bot
        reviews: the Copilot report in docs/github.md §8), ``rejected`` (422 "Reviews may
        only be requested from collaborators...")."""
        if mode not in REVIEW_REQUEST_MODES:
            raise ValueError(f"mode must be one of {REVIEW_REQUEST_MODES}, got {mode!r}")
        with self.state.lock:
            self.state.policies.review_requests[(repo.lower(), login.lower())] = mode

    # --- GitHub Apps -----------------------------------------------------------------------

    def register_app(self, app_id: int, public_key_pem: str | bytes, *, slug: str = "redline-canary-app") -> None:
        """A GitHub App whose JWTs are checked against ``public_key_pem``; its installation
        tokens act as ``<slug>[bot]``. From then on JWTs and ``ghs_`` tokens are understood."""
        with self.state.lock:
            bot = self.state.ensure_user(f"{slug}[bot]", type="Bot")
            owner = self.state.viewer
        with self.app.lock:
            self.app.apps.register(app_id, public_key_pem, bot, slug, owner)

    def install_app(self, app_id: int, owner: str, *, repos: Iterable[str] | None = None,
                    permissions: Mapping[str, str] | None = None) -> int:
        """Install App ``app_id`` on ``owner`` (all its repositories, or only ``repos``,
        full names); returns the installation id."""
        with self.state.lock:
            account = self.state.ensure_user(owner, type="Organization")
        with self.app.lock:
            return self.app.apps.install(app_id, account, repos, dict(permissions) if permissions else None).id

    def installation_token_lifetime(self, seconds: float) -> None:
        """How long an installation token lives (GitHub: 3600 s), for tests and scaled benchmarks."""
        if not seconds > 0:
            raise ValueError("the lifetime must be > 0")
        with self.app.lock:
            self.app.apps.token_lifetime = seconds

    def revoke_installation_tokens(self, owner: str | None = None) -> int:
        """Make every installation token issued so far (for ``owner``'s installation, or all)
        answer 401 "Bad credentials" from now on, as a revoked or early-expired token does on
        GitHub; returns how many were live. New tokens work as before."""
        with self.app.lock:
            return self.app.apps.revoke(owner)

    def issued_tokens(self) -> list[str]:
        """Every installation token issued, oldest first: what a test greps outputs for."""
        with self.app.lock:
            return list(self.app.apps.issued)

    def tree_payload_cap(self, max_bytes: int | None) -> None:
        """Answer POST /git/trees carrying more inline content than this with GitHub's 422."""
        self.state.tree_payload_cap = max_bytes
