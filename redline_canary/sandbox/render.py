"""JSON shapes, keyed and ordered as GitHub sends them (github-api.md §1, fixtures).

API URLs point at the sandbox so that clients which follow an object's own ``url`` (PyGithub
does for edit/delete/refresh) stay on the sandbox. ``html_url`` values use the sandbox host
too, so nothing printed by a sandbox run can be mistaken for a page on github.com — except the
Copilot identity, whose recorded ``html_url`` is kept verbatim.
"""

from __future__ import annotations

import base64
from typing import Any
from urllib.parse import quote

from redline_canary.sandbox import gitstore as g
from redline_canary.sandbox.model import (
    REACTION_CONTENTS,
    Issue,
    IssueComment,
    Label,
    Reaction,
    Repo,
    Review,
    ReviewComment,
    Team,
    User,
    iso,
)
from redline_canary.sandbox.state import State

Json = dict[str, Any]

VERIFICATION = {
    "verified": False,
    "reason": "unsigned",
    "signature": None,
    "payload": None,
    "verified_at": None,
}


class Renderer:
    """Turns model records into GitHub JSON; pure reads, always called under the state lock."""

    def __init__(self, state: State, api: str, html: str) -> None:
        self.state = state
        self.api = api.rstrip("/")
        self.html = html.rstrip("/")

    # --- people ---------------------------------------------------------------------

    def user(self, u: User | None) -> Json | None:
        if u is None:
            return None
        api = f"{self.api}/users/{quote(u.login, safe='')}"
        if u.html_url:
            html = u.html_url
        elif u.type == "Bot":
            html = f"{self.html}/apps/{u.login.removesuffix('[bot]')}"
        else:
            html = f"{self.html}/{u.login}"
        return {
            "login": u.login,
            "id": u.id,
            "node_id": u.node_id,
            "avatar_url": u.avatar_url or f"https://avatars.githubusercontent.com/u/{u.id}?v=4",
            "gravatar_id": "",
            "url": api,
            "html_url": html,
            "followers_url": f"{api}/followers",
            "following_url": f"{api}/following{{/other_user}}",
            "gists_url": f"{api}/gists{{/gist_id}}",
            "starred_url": f"{api}/starred{{/owner}}{{/repo}}",
            "subscriptions_url": f"{api}/subscriptions",
            "organizations_url": f"{api}/orgs",
            "repos_url": f"{api}/repos",
            "events_url": f"{api}/events{{/privacy}}",
            "received_events_url": f"{api}/received_events",
            "type": u.type,
            "user_view_type": "public",
            "site_admin": u.site_admin,
        }

    def user_full(self, u: User, *, private: bool) -> Json:
        out = self.user(u)
        assert out is not None
        owned = [r for r in self.state.repos.values() if r.owner.id == u.id]
        out.update(
            {
                "name": u.name,
                "company": None,
                "blog": "",
                "location": None,
                "email": u.email,
                "hireable": None,
                "bio": None,
                "twitter_username": None,
                "public_repos": sum(1 for r in owned if not r.private),
                "public_gists": 0,
                "followers": 0,
                "following": 0,
                "created_at": iso(u.created_at),
                "updated_at": iso(u.created_at),
            }
        )
        if private:
            out.update(
                {
                    "notification_email": u.email,
                    "private_gists": 0,
                    "total_private_repos": sum(1 for r in owned if r.private),
                    "owned_private_repos": sum(1 for r in owned if r.private),
                    "disk_usage": 0,
                    "collaborators": 0,
                    "two_factor_authentication": True,
                    "plan": {
                        "name": "free",
                        "space": 976562499,
                        "collaborators": 0,
                        "private_repos": 10000,
                    },
                }
            )
        return out

    def team(self, t: Team) -> Json:
        org = self.state.find_user(t.org)
        base = f"{self.api}/organizations/{org.id if org else 0}/team/{t.id}"
        return {
            "name": t.name,
            "id": t.id,
            "node_id": t.node_id,
            "slug": t.slug,
            "description": None,
            "privacy": "closed",
            "notification_setting": "notifications_enabled",
            "url": base,
            "html_url": f"{self.html}/orgs/{t.org}/teams/{t.slug}",
            "members_url": f"{base}/members{{/member}}",
            "repositories_url": f"{base}/repos",
            "permission": "pull",
            "parent": None,
            "type": "organization",
            "organization_id": org.id if org else 0,
        }

    # --- repositories ----------------------------------------------------------------

    def repo_base(self, r: Repo) -> str:
        return f"{self.api}/repos/{r.full_name}"

    def repo_html(self, r: Repo) -> str:
        return f"{self.html}/{r.full_name}"

    def repo(self, r: Repo, *, full: bool = False) -> Json:
        b = self.repo_base(r)
        html = self.repo_html(r)
        host = self.html.split("://", 1)[-1]
        open_count = sum(1 for i in r.issues.values() if i.state == "open")
        out: Json = {
            "id": r.id,
            "node_id": r.node_id,
            "name": r.name,
            "full_name": r.full_name,
            "private": r.private,
            "owner": self.user(r.owner),
            "html_url": html,
            "description": r.description,
            "fork": r.fork_of is not None,
            "url": b,
            "forks_url": f"{b}/forks",
            "keys_url": f"{b}/keys{{/key_id}}",
            "collaborators_url": f"{b}/collaborators{{/collaborator}}",
            "teams_url": f"{b}/teams",
            "hooks_url": f"{b}/hooks",
            "issue_events_url": f"{b}/issues/events{{/number}}",
            "events_url": f"{b}/events",
            "assignees_url": f"{b}/assignees{{/user}}",
            "branches_url": f"{b}/branches{{/branch}}",
            "tags_url": f"{b}/tags",
            "blobs_url": f"{b}/git/blobs{{/sha}}",
            "git_tags_url": f"{b}/git/tags{{/sha}}",
            "git_refs_url": f"{b}/git/refs{{/sha}}",
            "trees_url": f"{b}/git/trees{{/sha}}",
            "statuses_url": f"{b}/statuses/{{sha}}",
            "languages_url": f"{b}/languages",
            "stargazers_url": f"{b}/stargazers",
            "contributors_url": f"{b}/contributors",
            "subscribers_url": f"{b}/subscribers",
            "subscription_url": f"{b}/subscription",
            "commits_url": f"{b}/commits{{/sha}}",
            "git_commits_url": f"{b}/git/commits{{/sha}}",
            "comments_url": f"{b}/comments{{/number}}",
            "issue_comment_url": f"{b}/issues/comments{{/number}}",
            "contents_url": f"{b}/contents/{{+path}}",
            "compare_url": f"{b}/compare/{{base}}...{{head}}",
            "merges_url": f"{b}/merges",
            "archive_url": f"{b}/{{archive_format}}{{/ref}}",
            "downloads_url": f"{b}/downloads",
            "issues_url": f"{b}/issues{{/number}}",
            "pulls_url": f"{b}/pulls{{/number}}",
            "milestones_url": f"{b}/milestones{{/number}}",
            "notifications_url": f"{b}/notifications{{?since,all,participating}}",
            "labels_url": f"{b}/labels{{/name}}",
            "releases_url": f"{b}/releases{{/id}}",
            "deployments_url": f"{b}/deployments",
            "created_at": iso(r.created_at),
            "updated_at": iso(r.updated_at),
            "pushed_at": iso(r.pushed_at),
            "git_url": f"git://{host}/{r.full_name}.git",
            "ssh_url": f"git@{host}:{r.full_name}.git",
            "clone_url": f"{html}.git",
            "svn_url": html,
            "homepage": None,
            "size": 0,
            "stargazers_count": 0,
            "watchers_count": 0,
            "language": None,
            "has_issues": r.has_issues,
            "has_projects": True,
            "has_downloads": True,
            "has_wiki": False,
            "has_pages": False,
            "has_discussions": False,
            "forks_count": 0,
            "mirror_url": None,
            "archived": False,
            "disabled": False,
            "open_issues_count": open_count,
            "license": None,
            "allow_forking": True,
            "is_template": False,
            "web_commit_signoff_required": False,
            "topics": list(r.topics),
            "visibility": "private" if r.private else "public",
            "forks": 0,
            "open_issues": open_count,
            "watchers": 0,
            "default_branch": r.default_branch,
        }
        if full:
            out["permissions"] = {
                "admin": r.writable,
                "maintain": r.writable,
                "push": r.writable,
                "triage": True,
                "pull": True,
            }
            out.update(
                {
                    "allow_squash_merge": True,
                    "allow_merge_commit": True,
                    "allow_rebase_merge": True,
                    "allow_auto_merge": False,
                    "delete_branch_on_merge": False,
                    "allow_update_branch": False,
                    "use_squash_pr_title_as_default": False,
                    "squash_merge_commit_message": "COMMIT_MESSAGES",
                    "squash_merge_commit_title": "COMMIT_OR_PR_TITLE",
                    "merge_commit_message": "PR_TITLE",
                    "merge_commit_title": "MERGE_MESSAGE",
                    "custom_properties": {},
                }
            )
            if r.owner.type == "Organization":
                out["organization"] = self.user(r.owner)
            if r.fork_of is not None:
                out["parent"] = self.repo(r.fork_of)
                root = r.fork_of
                while root.fork_of is not None:
                    root = root.fork_of
                out["source"] = self.repo(root)
            out["network_count"] = 0
            out["subscribers_count"] = 0
        return out

    # --- git data --------------------------------------------------------------------------

    def ref(self, r: Repo, ref: str) -> Json:
        sha = r.refs[ref]
        kind = self.state.store.kind(sha) or "commit"
        b = self.repo_base(r)
        return {
            "ref": ref,
            "node_id": r.ref_nodes.get(ref, ""),
            "url": f"{b}/git/{quote(ref)}",
            "object": {"sha": sha, "type": kind, "url": f"{b}/git/{kind}s/{sha}"},
        }

    def tree(self, r: Repo, sha: str, *, shown_sha: str | None = None, recursive: bool = False) -> Json:
        b = self.repo_base(r)
        entries = []
        for path, e in self.state.store.walk(sha, recursive):
            item: Json = {"path": path, "mode": e.mode, "type": e.type, "sha": e.sha}
            if e.type == "blob":
                item["size"] = len(self.state.store.blobs.get(e.sha, b""))
                item["url"] = f"{b}/git/blobs/{e.sha}"
            elif e.type == "tree":
                item["url"] = f"{b}/git/trees/{e.sha}"
            entries.append(item)
        shown = shown_sha or sha
        return {"sha": shown, "url": f"{b}/git/trees/{shown}", "tree": entries, "truncated": False}

    def commit(self, r: Repo, c: g.Commit) -> Json:
        b = self.repo_base(r)
        html = self.repo_html(r)
        return {
            "sha": c.sha,
            "node_id": "C_kwDO" + base64.b64encode(bytes.fromhex(c.sha)).decode().rstrip("="),
            "url": f"{b}/git/commits/{c.sha}",
            "html_url": f"{html}/commit/{c.sha}",
            "author": _sig(c.author),
            "committer": _sig(c.committer),
            "tree": {"sha": c.tree, "url": f"{b}/git/trees/{c.tree}"},
            "message": c.message,
            "parents": [{"sha": p, "url": f"{b}/git/commits/{p}", "html_url": f"{html}/commit/{p}"} for p in c.parents],
            "verification": dict(VERIFICATION),
        }

    def branch(self, r: Repo, name: str) -> Json:
        sha = r.refs[f"refs/heads/{name}"]
        b = self.repo_base(r)
        html = self.repo_html(r)
        c = self.state.store.commits.get(sha)
        inner: Json = {}
        if c is not None:
            inner = {
                "author": _sig(c.author),
                "committer": _sig(c.committer),
                "message": c.message,
                "tree": {"sha": c.tree, "url": f"{b}/git/trees/{c.tree}"},
                "url": f"{b}/git/commits/{sha}",
                "comment_count": 0,
                "verification": dict(VERIFICATION),
            }
        return {
            "name": name,
            "commit": {
                "sha": sha,
                "node_id": "C_kwDO" + base64.b64encode(bytes.fromhex(sha)).decode().rstrip("="),
                "commit": inner,
                "url": f"{b}/commits/{sha}",
                "html_url": f"{html}/commit/{sha}",
                "comments_url": f"{b}/commits/{sha}/comments",
                "author": None,
                "committer": None,
                "parents": [
                    {"sha": p, "url": f"{b}/commits/{p}", "html_url": f"{html}/commit/{p}"}
                    for p in (c.parents if c else ())
                ],
            },
            "_links": {"self": f"{b}/branches/{quote(name)}", "html": f"{html}/tree/{name}"},
            "protected": False,
            "protection": {
                "enabled": False,
                "required_status_checks": {
                    "enforcement_level": "off",
                    "contexts": [],
                    "checks": [],
                },
            },
            "protection_url": f"{b}/branches/{quote(name)}/protection",
        }

    # --- conversation ------------------------------------------------------------------

    def label(self, r: Repo, lab: Label) -> Json:
        return {
            "id": lab.id,
            "node_id": lab.node_id,
            "url": f"{self.repo_base(r)}/labels/{quote(lab.name)}",
            "name": lab.name,
            "color": lab.color,
            "default": lab.default,
            "description": lab.description,
        }

    def reactions(self, url: str, items: list[Reaction]) -> Json:
        out: Json = {"url": f"{url}/reactions", "total_count": len(items)}
        for content in ("+1", "-1", "laugh", "hooray", "confused", "heart", "rocket", "eyes"):
            out[content] = sum(1 for x in items if x.content == content)
        assert set(REACTION_CONTENTS) <= set(out)
        return out

    def reaction(self, x: Reaction) -> Json:
        return {
            "id": x.id,
            "node_id": x.node_id,
            "user": self.user(x.user),
            "content": x.content,
            "created_at": iso(x.created_at),
        }

    def issue(self, r: Repo, i: Issue, *, single: bool = False) -> Json:
        b = self.repo_base(r)
        url = f"{b}/issues/{i.number}"
        kind = "pull" if i.pull else "issues"
        html = f"{self.repo_html(r)}/{kind}/{i.number}"
        out: Json = {
            "url": url,
            "repository_url": b,
            "labels_url": f"{url}/labels{{/name}}",
            "comments_url": f"{url}/comments",
            "events_url": f"{url}/events",
            "html_url": html,
            "id": i.id,
            "node_id": i.node_id,
            "number": i.number,
            "title": i.title,
            "user": self.user(i.user),
            "labels": [self.label(r, x) for x in i.labels],
            "state": i.state,
            "locked": i.locked,
            "assignee": self.user(i.assignees[0]) if i.assignees else None,
            "assignees": [self.user(x) for x in i.assignees],
            "milestone": None,
            "comments": len(i.comments),
            "created_at": iso(i.created_at),
            "updated_at": iso(i.updated_at),
            "closed_at": iso(i.closed_at) if i.closed_at else None,
            "author_association": self.state.association(i.user, r),
            "active_lock_reason": None,
        }
        if i.pull is not None:
            out["draft"] = i.pull.draft
            out["pull_request"] = {
                "url": f"{b}/pulls/{i.number}",
                "html_url": html,
                "diff_url": f"{html}.diff",
                "patch_url": f"{html}.patch",
                "merged_at": None,
            }
        out["body"] = i.body
        if single:
            out["closed_by"] = self.user(i.closed_by) if i.state == "closed" and i.closed_by else None
        out["reactions"] = self.reactions(url, i.reactions)
        out["timeline_url"] = f"{url}/timeline"
        out["performed_via_github_app"] = None
        out["state_reason"] = i.state_reason  # "reopened" stays on an open issue, as on GitHub
        return out

    def issue_comment(self, r: Repo, i: Issue, c: IssueComment) -> Json:
        b = self.repo_base(r)
        url = f"{b}/issues/comments/{c.id}"
        return {
            "url": url,
            "html_url": f"{self.repo_html(r)}/issues/{i.number}#issuecomment-{c.id}",
            "issue_url": f"{b}/issues/{i.number}",
            "id": c.id,
            "node_id": c.node_id,
            "user": self.user(c.user),
            "created_at": iso(c.created_at),
            "updated_at": iso(c.updated_at),
            "author_association": self.state.association(c.user, r),
            "body": c.body,
            "reactions": self.reactions(url, c.reactions),
            "performed_via_github_app": None,
        }

    def review(self, r: Repo, i: Issue, rv: Review) -> Json:
        html = f"{self.repo_html(r)}/pull/{i.number}"
        pr_url = f"{self.repo_base(r)}/pulls/{i.number}"
        out: Json = {
            "id": rv.id,
            "node_id": rv.node_id,
            "user": self.user(rv.user),
            "body": rv.body,
            "state": rv.state,
            "html_url": f"{html}#pullrequestreview-{rv.id}",
            "pull_request_url": pr_url,
            "author_association": self.state.association(rv.user, r),
            "_links": {
                "html": {"href": f"{html}#pullrequestreview-{rv.id}"},
                "pull_request": {"href": pr_url},
            },
        }
        if rv.submitted_at is not None:
            out["submitted_at"] = iso(rv.submitted_at)
        out["commit_id"] = rv.commit_id
        return out

    def review_comment(self, r: Repo, i: Issue, c: ReviewComment) -> Json:
        b = self.repo_base(r)
        url = f"{b}/pulls/comments/{c.id}"
        html = f"{self.repo_html(r)}/pull/{i.number}#discussion_r{c.id}"
        pr_url = f"{b}/pulls/{i.number}"
        out: Json = {
            "url": url,
            "pull_request_review_id": c.review_id,
            "id": c.id,
            "node_id": c.node_id,
            "diff_hunk": c.diff_hunk,
            "path": c.path,
            "commit_id": c.commit_id,
            "original_commit_id": c.original_commit_id,
            "user": self.user(c.user),
            "body": c.body,
            "created_at": iso(c.created_at),
            "updated_at": iso(c.updated_at),
            "html_url": html,
            "pull_request_url": pr_url,
            "author_association": self.state.association(c.user, r),
            "_links": {
                "self": {"href": url},
                "html": {"href": html},
                "pull_request": {"href": pr_url},
            },
            "reactions": self.reactions(url, c.reactions),
            "start_line": c.start_line,
            "original_start_line": c.original_start_line,
            "start_side": c.start_side,
            "line": c.line,
            "original_line": c.original_line,
            "side": c.side,
            "original_position": c.original_position,
            "position": c.position,
            "subject_type": c.subject_type,
        }
        if c.in_reply_to_id is not None:
            out["in_reply_to_id"] = c.in_reply_to_id
        return out

    # --- pull requests ----------------------------------------------------------------

    def pull(self, r: Repo, i: Issue, *, full: bool = True) -> Json:
        p = i.pr
        b = self.repo_base(r)
        url = f"{b}/pulls/{i.number}"
        html = f"{self.repo_html(r)}/pull/{i.number}"
        issue_url = f"{b}/issues/{i.number}"
        statuses = f"{b}/statuses/{p.head_sha}"
        out: Json = {
            "url": url,
            "id": p.id,
            "node_id": p.node_id,
            "html_url": html,
            "diff_url": f"{html}.diff",
            "patch_url": f"{html}.patch",
            "issue_url": issue_url,
            "number": i.number,
            "state": i.state,
            "locked": i.locked,
            "title": i.title,
            "user": self.user(i.user),
            "body": i.body,
            "created_at": iso(i.created_at),
            "updated_at": iso(i.updated_at),
            "closed_at": iso(i.closed_at) if i.closed_at else None,
            "merged_at": None,
            "merge_commit_sha": None,
            "assignee": self.user(i.assignees[0]) if i.assignees else None,
            "assignees": [self.user(x) for x in i.assignees],
            "requested_reviewers": [self.user(x) for x in p.requested_reviewers],
            "requested_teams": [self.team(t) for t in p.requested_teams],
            "labels": [self.label(r, x) for x in i.labels],
            "milestone": None,
            "draft": p.draft,
            "commits_url": f"{url}/commits",
            "review_comments_url": f"{url}/comments",
            "review_comment_url": f"{b}/pulls/comments{{/number}}",
            "comments_url": f"{issue_url}/comments",
            "statuses_url": statuses,
            "head": self._side(p.head_repo, p.head_ref, p.head_sha),
            "base": self._side(r, p.base_ref, p.base_sha),
            "_links": {
                "self": {"href": url},
                "html": {"href": html},
                "issue": {"href": issue_url},
                "comments": {"href": f"{issue_url}/comments"},
                "review_comments": {"href": f"{url}/comments"},
                "review_comment": {"href": f"{b}/pulls/comments{{/number}}"},
                "commits": {"href": f"{url}/commits"},
                "statuses": {"href": statuses},
            },
            "author_association": self.state.association(i.user, r),
            "auto_merge": None,
            "active_lock_reason": None,
        }
        if not full:
            return out
        diff = self.state.diff(i)
        out.update(
            {
                "merged": p.merged,
                "mergeable": True if i.state == "open" else None,
                "rebaseable": True if i.state == "open" else None,
                "mergeable_state": "clean" if i.state == "open" else "unknown",
                "merged_by": None,
                "comments": len(i.comments),
                "review_comments": len(p.review_comments),
                "maintainer_can_modify": p.maintainer_can_modify,
                "commits": len(self.state.store.commits_between(p.base_sha, p.head_sha)),
                "additions": sum(d.additions for d in diff.values()),
                "deletions": sum(d.deletions for d in diff.values()),
                "changed_files": len(diff),
            }
        )
        return out

    def _side(self, r: Repo, ref: str, sha: str) -> Json:
        return {
            "label": f"{r.owner.login}:{ref}",
            "ref": ref,
            "sha": sha,
            "user": self.user(r.owner),
            "repo": self.repo(r),
        }

    def rate_limit(self, limit: int, used: int, reset: int, now: float) -> Json:
        core = {"limit": limit, "used": used, "remaining": max(limit - used, 0), "reset": reset}
        soon = int(now) + 60

        def idle(n: int, r: int) -> Json:
            return {"limit": n, "used": 0, "remaining": n, "reset": r}

        return {
            "resources": {
                "core": core,
                "search": idle(30, soon),
                "graphql": idle(5000, reset),
                "integration_manifest": idle(5000, reset),
                "source_import": idle(100, soon),
                "code_scanning_upload": idle(1000, reset),
                "actions_runner_registration": idle(10000, reset),
                "scim": idle(15000, reset),
                "dependency_snapshots": idle(100, soon),
                "code_search": idle(10, soon),
            },
            "rate": dict(core),
        }


def _sig(s: g.Signature) -> Json:
    return {"name": s.name, "email": s.email, "date": s.date}
