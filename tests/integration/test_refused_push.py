"""A push refused for a missing permission reports only what exists (issue 25).

A token without Contents: Read and write is refused on the first write of a push (the tree),
so no branch is ever made; the same permission refuses the branch's delete in teardown.
Teardown reads the ref before it claims a branch is left, so the user is told what is
wrong (the permission) and not sent to the janitor for a branch that never existed. A
branch that does exist and cannot be deleted is still reported.
"""

from __future__ import annotations

from pathlib import Path

from redline_canary.github.client import CANARY_TOPIC
from redline_canary.run.cycle import BRANCH_PREFIX
from redline_canary.sandbox import Sandbox
from tests.helpers.clirun import ROOT, cli
from tests.helpers.sandboxing import TOKEN, assert_no_canary_left

REPO = "acme/canary-mini"
CORPUS = ROOT / "tests" / "data" / "corpus"
FAST = ["--poll-interval", "0.05", "--stable-polls", "2", "--timeout-minutes", "0.5", "--confirm", "0"]
ENV = {"GITHUB_TOKEN": TOKEN, "REDLINE_CANARY_TOKEN": "", "REDLINE_CANARY_TIME_SCALE": "0.01"}


def _run(sb: Sandbox, tmp_path: Path) -> tuple[int, str]:
    history = tmp_path / "history.jsonl"
    done = cli("run", "--api-url", sb.url, "--repo", REPO, "--stack", "mini", "--corpus", str(CORPUS),
               "--history", str(history), "--run-id", "refused1", *FAST, env=ENV)
    return done.returncode, done.stdout + done.stderr


def test_a_push_refused_for_contents_write_reports_the_permission_and_no_phantom_branch(tmp_path: Path) -> None:
    with Sandbox(token=TOKEN) as sb:
        sb.create_repo(REPO, topics=[CANARY_TOPIC])
        sb.fine_grained_token(missing=["contents"])
        code, out = _run(sb, tmp_path)
        assert sb.branches(REPO) == ["main"]  # the push made nothing
        assert_no_canary_left(sb, REPO)
        assert sb.request_counts()["GET /repos/{owner}/{repo}/git/ref/{ref}"] >= 2  # preflight + the check
    assert code == 2, out  # bad input (a permission), not an infrastructure failure with leftovers
    assert "the token lacks a permission this needs: contents=write" in out
    assert "teardown incomplete" not in out and "janitor" not in out
    assert "could not delete branch" not in out


def test_a_branch_that_exists_and_cannot_be_deleted_is_still_reported_left(tmp_path: Path) -> None:
    with Sandbox(token=TOKEN) as sb:
        sb.create_repo(REPO, topics=[CANARY_TOPIC])
        sb.fine_grained_token(missing=["pull_requests"])  # the branch is pushed, the PR refused
        sb.inject_fault("DELETE", "/repos/{owner}/{repo}/git/refs/{ref}", status=403, times=None,
                        body={"message": "Resource not accessible by personal access token"},
                        headers={"x-accepted-github-permissions": "contents=write"})
        code, out = _run(sb, tmp_path)
        left = [b for b in sb.branches(REPO) if b.startswith(BRANCH_PREFIX)]
        sb.clear_faults()
        sb.clear_policies()
        # what the message says to do, once the permission is back
        janitor = cli("janitor", "--api-url", sb.url, "--repo", REPO, "--run-id", "refused1", env=ENV)
        assert janitor.returncode == 0, janitor.stdout + janitor.stderr
        assert_no_canary_left(sb, REPO)
    assert len(left) == 1, out
    assert code == 2, out
    assert f"branch(es) {left[0]}" in out and "janitor --repo acme/canary-mini" in out


def test_an_app_installation_without_contents_write_is_refused_the_same_way(tmp_path: Path) -> None:
    """The installation grants contents: read only: GitHub answers the push 403 "Resource not
    accessible by integration"; the run names the permission and claims no branch."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    key_file = tmp_path / "app.pem"
    key_file.write_text(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                          serialization.NoEncryption()).decode())
    with Sandbox(token=TOKEN) as sb:
        sb.register_app(4242, key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode())
        sb.create_repo(REPO, topics=[CANARY_TOPIC])
        sb.install_app(4242, "acme", permissions={"contents": "read", "pull_requests": "write", "issues": "write"})
        done = cli("run", "--api-url", sb.url, "--repo", REPO, "--stack", "mini", "--corpus", str(CORPUS),
                   "--history", "", "--run-id", "refused2", "--app-id", "4242", "--app-private-key", str(key_file),
                   *FAST, env={**ENV, "GITHUB_TOKEN": ""})
        assert sb.branches(REPO) == ["main"]
        assert_no_canary_left(sb, REPO)
    out = done.stdout + done.stderr
    assert done.returncode == 2, out
    assert "the token lacks a permission this needs: contents=write (GitHub: Resource not accessible by integration)" \
        in out
    assert "teardown incomplete" not in out and "janitor" not in out
