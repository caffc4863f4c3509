"""GitHub Apps in the sandbox: registered Apps (a public key each), installations per owner,
JWTs checked as GitHub checks them, installation tokens that expire.

A product that authenticates as an App must be tested end to end, so the sandbox is the
other side of the flow: ``GET /repos/{owner}/{repo}/installation`` and
``POST /app/installations/{id}/access_tokens`` answer only a JWT that is RS256, signed by
a registered App's key, names it in ``iss``, is not expired and expires at most 10 minutes
ahead (401 otherwise, with GitHub's messages); a repository whose owner has no installation
is 404. The token it issues (``ghs_`` + 36 characters) works on the installation's
repositories until it expires (401 "Bad credentials" after, 404 on another owner's
repository) and is the principal whose secondary-limit budget the request spends: one
budget per installation, as GitHub counts it.

Error messages: "A JSON web token could not be decoded", "'Expiration time' claim ('exp') is
too far in the future", "'Expiration time' claim ('exp') must be a numeric value representing
the future time at which the assertion expires" and "'Issued at' claim ('iat') must be an
Integer representing the time that the assertion was issued" are as users report them (no
first-party recording); "Resource not accessible by integration" is GitHub's 403 for an App.

Issued tokens are kept as digests for authentication; ``issued`` keeps the plain tokens
too, because the issuer knowing its own tokens is what lets a test grep every output for them.
"""

from __future__ import annotations

import hashlib
import itertools
import secrets
import string
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeGuard

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from redline_canary.sandbox.model import ApiError, User, iso

APPS_DOC = "https://docs.github.com/rest/apps/apps"
JWT_DOC = "https://docs.github.com/apps/creating-github-apps/authenticating-with-a-github-app/generating-a-json-web-token-jwt-for-a-github-app"
MAX_JWT_AHEAD = 600  # GitHub: exp no more than 10 minutes into the future
IAT_DRIFT = 60  # an iat up to a minute ahead is clock drift, not an error
TOKEN_LIFETIME = 3600.0  # installation tokens expire after one hour
DEFAULT_PERMISSIONS = {"contents": "write", "pull_requests": "write", "issues": "write", "checks": "read",
                       "metadata": "read"}
UNDECODABLE = "A JSON web token could not be decoded"
EXP_TOO_FAR = "'Expiration time' claim ('exp') is too far in the future"
EXP_PAST = ("'Expiration time' claim ('exp') must be a numeric value representing the future time at which "
            "the assertion expires")
IAT_BAD = "'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued"
# *reported* wording for a request to an installation-only route without an installation token
NOT_AN_INSTALLATION = ("You must authenticate with an installation access token in order to list repositories "
                       "for an installation.")
_ALPHABET = string.ascii_letters + string.digits
_LEVELS = {"read": 1, "write": 2, "admin": 3}


@dataclass
class RegisteredApp:
    id: int
    slug: str
    public_key: rsa.RSAPublicKey
    bot: User  # "<slug>[bot]": who an installation token's writes are by
    owner: User | None = None  # who made the App (GET /app's ``owner``)
    created_at: float = 0.0


@dataclass
class Installation:
    id: int
    app_id: int
    account: User
    repos: frozenset[str] | None  # lower-cased full names; None = all of the account's repositories
    permissions: dict[str, str]
    created_at: float

    def denies(self, perm: str | None) -> bool:
        """Whether this installation lacks what a route needs (``perm`` in GitHub's header
        syntax: ``;`` between alternatives, ``,`` joining needs); ``metadata: read`` is
        always granted, as on GitHub. GitHub then answers 403 "Resource not accessible by
        integration"."""
        if not perm:
            return False
        granted = {**self.permissions, "metadata": self.permissions.get("metadata") or "read"}
        for alternative in perm.split(";"):
            needs = [p.strip().partition("=") for p in alternative.split(",") if p.strip()]
            if all(_LEVELS.get(granted.get(name.strip(), ""), 0) >= _LEVELS.get(level.strip(), 1)
                   for name, _, level in needs):
                return False
        return True

    def covers(self, full_name: str) -> bool:
        owner = full_name.partition("/")[0].lower()
        if owner != self.account.login.lower():
            return False
        return self.repos is None or full_name.lower() in self.repos


@dataclass(frozen=True)
class Principal:
    """Who a request authenticates as, when it is an App (JWT) or an installation (token)."""

    app: RegisteredApp
    installation: Installation | None  # None: the App itself, by its JWT

    @property
    def bucket(self) -> str:
        """The secondary-limit budget this request spends."""
        return f"installation:{self.installation.id}" if self.installation else f"app:{self.app.id}"


@dataclass
class _Token:
    installation: int
    expires_at: float


@dataclass
class AppRegistry:
    clock: Callable[[], float]
    apps: dict[int, RegisteredApp] = field(default_factory=dict)
    installations: dict[int, Installation] = field(default_factory=dict)
    token_lifetime: float = TOKEN_LIFETIME
    issued: list[str] = field(default_factory=list)
    _tokens: dict[bytes, _Token] = field(default_factory=dict)
    _ids: Iterator[int] = field(default_factory=lambda: itertools.count(61_000_001))

    @property
    def active(self) -> bool:
        return bool(self.apps)

    def register(self, app_id: int, public_key_pem: str | bytes, bot: User, slug: str,
                 owner: User | None = None) -> RegisteredApp:
        pem = public_key_pem.encode() if isinstance(public_key_pem, str) else public_key_pem
        key = serialization.load_pem_public_key(pem)
        if not isinstance(key, rsa.RSAPublicKey):
            raise ValueError("a GitHub App's key is RSA")
        app = RegisteredApp(app_id, slug, key, bot, owner, self.clock())
        self.apps[app_id] = app
        return app

    def install(self, app_id: int, account: User, repos: Iterable[str] | None,
                permissions: dict[str, str] | None = None) -> Installation:
        if app_id not in self.apps:
            raise ValueError(f"no App {app_id} is registered")
        inst = Installation(next(self._ids), app_id, account,
                            frozenset(r.lower() for r in repos) if repos is not None else None,
                            dict(permissions or DEFAULT_PERMISSIONS), self.clock())
        self.installations[inst.id] = inst
        return inst

    # --- authentication ------------------------------------------------------------------

    def identify(self, credential: str) -> Principal | ApiError | None:
        """The App or installation ``credential`` proves, its error, or None when it is
        neither a JWT nor an installation token (a personal token, checked elsewhere)."""
        if credential.startswith("ghs_"):
            found = self._tokens.get(token_digest(credential))
            if found is None or self.clock() >= found.expires_at:
                return ApiError(401, "Bad credentials", doc="https://docs.github.com/rest")
            inst = self.installations[found.installation]
            return Principal(self.apps[inst.app_id], inst)
        if credential.count(".") == 2 and credential.startswith("eyJ"):
            return self.verify_jwt(credential)
        return None

    def verify_jwt(self, credential: str) -> Principal | ApiError:
        def refused(message: str) -> ApiError:
            return ApiError(401, message, doc=JWT_DOC)

        try:
            header = jwt.get_unverified_header(credential)
            claims = jwt.decode(credential, options={"verify_signature": False})
        except jwt.PyJWTError:
            return refused(UNDECODABLE)
        if header.get("alg") != "RS256":
            return refused(UNDECODABLE)
        iss = claims.get("iss")
        app = self.apps.get(int(iss)) if isinstance(iss, (int, str)) and str(iss).isdigit() else None
        if app is None:
            return refused(UNDECODABLE)
        try:  # the signature, with PyJWT; the times below, on the sandbox's clock
            jwt.decode(credential, app.public_key, algorithms=["RS256"],
                       options={"verify_exp": False, "verify_iat": False, "verify_nbf": False})
        except jwt.PyJWTError:
            return refused(UNDECODABLE)
        now = self.clock()
        exp, iat = claims.get("exp"), claims.get("iat")
        if not _number(exp) or exp <= now:
            return refused(EXP_PAST)
        if exp - now > MAX_JWT_AHEAD:
            return refused(EXP_TOO_FAR)
        if not _number(iat) or iat > now + IAT_DRIFT:
            return refused(IAT_BAD)
        return Principal(app, None)

    # --- the two routes' logic -------------------------------------------------------------

    def installation_for(self, app: RegisteredApp, full_name: str) -> Installation | None:
        return next((i for i in self.installations.values() if i.app_id == app.id and i.covers(full_name)), None)

    def revoke(self, owner: str | None) -> int:
        """Expire every live token of ``owner``'s installations (all when None) now."""
        now, live = self.clock(), 0
        for issued in self._tokens.values():
            account = self.installations[issued.installation].account.login.lower()
            if issued.expires_at > now and (owner is None or account == owner.lower()):
                issued.expires_at, live = now, live + 1
        return live

    def issue_token(self, inst: Installation) -> tuple[str, float]:
        token = "ghs_" + "".join(secrets.choice(_ALPHABET) for _ in range(36))
        expires = self.clock() + self.token_lifetime
        self._tokens[token_digest(token)] = _Token(inst.id, expires)
        self.issued.append(token)
        return token, expires


def render_installation(inst: Installation, app: RegisteredApp, api: str, html: str,
                        account: dict[str, Any] | None) -> dict[str, Any]:
    """GitHub's installation object (``GET /repos/{owner}/{repo}/installation``), trimmed to the
    keys a client reads and the ones that say what it may do."""
    return {
        "id": inst.id,
        "client_id": f"Iv1.{inst.app_id:016x}",
        "account": account,
        "repository_selection": "all" if inst.repos is None else "selected",
        "access_tokens_url": f"{api}/app/installations/{inst.id}/access_tokens",
        "repositories_url": f"{api}/installation/repositories",
        "html_url": f"{html}/settings/installations/{inst.id}",
        "app_id": inst.app_id,
        "app_slug": app.slug,
        "target_id": inst.account.id,
        "target_type": inst.account.type if inst.account.type == "Organization" else "User",
        "permissions": dict(inst.permissions),
        "events": [],
        "created_at": iso(inst.created_at),
        "updated_at": iso(inst.created_at),
        "single_file_name": None,
        "has_multiple_single_files": False,
        "single_file_paths": [],
        "suspended_by": None,
        "suspended_at": None,
    }


def render_app(app: RegisteredApp, html: str, owner: dict[str, Any] | None, installations: int) -> dict[str, Any]:
    """``GET /app``: the App its JWT proves, in the key order of GitHub's documented example;
    the keys the OpenAPI ``integration`` schema requires (tests/data/github-fixtures), plus
    ``installations_count``, which GitHub sends only to the App asking about itself."""
    return {
        "id": app.id,
        "slug": app.slug,
        "client_id": f"Iv1.{app.id:016x}",
        "node_id": f"A_kwDO{app.id:08d}",
        "owner": owner,
        "name": app.slug.replace("-", " ").title(),
        "description": "",
        "external_url": f"{html}/{app.slug}",
        "html_url": f"{html}/apps/{app.slug}",
        "created_at": iso(app.created_at),
        "updated_at": iso(app.created_at),
        "permissions": dict(DEFAULT_PERMISSIONS),
        "events": [],
        "installations_count": installations,
    }


def render_token(token: str, expires: float, inst: Installation) -> dict[str, Any]:
    return {
        "token": token,
        "expires_at": iso(expires),
        "permissions": dict(inst.permissions),
        "repository_selection": "all" if inst.repos is None else "selected",
    }


def _number(value: object) -> TypeGuard[float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def token_digest(token: str) -> bytes:
    """What the sandbox keeps of a token: its hash, compared in constant time."""
    return hashlib.sha256(token.encode()).digest()
