"""Conversation shapes: labels, reactions, issues (a pull request's issue side included), issue
comments, reviews and review comments, which are the three comment channels a scorer reads. They are
separate from the repository shapes because they read the issue and review records, and from
the pull request's own shape because every issue has them, pull request or not.
"""

from __future__ import annotations

from urllib.parse import quote

from redline_canary.sandbox.model import (
    REACTION_CONTENTS,
    Issue,
    IssueComment,
    Label,
    Reaction,
    Repo,
    Review,
    ReviewComment,
    iso,
)
from redline_canary.sandbox.render_people import Json
from redline_canary.sandbox.render_repos import RepoShapes


class ConversationShapes(RepoShapes):
    """Labels, reactions, issues and the comment channels; a base of :class:`~.render.Renderer`."""

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
