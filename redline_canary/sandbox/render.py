"""JSON shapes, keyed and ordered as GitHub sends them (docs/github.md §1, fixtures).

API URLs point at the sandbox so that clients which follow an object's own ``url`` (PyGithub
does for edit/delete/refresh) stay on the sandbox. ``html_url`` values use the sandbox host
too, so nothing printed by a sandbox run can be mistaken for a page on github.com — except the
Copilot identity, whose recorded ``html_url`` is kept verbatim.

``Renderer`` is assembled from one base per family of shapes: ``render_people`` (users, teams and
the URL roots), ``render_repos`` (repositories and git data) and ``render_conversation`` (issues,
labels, reactions and the comment channels); the pull request's own shape and ``/rate_limit``
are here.
"""

from __future__ import annotations

from redline_canary.sandbox.model import Issue, Repo, iso
from redline_canary.sandbox.render_conversation import ConversationShapes
from redline_canary.sandbox.render_people import Json


class Renderer(ConversationShapes):
    """Turns model records into GitHub JSON; pure reads, always called under the state lock."""

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
