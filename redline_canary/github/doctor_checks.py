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
    """One check per line, in the order a user would fix them."""
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
    denied = _denied_reads(facts)
    if denied:
        return Check("permissions", "fail", f"{_kind_words(kind)} token cannot read: {', '.join(denied)}",
                     f"grant the token {NEEDED_PERMISSIONS} on {facts.repo}")
    accepted = _header(facts, "x-accepted-github-permissions")
    seen = f"; reads accept {inert_line(accepted)}" if accepted else ""
    return Check("permissions", "info",
                 f"{_kind_words(kind)} token, push access{seen}; write access cannot be read without "
                 f"writing: the token needs {NEEDED_PERMISSIONS}")


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
