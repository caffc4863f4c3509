"""doctor's judgement over answers (pure): thresholds, token kinds, hostile JSON."""

from __future__ import annotations

from typing import Any

import pytest

from redline_canary.errors import doctor_exit_code
from redline_canary.github import client as github_api
from redline_canary.github.doctor import expires_in_days
from redline_canary.github.doctor_checks import (
    CANARY_TOPIC,
    Answer,
    DoctorFacts,
    checklist,
    find_evidence,
    token_hint,
    token_kind,
)

REPO_BODY = {"private": False, "topics": [CANARY_TOPIC], "default_branch": "main", "permissions": {"push": True}}


def _facts(**changes: Any) -> DoctorFacts:
    base: dict[str, Any] = dict(
        repo="acme/c", reviewer="redline", logins=(), needs_check_runs=False, copilot=False, label="redline-exempt",
        token_hint="fine_grained", user=Answer(200, {}, {"login": "me", "type": "User"}),
        repository=Answer(200, {}, REPO_BODY), branch="main", ref=Answer(200, {}, {"object": {"sha": "a" * 40}}),
        label_answer=Answer(404, {}, None, "Not Found"), pulls=Answer(200, {}, []))
    return DoctorFacts(**{**base, **changes})


def _status(facts: DoctorFacts, name: str) -> str:
    return next(c.status for c in checklist(facts) if c.name == name)


def test_the_topic_is_the_products_topic() -> None:
    assert CANARY_TOPIC == github_api.CANARY_TOPIC


@pytest.mark.parametrize("days, status", [(None, "warn"), (-1, "fail"), (0.5, "warn"), (13.9, "warn"),
                                          (14, "ok"), (365, "ok")])
def test_expiry_warns_under_14_days_and_fails_once_expired(days: float | None, status: str) -> None:
    assert _status(_facts(expiry="2026-01-01 00:00:00 UTC", expires_in_days=days), "expiry") == status
    assert _status(_facts(), "expiry") == "ok"  # no header: the token does not expire


def test_expiry_dates_in_both_spellings() -> None:
    assert expires_in_days("1970-01-02 00:00:00 UTC", 0.0) == pytest.approx(1.0)
    assert expires_in_days("1970-01-02 00:00:00 -0100", 0.0) == pytest.approx(1 + 1 / 24)
    assert expires_in_days("next week", 0.0) is None and expires_in_days(None, 0.0) is None


def test_token_kind_from_headers_first_then_the_prefix() -> None:
    assert token_hint("ghp_abc") == "classic" and token_hint("github_pat_x") == "fine_grained"
    assert token_hint("ghs_x") == "app" and token_hint("whatever") == "unknown"
    classic = _facts(token_hint="unknown", user=Answer(200, {"x-oauth-scopes": "repo, gist"}, {"login": "me"}))
    assert token_kind(classic) == "classic" and _status(classic, "permissions") == "ok"
    assert token_kind(_facts(token_hint="unknown")) == "fine_grained"


def test_an_empty_scopes_header_is_not_a_classic_scope_list() -> None:
    """A GitHub App user token (``ghu_``) gets ``x-oauth-scopes`` present but empty."""
    empty = Answer(200, {"x-oauth-scopes": ""}, {"login": "me"})
    for hint in ("app_user", "unknown", "fine_grained"):
        facts = _facts(token_hint=hint, user=empty)
        assert token_kind(facts) != "classic" and _status(facts, "permissions") == "info", hint
    assert token_hint("ghu_x") == "app_user" and token_kind(_facts(token_hint="app_user", user=empty)) == "app_user"
    # A classic token (by its prefix) with no scope at all still cannot write.
    classic = _facts(token_hint="classic", user=Answer(200, {"x-oauth-scopes": " "}, {"login": "me"}))
    assert token_kind(classic) == "classic" and _status(classic, "permissions") == "fail"


def test_a_classic_public_repo_scope_is_enough_only_for_a_public_repository() -> None:
    user = Answer(200, {"x-oauth-scopes": "public_repo"}, {"login": "me"})
    assert _status(_facts(user=user), "permissions") == "ok"
    private = Answer(200, {}, {**REPO_BODY, "private": True})
    assert _status(_facts(user=user, repository=private), "permissions") == "fail"


def test_no_push_or_archived_is_blocking_and_exit_2() -> None:
    for body in ({**REPO_BODY, "permissions": {"push": False}}, {**REPO_BODY, "archived": True}):
        checks = checklist(_facts(repository=Answer(200, {}, body)))
        assert next(c for c in checks if c.name == "permissions").status == "fail"
        assert doctor_exit_code(c.status for c in checks) == 2
    assert doctor_exit_code(c.status for c in checklist(_facts())) == 0


def test_an_unreadable_repository_skips_what_depends_on_it() -> None:
    checks = checklist(_facts(repository=Answer(404, {}, {"message": "Not Found"}, "Not Found")))
    assert [(c.name, c.status) for c in checks][:3] == [("token", "ok"), ("expiry", "ok"), ("repository", "fail")]
    assert {c.status for c in checks[3:]} == {"skip"}


def test_evidence_ignores_hostile_items_and_the_tokens_own_user() -> None:
    channels = {"reviews": Answer(200, {}, [None, "x", {"user": "bob"}, {"user": {"login": 7}},
                                             {"user": {"login": "redline-canary[bot]", "type": "Bot"}}]),
                "issue_comments": Answer(403, {}, None, "Resource not accessible by personal access token")}
    assert find_evidence(3, channels, (), any_bot=True, self_login="redline-canary[bot]") == []
    channels["review_comments"] = Answer(200, {}, [{"user": {"login": "Copilot", "type": "Bot"}}])
    found = find_evidence(3, channels, ("copilot",), any_bot=False, self_login=None)
    assert [(e.number, e.channel, e.login) for e in found] == [(3, "review_comments", "Copilot")]


# --- as a GitHub App --------------------------------------------------------------------

APP_BODY = {"id": 4242, "slug": "rc-app", "name": "RC App"}
INSTALLATION = {"id": 7, "account": {"login": "acme"}, "repository_selection": "all",
                "html_url": "https://github.com/organizations/acme/settings/installations/7",
                "permissions": {"contents": "write", "pull_requests": "write", "issues": "write", "metadata": "read"}}


def _app(**changes: Any) -> Any:
    from redline_canary.github.doctor_checks import AppFacts

    base: dict[str, Any] = dict(owner="acme", app=Answer(200, {}, APP_BODY), installation=Answer(200, {}, INSTALLATION))
    return AppFacts(**{**base, **changes})


def _app_checks(app: Any, needs_check_runs: bool = False) -> dict[str, tuple[str, str]]:
    from redline_canary.github.doctor_checks import app_checks

    return {c.name: (c.status, c.detail) for c in app_checks(app, "acme/c", needs_check_runs)}


def test_admin_counts_as_write_and_checks_are_needed_only_by_profiles_that_read_them() -> None:
    admin = {**INSTALLATION, "permissions": {**INSTALLATION["permissions"], "contents": "admin"}}
    assert _app_checks(_app(installation=Answer(200, {}, admin)))["app permissions"][0] == "ok"
    status, detail = _app_checks(_app(), needs_check_runs=True)["app permissions"]
    assert status == "fail" and detail == "the installation lacks checks: read to read the reviewer's check run " \
        "(granted: none)"


@pytest.mark.parametrize("permissions", [None, "write", ["contents"], {"contents": 2}])
def test_hostile_installation_permissions_are_missing_permissions_not_a_crash(permissions: Any) -> None:
    inst = {**INSTALLATION, "permissions": permissions}
    status, detail = _app_checks(_app(installation=Answer(200, {}, inst)))["app permissions"]
    assert status == "fail" and "contents: write to push the seeded branches" in detail


def test_a_selection_longer_than_one_page_is_not_called_a_failure() -> None:
    selected = {**INSTALLATION, "repository_selection": "selected"}
    page = {"total_count": 250, "repositories": [{"full_name": f"acme/r{i}"} for i in range(100)]}
    checks = _app_checks(_app(installation=Answer(200, {}, selected), repositories=Answer(200, {}, page)))
    status, detail = checks["repository access"]
    assert status == "info" and "not among the first 100 listed" in detail
    short = {"total_count": 2, "repositories": [{"full_name": "acme/r0"}, {"full_name": "ACME/C"}]}
    checks = _app_checks(_app(installation=Answer(200, {}, selected), repositories=Answer(200, {}, short)))
    assert checks["repository access"] == ("ok", "selected repositories (2), acme/c among them")


def test_without_an_installation_token_the_repository_checks_are_skipped_and_blocking() -> None:
    facts = _facts(token_hint="app", user=Answer(0), app=_app(token_error="GitHub answered 403 suspended"))
    checks = checklist(facts)
    assert [c.name for c in checks][:5] == ["app", "installation", "app permissions", "repository access",
                                           "installation token"]
    assert next(c for c in checks if c.name == "installation token").status == "fail"
    assert {c.status for c in checks[5:]} == {"skip"} and doctor_exit_code(c.status for c in checks) == 2


def test_an_installation_that_cannot_be_read_is_not_called_missing() -> None:
    checks = _app_checks(_app(installation=Answer(502, {}, None, "Server Error")))
    assert checks["installation"] == ("fail", "the installation for acme/c could not be read "
                                      "(GitHub answered 502 Server Error)")
