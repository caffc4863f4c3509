"""``doctor``'s judgement: what GitHub answered to a handful of reads, as a checklist.

A first real run fails for reasons a user can fix in a minute (no topic, a token without
the ``repo`` scope, an empty repository, a reviewer that was never installed), but it
fails after opening PRs, or deep in a log. ``doctor`` reads the same things the run will
need, without writing anything, and this module turns the answers into one line per
check, each failure with its fix. Pure: the edge (``doctor.py``) gathers the answers and
the clock's reading; everything here is a decision over data.

Statuses: ``ok``; ``info`` (nothing to fix, or nothing can be known without writing);
``warn`` (works today, will not for long); ``fail`` (the run would fail: blocking, exit 2);
``skip`` (not checked because an earlier check failed).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from redline_canary.report.text import inert_line
from redline_canary.score.defaults import TOKEN_EXPIRY_WARN_DAYS

Status = Literal["ok", "info", "warn", "fail", "skip"]
CANARY_TOPIC = "redline-canary"  # github_api.CANARY_TOPIC (a test pins them equal)
WRITE_SCOPES = ("repo", "public_repo")
NEEDED_PERMISSIONS = "Contents, Pull requests and Issues: Read and write (Metadata: Read)"


@dataclass(frozen=True)
class Answer:
    """One GET as GitHub answered it: status (0 = no answer), lower-cased headers, the
    decoded body (None when empty or not JSON), GitHub's message when it failed."""

    status: int
    headers: Mapping[str, str] = field(default_factory=dict)
    body: Any = None
    message: str = ""

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    @property
    def denied(self) -> bool:
        """A token without the permission: "Resource not accessible by ..." (github_errors)."""
        return self.status == 403 and self.message.lower().startswith("resource not accessible")

    def said(self) -> str:
        return f"GitHub answered {self.status} {self.message}".strip() if self.status else "no answer from GitHub"


@dataclass(frozen=True)
class Evidence:
    """A sign the reviewer works on this repository: who, where, on which PR."""

    number: int
    channel: str  # reviews | review_comments | issue_comments | ruleset
    login: str


# What a run does with each permission of a GitHub App installation (the level it needs).
APP_NEEDS: tuple[tuple[str, str, str], ...] = (
    ("contents", "write", "push the seeded branches and delete them"),
    ("pull_requests", "write", "open, review-request and close the PRs"),
    ("issues", "write", "create and add the label"),
    ("metadata", "read", "read the repository"),
)
CHECKS_NEED = ("checks", "read", "read the reviewer's check run")
_LEVELS = {"read": 1, "write": 2, "admin": 3}


@dataclass(frozen=True)
class AppFacts:
    """What ``doctor`` read as a GitHub App: with its JWT, then (when there is an
    installation) with the installation token it bought, the one write doctor makes."""

    owner: str
    app: Answer  # GET /app
    installation: Answer | None = None  # GET /repos/{o}/{r}/installation
    installations: Answer | None = None  # GET /app/installations, when the repository has none
    repositories: Answer | None = None  # GET /installation/repositories, with the installation token
    token_error: str = ""  # why no installation token could be bought ("" when one was)

    @property
    def token(self) -> bool:
        """Whether doctor holds an installation token (and so read on as the installation)."""
        return self.installation is not None and self.installation.ok and not self.token_error


@dataclass(frozen=True)
class DoctorFacts:
    """Everything ``doctor`` read, plus what it knows without reading."""

    repo: str
    reviewer: str
    logins: tuple[str, ...]  # the profile's logins; empty: any bot counts
    needs_check_runs: bool
    copilot: bool
    label: str
    token_hint: str  # from the token's shape: classic | fine_grained | app | app_user | oauth | unknown
    user: Answer
    repository: Answer | None = None
    branch: str | None = None
    ref: Answer | None = None
    label_answer: Answer | None = None
    check_runs: Answer | None = None
    pulls: Answer | None = None
    evidence: tuple[Evidence, ...] = ()
    unread: tuple[str, ...] = ()  # conversation reads that failed: "PR #3 reviews: 403 ..."
    rules: Answer | None = None
    expiry: str | None = None  # the header's text
    expires_in_days: float | None = None  # computed by the edge from the header and the clock
    stack: str | None = None
    stack_seeds: int | None = None  # seeds of --stack in the corpus
    app: AppFacts | None = None  # authenticating as a GitHub App


@dataclass(frozen=True)
class Check:
    name: str
    status: Status
    detail: str
    fix: str = ""

    def as_dict(self) -> dict[str, str]:
        return {"name": self.name, "status": self.status, "detail": self.detail, "fix": self.fix}


def token_hint(token: str) -> str:
    """The kind a token's documented prefix announces (never the token itself)."""
    for prefix, kind in (("github_pat_", "fine_grained"), ("ghp_", "classic"), ("ghs_", "app"),
                         ("gho_", "oauth"), ("ghu_", "app_user")):
        if token.startswith(prefix):
            return kind
    return "unknown"


def _header(facts: DoctorFacts, name: str) -> str | None:
    for answer in (facts.user, facts.repository):
        if answer is not None and name in answer.headers:
            return answer.headers[name]
    return None


def _scopes(facts: DoctorFacts) -> list[str] | None:
    """A classic token's scopes, or None for any other token. An *empty* ``x-oauth-scopes``
    is no scope list: GitHub sends it to a GitHub App user token (``ghu_``) too. Only a token
    whose prefix says classic (``ghp_``) is taken to be a classic token with no scope."""
    raw = _header(facts, "x-oauth-scopes")
    if raw is None or (not raw.strip() and facts.token_hint != "classic"):
        return None
    return [s.strip() for s in raw.split(",") if s.strip()]


def token_kind(facts: DoctorFacts) -> str:
    """Classic PATs are the ones GitHub answers with scopes in ``x-oauth-scopes`` (recorded traffic)."""
    if _scopes(facts) is not None:
        return "classic"
    return facts.token_hint if facts.token_hint in ("fine_grained", "app", "app_user", "oauth") else "fine_grained"


def _kind_words(kind: str) -> str:
    return {"app_user": "GitHub App user"}.get(kind, kind.replace("_", "-"))


def checklist(facts: DoctorFacts) -> list[Check]:
    """One check per line, in the order a user would fix them; a GitHub App's own checks
    first (without an installation token nothing else can be read)."""
    if facts.app is not None:
        first = app_checks(facts.app, facts.repo, facts.needs_check_runs)
        if not facts.app.token:
            return first + [Check(n, "skip", "not checked: no installation token") for n in ("token", *_LATER)]
        return first + _checklist(facts)
    return _checklist(facts)


def _checklist(facts: DoctorFacts) -> list[Check]:
    checks = [_token(facts)]
    if checks[0].status == "fail":
        return checks + [Check(n, "skip", "not checked: the token is not valid") for n in _LATER]
    checks.append(_expiry(facts))
    repo = facts.repository
    if repo is None or not repo.ok or not isinstance(repo.body, dict):
        why = repo.said() if repo is not None else "not read"
        fix = (f"check the name {facts.repo}; a fine-grained token must list it under Repository access, "
               "a classic token needs the repo scope for a private repository")
        checks.append(Check("repository", "fail", f"{facts.repo} cannot be read ({why})", fix))
        return checks + [Check(n, "skip", "not checked: the repository cannot be read") for n in _LATER[2:]]
    checks.append(Check("repository", "ok", f"{facts.repo} ({'private' if repo.body.get('private') else 'public'})"))
    checks += [_permissions(facts), _topic(facts), _commit(facts), _label(facts), _check_runs(facts),
               _installed(facts)]
    if facts.stack is not None:
        checks.append(Check("stack", "ok" if facts.stack_seeds else "fail",
                            f"{facts.stack}: {facts.stack_seeds or 0} seed(s) in the corpus",
                            "" if facts.stack_seeds else "give a stack the corpus has (corpus list)"))
    return checks


_LATER = ("expiry", "repository", "permissions", "topic", "default branch", "label", "check runs", "reviewer")


def _token(facts: DoctorFacts) -> Check:
    user = facts.user
    if user.ok and isinstance(user.body, dict):
        login = inert_line(str(user.body.get("login") or "?"))
        kind = inert_line(str(user.body.get("type") or "User"))
        return Check("token", "ok", f"valid: it belongs to {login} ({kind})")
    if user.status == 403 and "integration" in user.message.lower():
        if facts.app is not None:
            return Check("token", "ok", "valid: the installation token bought above")
        return Check("token", "ok", "valid: an integration token (GitHub App installation or Actions "
                     "GITHUB_TOKEN); whose it is cannot be read")
    if user.status == 401:
        return Check("token", "fail", f"not valid ({user.said()})",
                     "create a new token and put it in REDLINE_CANARY_TOKEN (or GITHUB_TOKEN)")
    return Check("token", "warn", f"could not be checked ({user.said()})", "try again; check --api-url")


def _expiry(facts: DoctorFacts) -> Check:
    days = facts.expires_in_days
    if facts.expiry is None:
        return Check("expiry", "ok", "no expiry announced (no github-authentication-token-expiration header)")
    when = inert_line(facts.expiry)
    if days is None:
        return Check("expiry", "warn", f"expires {when} (a date doctor cannot read)",
                     "check the token's expiry in GitHub's settings")
    fix = "regenerate the token (or make a new one) and update the secret before it expires"
    if days < 0:
        return Check("expiry", "fail", f"expired on {when}", fix)
    if days < TOKEN_EXPIRY_WARN_DAYS:
        return Check("expiry", "warn", f"expires in {days:.0f} day(s), on {when}", fix)
    return Check("expiry", "ok", f"expires in {days:.0f} days, on {when}")


def _denied_reads(facts: DoctorFacts) -> list[str]:
    reads = (("git ref", facts.ref), ("label", facts.label_answer), ("pull requests", facts.pulls))
    return [f"{what} ({inert_line(a.headers.get('x-accepted-github-permissions', '?'))})"
            for what, a in reads if a is not None and a.denied]


def _permissions(facts: DoctorFacts) -> Check:
    body = facts.repository.body if facts.repository is not None else {}
    perms = body.get("permissions") if isinstance(body, dict) else None
    kind = token_kind(facts)
    if isinstance(body, dict) and body.get("archived"):
        return Check("permissions", "fail", f"{facts.repo} is archived: nothing can be written",
                     "unarchive it (Settings, General, Danger Zone) or pick another canary repository")
    if isinstance(perms, dict) and not perms.get("push", False):
        return Check("permissions", "fail", f"{_kind_words(kind)} token: its user cannot push to {facts.repo}",
                     "give the token's user write access to the repository (Settings, Collaborators)")
    if kind == "classic":
        scopes = _scopes(facts) or []
        public = isinstance(body, dict) and not body.get("private")
        fits = "repo" in scopes or (public and "public_repo" in scopes)
        shown = ", ".join(scopes) or "none"
        if not fits:
            need = "repo (or public_repo)" if public else "repo"
            return Check("permissions", "fail", f"classic token, scopes: {inert_line(shown)}; it cannot write here",
                         f"add the {need} scope, or use a fine-grained token with {NEEDED_PERMISSIONS}")
        return Check("permissions", "ok", f"classic token, scopes: {inert_line(shown)}; push access")
    if facts.app is not None:
        return Check("permissions", "ok", f"{facts.repo}: the installation token's permissions are the "
                     "installation's (app permissions, above)")
    denied = _denied_reads(facts)
    if denied:
        return Check("permissions", "fail", f"{_kind_words(kind)} token cannot read: {', '.join(denied)}",
                     f"grant the token {NEEDED_PERMISSIONS} on {facts.repo}")
    accepted = _header(facts, "x-accepted-github-permissions")
    seen = f"; reads accept {inert_line(accepted)}" if accepted else ""
    return Check("permissions", "info",
                 f"{_kind_words(kind)} token, push access{seen}; write access cannot be read without "
                 f"writing: the token needs {NEEDED_PERMISSIONS}")


def app_checks(app: AppFacts, repo: str, needs_check_runs: bool) -> list[Check]:
    """The App (its JWT works), its installation for ``repo``'s owner, the permissions the
    installation grants against what a run needs, and its repository selection; a fix per failure."""
    answer = app.app
    body = answer.body if answer.ok and isinstance(answer.body, dict) else None
    if body is None:
        fix = ("check the App id (--app-id or REDLINE_CANARY_APP_ID: the App's settings page, 'App ID'), that the key "
               "is one of the App's current private keys, and this machine's clock (a JWT lives 10 minutes)")
        status: Status = "fail" if answer.status in (401, 403, 404) else "warn"
        return [Check("app", status, f"the App's JWT was not accepted ({answer.said()})", fix),
                *(Check(n, "skip", "not checked: the App cannot authenticate") for n in _APP_LATER)]
    slug = inert_line(str(body.get("slug") or "?"))
    checks = [Check("app", "ok", f"{inert_line(str(body.get('name') or slug))} (id {inert_line(str(body.get('id')))}, "
                    f"slug {slug}): the JWT works")]
    owner = inert_line(app.owner)
    inst = app.installation.body if app.installation is not None and app.installation.ok else None
    if not isinstance(inst, dict):
        return checks + _not_installed(app, repo, slug)
    checks.append(Check("installation", "ok", f"installed on {owner} (installation "
                        f"{inert_line(str(inst.get('id')))})"))
    checks.append(_app_permissions(inst, needs_check_runs))
    checks.append(_repository_access(app, inst, repo))
    if app.token_error:
        checks.append(Check("installation token", "fail", f"could not be bought: {inert_line(app.token_error)}",
                            "check the installation is not suspended, then try again"))
    else:
        checks.append(Check("installation token", "ok", "bought (POST /app/installations/{id}/access_tokens, "
                            "the one write doctor makes); the checks below read with it"))
    return checks


_APP_LATER = ("installation", "app permissions", "repository access", "installation token")


def _not_installed(app: AppFacts, repo: str, slug: str) -> list[Check]:
    """No installation covers ``repo``: none on its owner, or one whose selection leaves it out."""
    owner = inert_line(app.owner)
    listed = app.installations.body if app.installations is not None and app.installations.ok else None
    found = next((i for i in (listed if isinstance(listed, list) else [])[:500]
                  if isinstance(i, dict) and isinstance(i.get("account"), dict)
                  and str(i["account"].get("login", "")).lower() == app.owner.lower()), None)
    said = app.installation.said() if app.installation is not None else "not read"
    if app.installation is not None and app.installation.status != 404:
        return [Check("installation", "fail", f"the installation for {repo} could not be read ({said})",
                      "try again; check --api-url and the App's key"),
                *(Check(n, "skip", "not checked: no installation") for n in _APP_LATER[1:])]
    if found is None:
        return [Check("installation", "fail", f"the App is not installed on {owner} ({said})",
                      f"install it on {owner} with access to {repo}: https://github.com/apps/{slug}/installations/new"),
                *(Check(n, "skip", "not checked: no installation") for n in _APP_LATER[1:])]
    where = inert_line(str(found.get("html_url") or "the installation's settings"))
    return [Check("installation", "ok", f"installed on {owner} (installation {inert_line(str(found.get('id')))})"),
            _app_permissions(found, False),
            Check("repository access", "fail", f"selected repositories: {repo} is not among them",
                  f"add {repo} under Repository access on the installation ({where}), or choose All repositories"),
            Check("installation token", "skip", "not bought: the installation does not reach the repository")]


def _app_permissions(inst: dict[str, Any], needs_check_runs: bool) -> Check:
    raw = inst.get("permissions")
    granted: dict[str, Any] = raw if isinstance(raw, dict) else {}
    needs = APP_NEEDS + ((CHECKS_NEED,) if needs_check_runs else ())
    missing, shown = [], []
    for name, level, why in needs:
        has = granted.get(name) if isinstance(granted.get(name), str) else None
        shown.append(f"{name}: {inert_line(has or 'none')}")
        if _LEVELS.get(has or "", 0) < _LEVELS[level]:
            missing.append(f"{name}: {level} to {why} (granted: {inert_line(has or 'none')})")
    if missing:
        where = inert_line(str(inst.get("html_url") or "the installation's settings"))
        return Check("app permissions", "fail", "the installation lacks " + "; ".join(missing),
                     "in the App's settings (Permissions & events, Repository permissions) grant it, then accept "
                     f"the new permissions on the installation ({where})")
    return Check("app permissions", "ok", ", ".join(shown) + ": what a run needs")


def _repository_access(app: AppFacts, inst: dict[str, Any], repo: str) -> Check:
    selection = inst.get("repository_selection")
    if selection == "all":
        return Check("repository access", "ok", f"all repositories of {inert_line(app.owner)}, {repo} included")
    answer = app.repositories
    body = answer.body if answer is not None and answer.ok and isinstance(answer.body, dict) else None
    listed = body.get("repositories") if body is not None else None
    if not isinstance(listed, list):
        said = answer.said() if answer is not None else "not read"
        return Check("repository access", "info", f"selected repositories; the list could not be read ({said}), but "
                     f"GitHub found the installation through {repo}")
    names = {str(r.get("full_name", "")).lower() for r in listed[:500] if isinstance(r, dict)}
    total = body.get("total_count") if body is not None else None
    count = total if isinstance(total, int) and not isinstance(total, bool) else len(listed)
    if repo.lower() in names:
        return Check("repository access", "ok", f"selected repositories ({count}), {repo} among them")
    if count > len(listed):
        return Check("repository access", "info", f"selected repositories ({count}): {repo} is not among the first "
                     f"{len(listed)} listed, but GitHub found the installation through it")
    where = inert_line(str(inst.get("html_url") or "the installation's settings"))
    return Check("repository access", "fail", f"selected repositories ({count}): {repo} is not among them",
                 f"add {repo} under Repository access on the installation ({where})")


def _topic(facts: DoctorFacts) -> Check:
    body = facts.repository.body if facts.repository is not None else {}
    topics = body.get("topics") if isinstance(body, dict) else None
    if isinstance(topics, list) and CANARY_TOPIC in topics:
        return Check("topic", "ok", f"{facts.repo} opted in (topic {CANARY_TOPIC})")
    return Check("topic", "fail", f"{facts.repo} does not carry the topic {CANARY_TOPIC}",
                 f"add the topic {CANARY_TOPIC} (repository page, About, Topics): it is how a repository "
                 "agrees to receive seeded PRs")


def _commit(facts: DoctorFacts) -> Check:
    branch = inert_line(facts.branch or "?")
    ref = facts.ref
    if ref is not None and ref.ok:
        obj = ref.body.get("object") if isinstance(ref.body, dict) else None
        sha = obj.get("sha") if isinstance(obj, dict) else None
        return Check("default branch", "ok", f"{branch} at {inert_line(str(sha or '?'))[:12]}")
    if ref is not None and ref.status in (404, 409):
        return Check("default branch", "fail", f"{branch} has no commit ({ref.said()})",
                     "push a first commit to the default branch (a README is enough)")
    return Check("default branch", "fail", f"{branch} cannot be read ({ref.said() if ref else 'not read'})",
                 f"grant the token Contents: Read and write on {facts.repo}")


def _label(facts: DoctorFacts) -> Check:
    answer = facts.label_answer
    label = inert_line(facts.label)
    if answer is not None and answer.ok:
        return Check("label", "ok", f"{label} exists")
    if answer is not None and answer.status == 404:
        return Check("label", "ok", f"{label} does not exist yet: the first run creates it (Issues: Read and write)")
    return Check("label", "fail", f"{label} cannot be read ({answer.said() if answer else 'not read'})",
                 f"grant the token Issues: Read and write on {facts.repo}")


def _check_runs(facts: DoctorFacts) -> Check:
    if not facts.needs_check_runs:
        return Check("check runs", "ok", f"not needed by the {facts.reviewer} profile")
    answer = facts.check_runs
    if answer is None:
        return Check("check runs", "skip", "not checked: the default branch has no commit")
    if answer.ok:
        return Check("check runs", "ok", f"readable (the {facts.reviewer} profile reads them)")
    return Check("check runs", "fail", f"not readable ({answer.said()}): the {facts.reviewer} profile needs "
                 "them to see the reviewer finish", "grant the token Checks: Read (fine-grained), or use a token "
                 "that can read check runs")


def _installed(facts: DoctorFacts) -> Check:
    who = ", ".join(facts.logins) if facts.logins else "a bot"
    if facts.evidence:
        e = facts.evidence[0]
        where = f"a ruleset on {inert_line(facts.branch or '?')}" if e.channel == "ruleset" else f"PR #{e.number}"
        what = {"reviews": "a review", "review_comments": "an inline comment", "issue_comments": "a comment",
                "ruleset": "an automatic Copilot review"}.get(e.channel, e.channel)
        return Check("reviewer", "ok", f"installed: {where} has {what} by {inert_line(e.login)}"
                     if e.channel != "ruleset" else f"installed: {where} requests {what}")
    pulls = facts.pulls
    if pulls is None or not pulls.ok:
        said = pulls.said() if pulls else "not read"
        return Check("reviewer", "info", f"no evidence: recent PRs cannot be read ({said})")
    count = len(pulls.body) if isinstance(pulls.body, list) else 0
    unread = f"; {len(facts.unread)} read(s) failed: {inert_line(facts.unread[0])}" if facts.unread else ""
    if count == 0:
        return Check("reviewer", "info", f"no evidence: {facts.repo} has no PR yet to show {who} reviewing{unread}")
    return Check("reviewer", "info", f"no evidence: none of the {count} most recent PR(s) has a review or comment "
                 f"by {inert_line(who)}{unread} (install the reviewer on {facts.repo} if the run stays silent)")


def find_evidence(number: int, channels: Mapping[str, Answer], logins: Sequence[str],
                  any_bot: bool, self_login: str | None) -> list[Evidence]:
    """Reviews and comments on one PR by the profile's logins (any bot but the token's own
    user when the profile names none); hostile JSON: anything not shaped right is skipped."""
    wanted = {_norm(x) for x in logins}
    out: list[Evidence] = []
    for channel, answer in channels.items():
        items = answer.body if answer.ok and isinstance(answer.body, list) else []
        for item in items[:500]:
            user = item.get("user") if isinstance(item, dict) else None
            if not isinstance(user, dict) or not isinstance(user.get("login"), str):
                continue
            login = user["login"]
            if _norm(login) in wanted or (any_bot and not wanted and user.get("type") == "Bot"
                                          and _norm(login) != _norm(self_login or "")):
                out.append(Evidence(number, channel, login))
                break
    return out


def copilot_rule(answer: Answer | None) -> bool:
    rules = answer.body if answer is not None and answer.ok and isinstance(answer.body, list) else []
    return any(isinstance(r, dict) and r.get("type") == "copilot_code_review" for r in rules[:200])


def _norm(login: str) -> str:
    return login.strip().lower().removesuffix("[bot]")


def render_text(facts: DoctorFacts, checks: Sequence[Check]) -> str:
    width = max(len(c.name) for c in checks)
    lines = [f"doctor: {facts.repo} for the {facts.reviewer} reviewer"]
    for c in checks:
        fix = f"  fix: {c.fix}" if c.fix and c.status in ("fail", "warn") else ""
        lines.append(f"  {c.status.upper():<4}  {c.name:<{width}}  {c.detail}{fix}")
    blocking = sum(c.status == "fail" for c in checks)
    lines.append(f"{blocking} blocking problem(s)" if blocking else "no blocking problem")
    return "\n".join(lines)


def as_json(facts: DoctorFacts, checks: Sequence[Check], exit_code: int) -> dict[str, Any]:
    return {"repo": facts.repo, "reviewer": facts.reviewer, "checks": [c.as_dict() for c in checks],
            "blocking": sum(c.status == "fail" for c in checks), "exit_code": exit_code}
