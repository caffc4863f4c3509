"""Pull requests: opening (with the write policies), updating, review requests, the diff."""

from __future__ import annotations

from typing import Any

from redline_canary.sandbox import gitstore as g
from redline_canary.sandbox.model import (
    ApiError,
    Issue,
    PullData,
    Repo,
    User,
    node_id,
    not_found,
    validation_failed,
)
from redline_canary.sandbox.state.base import Event
from redline_canary.sandbox.state.issues import Issues

D_PULLS = "https://docs.github.com/rest/pulls/pulls"
D_REVIEW_REQ = "https://docs.github.com/rest/pulls/review-requests"
# PR creation refused by the content-creation limit (docs/github.md §5.2).
TOO_QUICKLY = "was submitted too quickly"


class Pulls(Issues):
    """Pull requests: an issue with ``pull`` set, a head and a base."""

    def get_pull(self, repo: Repo, number: int, doc: str | None = None) -> Issue:
        issue = repo.issues.get(number)
        if issue is None or issue.pull is None:
            raise not_found(doc or f"{D_PULLS}#get-a-pull-request")
        return issue

    def resolve_head(self, repo: Repo, head: str, head_repo: Any) -> tuple[Repo, str]:
        """``branch`` or ``owner:branch``; a foreign owner means a fork in the network."""
        owner, sep, branch = head.partition(":")
        if not sep:
            return repo, head
        if owner.lower() == repo.owner.login.lower():
            return repo, branch
        name = head_repo if isinstance(head_repo, str) and head_repo else repo.name
        fork = self.repos.get(f"{owner}/{name}".lower())
        if fork is None:
            fork = next(
                (r for r in self.repos.values() if r.owner.login.lower() == owner.lower() and r.fork_of is repo),
                None,
            )
        return (fork, branch) if fork is not None else (repo, "\0missing")

    def create_pull(self, repo: Repo, user: User, body: dict[str, Any], *, via_api: bool = False) -> Issue:
        """Open a PR. ``via_api``: the product asked over HTTP, so the write policies
        (ref visibility lag, "submitted too quickly") apply; in-process setup skips them."""
        doc = f"{D_PULLS}#create-a-pull-request"
        self.check_writable(repo, doc)
        head, base = body.get("head"), body.get("base")
        title = body.get("title")
        if not isinstance(head, str) or not isinstance(base, str):
            missing = "head" if not isinstance(head, str) else "base"
            raise validation_failed([{"resource": "PullRequest", "code": "missing_field", "field": missing}], doc=doc)
        if not isinstance(title, str) or not title.strip():
            raise validation_failed([{"resource": "PullRequest", "code": "missing_field", "field": "title"}], doc=doc)
        with self.lock:
            base_sha = repo.branch_sha(base)
            if base_sha is None:
                raise validation_failed([{"resource": "PullRequest", "field": "base", "code": "invalid"}], doc=doc)
            head_repo, head_ref = self.resolve_head(repo, head, body.get("head_repo"))
            head_sha = head_repo.branch_sha(head_ref)
            lag = self.policies.ref_lag
            if via_api and lag is not None and lag.hides(head_repo.id, head_ref):
                head_sha = None
            if head_sha is None:
                raise validation_failed([{"resource": "PullRequest", "field": "head", "code": "invalid"}], doc=doc)
            for other in repo.pulls():
                op = other.pr
                if (
                    other.state == "open"
                    and op.head_repo is head_repo
                    and op.head_ref == head_ref
                    and op.base_ref == base
                ):
                    label = f"{head_repo.owner.login}:{head_ref}"
                    raise validation_failed(
                        [
                            {
                                "resource": "PullRequest",
                                "code": "custom",
                                "message": f"A pull request already exists for {label}.",
                            }
                        ],
                        doc=doc,
                    )
            if head_sha in self.store.ancestors(base_sha):
                raise validation_failed(
                    [
                        {
                            "resource": "PullRequest",
                            "code": "custom",
                            "message": f"No commits between {base} and {head}",
                        }
                    ],
                    doc=doc,
                )
            limit = self.policies.too_quickly
            refused = via_api and limit is not None and limit.take(repo.full_name)
            too_quickly = validation_failed(
                [{"resource": "PullRequest", "code": "custom", "message": TOO_QUICKLY}], doc=doc
            )
            if refused and limit is not None and not limit.created:
                raise too_quickly
            text = body.get("body")
            issue = self._new_issue(repo, user, title, text if isinstance(text, str) else None)
            pid = next(self.ids.pull)
            issue.pull = PullData(
                id=pid,
                node_id=node_id("PR", pid),
                head_repo=head_repo,
                head_ref=head_ref,
                head_sha=head_sha,
                base_ref=base,
                base_sha=base_sha,
                draft=bool(body.get("draft", False)),
                maintainer_can_modify=bool(body.get("maintainer_can_modify", False)),
            )
            self.emit(Event("opened", repo.full_name, issue.number, user.login))
            if refused:
                raise too_quickly  # the PR exists; only the answer says otherwise
            return issue

    def update_pull(self, repo: Repo, number: int, body: dict[str, Any]) -> Issue:
        doc = f"{D_PULLS}#update-a-pull-request"
        self.check_writable(repo, doc)
        with self.lock:
            issue = self.get_pull(repo, number, doc)
            pull = issue.pr
            now = self.clock()
            state = body.get("state")
            if state is not None and state not in ("open", "closed"):
                raise validation_failed([{"resource": "PullRequest", "field": "state", "code": "invalid"}], doc=doc)
            if "base" in body:
                base = body["base"]
                if not isinstance(base, str) or repo.branch_sha(base) is None:
                    raise validation_failed(
                        [{"resource": "PullRequest", "field": "base", "code": "invalid"}],
                        doc=doc,
                    )
                pull.base_ref = base
                pull.base_sha = repo.branch_sha(base) or pull.base_sha
            if isinstance(body.get("title"), str):
                issue.title = body["title"]
            if "body" in body:
                issue.body = body["body"] if isinstance(body["body"], str) else None
            if isinstance(body.get("maintainer_can_modify"), bool):
                pull.maintainer_can_modify = body["maintainer_can_modify"]
            if state == "closed" and issue.state == "open":
                issue.state, issue.closed_at, issue.closed_by = "closed", now, self.viewer
            elif state == "open" and issue.state == "closed":
                if pull.head_repo.branch_sha(pull.head_ref) is None:
                    raise validation_failed(
                        [
                            {
                                "resource": "PullRequest",
                                "code": "custom",
                                "message": f"state cannot be changed. The {pull.head_ref} branch has been deleted.",
                            }
                        ],
                        doc=doc,
                    )
                issue.state, issue.closed_at, issue.closed_by = "open", None, None
                pull.head_sha = pull.head_repo.branch_sha(pull.head_ref) or pull.head_sha
            issue.updated_at = now
            return issue

    def request_reviewers(self, repo: Repo, number: int, user: User, reviewers: Any, teams: Any) -> Issue:
        doc = f"{D_REVIEW_REQ}#request-reviewers-for-a-pull-request"
        self.check_writable(repo, doc)
        logins = [str(x) for x in reviewers] if isinstance(reviewers, list) else []
        slugs = [str(x) for x in teams] if isinstance(teams, list) else []
        with self.lock:
            issue = self.get_pull(repo, number, doc)
            pull = issue.pr
            resolved: list[User] = []
            woken: list[str] = []  # logins a simulated reviewer hears about
            not_collaborator = ApiError(
                422,
                "Reviews may only be requested from collaborators. One or more of the "
                "users or teams you specified is not a collaborator of the "
                f"{repo.full_name} repository.",
                doc=doc,
            )
            for login in logins:
                if login.lower() == issue.user.login.lower():
                    raise ApiError(422, "Review cannot be requested from pull request author.", doc=doc)
                mode = self.policies.review_request_mode(repo.full_name, login)
                if mode == "rejected":
                    raise not_collaborator
                if mode != "registered":
                    # 201 all the same, but the login never shows in requested_reviewers
                    # (docs/github.md §8); "hidden" still wakes the bot, "dropped" does not.
                    if mode == "hidden":
                        woken.append(login)
                    continue
                candidate = self.find_user(login)
                if candidate is None or not self.is_collaborator(candidate, repo):
                    raise not_collaborator
                resolved.append(candidate)
                woken.append(candidate.login)
            for candidate in resolved:
                if all(u.id != candidate.id for u in pull.requested_reviewers):
                    pull.requested_reviewers.append(candidate)
            for slug in slugs:
                team = self.ensure_team(repo.owner.login, slug)
                if team not in pull.requested_teams:
                    pull.requested_teams.append(team)
            issue.updated_at = self.clock()
            if woken:
                self.emit(Event("review_requested", repo.full_name, number, user.login, requested=tuple(woken)))
            return issue

    def diff(self, issue: Issue) -> dict[str, g.FileDiff]:
        base_tree, head_tree = self.pull_trees(issue)
        key = (base_tree, head_tree)
        cached = self._diff_cache.get(key)
        if cached is None:
            cached = g.diff_trees(self.store, base_tree, head_tree)
            if len(self._diff_cache) > 256:
                self._diff_cache.clear()
            self._diff_cache[key] = cached
        return cached

    def merge_base(self, base_sha: str, head_sha: str) -> str:
        base_anc = self.store.ancestors(base_sha)
        queue, seen = [head_sha], set()
        while queue:
            cur = queue.pop(0)
            if cur in base_anc:
                return cur
            if cur in seen or cur not in self.store.commits:
                continue
            seen.add(cur)
            queue.extend(self.store.commits[cur].parents)
        return base_sha

    def pull_trees(self, issue: Issue) -> tuple[str, str]:
        pull = issue.pr
        mb = self.merge_base(pull.base_sha, pull.head_sha)
        base_tree = self.store.tree_of(mb) or g.EMPTY_TREE
        head_tree = self.store.tree_of(pull.head_sha) or g.EMPTY_TREE
        return base_tree, head_tree



