"""``redline-canary doctor`` as a GitHub App (issue 25): the real CLI in a subprocess, the
sandbox on a socket holding the App, its installations and their permissions.

With App credentials doctor checks that the JWT works (``GET /app``), finds the
installation covering the canary repository, names each permission the run needs that the
installation lacks, and says whether the installation reaches the repository (all, or
selected with the repository among them), each failure with its fix. It reads only, apart
from the one installation-token ``POST`` it needs to read the repository as the run will;
every test checks that promise, and that no key line, JWT or token reaches the output.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from redline_canary.corpus.secrets import PROVIDER_PATTERNS
from redline_canary.github.client import CANARY_TOPIC
from redline_canary.sandbox import Sandbox
from tests.helpers import appkeys
from tests.helpers.clirun import cli
from tests.helpers.sandboxing import TOKEN

APP_ID = 4242
REPO = "acme/canary-mini"
TOKEN_POST = ("POST", "/app/installations/{installation_id}/access_tokens")
NARROW = {"contents": "read", "pull_requests": "write", "metadata": "read"}


@pytest.fixture(scope="module")
def key() -> rsa.RSAPrivateKey:
    return appkeys.new_key()


@pytest.fixture()
def key_file(tmp_path: Path, key: rsa.RSAPrivateKey) -> Path:
    return appkeys.key_file(tmp_path, key)


@contextlib.contextmanager
def _app_world(key: rsa.RSAPrivateKey, *, repos: list[str] | None = None,
               permissions: Mapping[str, str] | None = None, owner: str = "acme") -> Iterator[Sandbox]:
    """The sandbox with the App registered and installed on ``owner``; afterwards, doctor
    must have written nothing but (at most) one installation token."""
    with Sandbox(token=TOKEN) as sb:
        public = key.public_key().public_bytes(serialization.Encoding.PEM,
                                               serialization.PublicFormat.SubjectPublicKeyInfo)
        sb.register_app(APP_ID, public.decode())
        for name in (REPO, "acme/other", "initech/canary"):
            sb.create_repo(name, topics=[CANARY_TOPIC])
        sb.install_app(APP_ID, owner, repos=repos, permissions=permissions)
        yield sb
        writes = [(r.method, r.route) for r in sb.requests if r.method != "GET"]
        assert set(writes) <= {TOKEN_POST} and len(writes) <= 1, f"doctor wrote: {writes}"


def _doctor(sb: Sandbox, key: rsa.RSAPrivateKey, key_file: Path, *args: str) -> tuple[int, str]:
    res = cli("doctor", "--api-url", sb.url, "--app-id", str(APP_ID), "--app-private-key", str(key_file), *args,
              env={"REDLINE_CANARY_TOKEN": "", "GITHUB_TOKEN": ""})
    out = res.stdout + res.stderr
    assert [t for t in sb.issued_tokens() if t in out] == []
    assert not [line for line in appkeys.pem(key).splitlines()[1:-1] if line in out]
    assert not PROVIDER_PATTERNS["JSON web token"].search(out)
    return res.returncode, out


def _lines(out: str) -> dict[str, str]:
    """check name -> "STATUS detail" for every line of the checklist."""
    names = ("installation token", "app permissions", "repository access", "installation", "app", "token",
             "expiry", "repository", "permissions", "topic", "default branch", "label", "check runs", "reviewer")
    found: dict[str, str] = {}
    for line in out.splitlines():
        parts = line.split(maxsplit=1)
        if len(parts) < 2 or parts[0] not in ("OK", "INFO", "WARN", "FAIL", "SKIP"):
            continue
        name = next((n for n in names if parts[1].startswith(n + " ")), None)
        if name is not None:
            found[name] = f"{parts[0]} {parts[1][len(name):].strip()}"
    return found


def test_an_app_installed_with_what_a_run_needs_passes_every_check(key: rsa.RSAPrivateKey, key_file: Path) -> None:
    with _app_world(key) as sb:
        code, out = _doctor(sb, key, key_file, "--repo", REPO, "--reviewer", "bugbot", "--stack", "mini",
                            "--corpus", "tests/data/corpus")
        counts = sb.request_counts()
        assert counts["GET /app"] == 1 and counts["POST /app/installations/{installation_id}/access_tokens"] == 1
        assert counts["GET /repos/{owner}/{repo}/installation"] == 1  # read once, reused for the token
    assert code == 0, out
    lines = _lines(out)
    assert lines["app"].startswith("OK ") and f"(id {APP_ID}, slug redline-canary-app): the JWT works" in lines["app"]
    assert lines["installation"].startswith("OK installed on acme (installation ")
    assert lines["app permissions"] == ("OK contents: write, pull_requests: write, issues: write, metadata: read, "
                                        "checks: read: what a run needs")  # bugbot reads check runs
    assert lines["repository access"] == f"OK all repositories of acme, {REPO} included"
    assert lines["installation token"].startswith("OK bought (POST /app/installations/{id}/access_tokens")
    # the usual checks, read with the installation token as the run will
    assert lines["token"] == "OK valid: the installation token bought above"
    assert lines["repository"] == f"OK {REPO} (public)" and lines["topic"].startswith("OK ")
    assert lines["check runs"].startswith("OK readable")
    assert out.rstrip().endswith("no blocking problem")


def test_an_owner_without_the_installation_gets_the_install_link_and_no_token(
        key: rsa.RSAPrivateKey, key_file: Path) -> None:
    with _app_world(key) as sb:
        code, out = _doctor(sb, key, key_file, "--repo", "initech/canary")
        assert sb.issued_tokens() == []
        assert sb.request_counts()["GET /app/installations"] == 1
    assert code == 2, out
    lines = _lines(out)
    assert lines["installation"] == ("FAIL the App is not installed on initech (GitHub answered 404 Not Found)  fix: "
                                     "install it on initech with access to initech/canary: "
                                     "https://github.com/apps/redline-canary-app/installations/new")
    assert lines["repository"] == "SKIP not checked: no installation token"
    assert out.rstrip().endswith("1 blocking problem(s)")


def test_narrow_permissions_and_a_selection_without_the_repository_are_each_named_with_the_fix(
        key: rsa.RSAPrivateKey, key_file: Path) -> None:
    with _app_world(key, repos=["acme/other"], permissions=NARROW) as sb:
        code, out = _doctor(sb, key, key_file, "--repo", REPO)
        assert sb.issued_tokens() == []
    assert code == 2, out
    lines = _lines(out)
    assert lines["installation"].startswith("OK installed on acme")
    assert lines["app permissions"].startswith(
        "FAIL the installation lacks contents: write to push the seeded branches and delete them (granted: read); "
        "issues: write to create and add the label (granted: none)  fix: in the App's settings (Permissions & events")
    assert "pull_requests" not in lines["app permissions"].split("fix:")[0]  # granted: not named as lacking
    assert lines["repository access"].startswith(f"FAIL selected repositories: {REPO} is not among them  fix: add "
                                                 f"{REPO} under Repository access on the installation")
    assert "/settings/installations/" in lines["repository access"]
    assert out.rstrip().endswith("2 blocking problem(s)")


def test_a_selection_that_includes_the_repository_is_confirmed_with_the_installation_token(
        key: rsa.RSAPrivateKey, key_file: Path) -> None:
    with _app_world(key, repos=[REPO, "acme/other"]) as sb:
        code, out = _doctor(sb, key, key_file, "--repo", REPO, "--json")
        assert sb.request_counts()["GET /installation/repositories"] == 1
    assert code == 0, out
    report = json.loads(out)
    checks = {c["name"]: c for c in report["checks"]}
    assert checks["repository access"]["status"] == "ok"
    assert checks["repository access"]["detail"] == f"selected repositories (2), {REPO} among them"
    assert [c["name"] for c in report["checks"]][:5] == [
        "app", "installation", "app permissions", "repository access", "installation token"]


def test_a_key_github_does_not_know_fails_the_app_check_with_the_fix(
        key: rsa.RSAPrivateKey, tmp_path: Path) -> None:
    stranger = tmp_path / "other.pem"
    stranger.write_text(appkeys.pem(appkeys.new_key()))
    with _app_world(key) as sb:
        code, out = _doctor(sb, key, stranger, "--repo", REPO)
        assert [(r.method, r.route) for r in sb.requests] == [("GET", "/app")]
    assert code == 2, out
    lines = _lines(out)
    assert lines["app"].startswith("FAIL the App's JWT was not accepted (GitHub answered 401 A JSON web token could "
                                   "not be decoded)  fix: check the App id")
    assert "private keys" in lines["app"] and "clock" in lines["app"]
    assert lines["installation"] == "SKIP not checked: the App cannot authenticate"
