"""Issues and their conversation: labels, assignees, issue comments and reactions.

A pull request is an issue here as on GitHub (one number sequence, the same labels and
comments), so ``pulls.py`` builds on this layer.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from redline_canary.sandbox.model import (
    REACTION_CONTENTS,
    ApiError,
    Issue,
    IssueComment,
    Label,
    Reaction,
    Repo,
    User,
    node_id,
    not_found,
    validation_failed,
)
from redline_canary.sandbox.state.base import Event
from redline_canary.sandbox.state.repos import Repos

D_LABELS = "https://docs.github.com/rest/issues/labels"
D_ISSUES = "https://docs.github.com/rest/issues/issues"
D_REACTIONS = "https://docs.github.com/rest/reactions/reactions"
# Issue text limits and their 422s [COMMUNITY: "body is too long (maximum is 65536
# characters)" for Issue (issue-metrics#183, nuclei#634) and "Body is too long ..." with
# code unprocessable, field data, for IssueComment (jest-lcov-reporter#14); the title's
# 256 is the number GitHub's message names (party_foul#122), though longer titles have
# been reported to pass].
MAX_BODY = 65536
MAX_TITLE = 256
STATE_REASONS = ("completed", "not_planned", "duplicate", "reopened")
_COLOR = re.compile(r"^[0-9a-fA-F]{6}$")


class Issues(Repos):
    """Issues, and the conversation every issue and pull request shares."""

    def get_issue(self, repo: Repo, number: int, doc: str | None = None) -> Issue:
        issue = repo.issues.get(number)
        if issue is None:
            raise not_found(doc)
        return issue

    def issues_enabled(self, repo: Repo, issue: Issue | None = None) -> None:
        """410 for an issue route on a repository with issues turned off; a pull request's
        conversation (labels, comments) still works there, as on GitHub."""
        if not repo.has_issues and (issue is None or issue.pull is None):
            raise ApiError(410, "Issues are disabled for this repo", doc=f"{D_ISSUES}#create-an-issue")

    def create_issue(self, repo: Repo, user: User, title: Any, body: Any, labels: Iterable[str] = ()) -> Issue:
        """POST /issues. Labels that do not exist yet are created on the fly (``ededed``),
        as with add-labels; ``title`` may be a number, which GitHub turns into text."""
        doc = f"{D_ISSUES}#create-an-issue"
        self.check_writable(repo, doc)
        self.issues_enabled(repo)
        if isinstance(title, int) and not isinstance(title, bool):
            title = str(title)
        if not isinstance(title, str) or not title.strip():
            raise validation_failed([{"resource": "Issue", "code": "missing_field", "field": "title"}], doc=doc)
        check_issue_text(title, body if isinstance(body, str) else None, doc)
        with self.lock:
            issue = self._new_issue(repo, user, title, body if isinstance(body, str) else None)
            self._add_labels(repo, issue, labels)
            return issue

    def update_issue(self, repo: Repo, number: int, user: User, body: dict[str, Any]) -> Issue:
        """PATCH /issues/{n} on a plain issue: ``state`` open|closed, ``state_reason``,
        ``title``, ``body``. Closing a closed issue changes nothing (``closed_at`` stays);
        reopening sets ``state_reason`` to ``reopened``."""
        doc = f"{D_ISSUES}#update-an-issue"
        self.check_writable(repo, doc)
        with self.lock:
            issue = self.get_issue(repo, number, doc)
            self.issues_enabled(repo, issue)
            state, reason = body.get("state"), body.get("state_reason")
            if state is not None and state not in ("open", "closed"):
                raise validation_failed([{"resource": "Issue", "code": "invalid", "field": "state"}], doc=doc)
            if reason is not None and reason not in STATE_REASONS:
                raise validation_failed([{"resource": "Issue", "code": "invalid", "field": "state_reason"}], doc=doc)
            title = body.get("title", issue.title)
            if not isinstance(title, str) or not title.strip():
                raise validation_failed([{"resource": "Issue", "code": "missing_field", "field": "title"}], doc=doc)
            text = body.get("body", issue.body)
            check_issue_text(title, text if isinstance(text, str) else None, doc)
            now = self.clock()
            if state == "closed" and issue.state == "open":
                issue.state, issue.closed_at, issue.closed_by = "closed", now, user
                issue.state_reason = reason if reason in ("completed", "not_planned", "duplicate") else "completed"
            elif state == "open" and issue.state == "closed":
                issue.state, issue.closed_at, issue.closed_by = "open", None, None
                issue.state_reason = "reopened"
            elif state == "closed" and reason in ("completed", "not_planned", "duplicate"):
                issue.state_reason = reason
            issue.title = title
            issue.body = text if isinstance(text, str) else None
            issue.updated_at = now
            return issue

    def _new_issue(self, repo: Repo, user: User, title: str, body: str | None) -> Issue:
        now = self.clock()
        iid = next(self.ids.issue)
        number = repo.next_number
        repo.next_number += 1
        issue = Issue(
            id=iid,
            node_id=node_id("I", iid),
            number=number,
            title=title,
            body=body,
            user=user,
            state="open",
            created_at=now,
            updated_at=now,
        )
        repo.issues[number] = issue
        return issue

    def create_label(self, repo: Repo, body: dict[str, Any]) -> Label:
        doc = f"{D_LABELS}#create-a-label"
        self.check_writable(repo, doc)
        name, color = body.get("name"), body.get("color", "ededed")
        if not isinstance(name, str) or not name:
            raise validation_failed([{"resource": "Label", "code": "missing_field", "field": "name"}], doc=doc)
        if not isinstance(color, str) or not _COLOR.match(color.lstrip("#")):
            raise validation_failed([{"resource": "Label", "code": "invalid", "field": "color"}], doc=doc)
        with self.lock:
            if name.lower() in repo.labels:
                raise validation_failed([{"resource": "Label", "code": "already_exists", "field": "name"}], doc=doc)
            desc = body.get("description")
            return self._new_label(repo, name, color.lstrip("#"), desc if isinstance(desc, str) else None)

    def _new_label(self, repo: Repo, name: str, color: str, desc: str | None) -> Label:
        lid = next(self.ids.label)
        label = Label(lid, node_id("LA", lid), name, color.lower(), desc)
        repo.labels[name.lower()] = label
        return label

    def add_labels(self, repo: Repo, number: int, names: Iterable[str]) -> Issue:
        doc = f"{D_LABELS}#add-labels-to-an-issue"
        self.check_writable(repo, doc)
        with self.lock:
            issue = self.get_issue(repo, number, doc)
            self.issues_enabled(repo, issue)
            self._add_labels(repo, issue, names)
            issue.updated_at = self.clock()
            return issue

    def _add_labels(self, repo: Repo, issue: Issue, names: Iterable[str]) -> None:
        for name in names:
            label = repo.labels.get(name.lower()) or self._new_label(repo, name, "ededed", None)
            if all(x.id != label.id for x in issue.labels):
                issue.labels.append(label)

    def set_labels(self, repo: Repo, number: int, names: Iterable[str]) -> Issue:
        with self.lock:
            issue = self.get_issue(repo, number)
            issue.labels = []
            self._add_labels(repo, issue, names)
            issue.updated_at = self.clock()
            return issue

    def add_issue_comment(self, repo: Repo, number: int, user: User, body: Any, *, notify: bool = True) -> IssueComment:
        doc = "https://docs.github.com/rest/issues/comments#create-an-issue-comment"
        if user.id == self.viewer.id:
            self.check_writable(repo, doc)
        if not isinstance(body, str) or not body:
            raise validation_failed([{"resource": "IssueComment", "code": "missing_field", "field": "body"}], doc=doc)
        if len(body) > MAX_BODY:
            raise validation_failed([{"resource": "IssueComment", "code": "unprocessable", "field": "data",
                                      "message": f"Body is too long (maximum is {MAX_BODY} characters)"}], doc=doc)
        with self.lock:
            issue = self.get_issue(repo, number, doc)
            self.issues_enabled(repo, issue)
            now = self.clock()
            cid = next(self.ids.issue_comment)
            comment = IssueComment(cid, node_id("IC", cid), user, body, now, now)
            issue.comments.append(comment)
            issue.updated_at = now
            if notify:
                self.emit(Event("comment", repo.full_name, number, user.login, comment_id=cid, body=body))
            return comment

    def edit_issue_comment(self, comment: IssueComment, body: str) -> None:
        with self.lock:
            comment.body = body
            comment.updated_at = self.clock()

    def find_issue_comment(self, repo: Repo, cid: int) -> tuple[Issue, IssueComment]:
        for issue in repo.issues.values():
            for c in issue.comments:
                if c.id == cid:
                    return issue, c
        raise not_found("https://docs.github.com/rest/issues/comments#get-an-issue-comment")

    def add_reaction(self, repo: Repo, target: list[Reaction], user: User, content: Any) -> tuple[Reaction, bool]:
        doc = f"{D_REACTIONS}#create-reaction-for-an-issue-comment"
        if content not in REACTION_CONTENTS:
            raise validation_failed([{"resource": "Reaction", "code": "invalid", "field": "content"}], doc=doc)
        with self.lock:
            for r in target:
                if r.user.id == user.id and r.content == content:
                    return r, False
            rid = next(self.ids.reaction)
            reaction = Reaction(rid, node_id("REA", rid), user, str(content), self.clock())
            target.append(reaction)
            return reaction, True


def check_issue_text(title: str, body: str | None, doc: str) -> None:
    if len(title) > MAX_TITLE:
        raise validation_failed([{"resource": "Issue", "code": "custom", "field": "title",
                                  "message": f"title is too long (maximum is {MAX_TITLE} characters)"}], doc=doc)
    if body is not None and len(body) > MAX_BODY:
        raise validation_failed([{"resource": "Issue", "code": "custom", "field": "body",
                                  "message": f"body is too long (maximum is {MAX_BODY} characters)"}], doc=doc)

