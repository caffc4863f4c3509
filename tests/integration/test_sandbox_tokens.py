"""The sandbox answers in the header dialect of the token kind a scenario names.

Recorded traffic shows classic PATs answered with ``x-oauth-scopes`` (and no
``x-accepted-github-permissions``) and fine-grained tokens the other way round, either
kind with ``github-authentication-token-expiration`` when it expires. ``doctor`` reads
exactly these, so a scenario must be able to build each from outside.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from redline_canary.cli import main
from redline_canary.sandbox import Sandbox


def _client(scenario: dict[str, Any]) -> Iterator[tuple[Sandbox, httpx.Client]]:
    with Sandbox.from_scenario(scenario) as sb, httpx.Client(
            base_url=sb.url, headers={"Authorization": "token x"}) as client:
        yield sb, client


def test_a_fine_grained_token_names_permissions_and_its_expiry() -> None:
    scenario = {"repos": [{"name": "acme/c"}], "token": {"kind": "fine_grained", "expires_in_days": 3,
                                                          "no_access": ["checks"]}}
    for _sb, client in _client(scenario):
        r = client.get("/repos/acme/c/git/ref/heads/main")
        assert r.status_code == 200
        assert r.headers["x-accepted-github-permissions"] == "contents=read"
        assert "x-oauth-scopes" not in r.headers
        assert r.headers["github-authentication-token-expiration"].endswith(" UTC")
        sha = r.json()["object"]["sha"]
        denied = client.get(f"/repos/acme/c/commits/{sha}/check-runs")
        assert denied.status_code == 403 and denied.headers["x-accepted-github-permissions"] == "checks=read"
        assert denied.json()["message"] == "Resource not accessible by personal access token"


def test_a_classic_token_names_its_scopes_and_cannot_write_without_repo() -> None:
    scenario = {"repos": [{"name": "acme/c"}], "token": {"kind": "classic", "scopes": ["gist"]}}
    for _sb, client in _client(scenario):
        r = client.get("/repos/acme/c")
        assert r.status_code == 200 and r.headers["x-oauth-scopes"] == "gist"
        assert r.headers["x-accepted-oauth-scopes"] == "repo"
        assert "x-accepted-github-permissions" not in r.headers
        assert "github-authentication-token-expiration" not in r.headers  # never expires
        w = client.post("/repos/acme/c/labels", json={"name": "x", "color": "ededed"})
        assert w.status_code == 404


def test_scenario_builds_an_empty_repo_labels_and_earlier_reviews() -> None:
    scenario = {"repos": [{"name": "acme/empty", "empty": True, "labels": ["redline-exempt"]},
                          {"name": "acme/used", "branches": ["f"],
                           "pulls": [{"head": "f", "reviewed_by": ["coderabbitai[bot]"]}]}]}
    for _sb, client in _client(scenario):
        assert client.get("/repos/acme/empty/git/ref/heads/main").status_code == 409
        assert client.get("/repos/acme/empty/labels/redline-exempt").status_code == 200
        reviews = client.get("/repos/acme/used/pulls/1/reviews").json()
        assert [(r["user"]["login"], r["user"]["type"]) for r in reviews] == [("coderabbitai[bot]", "Bot")]


@pytest.mark.parametrize("token, message", [
    ({"kind": "classic", "no_access": ["checks"]}, "token.no_access: only fine-grained tokens"),
    ({"kind": "fine_grained", "scopes": ["repo"]}, "token.scopes: only classic tokens"),
    ({"kind": "oauth"}, "token.kind: must be one of fine_grained, classic"),
    ({"expires_in_days": "soon"}, "token.expires_in_days: must be a number"),
])
def test_a_bad_token_key_is_one_line_naming_it(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                               token: dict[str, Any], message: str) -> None:
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"repos": [{"name": "acme/c"}], "token": token}))
    assert main(["sandbox", "serve", "--scenario", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{path}: {message}" in err
