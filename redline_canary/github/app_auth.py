"""GitHub App authentication: the App's key signs a JWT, the JWT buys one installation token per owner.

Why an App: GitHub's secondary limits (80 content-creating requests a minute, 500 an hour)
count per token, and a target costs about a dozen of them, so one token carries about 40
targets an hour. An App's installation token counts per installation, so targets spread
over several owners (one installation each) get one budget each, and nobody's personal
token is spent or exposed.

The flow GitHub documents: a JWT (RS256, ``iss`` = the App id, ``iat`` a minute in the
past against clock drift, ``exp`` at most 10 minutes ahead) authenticates as the App;
``GET /repos/{owner}/{repo}/installation`` finds the installation that covers the target;
``POST /app/installations/{id}/access_tokens`` gives a token that lives an hour. Tokens
are cached per owner and refreshed before they expire, under a lock per owner, so twenty
targets of one owner starting at once fetch one token. The key, every JWT and every
installation token are registered as secrets the moment they exist: no message, log or
file can carry them, and they travel only in the ``Authorization`` header to the API origin
(the one seam, ``github_api.py``, sends every request, the App's included).
"""

from __future__ import annotations

import datetime as _dt
import os
import re
import stat
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import httpx

from redline_canary.errors import BadInput, register_secret
from redline_canary.github.client import GitHubClient
from redline_canary.github.clock import Clock
from redline_canary.github.retry import RetryPolicy
from redline_canary.github.transport import TokenSource, token_from_env

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric import rsa

APP_ID_VAR = "REDLINE_CANARY_APP_ID"
APP_KEY_VAR = "REDLINE_CANARY_APP_PRIVATE_KEY"  # the PEM itself (an Actions secret) or a path to it
JWT_BACKDATE = 60  # GitHub: set iat 60 s in the past to allow for clock drift
JWT_LIFETIME = 540  # GitHub refuses an exp more than 10 minutes ahead; 9 leaves room for drift
JWT_REUSE_MARGIN = 60.0  # a cached JWT is reused while it has more than this left
REFRESH_MARGIN = 300.0  # an installation token is replaced 5 minutes before it expires...
REFRESH_FRACTION = 0.2  # ...or a fifth of its life before, when it lives shorter than 25 minutes
DEFAULT_LIFETIME = 3600.0  # GitHub's documented lifetime, used when expires_at does not parse
MAX_KEY_BYTES = 64 * 1024  # a 4096-bit PEM is ~3.3 KB: anything larger is not a key


@dataclass(frozen=True)
class AppCredentials:
    """A GitHub App's id and private key (PEM text), validated; the key never in a repr."""

    app_id: str
    private_key: str = field(repr=False)
    source: str = field(default="--app-private-key")  # where the key came from, for messages


def add_app_options(p: Any) -> None:
    """``--app-id`` and ``--app-private-key`` on every command that talks to GitHub."""
    p.add_argument("--app-id", help=f"authenticate as this GitHub App (default: env {APP_ID_VAR}); "
                   "an installation token per target owner replaces the token")
    p.add_argument("--app-private-key", metavar="FILE",
                   help=f"the App's private key: a PEM file, or the PEM text (default: env {APP_KEY_VAR})")


def app_credentials(app_id: str | None, key_path: str | None,
                    env: Mapping[str, str] | None = None) -> AppCredentials | None:
    """The App credentials from the flags, else the environment; None when neither names an App.

    The key (flag or variable) is PEM text or a path to a PEM file (:func:`_key_source`).
    Bad input is a one-line :class:`BadInput` naming the flag (or variable): an id that is
    not a number, a key that cannot be read or is not an RSA private key in PEM, or one of
    the pair without the other. No message ever quotes key material.
    """
    env = os.environ if env is None else env
    id_name, key_name = "--app-id", "--app-private-key"
    if app_id is None and env.get(APP_ID_VAR, "").strip():
        app_id, id_name = env[APP_ID_VAR].strip(), APP_ID_VAR
    key_text: str | None = None
    if key_path is not None:
        key_text, key_path = _key_source(key_path, key_name)
    elif env.get(APP_KEY_VAR, "").strip():
        key_name = APP_KEY_VAR
        key_text, key_path = _key_source(env[APP_KEY_VAR], key_name, strip=True)
    if app_id is None and key_path is None and key_text is None:
        return None
    if app_id is None:
        raise BadInput(f"{key_name}: given without the App's id (--app-id or {APP_ID_VAR})")
    if key_path is None and key_text is None:
        raise BadInput(f"{id_name}: given without the App's private key (--app-private-key FILE or {APP_KEY_VAR})")
    app_id = app_id.strip()
    if not (app_id.isascii() and app_id.isdigit() and 0 < len(app_id) <= 12 and int(app_id) > 0):
        raise BadInput(f"{id_name}: expected the App's numeric id (the App's settings page, 'App ID'), "
                       f"got {app_id[:40]!r}")
    source = key_name
    if key_text is None:
        assert key_path is not None
        source = f"{key_name} {key_path}"
        key_text = _read_key(key_path, source)
    _check_key(key_text, source)
    return AppCredentials(app_id=app_id, private_key=key_text, source=source)


# What a path to a key file can look like; anything else given as the key is key material,
# never quoted: a PEM whose header is hidden (quotes, a byte-order mark), a PEM without its
# header line, a body pasted alone.
MAX_PATH_SHOWN = 512
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/=]{100,}")
_EDGES = " \t\r\n\v\f\ufeff\"'"
NOT_A_KEY = "the App private key is not a readable PEM file or PEM text"


def _looks_like_key(value: str) -> bool:
    return ("PRIVATE KEY" in value.upper() or "-----" in value or "\n" in value or "\r" in value
            or len(value) > MAX_PATH_SHOWN or bool(_BASE64_RUN.search(value)))


def _key_source(value: str, name: str, *, strip: bool = False) -> tuple[str | None, str | None]:
    """(PEM text, None) or (None, path) for the value of ``--app-private-key`` or the variable.

    Key material is registered as a secret before anything else happens to it: the value as
    given, trimmed, and each of its lines. PEM text is recognised once quotes, a byte-order
    mark and blanks are trimmed from both ends (and ``\\n`` written for line breaks, as a
    one-line secret store keeps it, is read as line breaks). A value that looks like key
    material but is no PEM is refused naming only ``name``: it is never quoted, nor tried
    as a path (which would quote it in the error)."""
    if _looks_like_key(value):
        for secret in (value, value.strip(), value.strip(_EDGES)):
            register_secret(secret)
        for line in re.split(r"[\r\n]+|\\n", value):
            if len(line.strip(_EDGES)) >= 16:
                register_secret(line.strip(_EDGES))
    text = value.strip(_EDGES)
    if text.startswith("-----BEGIN"):
        if "\n" not in text and "\\n" in text:
            text = text.replace("\\n", "\n")
        register_secret(text)
        return text, None
    if _looks_like_key(value):
        raise BadInput(f"{name}: {NOT_A_KEY}")
    return None, (value.strip() if strip else value)


def _read_key(path: str, source: str) -> str:
    """The key file's text. Opened without blocking and refused unless it is a regular file:
    a FIFO would wait for a writer forever, a device could answer endlessly."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise BadInput(f"{source}: cannot read the key: {exc.strerror or exc.__class__.__name__}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise BadInput(f"{source}: not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as fh:
            raw = fh.read(MAX_KEY_BYTES + 1)
    except OSError as exc:
        raise BadInput(f"{source}: cannot read the key: {exc.strerror or exc.__class__.__name__}") from None
    finally:
        os.close(fd)
    if len(raw) > MAX_KEY_BYTES:
        raise BadInput(f"{source}: larger than {MAX_KEY_BYTES // 1024} KB: not a private key")
    try:
        text = raw.decode("ascii") if not raw.startswith(b"\xef\xbb\xbf") else raw[3:].decode("ascii")
    except UnicodeDecodeError:
        raise BadInput(f"{source}: not a PEM private key (expected ASCII text)") from None
    register_secret(text.strip())
    return text


def _check_key(text: str, source: str) -> rsa.RSAPrivateKey:
    """The key as cryptography loads it; every line of it registered as a secret first.
    cryptography and PyJWT are imported here, not at start-up: only an App run needs them."""
    from cryptography.exceptions import UnsupportedAlgorithm
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    for line in text.splitlines():
        if len(line.strip()) >= 16 and not line.startswith("-----"):
            register_secret(line.strip())
    try:
        key = serialization.load_pem_private_key(text.encode("ascii", "replace"), password=None)
    except (ValueError, TypeError, UnsupportedAlgorithm):
        # cryptography's message is not shown: it may quote what it could not parse
        raise BadInput(f"{source}: not a PEM private key without a passphrase (the App's settings page, "
                       "'Private keys', generates one)") from None
    if not isinstance(key, rsa.RSAPrivateKey):
        raise BadInput(f"{source}: not an RSA key: GitHub App keys are RSA (RS256)")
    return key


@dataclass
class _Issued:
    token: str
    expires_at: float  # epoch seconds
    refresh_at: float


class InstallationTokens:
    """One installation token per owner, fetched on first use and refreshed before it expires.

    Thread-safe: a lock per owner, so concurrent targets of one owner share one fetch and
    different owners never wait for each other. ``wall`` is the epoch clock the JWT claims and
    the token expiry are read on (injected in tests; GitHub's clock is a wall clock).
    """

    def __init__(self, creds: AppCredentials, api_url: str | None = None, *,
                 wall: Callable[[], float] = time.time, clock: Clock | None = None,
                 policy: RetryPolicy | None = None, transport: httpx.BaseTransport | None = None) -> None:
        self.creds = creds
        self._key = _check_key(creds.private_key, creds.source)
        self._wall = wall
        self._lock = threading.Lock()
        self._owner_locks: dict[str, threading.Lock] = {}
        self._tokens: dict[str, _Issued] = {}
        self._installations: dict[str, int] = {}
        self._jwt: tuple[str, float] | None = None
        self.fetched = 0  # installation tokens fetched: observed by tests and the benchmark
        self.app = GitHubClient(self._app_jwt, api_url, clock=clock, policy=policy, transport=transport)

    def close(self) -> None:
        self.app.close()

    def for_repo(self, repo: str) -> TokenSource:
        """What a :class:`GitHubClient` for ``repo`` asks before every request; its
        ``refresh`` is what the client calls once when GitHub answers 401 to a token."""
        return _RepoToken(self, repo)

    def owner_key(self, repo: str) -> str:
        """Owners are case-insensitive on GitHub; one installation (and one budget) per owner."""
        return repo.partition("/")[0].lower()

    def know_installation(self, repo: str, installation: int) -> None:
        """The installation covering ``repo``, already read (``doctor``): not asked again."""
        with self._lock:
            self._installations.setdefault(self.owner_key(repo), installation)

    def token(self, repo: str) -> str:
        owner = self.owner_key(repo)
        with self._lock:
            lock = self._owner_locks.setdefault(owner, threading.Lock())
        with lock:
            issued = self._tokens.get(owner)
            if issued is None or self._wall() >= issued.refresh_at:
                issued = self._fetch(owner, repo)
                self._tokens[owner] = issued
            return issued.token

    def refresh(self, repo: str, stale: str) -> str:
        """A new token after GitHub refused ``stale`` (401): revoked, or expired before the
        time it announced (a clock that drifted, a token revoked by an admin). Under the
        owner's lock: when a concurrent target has already replaced ``stale``, its token is
        used, so one refusal costs one fetch whatever the number of targets."""
        owner = self.owner_key(repo)
        with self._lock:
            lock = self._owner_locks.setdefault(owner, threading.Lock())
        with lock:
            issued = self._tokens.get(owner)
            if issued is None or issued.token == stale:
                issued = self._fetch(owner, repo)
                self._tokens[owner] = issued
            return issued.token

    def _fetch(self, owner: str, repo: str) -> _Issued:
        installation = self._installations.get(owner)
        if installation is None:
            installation = self.app.app_installation(repo)
            self._installations[owner] = installation
        token, expires_at = self.app.installation_token(installation)
        now = self._wall()
        expiry = _parse_expiry(expires_at)
        lifetime = (expiry - now) if expiry is not None else DEFAULT_LIFETIME
        lifetime = max(0.0, min(lifetime, 24 * 3600.0))  # hostile input: bound it either way
        margin = min(REFRESH_MARGIN, lifetime * REFRESH_FRACTION)
        with self._lock:
            self.fetched += 1
        return _Issued(token, now + lifetime, now + lifetime - margin)

    def _app_jwt(self) -> str:
        """The App's JWT, reused while it has a minute left (the App client's token source)."""
        with self._lock:
            now = self._wall()
            if self._jwt is not None and self._jwt[1] - now > JWT_REUSE_MARGIN:
                return self._jwt[0]
            claims = {"iat": int(now) - JWT_BACKDATE, "exp": int(now) + JWT_LIFETIME, "iss": self.creds.app_id}
            import jwt  # only an App run needs it (see _check_key)

            signed = jwt.encode(claims, self._key, algorithm="RS256")
            register_secret(signed)
            self._jwt = (signed, float(int(now) + JWT_LIFETIME))
            return signed


class _RepoToken:
    """The token source of one repository's client: called before every request; refreshed
    once on a 401 (:meth:`~redline_canary.github.transport.ApiSession._send`)."""

    def __init__(self, tokens: InstallationTokens, repo: str) -> None:
        self._tokens, self._repo = tokens, repo

    def __call__(self) -> str:
        return self._tokens.token(self._repo)

    def refresh(self, stale: str) -> str:
        return self._tokens.refresh(self._repo, stale)


def _parse_expiry(value: str) -> float | None:
    try:
        parsed = _dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=_dt.timezone.utc)
    return parsed.timestamp()


@dataclass
class Auth:
    """What a command authenticates with: a GitHub App (a token per owner) or one token."""

    token: str | None = field(default=None, repr=False)
    app: InstallationTokens | None = None

    def for_repo(self, repo: str) -> str | TokenSource:
        if self.app is not None:
            return self.app.for_repo(repo)
        assert self.token is not None
        return self.token

    def budget_key(self, repo: str) -> str:
        """Whose secondary-limit budget a request for ``repo`` spends: the installation's, or the token's."""
        return self.app.owner_key(repo) if self.app is not None else ""

    def describe(self) -> str:
        return f"GitHub App {self.app.creds.app_id} (an installation token per owner)" if self.app else "token"

    def close(self) -> None:
        if self.app is not None:
            self.app.close()


def resolve_auth(creds: AppCredentials | None, env: Mapping[str, str] | None, api_url: str | None, *,
                 transport: httpx.BaseTransport | None = None) -> Auth:
    """The App when one is configured (it wins over ``GITHUB_TOKEN``, which Actions always
    sets), else the token from the environment, read only now (``run --dry-run`` needs none)."""
    credentials = Credentials(app=creds) if creds is not None else Credentials(token=token_from_env(env))
    return credentials.auth(api_url, transport=transport)


@dataclass(frozen=True)
class Credentials:
    """A command's credentials, read once from its flags and the environment (at the edge,
    in its options' ``from_args``): a GitHub App's, key included, or one token. Neither
    ever appears in a repr."""

    token: str | None = field(default=None, repr=False)
    app: AppCredentials | None = field(default=None, repr=False)

    @classmethod
    def from_args(cls, args: Any, env: Mapping[str, str]) -> Credentials:
        app = app_credentials(getattr(args, "app_id", None), getattr(args, "app_private_key", None), env)
        return cls(app=app) if app is not None else cls(token=token_from_env(env))

    def auth(self, api_url: str | None, *, transport: httpx.BaseTransport | None = None) -> Auth:
        if self.app is not None:
            return Auth(app=InstallationTokens(self.app, api_url, transport=transport))
        return Auth(token=self.token)
