"""The stock simulated reviewers: ``SilentReviewer`` (wakes, says nothing), ``ScriptedReviewer``
(says what its ``Batch`` list tells it, when it tells it), ``BanditReviewer`` (runs the real bandit
on the PR head and posts a review) and ``ReplayReviewer`` (posts a saved capture again). Each one is
only an ``act`` on a ``ReviewContext``, so they sit apart from the base class and the hub: a test
or a profile can write its own reviewer from ``reviewers`` alone, and these four are examples of that.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from redline_canary.sandbox.reviewers import BANDIT_BOT, REDLINE_BOT, Identity, ReviewContext, Reviewer


class SilentReviewer(Reviewer):
    """Wakes and says nothing: the "entitlement lapsed" case a canary must call silent."""

    kind = "silent"

    def act(self, ctx: ReviewContext) -> None:
        return None


@dataclass
class Batch:
    """What a scripted reviewer says at one moment.

    ``after`` is seconds after the previous batch (the first: after the reviewer woke).
    Inline comments travel in the batch's first review (an empty COMMENTED review when the
    batch names none), as every inline comment on GitHub belongs to a review. An inline
    dict may carry ``reply_to=k``: the k-th inline comment this reviewer posted on the PR.
    ``edit_issue_comments`` rewrites earlier issue comments (by index) in place.
    """

    after: float = 0.0
    inline: list[dict[str, Any]] = field(default_factory=list)
    reviews: list[dict[str, Any]] = field(default_factory=list)
    issue_comments: list[str] = field(default_factory=list)
    edit_issue_comments: dict[int, str] = field(default_factory=dict)


class ScriptedReviewer(Reviewer):
    """Says exactly what it is told, batch by batch: streams, silence, errors, done signals."""

    kind = "scripted"

    def __init__(self, batches: Sequence[Batch] = (), **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.batches = list(batches)

    def act(self, ctx: ReviewContext) -> None:
        for batch in self.batches:
            if not ctx.sleep(batch.after):
                return
            reviews = list(batch.reviews)
            if batch.inline and not reviews:
                reviews = [{"body": "", "state": "COMMENTED"}]
            for i, rv in enumerate(reviews):
                ctx.post_review(
                    str(rv.get("body", "")),
                    str(rv.get("state", "COMMENTED")),
                    batch.inline if i == 0 else (),
                )
            for text in batch.issue_comments:
                ctx.post_issue_comment(text)
            for index, text in batch.edit_issue_comments.items():
                if 0 <= index < len(ctx.posted_issue_comments):
                    ctx.edit_issue_comment(ctx.posted_issue_comments[index], text)


SEVERITY = {"HIGH": "BLOCKER", "MEDIUM": "MAJOR", "LOW": "MINOR"}


class BanditReviewer(Reviewer):
    """Runs the real bandit on the PR head's Python files and posts one redline review.

    Findings on lines the diff lets a review target become inline comments; the rest are
    cited as ``path:line`` in the review body, as real bots do when GitHub refuses a line.
    """

    kind = "bandit"

    def __init__(
        self,
        *,
        identity: Identity = BANDIT_BOT,
        command: Sequence[str] | None = None,
        timeout: float = 60.0,
        **kwargs: Any,
    ) -> None:
        super().__init__(identity=identity, **kwargs)
        self.command = list(command) if command else [sys.executable, "-m", "bandit"]
        self.timeout = timeout

    def act(self, ctx: ReviewContext) -> None:
        files = {p: b for p, b in ctx.files().items() if p.endswith(".py")}
        try:
            findings = self.scan(files)
        except (OSError, ValueError, subprocess.SubprocessError) as exc:
            ctx.post_issue_comment(f"Bandit review failed: {exc}")
            return
        inline: list[dict[str, Any]] = []
        cited: list[str] = []
        for f in findings:
            body = f"[{f['severity']}] {f['test_id']}: {f['text']} (bandit {f['test_id']})"
            if f["line"] in ctx.commentable(f["path"]):
                spec: dict[str, Any] = {
                    "path": f["path"],
                    "line": f["line"],
                    "side": "RIGHT",
                    "body": body,
                }
                if f["start_line"] is not None:
                    spec["start_line"] = f["start_line"]
                    spec["start_side"] = "RIGHT"
                inline.append(spec)
            else:
                cited.append(f"- {f['path']}:{f['line']} {body}")
        if not findings:
            ctx.post_review("No issues found.", "COMMENTED")
            return
        nfiles = len({f["path"] for f in findings})
        summary = f"Bandit found {len(findings)} issue(s) in {nfiles} file(s)."
        if cited:
            summary += "\n\nOutside the diff:\n" + "\n".join(cited)
        ctx.post_review(summary, "COMMENTED", inline)

    def scan(self, files: Mapping[str, bytes]) -> list[dict[str, Any]]:
        """Bandit's findings as (path, line, start_line, severity, test_id, text), sorted."""
        if not files:
            return []
        with tempfile.TemporaryDirectory(prefix="sandbox-bandit-") as tmp:
            root = Path(tmp)
            for rel, data in files.items():
                target = root / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
            proc = subprocess.run(
                [*self.command, "-f", "json", "-q", "-r", str(root)],
                capture_output=True,
                timeout=self.timeout,
                check=False,
            )
            text = proc.stdout.decode("utf-8", "replace").strip()
            if not text.startswith("{"):
                err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
                raise ValueError(err[-1] if err else f"bandit exited {proc.returncode}")
            report = json.loads(text)
            out = []
            for res in report.get("results", []):
                path = Path(res["filename"]).resolve().relative_to(root.resolve()).as_posix()
                lines = [int(x) for x in res.get("line_range") or [res["line_number"]]]
                line = int(res["line_number"])
                end = max([line, *lines])
                out.append(
                    {
                        "path": path,
                        "line": end,
                        "start_line": line if end != line else None,
                        "severity": SEVERITY.get(str(res.get("issue_severity")), "INFO"),
                        "test_id": str(res.get("test_id")),
                        "text": str(res.get("issue_text", "")).strip(),
                    }
                )
        out.sort(key=lambda f: (f["path"], f["line"], f["test_id"]))
        return out


class ReplayReviewer(Reviewer):
    """Posts a saved capture's reviews, inline comments and issue comments on a new PR.

    Authors, bodies and positions are kept as captured (an outdated comment keeps its null
    ``line``); commit ids are rewritten to the new head and replies re-linked to the new ids.
    """

    kind = "replay"

    def __init__(self, capture: Mapping[str, Any], *, identity: Identity | None = None, **kwargs: Any) -> None:
        super().__init__(identity=identity or _identity_from(capture), **kwargs)
        self.capture = dict(capture)

    def act(self, ctx: ReviewContext) -> None:
        hub = ctx.hub
        state = hub.state
        comments = sorted(self.capture.get("review_comments") or [], key=lambda c: c.get("id", 0))
        reviews = sorted(
            self.capture.get("reviews") or [],
            key=lambda r: (str(r.get("submitted_at") or ""), r.get("id", 0)),
        )
        by_review: dict[Any, list[dict[str, Any]]] = {}
        for c in comments:
            by_review.setdefault(c.get("pull_request_review_id"), []).append(c)
        known = {r.get("id") for r in reviews}
        orphans = [k for k in by_review if k not in known]
        new_ids: dict[int, int] = {}
        plan: list[tuple[dict[str, Any] | None, list[dict[str, Any]]]] = [
            (r, by_review.get(r.get("id"), [])) for r in reviews
        ]
        plan += [(None, by_review[k]) for k in orphans]
        with state.lock:
            for rv, group in plan:
                author = hub.user_from_json(rv["user"]) if rv and rv.get("user") else None
                if author is None and group and group[0].get("user"):
                    author = hub.user_from_json(group[0]["user"])
                author = author or ctx.review_user
                rv_state = str(rv.get("state") or "COMMENTED") if rv else "COMMENTED"
                review = state.create_review(
                    ctx.repo,
                    ctx.number,
                    author,
                    {
                        "body": (rv.get("body") or "") if rv else "",
                        "event": {"APPROVED": "APPROVE", "CHANGES_REQUESTED": "REQUEST_CHANGES"}.get(
                            rv_state, "COMMENT"
                        ),
                        "comments": [],
                    },
                    validate=False,
                )
                hub.note(ctx, "review", review.id, len(group))
                for c in group:
                    spec = dict(c)
                    parent = c.get("in_reply_to_id")
                    spec["in_reply_to_id"] = new_ids.get(parent) if isinstance(parent, int) else None
                    spec.pop("original_commit_id", None)
                    user = hub.user_from_json(c["user"]) if c.get("user") else author
                    made = state.add_review_comment(
                        ctx.repo,
                        ctx.issue,
                        user or author,
                        spec,
                        review_id=review.id,
                        commit_id=ctx.head_sha,
                        raw=True,
                    )
                    if isinstance(c.get("id"), int):
                        new_ids[c["id"]] = made.id
            for ic in sorted(self.capture.get("issue_comments") or [], key=lambda c: c.get("id", 0)):
                user = hub.user_from_json(ic["user"]) if ic.get("user") else ctx.review_user
                made_ic = state.add_issue_comment(
                    ctx.repo, ctx.number, user or ctx.review_user, str(ic.get("body") or "")
                )
                hub.note(ctx, "issue_comment", made_ic.id)


def _identity_from(capture: Mapping[str, Any]) -> Identity:
    for key in ("reviews", "review_comments", "issue_comments"):
        for item in capture.get(key) or []:
            user = item.get("user") or {}
            if user.get("login") and isinstance(user.get("id"), int):
                return Identity(login=str(user["login"]), user_id=int(user["id"]), type=str(user.get("type") or "Bot"))
    return REDLINE_BOT

