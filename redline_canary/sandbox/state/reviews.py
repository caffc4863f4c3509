"""Reviews and inline review comments: the channel simulated reviewers post through."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from redline_canary.sandbox import gitstore as g
from redline_canary.sandbox.model import (
    ApiError,
    Issue,
    Repo,
    Review,
    ReviewComment,
    User,
    node_id,
    not_found,
)
from redline_canary.sandbox.state.pulls import Pulls

D_REVIEWS = "https://docs.github.com/rest/pulls/reviews"


class Reviews(Pulls):
    """Reviews and their inline comments, checked against the PR's diff."""

    def find_review_comment(self, repo: Repo, cid: int) -> tuple[Issue, ReviewComment]:
        for issue in repo.pulls():
            for c in issue.pr.review_comments:
                if c.id == cid:
                    return issue, c
        raise not_found("https://docs.github.com/rest/pulls/comments#get-a-review-comment-for-a-pull-request")

    def create_review(
        self,
        repo: Repo,
        number: int,
        user: User,
        body: dict[str, Any],
        *,
        comment_user: User | None = None,
        validate: bool = True,
    ) -> Review:
        """POST /pulls/{n}/reviews; also the path simulated reviewers post through."""
        doc = f"{D_REVIEWS}#create-a-review-for-a-pull-request"
        if user.id == self.viewer.id:
            self.check_writable(repo, doc)
        event = body.get("event")
        states = {"APPROVE": "APPROVED", "REQUEST_CHANGES": "CHANGES_REQUESTED", "COMMENT": "COMMENTED"}
        if event is not None and event not in states:
            raise ApiError(422, "Unprocessable Entity", errors=[f"Event {event} is not valid"], doc=doc)
        state = states[event] if isinstance(event, str) else "PENDING"
        comments = body.get("comments") or []
        text = body.get("body")
        with self.lock:
            issue = self.get_pull(repo, number, doc)
            pull = issue.pr
            if issue.user.id == user.id and state in ("APPROVED", "CHANGES_REQUESTED"):
                verb = "approve" if state == "APPROVED" else "request changes on"
                raise ApiError(
                    422,
                    "Unprocessable Entity",
                    errors=[f"Can not {verb} your own pull request"],
                    doc=doc,
                )
            if state == "PENDING" and any(r.state == "PENDING" and r.user.id == user.id for r in pull.reviews):
                raise ApiError(
                    422,
                    "Unprocessable Entity",
                    errors=["User can only have one pending review per pull request"],
                    doc=doc,
                )
            commit_id = body.get("commit_id") if isinstance(body.get("commit_id"), str) else None
            commit_id = commit_id or pull.head_sha
            if validate:
                self._validate_review_comments(issue, comments, doc)
            now = self.clock()
            rid = next(self.ids.review)
            review = Review(
                id=rid,
                node_id=node_id("PRR", rid),
                user=user,
                body=text if isinstance(text, str) else "",
                state=state,
                commit_id=commit_id,
                submitted_at=None if state == "PENDING" else now,
            )
            pull.reviews.append(review)
            for spec in comments:
                self.add_review_comment(repo, issue, comment_user or user, spec, review_id=rid, commit_id=commit_id)
            if state != "PENDING":
                pull.requested_reviewers = [u for u in pull.requested_reviewers if u.id != user.id]
            issue.updated_at = now
            return review

    def _validate_review_comments(self, issue: Issue, comments: Any, doc: str) -> None:
        if not isinstance(comments, list):
            raise ApiError(422, "Invalid request.\n\nFor 'properties/comments', is not an array.", doc=doc)
        diff = self.diff(issue)
        for spec in comments:
            if not isinstance(spec, dict) or not isinstance(spec.get("body"), str):
                raise ApiError(
                    422,
                    "Unprocessable Entity",
                    errors=["Review comment body is missing"],
                    doc=doc,
                )
            path = spec.get("path")
            fd = diff.get(path) if isinstance(path, str) else None
            if fd is None:
                # Unconfirmed wording for a path outside the diff.
                raise ApiError(422, "Unprocessable Entity", errors=["Path could not be resolved"], doc=doc)
            if spec.get("subject_type") == "file":
                continue
            line = spec.get("line", spec.get("position"))
            side = spec.get("side") or "RIGHT"
            if side == "RIGHT" and (not isinstance(line, int) or line not in fd.commentable):
                raise ApiError(
                    422,
                    "Unprocessable Entity",
                    errors=["Pull request review thread line must be part of the diff"],
                    doc=doc,
                )

    def add_review_comment(
        self,
        repo: Repo,
        issue: Issue,
        user: User,
        spec: Mapping[str, Any],
        *,
        review_id: int | None,
        commit_id: str,
        raw: bool = False,
    ) -> ReviewComment:
        """Store one inline comment. ``raw`` keeps a captured comment's positions verbatim."""
        pull = issue.pr
        now = self.clock()
        cid = next(self.ids.review_comment)
        path = str(spec.get("path") or "")
        file_level = spec.get("subject_type") == "file"
        line = _opt_int(spec.get("line", spec.get("position")))
        start = _opt_int(spec.get("start_line"))
        side = spec.get("side") or ("RIGHT" if not file_level else None)
        start_side = spec.get("start_side") or (side if start is not None else None)
        hunk = ""
        if not raw and line is not None:
            base_tree, head_tree = self.pull_trees(issue)
            hunk = g.diff_hunk(self.store, base_tree, head_tree, path, line)
        comment = ReviewComment(
            id=cid,
            node_id=node_id("PRRC", cid),
            review_id=review_id,
            user=user,
            body=str(spec.get("body") or ""),
            path=path,
            commit_id=commit_id,
            original_commit_id=str(spec.get("original_commit_id") or commit_id),
            diff_hunk=str(spec.get("diff_hunk") or hunk),
            line=None if file_level else line,
            original_line=_opt_int(spec.get("original_line", line)) if not file_level else None,
            start_line=start,
            original_start_line=_opt_int(spec.get("original_start_line", start)),
            side=str(side) if side else None,
            start_side=str(start_side) if start_side else None,
            position=None if file_level else _opt_int(spec.get("position", line)),
            original_position=None
            if file_level
            else _opt_int(spec.get("original_position", spec.get("position", line))),
            subject_type="file" if file_level else "line",
            in_reply_to_id=_opt_int(spec.get("in_reply_to_id", spec.get("in_reply_to"))),
            created_at=now,
            updated_at=now,
        )
        pull.review_comments.append(comment)
        issue.updated_at = now
        return comment


def _opt_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None

