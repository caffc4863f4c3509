"""``doctor``'s reads: the few GETs that show whether a first run can succeed.

Only GETs (as a GitHub App, also the one ``POST`` that buys an installation token, without
which nothing of the repository can be read), through the one GitHub seam (``GitHubClient``'s ``*_answer`` reads, which
return GitHub's answer instead of raising), so a user can point it at a real repository
before anything is opened there. The judgement is ``doctor_checks`` (pure); this module
only asks; the caller passes the wall clock's reading for the token's expiry.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timezone

from redline_canary.errors import CanaryError, mask
from redline_canary.github.app_auth import InstallationTokens
from redline_canary.github.client import GitHubClient
from redline_canary.github.doctor_checks import (
    AppFacts,
    DoctorFacts,
    Evidence,
    copilot_rule,
    find_evidence,
    token_hint,
)
from redline_canary.review.profiles import Profile
from redline_canary.score.defaults import DOCTOR_RECENT_PULLS


def expires_in_days(header: str | None, now: float) -> float | None:
    """Days from ``now`` to GitHub's ``2025-02-04 16:42:10 UTC`` (or ``... -0700``); None
    when the header is absent or not a date."""
    if not header:
        return None
    text = header.strip()
    for fmt, value in (("%Y-%m-%d %H:%M:%S %z", text.replace(" UTC", " +0000")), ("%Y-%m-%d %H:%M:%S", text)):
        try:
            at = datetime.strptime(value, fmt)
        except ValueError:
            continue
        if at.tzinfo is None:
            at = at.replace(tzinfo=timezone.utc)
        return (at.timestamp() - now) / 86400
    return None


def gather(client: GitHubClient, repo: str, profile: Profile, *, token: str, label: str, now: float,
           base: str | None = None, stack: str | None = None, stack_seeds: int | None = None) -> DoctorFacts:
    """Read what the checks judge; stop reading where an answer makes the rest moot."""
    logins = tuple(sorted(profile.logins))
    facts = DoctorFacts(repo=repo, reviewer=profile.name, logins=logins, needs_check_runs=profile.reads_check_runs,
                        copilot=profile.name == "copilot", label=label, token_hint=token_hint(token),
                        user=client.whoami(), stack=stack, stack_seeds=stack_seeds)
    if facts.user.status == 401:
        return facts
    repository = client.repository_answer(repo)
    expiry = next((a.headers["github-authentication-token-expiration"] for a in (facts.user, repository)
                   if "github-authentication-token-expiration" in a.headers), None)
    changes: dict[str, object] = {"repository": repository, "expiry": expiry,
                                  "expires_in_days": expires_in_days(expiry, now)}
    body = repository.body if repository.ok and isinstance(repository.body, dict) else None
    if body is None:
        return _with(facts, changes)
    default = body.get("default_branch")
    branch = base or (default if isinstance(default, str) and default else "main")
    ref = client.ref_answer(repo, branch)
    obj = ref.body.get("object") if ref.ok and isinstance(ref.body, dict) else None
    sha = obj.get("sha") if isinstance(obj, dict) else None
    pulls = client.recent_pulls_answer(repo, DOCTOR_RECENT_PULLS)
    changes.update(branch=branch, ref=ref, label_answer=client.label_answer(repo, label), pulls=pulls,
                   check_runs=client.check_runs_answer(repo, sha) if profile.reads_check_runs and isinstance(sha, str)
                   else None)
    me = facts.user.body.get("login") if isinstance(facts.user.body, dict) else None
    evidence: list[Evidence] = []
    unread: list[str] = []
    if facts.copilot:
        rules = client.branch_rules_answer(repo, branch)
        changes["rules"] = rules
        if copilot_rule(rules):
            evidence.append(Evidence(0, "ruleset", "copilot"))
    items = pulls.body if pulls.ok and isinstance(pulls.body, list) else []
    for item in items[:DOCTOR_RECENT_PULLS]:
        number = item.get("number") if isinstance(item, dict) else None
        if evidence:
            break
        if not isinstance(number, int) or isinstance(number, bool) or number <= 0:
            continue
        channels = client.conversation_answers(repo, number)
        unread += [f"PR #{number} {ch}: {a.said()}" for ch, a in channels.items() if not a.ok]
        evidence += find_evidence(number, channels, logins, profile.any_bot, me if isinstance(me, str) else None)
    changes.update(evidence=tuple(evidence), unread=tuple(unread))
    return _with(facts, changes)


def _with(facts: DoctorFacts, changes: dict[str, object]) -> DoctorFacts:
    return replace(facts, **changes)  # type: ignore[arg-type]


def gather_app(tokens: InstallationTokens, repo: str) -> tuple[AppFacts, str | None]:
    """As the App: ``GET /app`` (the JWT works), the installation covering ``repo`` (or,
    when none does, the App's installations, to tell "not installed on the owner" from
    "installed, the repository not selected"), then an installation token (the one POST).
    Returns the facts and the token, None when there is none to read on with."""
    owner = repo.partition("/")[0]
    app = tokens.app.app_answer()
    if not app.ok:
        return AppFacts(owner, app), None
    installation = tokens.app.installation_answer(repo)
    if installation.status == 404:
        return AppFacts(owner, app, installation, tokens.app.app_installations_answer()), None
    if not installation.ok:
        return AppFacts(owner, app, installation), None
    found = installation.body.get("id") if isinstance(installation.body, dict) else None
    if not isinstance(found, int) or isinstance(found, bool) or found <= 0:
        return AppFacts(owner, app, installation, token_error="GitHub's installation has no id"), None
    tokens.know_installation(repo, found)
    try:
        token = tokens.token(repo)
    except CanaryError as exc:
        return AppFacts(owner, app, installation, token_error=mask(str(exc))), None
    return AppFacts(owner, app, installation), token
