"""GitHub App authentication end to end against the sandbox (issue 16 item 3).

The sandbox is the other side of the flow: Apps with a public key, installations per owner,
JWTs checked for shape and time, installation tokens that expire. A run as an App gets one
installation token per owner, refreshes it before it expires, spends one secondary-limit
budget per installation, and leaves neither the key, nor a JWT, nor a token in any output.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from redline_canary.corpus.secrets import PROVIDER_PATTERNS
from redline_canary.errors import BadInput, mask
from redline_canary.github.app_auth import APP_ID_VAR, APP_KEY_VAR, AppCredentials, InstallationTokens, app_credentials
from redline_canary.github.client import CANARY_TOPIC, GitHubClient
from redline_canary.sandbox import REDLINE_BOT, Batch, Sandbox, ScriptedReviewer
from tests.helpers import appkeys
from tests.helpers.clirun import ROOT, cli
from tests.helpers.sandboxing import TOKEN, assert_no_canary_left, run_in_process

APP_ID = 4242
CORPUS = ROOT / "tests" / "data" / "corpus"
OWNERS = ("acme", "globex")
APP_BOT = "redline-canary-app[bot]"
FAKE_PEM = "-----BEGIN PRIVATE KEY-----\nABCDEFGHIJKLMNOPQRSTUV\n-----END PRIVATE KEY-----"
FAST = ["--poll-interval", "0.05", "--stable-polls", "2", "--timeout-minutes", "0.5", "--confirm", "0"]


def _public(key: rsa.RSAPrivateKey) -> str:
    return key.public_key().public_bytes(serialization.Encoding.PEM,
                                         serialization.PublicFormat.SubjectPublicKeyInfo).decode()


@pytest.fixture(scope="module")
def key() -> rsa.RSAPrivateKey:
    return appkeys.new_key()


@pytest.fixture(scope="module")
def other_key() -> rsa.RSAPrivateKey:
    return appkeys.new_key()


@pytest.fixture()
def key_file(tmp_path: Path, key: rsa.RSAPrivateKey) -> Path:
    return appkeys.key_file(tmp_path, key)


class Wall:
    """An epoch clock the test moves: the sandbox and the client read the same one."""

    def __init__(self) -> None:
        self.t = 1_780_000_000.0

    def __call__(self) -> float:
        return self.t


def _app_sandbox(key: rsa.RSAPrivateKey, *, clock: Wall | None = None, token: str | None = TOKEN,
                 owners: tuple[str, ...] = OWNERS) -> Sandbox:
    sb = Sandbox(token=token, listen=False, **({"clock": clock} if clock else {}))
    sb.register_app(APP_ID, _public(key))
    for owner in owners:
        sb.create_repo(f"{owner}/canary-mini", topics=[CANARY_TOPIC])
        sb.install_app(APP_ID, owner)
    return sb.start()


def _jwt(key: rsa.RSAPrivateKey, now: float, **claims: Any) -> str:
    payload = {"iat": int(now) - 60, "exp": int(now) + 540, "iss": str(APP_ID), **claims}
    return jwt.encode({k: v for k, v in payload.items() if v is not None}, key, algorithm="RS256")


def _http(sb: Sandbox, credential: str) -> httpx.Client:
    return httpx.Client(base_url=sb.url, transport=sb.transport(),
                        headers={"Authorization": f"Bearer {credential}"})


def _installation(sb: Sandbox, owner: str) -> int:
    return next(i.id for i in sb.app.apps.installations.values() if i.account.login == owner)


def _secrets_in(text: str, sb: Sandbox, pem: str) -> list[str]:
    """Every secret of the App flow found in ``text``: a token, a key line, a JWT."""
    found = [t[:8] for t in sb.issued_tokens() if t in text]
    found += ["key line" for line in pem.splitlines()[1:-1] if line in text]
    if PROVIDER_PATTERNS["JSON web token"].search(text) or PROVIDER_PATTERNS["private key block"].search(text):
        found.append("jwt or key block")
    return found


# --- the product, end to end ------------------------------------------------------------


def test_run_as_an_app_takes_one_installation_token_per_owner_and_leaks_no_secret(
        key: rsa.RSAPrivateKey, key_file: Path, tmp_path: Path) -> None:
    with _app_sandbox(key) as sb:
        for owner in OWNERS:
            sb.attach_reviewer(f"{owner}/canary-mini", ScriptedReviewer(
                [Batch(after=0.05, inline=[{"path": "app.py", "line": 10, "body": "[BLOCKER] SQL injection"}])],
                identity=REDLINE_BOT))
        targets = json.dumps([{"repo": f"{o}/canary-mini", "stack": "mini"} for o in OWNERS])
        hist, captures = tmp_path / "history.jsonl", tmp_path / "captures"
        # A personal token the sandbox refuses: the run can only succeed as the App.
        code, out, err = run_in_process(
            sb, "--targets", targets, "--corpus", str(CORPUS), "--history", str(hist), "--run-id", "app1",
            "--save-captures", str(captures), "--app-id", str(APP_ID), "--app-private-key", str(key_file), *FAST,
            env={"GITHUB_TOKEN": "a-personal-token-the-sandbox-refuses", "REDLINE_CANARY_TOKEN": ""})
        records = [json.loads(line) for line in hist.read_text().splitlines()]
        assert code == 1, out + err  # the mini corpus has three BLOCKERs; the script catches one
        assert sorted((r["repo"], r["kind"], r["outcome"]) for r in records) == sorted(
            (f"{o}/canary-mini", k, "scored") for o in OWNERS for k in ("seeded", "clean"))
        counts = sb.request_counts()
        assert counts["GET /repos/{owner}/{repo}/installation"] == 2
        assert counts["POST /app/installations/{installation_id}/access_tokens"] == 2  # one per owner
        assert len(sb.issued_tokens()) == 2
        for owner in OWNERS:
            assert {p.user for p in sb.pulls(f"{owner}/canary-mini")} == {APP_BOT}  # opened as the App
            assert_no_canary_left(sb, f"{owner}/canary-mini")
        outputs = out + err + hist.read_text() + "".join(p.read_text() for p in captures.glob("*"))
        assert _secrets_in(outputs, sb, appkeys.pem(key)) == []


def test_dry_run_names_the_app_and_each_owner_budget(key_file: Path) -> None:
    targets = json.dumps([{"repo": "acme/canary-mini", "stack": "mini"}, {"repo": "Globex/c2", "stack": "mini"}])
    result = cli("run", "--targets", targets, "--corpus", str(CORPUS), "--dry-run", env={
        APP_ID_VAR: str(APP_ID), APP_KEY_VAR: str(key_file)})
    assert result.returncode == 0, result.stderr
    assert f"GitHub App {APP_ID}" in result.stdout and "2 owner(s): acme, globex" in result.stdout


def test_a_token_revoked_mid_run_is_refreshed_once_and_the_run_finishes(
        key: rsa.RSAPrivateKey, key_file: Path, tmp_path: Path) -> None:
    """GitHub answers 401 to an installation token revoked (or expired early) while the run
    polls: the client buys one new token, repeats the request once, and the run goes on."""
    repo = "acme/canary-mini"
    with _app_sandbox(key, owners=("acme",)) as sb:
        sb.attach_reviewer(repo, ScriptedReviewer(
            [Batch(after=0.4, inline=[{"path": "app.py", "line": 10, "body": "[BLOCKER] SQL injection"}])],
            identity=REDLINE_BOT))
        revoked: list[int] = []

        def revoke_once_a_pr_is_open() -> None:
            for _ in range(2000):
                if sb.pulls(repo):
                    revoked.append(sb.revoke_installation_tokens("acme"))
                    return
                time.sleep(0.005)

        watcher = threading.Thread(target=revoke_once_a_pr_is_open)
        watcher.start()
        code, out, err = run_in_process(
            sb, "--repo", repo, "--stack", "mini", "--corpus", str(CORPUS), "--history", str(tmp_path / "h.jsonl"),
            "--run-id", "revoked1", "--app-id", str(APP_ID), "--app-private-key", str(key_file), *FAST,
            env={"GITHUB_TOKEN": "", "REDLINE_CANARY_TOKEN": ""})
        watcher.join()
        assert revoked == [1]
        assert code == 1, out + err  # scored as usual: the gate fails on the missed BLOCKERs
        assert [r.status for r in sb.requests].count(401) == 1  # one refusal, then the fresh token
        assert sb.request_counts()["POST /app/installations/{installation_id}/access_tokens"] == 2
        assert len(sb.issued_tokens()) == 2
        assert_no_canary_left(sb, repo)
    records = [json.loads(line) for line in (tmp_path / "h.jsonl").read_text().splitlines()]
    assert sorted(r["outcome"] for r in records) == ["scored", "scored"]


def test_a_token_refused_after_its_refresh_is_an_auth_error_not_a_loop(
        key: rsa.RSAPrivateKey, key_file: Path) -> None:
    repo = "acme/canary-mini"
    with _app_sandbox(key, owners=("acme",)) as sb:
        sb.inject_fault("GET", "/repos/{owner}/{repo}", status=401, times=None,
                        body={"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest"})
        code, out, err = run_in_process(
            sb, "--repo", repo, "--stack", "mini", "--corpus", str(CORPUS), "--history", "", "--run-id", "revoked2",
            "--app-id", str(APP_ID), "--app-private-key", str(key_file), *FAST,
            env={"GITHUB_TOKEN": "", "REDLINE_CANARY_TOKEN": ""})
        counts = sb.request_counts()
        assert counts["GET /repos/{owner}/{repo}"] == 2  # the request and its one retry
        assert counts["POST /app/installations/{installation_id}/access_tokens"] == 2  # the token and one refresh
        assert sb.pulls(repo) == []
        assert_no_canary_left(sb, repo)
    assert code == 2, out + err
    assert "GitHub answered 401 Bad credentials" in err


def test_targets_refused_together_share_one_refresh(key: rsa.RSAPrivateKey) -> None:
    """Eight targets of one owner see the same revoked token at once: one new token, not eight."""
    with _app_sandbox(key, owners=("acme",)) as sb:
        tokens = InstallationTokens(AppCredentials(str(APP_ID), appkeys.pem(key)), sb.url, transport=sb.transport())
        stale = tokens.token("acme/canary-mini")
        sb.revoke_installation_tokens("acme")
        start = threading.Barrier(8)
        got: list[str] = []

        def refused() -> None:
            start.wait()
            got.append(tokens.refresh("acme/canary-mini", stale))

        threads = [threading.Thread(target=refused) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(got) == 8 and len(set(got)) == 1 and stale not in got
        assert tokens.fetched == 2 and len(sb.issued_tokens()) == 2
        with _http(sb, got[0]) as fresh, _http(sb, stale) as old:
            assert fresh.get("/repos/acme/canary-mini").status_code == 200
            assert old.get("/repos/acme/canary-mini").status_code == 401


def test_the_installation_token_is_refreshed_before_it_expires(key: rsa.RSAPrivateKey) -> None:
    wall = Wall()
    with _app_sandbox(key, clock=wall) as sb:
        tokens = InstallationTokens(AppCredentials(str(APP_ID), appkeys.pem(key)), sb.url, wall=wall,
                                    transport=sb.transport())
        client = GitHubClient(tokens.for_repo("acme/canary-mini"), sb.url, transport=sb.transport())
        client.repository("acme/canary-mini")
        first = sb.issued_tokens()[0]
        wall.t += 3000  # 50 minutes: the token has 10 left, more than the 5-minute margin
        client.repository("acme/canary-mini")
        assert sb.issued_tokens() == [first]
        wall.t += 400  # 56m40s: inside the margin, so the next request brings a new token
        client.repository("acme/canary-mini")
        assert len(sb.issued_tokens()) == 2 and tokens.fetched == 2
        wall.t += 300  # past the first token's hour: GitHub refuses it, the client never sends it
        with _http(sb, first) as old:
            assert old.get("/repos/acme/canary-mini").status_code == 401
        client.repository("acme/canary-mini")
        assert len(sb.issued_tokens()) == 2
        counts = sb.request_counts()
        assert counts["GET /repos/{owner}/{repo}/installation"] == 1  # the installation is looked up once
        assert counts["GET /repos/{owner}/{repo}"] == 5


def test_a_short_lived_token_is_refreshed_at_a_fifth_of_its_life(key: rsa.RSAPrivateKey) -> None:
    wall = Wall()
    with _app_sandbox(key, clock=wall) as sb:
        sb.installation_token_lifetime(100)  # a scaled benchmark's hour
        tokens = InstallationTokens(AppCredentials(str(APP_ID), appkeys.pem(key)), sb.url, wall=wall,
                                    transport=sb.transport())
        tokens.token("acme/canary-mini")
        wall.t += 75
        tokens.token("acme/canary-mini")
        assert tokens.fetched == 1
        wall.t += 6  # 81 s: less than 20 s left
        tokens.token("acme/canary-mini")
        assert tokens.fetched == 2


def test_concurrent_targets_of_one_owner_share_one_token_fetch(key: rsa.RSAPrivateKey) -> None:
    with _app_sandbox(key) as sb:
        tokens = InstallationTokens(AppCredentials(str(APP_ID), appkeys.pem(key)), sb.url, transport=sb.transport())
        got: list[str] = []
        start = threading.Barrier(16)

        def fetch(i: int) -> None:
            start.wait()
            got.append(tokens.token(f"{OWNERS[i % 2]}/canary-mini"))

        threads = [threading.Thread(target=fetch, args=(i,)) for i in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(got) == 16 and len(set(got)) == 2
        assert sb.request_counts()["POST /app/installations/{installation_id}/access_tokens"] == 2


def test_a_target_whose_owner_has_no_installation_is_a_one_line_bad_input(
        key: rsa.RSAPrivateKey, key_file: Path) -> None:
    with _app_sandbox(key, owners=("acme",)) as sb:
        sb.create_repo("initech/canary-mini", topics=[CANARY_TOPIC])
        code, _out, err = run_in_process(
            sb, "--repo", "initech/canary-mini", "--stack", "mini", "--corpus", str(CORPUS), "--run-id", "app2",
            "--app-id", str(APP_ID), "--app-private-key", str(key_file), *FAST)
        assert code == 2
        assert "initech/canary-mini: the GitHub App is not installed on initech" in err
        assert sb.pulls("initech/canary-mini") == []
        assert_no_canary_left(sb, "initech/canary-mini")


# --- the sandbox's side: GitHub's checks and errors ---------------------------------------


@pytest.mark.parametrize(("case", "message"), [
    ("expired", "'Expiration time' claim ('exp') must be a numeric value"),
    ("too far ahead", "'Expiration time' claim ('exp') is too far in the future"),
    ("issued in the future", "'Issued at' claim ('iat') must be an Integer"),
    ("no iss", "A JSON web token could not be decoded"),
    ("unknown iss", "A JSON web token could not be decoded"),
    ("another key", "A JSON web token could not be decoded"),
    ("HS256", "A JSON web token could not be decoded"),
    ("garbage", "A JSON web token could not be decoded"),
    ("personal token", "A JSON web token could not be decoded"),
])
def test_the_sandbox_refuses_a_bad_jwt_with_401(key: rsa.RSAPrivateKey, other_key: rsa.RSAPrivateKey,
                                                case: str, message: str) -> None:
    wall = Wall()
    now = wall.t
    credential = {
        "expired": _jwt(key, now, iat=int(now) - 700, exp=int(now) - 10),
        "too far ahead": _jwt(key, now, exp=int(now) + 660),
        "issued in the future": _jwt(key, now, iat=int(now) + 300),
        "no iss": _jwt(key, now, iss=None),
        "unknown iss": _jwt(key, now, iss="99"),
        "another key": _jwt(other_key, now),
        "HS256": jwt.encode({"iat": int(now) - 60, "exp": int(now) + 540, "iss": str(APP_ID)},
                            "a-shared-secret-of-32-bytes-long!", algorithm="HS256"),
        "garbage": "eyJnot.a.jwt",
        "personal token": TOKEN,
    }[case]
    with _app_sandbox(key, clock=wall) as sb, _http(sb, credential) as http:
        r = http.get("/repos/acme/canary-mini/installation")
        assert r.status_code == 401 and r.json()["message"].startswith(message)
        r = http.post(f"/app/installations/{_installation(sb, 'acme')}/access_tokens")
        assert r.status_code == 401
    assert sb.issued_tokens() == []


def test_installation_lookups_and_tokens_answer_as_github(key: rsa.RSAPrivateKey) -> None:
    wall = Wall()
    with _app_sandbox(key, clock=wall) as sb:
        sb.create_repo("initech/canary-mini", topics=[CANARY_TOPIC])
        with _http(sb, _jwt(key, wall.t)) as app:
            found = app.get("/repos/acme/canary-mini/installation")
            assert found.status_code == 200 and found.json()["account"]["login"] == "acme"
            assert found.json()["app_id"] == APP_ID and found.json()["id"] == _installation(sb, "acme")
            assert app.get("/repos/initech/canary-mini/installation").status_code == 404  # not installed there
            assert app.post("/app/installations/1/access_tokens").status_code == 404
            made = app.post(f"/app/installations/{_installation(sb, 'acme')}/access_tokens")
            assert made.status_code == 201
            assert made.json()["token"].startswith("ghs_") and made.json()["expires_at"].endswith("Z")
            assert app.get("/repos/acme/canary-mini").status_code == 403  # a JWT opens only the App routes
        with _http(sb, made.json()["token"]) as inst:
            assert inst.get("/repos/acme/canary-mini").status_code == 200
            assert inst.get("/repos/globex/canary-mini").status_code == 404  # another installation's
            assert inst.get("/repos/acme/canary-mini/installation").status_code == 401
            wall.t += 3601
            assert inst.get("/repos/acme/canary-mini").status_code == 401  # expired


def test_secondary_limits_count_per_token_and_per_installation(key: rsa.RSAPrivateKey) -> None:
    wall = Wall()
    with _app_sandbox(key, clock=wall, token=None) as sb:
        sb.secondary_limit(per_minute=2, per_hour=3, scale=60)  # a simulated hour per real minute
        number = sb.create_issue("acme/canary-mini", "x")
        url = f"/repos/acme/canary-mini/issues/{number}/comments"

        def writes(credential: str, n: int, owner: str = "acme") -> list[int]:
            number = sb.create_issue(f"{owner}/canary-mini", "x")
            with _http(sb, credential) as http:
                return [http.post(f"/repos/{owner}/canary-mini/issues/{number}/comments",
                                  json={"body": "b"}).status_code for _ in range(n)]

        assert writes("personal-token-one", 3) == [201, 201, 403]
        assert writes("personal-token-two", 2) == [201, 201]  # its own budget
        tokens = InstallationTokens(AppCredentials(str(APP_ID), appkeys.pem(key)), sb.url, wall=wall,
                                    transport=sb.transport())
        acme = tokens.token("acme/canary-mini")
        globex = tokens.token("globex/canary-mini")
        with _http(sb, _jwt(key, wall.t)) as app:  # a second token of acme's installation
            again = app.post(f"/app/installations/{_installation(sb, 'acme')}/access_tokens").json()["token"]
        assert writes(acme, 1) == [201]
        assert writes(again, 2) == [201, 403]  # the installation's budget, whichever of its tokens
        assert writes(globex, 2, "globex") == [201, 201]  # another installation: its own
        wall.t += 50  # a simulated 50 minutes: the minute has rolled, the hour has not
        assert writes(acme, 1) == [201]
        with _http(sb, acme) as http:
            blocked = http.post(url, json={"body": "b"})
        assert blocked.status_code == 403  # 3 an hour for this installation
        assert blocked.headers["retry-after"] == "600"  # simulated seconds: 10 simulated minutes
        wall.t += 12  # past the simulated hour
        assert writes(acme, 1) == [201]


# --- bad input: one line naming the flag, exit 2 -------------------------------------------


@pytest.fixture()
def not_a_key(tmp_path: Path) -> Path:
    path = tmp_path / "not-a-key.pem"
    path.write_text("-----BEGIN RSA PRIVATE KEY-----\nTHISISNOTAKEYBUTITLOOKSSECRET1234\n"
                    "-----END RSA PRIVATE KEY-----\n")
    return path


@pytest.mark.parametrize(("flags", "env", "names"), [
    ({"app_id": "12"}, {}, "--app-id: given without the App's private key"),
    ({"key_path": "KEY"}, {}, "--app-private-key: given without the App's id"),
    ({"app_id": "twelve", "key_path": "KEY"}, {}, "--app-id: expected the App's numeric id"),
    ({"app_id": "12", "key_path": "/nonexistent/app.pem"}, {}, "--app-private-key /nonexistent/app.pem: cannot read"),
    ({"app_id": "12", "key_path": "NOT_A_KEY"}, {}, "not a PEM private key"),
    ({}, {APP_ID_VAR: "12"}, f"{APP_ID_VAR}: given without the App's private key"),
    ({}, {APP_ID_VAR: "0", APP_KEY_VAR: "KEY"}, f"{APP_ID_VAR}: expected the App's numeric id"),
    ({}, {APP_ID_VAR: "12", APP_KEY_VAR: FAKE_PEM},
     f"{APP_KEY_VAR}: not a PEM private key"),
])
def test_bad_app_credentials_name_the_flag(flags: dict[str, str], env: dict[str, str], names: str,
                                           key_file: Path, not_a_key: Path) -> None:
    def fill(value: str) -> str:
        return {"KEY": str(key_file), "NOT_A_KEY": str(not_a_key)}.get(value, value)

    with pytest.raises(BadInput) as caught:
        app_credentials(fill(flags.get("app_id", "")) or None, fill(flags.get("key_path", "")) or None,
                        {k: fill(v) for k, v in env.items()})
    message = str(caught.value)
    assert names in message and "\n" not in message
    assert "THISISNOTAKEY" not in message and "ABCDEFGHIJ" not in message


def test_no_app_flags_mean_the_token() -> None:
    assert app_credentials(None, None, {}) is None


@pytest.mark.parametrize("command", [
    ["run", "--repo", "acme/canary-mini", "--stack", "mini", "--corpus", str(CORPUS)],
    ["janitor", "--repo", "acme/canary-mini"],
])
def test_the_cli_reports_an_unreadable_key_in_one_line_with_exit_2(command: list[str], tmp_path: Path) -> None:
    result = cli(*command, "--app-id", "12", "--app-private-key", str(tmp_path / "missing.pem"),
                 env={"GITHUB_TOKEN": "unused"})
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "--app-private-key" in lines[0] and "cannot read the key" in lines[0]


# --- the key never reaches a message ---------------------------------------------------------

RUN_DRY = ["run", "--repo", "acme/canary-mini", "--stack", "mini", "--corpus", str(CORPUS), "--dry-run"]
# How a PEM pasted into a secret or a flag really arrives: quoted, with a byte-order mark,
# without its header line, after a blank line.
VARIANTS = {
    "quoted": lambda pem: f'"{pem}"',
    "BOM": lambda pem: "\ufeff" + pem,
    "no header line": lambda pem: "\n".join(pem.strip().splitlines()[1:]),
    "leading newline": lambda pem: "\n" + pem,
}


def _broken(pem: str) -> str:
    """The PEM with its body's last lines gone: PEM-shaped, every line key material, no key."""
    lines = pem.strip().splitlines()
    return "\n".join([*lines[:-4], lines[-1]]) + "\n"


def _leaks(stderr: str, pem: str) -> list[str]:
    """Any line of the key, or any 16 characters of its body, in ``stderr``."""
    body = "".join(pem.strip().splitlines()[1:-1])
    found = [line for line in pem.strip().splitlines() if line.strip() and line.strip() in stderr]
    found += [run for run in re.findall(r"[A-Za-z0-9+/=]{16,}", stderr) if any(
        run[i:i + 16] in body for i in range(len(run) - 15))]
    return found


@pytest.mark.parametrize("source", ["env", "flag"])
@pytest.mark.parametrize("variant", list(VARIANTS))
def test_a_key_that_does_not_start_with_its_header_is_never_quoted(
        key: rsa.RSAPrivateKey, variant: str, source: str) -> None:
    pem = _broken(appkeys.pem(key))
    value = VARIANTS[variant](pem)
    flag = ["--app-private-key", value] if source == "flag" else []
    env = {APP_ID_VAR: str(APP_ID), **({APP_KEY_VAR: value} if source == "env" else {})}
    result = cli(*RUN_DRY, *flag, env=env)
    assert result.returncode == 2, result.stdout + result.stderr
    assert _leaks(result.stderr + result.stdout, pem) == []
    [line] = result.stderr.splitlines()
    assert (APP_KEY_VAR if source == "env" else "--app-private-key") in line


@pytest.mark.parametrize("source", ["env", "flag"])
@pytest.mark.parametrize("variant", ["quoted", "BOM", "leading newline", "escaped newlines"])
def test_pem_text_is_recognised_through_quotes_a_bom_blanks_and_escaped_newlines(
        key: rsa.RSAPrivateKey, variant: str, source: str) -> None:
    pem = appkeys.pem(key)
    value = pem.strip().replace("\n", "\\n") if variant == "escaped newlines" else VARIANTS[variant](pem)
    flag = ["--app-private-key", value] if source == "flag" else []
    env = {APP_ID_VAR: str(APP_ID), **({APP_KEY_VAR: value} if source == "env" else {})}
    result = cli(*RUN_DRY, *flag, env=env)
    assert result.returncode == 0, result.stderr
    assert f"GitHub App {APP_ID}" in result.stdout
    assert _leaks(result.stderr + result.stdout, pem) == []


def test_a_key_without_its_header_line_is_refused_naming_only_the_variable(key: rsa.RSAPrivateKey) -> None:
    pem = appkeys.pem(key)
    result = cli(*RUN_DRY, env={APP_ID_VAR: str(APP_ID), APP_KEY_VAR: VARIANTS["no header line"](pem)})
    assert result.returncode == 2
    assert result.stderr == (f"redline-canary: {APP_KEY_VAR}: the App private key is not a readable PEM file "
                             "or PEM text\n")


@pytest.mark.parametrize("kind", ["fifo", "directory", "device"])
def test_a_fifo_directory_or_device_as_the_key_is_refused_at_once(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "app.pem"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    else:
        path = Path("/dev/zero")
    started = time.monotonic()
    result = cli(*RUN_DRY, "--app-id", str(APP_ID), "--app-private-key", str(path), timeout=20)
    assert time.monotonic() - started < 10
    assert result.returncode == 2
    assert result.stderr == f"redline-canary: --app-private-key {path}: not a regular file\n"


def test_a_jwt_quoted_by_a_401_is_masked_before_the_message_is_cut(key: rsa.RSAPrivateKey) -> None:
    wall = Wall()
    with _app_sandbox(key, clock=wall) as sb:
        signed = _jwt(key, wall.t)  # RS256 is deterministic: the JWT the client is about to sign
        sb.inject_fault("GET", "/repos/{owner}/{repo}/installation", status=401,
                        body={"message": f"Bad credentials: Bearer {signed}"})
        tokens = InstallationTokens(AppCredentials(str(APP_ID), appkeys.pem(key)), sb.url, wall=wall,
                                    transport=sb.transport())
        with pytest.raises(BadInput) as caught:
            tokens.token("acme/canary-mini")
    shown = mask(str(caught.value))
    assert "Bad credentials: Bearer ***" in shown
    assert signed.split(".")[0] not in shown and signed.split(".")[1][:16] not in shown


@pytest.fixture(autouse=True)
def _no_stray_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The App's variables of the developer's shell never leak into these tests."""
    monkeypatch.delenv(APP_ID_VAR, raising=False)
    monkeypatch.delenv(APP_KEY_VAR, raising=False)
    yield
