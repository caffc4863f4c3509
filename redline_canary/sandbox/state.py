"""Domain operations on the sandbox world, with GitHub's validation rules and messages.

Every HTTP route and every simulated reviewer goes through these methods under one
re-entrant lock, so a reviewer posting on a background thread can never interleave with a
half-applied request. Error texts are the ones recorded from GitHub (github-api.md §2,
§2.1, §8) where a recording or a first-hand quote exists; the few that are not confirmed
say so next to them.
"""

from __future__ import annotations

import base64
import binascii
import itertools
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from redline_canary.sandbox import gitstore as g
from redline_canary.sandbox.model import (
    REACTION_CONTENTS,
    ApiError,
    Issue,
    IssueComment,
    Label,
    PullData,
    Reaction,
    Repo,
    Review,
    ReviewComment,
    Team,
    User,
    iso,
    node_id,
    not_found,
    parse_iso,
    validation_failed,
)
from redline_canary.sandbox.policies import Policies

D_REFS = "https://docs.github.com/rest/git/refs"
D_TREES = "https://docs.github.com/rest/git/trees"
D_BLOBS = "https://docs.github.com/rest/git/blobs"
D_COMMITS = "https://docs.github.com/rest/git/commits"
D_PULLS = "https://docs.github.com/rest/pulls/pulls"
D_REVIEW_REQ = "https://docs.github.com/rest/pulls/review-requests"
D_REVIEWS = "https://docs.github.com/rest/pulls/reviews"
D_LABELS = "https://docs.github.com/rest/issues/labels"
D_ISSUES = "https://docs.github.com/rest/issues/issues"
D_REACTIONS = "https://docs.github.com/rest/reactions/reactions"

EventKind = Literal["opened", "review_requested", "comment"]
# Reported for large inline-content trees (github-api.md §3, googleapis/code-suggester#397).
TREE_TIMEOUT = (
    "Sorry, your request timed out.  It's likely that your input was too large to process.  "
    "Consider building the tree incrementally, or building the commits you need in a local "
    "clone of the repository and then pushing them to GitHub."
)
# GitHub's answer to a ref name git refuses [COMMUNITY: octokit/octokit.rb#675 (2015),
# osowskit/atlassian-github-app-addon#1 (2017), thedaviddias/llms-txt-hub#105 (2025):
# "refs/heads/x:y is not a valid ref name."].
BAD_REF = "{ref} is not a valid ref name."
# GitHub's answer to "..", ".", "", ".git" or NUL in a tree path [COMMUNITY: quoted as the
# 422 for `tenants//namespace.yaml` and for `.git/*` paths, e.g. vig-os/devcontainer#286].
BAD_TREE_PATH = "tree.path contains a malformed path component"
# PR creation refused by the content-creation limit (github-api.md §5.2).
TOO_QUICKLY = "was submitted too quickly"
# Issue text limits and their 422s [COMMUNITY: "body is too long (maximum is 65536
# characters)" for Issue (issue-metrics#183, nuclei#634) and "Body is too long ..." with
# code unprocessable, field data, for IssueComment (jest-lcov-reporter#14); the title's
# 256 is the number GitHub's message names (party_foul#122), though longer titles have
# been reported to pass].
MAX_BODY = 65536
MAX_TITLE = 256
STATE_REASONS = ("completed", "not_planned", "duplicate", "reopened")
_HEX40 = re.compile(r"^[0-9a-f]{40}$")
_REF_FORBIDDEN = re.compile(r"[\x00-\x20\x7f~^:?*\[\\]")
_COLOR = re.compile(r"^[0-9a-fA-F]{6}$")


@dataclass(frozen=True)
class Event:
    """Something a reviewer may wake up on."""

    kind: EventKind
    repo: str
    number: int
    actor: str
    requested: tuple[str, ...] = ()
    comment_id: int | None = None
    body: str = ""


@dataclass
class _Counters:
    repo: Iterator[int] = field(default_factory=lambda: itertools.count(812_000_001))
    user: Iterator[int] = field(default_factory=lambda: itertools.count(191_000_001))
    issue: Iterator[int] = field(default_factory=lambda: itertools.count(3_100_000_001))
    pull: Iterator[int] = field(default_factory=lambda: itertools.count(2_400_000_001))
    issue_comment: Iterator[int] = field(default_factory=lambda: itertools.count(3_200_000_001))
    review: Iterator[int] = field(default_factory=lambda: itertools.count(2_900_000_001))
    review_comment: Iterator[int] = field(default_factory=lambda: itertools.count(2_100_000_001))
    label: Iterator[int] = field(default_factory=lambda: itertools.count(8_800_000_001))
    reaction: Iterator[int] = field(default_factory=lambda: itertools.count(310_000_001))
    team: Iterator[int] = field(default_factory=lambda: itertools.count(12_000_001))


class State:
    """The sandbox's GitHub: one viewer (the token's user), repos, and a shared object store.

    ``clock`` is injectable so tests can age a world without sleeping.
    """

    def __init__(self, login: str, clock: Callable[[], float] = time.time) -> None:
        self.lock = threading.RLock()
        self.clock = clock
        self.store = g.ObjectStore()
        self.ids = _Counters()
        self.users: dict[str, User] = {}
        self.repos: dict[str, Repo] = {}
        self.teams: dict[tuple[str, str], Team] = {}
        self.listeners: list[Callable[[Event], None]] = []
        self._diff_cache: dict[tuple[str, str], dict[str, g.FileDiff]] = {}
        self.tree_payload_cap: int | None = None  # bytes of inline content per POST /git/trees
        self.policies = Policies()
        self.viewer = self.ensure_user(login)

    # --- users ---------------------------------------------------------------------

    def ensure_user(
        self,
        login: str,
        *,
        type: str = "User",
        id: int | None = None,
        node: str | None = None,
        html_url: str | None = None,
        avatar_url: str | None = None,
    ) -> User:
        with self.lock:
            existing = self.users.get(login.lower())
            if existing is not None:
                return existing
            uid = id if id is not None else next(self.ids.user)
            prefix = {"Bot": "BOT", "Organization": "O"}.get(type, "U")
            user = User(
                login=login,
                id=uid,
                node_id=node or node_id(prefix, uid),
                type=type,
                html_url=html_url,
                avatar_url=avatar_url,
                created_at=self.clock(),
            )
            self.users[login.lower()] = user
            return user

    def find_user(self, login: str) -> User | None:
        with self.lock:
            return self.users.get(login.lower())

    def association(self, user: User, repo: Repo) -> str:
        if user.id == repo.owner.id:
            return "OWNER"
        if user.type == "Bot":
            return "NONE"
        if user.id == self.viewer.id and repo.owner.type == "Organization":
            return "MEMBER"
        return "COLLABORATOR"

    # --- repositories ----------------------------------------------------------------

    def create_repo(
        self,
        full_name: str,
        *,
        files: Mapping[str, str | bytes] | None,
        default_branch: str,
        private: bool = False,
        writable: bool = True,
        description: str | None = None,
        fork_of: str | None = None,
    ) -> Repo:
        owner_login, _, name = full_name.partition("/")
        if not owner_login or not name or "/" in name:
            raise ValueError(f"repository name must be OWNER/NAME, got {full_name!r}")
        with self.lock:
            if full_name.lower() in self.repos:
                raise ValueError(f"repository {full_name} already exists in the sandbox")
            is_viewer = owner_login.lower() == self.viewer.login.lower()
            owner = self.ensure_user(owner_login, type="User" if is_viewer else "Organization")
            now = self.clock()
            rid = next(self.ids.repo)
            parent = self.get_repo_by_name(fork_of) if fork_of else None
            repo = Repo(
                id=rid,
                node_id=node_id("R", rid),
                owner=owner,
                name=name,
                default_branch=default_branch,
                private=private,
                writable=writable,
                created_at=now,
                updated_at=now,
                pushed_at=now,
                description=description,
                fork_of=parent,
            )
            self.repos[full_name.lower()] = repo
            if parent is not None:
                for ref, sha in parent.refs.items():
                    self._set_ref(repo, ref, sha)
                if files:
                    self.commit_files(repo, default_branch, dict(files), "Initial commit")
            elif files is None or files:
                initial = dict(files) if files else {"README.md": f"# {name}\n"}
                self.commit_files(repo, default_branch, initial, "Initial commit")
            return repo

    def get_repo(self, owner: str, name: str) -> Repo:
        repo = self.repos.get(f"{owner}/{name}".lower())
        if repo is None:
            raise not_found("https://docs.github.com/rest/repos/repos#get-a-repository")
        return repo

    def get_repo_by_name(self, full_name: str) -> Repo:
        owner, _, name = full_name.partition("/")
        return self.get_repo(owner, name)

    def repo_by_id(self, rid: int) -> Repo | None:
        return next((r for r in self.repos.values() if r.id == rid), None)

    def check_writable(self, repo: Repo, doc: str) -> None:
        if not repo.writable:
            raise ApiError(403, "Resource not accessible by personal access token", doc=doc)

    # --- git data ------------------------------------------------------------------------

    def signature(self, spec: Any, fallback: User) -> g.Signature:
        now = self.clock()
        if isinstance(spec, dict):
            name = str(spec.get("name") or fallback.name or fallback.login)
            email = str(spec.get("email") or _noreply(fallback))
            date = spec.get("date")
            if isinstance(date, str):
                ts = parse_iso(date)
                if ts is not None:
                    return g.Signature(name, email, iso(ts), int(ts))
            return g.Signature(name, email, iso(now), int(now))
        return g.Signature(fallback.name or fallback.login, _noreply(fallback), iso(now), int(now))

    def create_blob(self, repo: Repo, content: Any, encoding: Any) -> str:
        doc = f"{D_BLOBS}#create-a-blob"
        self.check_writable(repo, doc)
        if not isinstance(content, str):
            raise ApiError(422, 'Invalid request.\n\n"content" wasn\'t supplied.', doc=doc)
        enc = encoding or "utf-8"
        if enc == "base64":
            try:
                data = base64.b64decode(content, validate=False)
            except (binascii.Error, ValueError) as exc:
                raise ApiError(422, "Invalid base64 content", doc=doc) from exc
        elif enc in ("utf-8", "utf8"):
            data = content.encode()
        else:
            raise validation_failed([{"resource": "Blob", "field": "encoding", "code": "invalid"}], doc=doc)
        with self.lock:
            return self.store.put_blob(data)

    def create_tree(self, repo: Repo, entries: Any, base_tree: Any) -> str:
        """POST /git/trees: ``base_tree`` merge, inline content, ``sha: null`` deletes."""
        doc = f"{D_TREES}#create-a-tree"
        self.check_writable(repo, doc)
        if not isinstance(entries, list):
            raise ApiError(422, 'Invalid request.\n\n"tree" wasn\'t supplied.', doc=doc)
        if self.tree_payload_cap is not None:
            size = sum(len(str(e.get("content", ""))) for e in entries if isinstance(e, dict))
            if size > self.tree_payload_cap:
                raise ApiError(422, TREE_TIMEOUT, doc=doc)
        with self.lock:
            flat: dict[str, g.FlatEntry] = {}
            if base_tree is not None:
                root = self.store.tree_of(str(base_tree))
                if root is None:
                    raise ApiError(422, "base_tree is not a valid tree oid", doc=doc)
                flat = self.store.flatten(root)
            for entry in entries:
                self._apply_tree_entry(flat, entry, doc)
            return self.store.build(flat)

    def _apply_tree_entry(self, flat: dict[str, g.FlatEntry], entry: Any, doc: str) -> None:
        if not isinstance(entry, dict) or not isinstance(entry.get("path"), str):
            raise ApiError(422, "Invalid tree info", doc=doc)
        path = str(entry["path"])
        if not valid_tree_path(path):
            raise ApiError(422, BAD_TREE_PATH, doc=doc)
        mode = str(entry.get("mode") or g.MODE_FILE)
        kind = str(entry.get("type") or ("tree" if mode == g.MODE_TREE else "blob"))
        if mode not in g.VALID_MODES or kind not in ("blob", "tree", "commit"):
            raise ApiError(422, f"tree.mode {mode} or tree.type {kind} is invalid", doc=doc)
        has_sha, has_content = "sha" in entry, "content" in entry
        if has_sha and has_content and entry["sha"] is not None:
            # Unconfirmed wording; OAS only says "Returns an error".
            raise ApiError(422, "tree.sha and tree.content cannot both be present", doc=doc)
        if has_sha and entry["sha"] is None:
            under = [p for p in flat if p == path or p.startswith(path + "/")]
            if not under:
                # Unconfirmed wording; OAS: "error if you try to delete a file that does not exist".
                raise ApiError(422, f"tree.path {path} does not exist in base_tree", doc=doc)
            for p in under:
                del flat[p]
            return
        for p in [p for p in flat if p.startswith(path + "/")]:
            del flat[p]
        if has_content:
            content = entry["content"]
            if not isinstance(content, str):
                raise ApiError(422, "tree.content is not a string", doc=doc)
            flat[path] = g.FlatEntry(mode, "blob", self.store.put_blob(content.encode()))
            return
        sha = str(entry.get("sha") or "")
        if kind == "tree":
            if sha not in self.store.trees:
                raise ApiError(422, f"tree.sha {sha} is not a valid tree", doc=doc)
            flat.pop(path, None)
            for sub, leaf in self.store.flatten(sha).items():
                flat[f"{path}/{sub}"] = leaf
            return
        if kind == "blob" and sha not in self.store.blobs:
            raise ApiError(422, f"tree.sha {sha} is not a valid blob", doc=doc)
        if kind == "commit" and not _HEX40.match(sha):
            raise ApiError(422, f"tree.sha {sha} is not a valid commit", doc=doc)
        flat[path] = g.FlatEntry(mode, "blob" if kind == "blob" else "commit", sha)

    def create_commit(self, repo: Repo, body: dict[str, Any], user: User) -> g.Commit:
        doc = f"{D_COMMITS}#create-a-commit"
        self.check_writable(repo, doc)
        message, tree = body.get("message"), body.get("tree")
        if not isinstance(message, str) or not isinstance(tree, str):
            missing = "message" if not isinstance(message, str) else "tree"
            raise ApiError(422, f'Invalid request.\n\n"{missing}" wasn\'t supplied.', doc=doc)
        parents = body.get("parents") or []
        with self.lock:
            if tree not in self.store.trees:
                raise ApiError(422, "Tree SHA does not exist", doc=doc)
            for p in parents:
                if not isinstance(p, str) or p not in self.store.commits:
                    raise ApiError(422, "Parent SHA does not exist or is not a commit object", doc=doc)
            author = self.signature(body.get("author"), user)
            committer = self.signature(body.get("committer"), user) if body.get("committer") else author
            return self.store.put_commit(tree, parents, author, committer, message)

    def commit_files(
        self,
        repo: Repo,
        branch: str,
        files: Mapping[str, str | bytes | None],
        message: str,
        author: User | None = None,
    ) -> str:
        """In-process push: one commit on ``branch`` (created from the default branch)."""
        with self.lock:
            parent = repo.branch_sha(branch) or repo.branch_sha(repo.default_branch)
            flat: dict[str, g.FlatEntry] = {}
            if parent:
                flat = self.store.flatten(self.store.commits[parent].tree)
            for path, data in files.items():
                if data is None:
                    flat.pop(path, None)
                    continue
                raw = data.encode() if isinstance(data, str) else data
                flat[path] = g.FlatEntry(g.MODE_FILE, "blob", self.store.put_blob(raw))
            tree = self.store.build(flat)
            sig = self.signature(None, author or repo.owner)
            commit = self.store.put_commit(tree, [parent] if parent else [], sig, sig, message)
            self._set_ref(repo, f"refs/heads/{branch}", commit.sha)
            return commit.sha

    # --- refs ---------------------------------------------------------------------------

    def _set_ref(self, repo: Repo, ref: str, sha: str) -> None:
        now = self.clock()
        repo.refs[ref] = sha
        repo.ref_nodes.setdefault(ref, "REF_kwDO" + base64.b64encode(ref.encode()).decode())
        repo.ref_times[ref] = now
        repo.pushed_at = now
        if not ref.startswith("refs/heads/"):
            return
        branch = ref[len("refs/heads/") :]
        for r in self.repos.values():
            for issue in r.pulls():
                pull = issue.pr
                if issue.state != "open":
                    continue
                if pull.head_repo is repo and pull.head_ref == branch:
                    pull.head_sha = sha
                    issue.updated_at = now
                if r is repo and pull.base_ref == branch:
                    pull.base_sha = sha

    def require_nonempty(self, repo: Repo) -> None:
        if not repo.refs:
            raise ApiError(409, "Git Repository is empty.", doc=f"{D_REFS}#get-a-reference")

    def create_ref(self, repo: Repo, ref: Any, sha: Any) -> str:
        doc = f"{D_REFS}#create-a-reference"
        self.check_writable(repo, doc)
        if not isinstance(ref, str) or not isinstance(sha, str):
            raise ApiError(422, 'Invalid request.\n\n"ref", "sha" weren\'t supplied.', doc=doc)
        if not ref.startswith("refs/") or ref.count("/") < 2:
            raise ApiError(
                422,
                "Reference name must contain at least three slash-separated components.",
                doc=doc,
            )
        if not valid_ref_name(ref):
            raise ApiError(422, BAD_REF.format(ref=ref), doc=doc)
        with self.lock:
            if not repo.refs:
                raise ApiError(409, "Git Repository is empty.", doc=doc)
            if ref in repo.refs:
                raise ApiError(422, "Reference already exists", doc=doc)
            if self.store.kind(sha) is None:
                raise ApiError(422, "Object does not exist", doc=doc)
            if any(x.startswith(ref + "/") or ref.startswith(x + "/") for x in repo.refs):
                # git cannot hold both refs/heads/a and refs/heads/a/b; GitHub's answer is
                # this generic text [COMMUNITY: microsoft/vscode-remote-repositories-github#122,
                # github/rest-api-description#4887].
                raise ApiError(422, "Reference update failed", doc=doc)
            self._set_ref(repo, ref, sha)
            lag = self.policies.ref_lag
            if lag is not None and lag.applies(repo.full_name) and ref.startswith("refs/heads/"):
                lag.note_created(repo.id, ref[len("refs/heads/") :])
            return ref

    def update_ref(self, repo: Repo, ref: str, sha: Any, force: Any) -> str:
        doc = f"{D_REFS}#update-a-reference"
        self.check_writable(repo, doc)
        full = _full_ref(ref)
        with self.lock:
            if full not in repo.refs:
                raise ApiError(422, "Reference does not exist", doc=doc)
            if not isinstance(sha, str) or self.store.kind(sha) is None:
                raise ApiError(422, "Object does not exist", doc=doc)
            current = repo.refs[full]
            if not force and current not in self.store.ancestors(sha):
                raise ApiError(422, "Update is not a fast forward", doc=doc)
            self._set_ref(repo, full, sha)
            return full

    def delete_ref(self, repo: Repo, ref: str) -> None:
        doc = f"{D_REFS}#delete-a-reference"
        self.check_writable(repo, doc)
        full = _full_ref(ref)
        with self.lock:
            if full not in repo.refs:
                raise ApiError(422, "Reference does not exist", doc=doc)
            if full == f"refs/heads/{repo.default_branch}":
                # OAS's description of this 422; GitHub's exact message is not recorded.
                raise ApiError(
                    422,
                    "Validation failed, an attempt was made to delete the default branch, "
                    "or the endpoint has been spammed.",
                    doc=doc,
                )
            del repo.refs[full]
            repo.ref_times.pop(full, None)
            # GitHub closes an open PR whose head branch is deleted.
            if full.startswith("refs/heads/"):
                branch = full.removeprefix("refs/heads/")
                for issue in repo.pulls():
                    if issue.state == "open" and issue.pr.head_repo is repo and issue.pr.head_ref == branch:
                        issue.state, issue.closed_at = "closed", self.clock()

    # --- issues and pull requests ----------------------------------------------------

    def get_issue(self, repo: Repo, number: int, doc: str | None = None) -> Issue:
        issue = repo.issues.get(number)
        if issue is None:
            raise not_found(doc)
        return issue

    def get_pull(self, repo: Repo, number: int, doc: str | None = None) -> Issue:
        issue = repo.issues.get(number)
        if issue is None or issue.pull is None:
            raise not_found(doc or f"{D_PULLS}#get-a-pull-request")
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
                    # (github-api.md §8); "hidden" still wakes the bot, "dropped" does not.
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

    def remove_requested_reviewers(self, repo: Repo, number: int, reviewers: Any, teams: Any) -> Issue:
        doc = f"{D_REVIEW_REQ}#remove-requested-reviewers-from-a-pull-request"
        self.check_writable(repo, doc)
        logins = {str(x).lower() for x in reviewers} if isinstance(reviewers, list) else set()
        slugs = {str(x).lower() for x in teams} if isinstance(teams, list) else set()
        with self.lock:
            issue = self.get_pull(repo, number, doc)
            pull = issue.pr
            pull.requested_reviewers = [u for u in pull.requested_reviewers if u.login.lower() not in logins]
            pull.requested_teams = [t for t in pull.requested_teams if t.slug.lower() not in slugs]
            issue.updated_at = self.clock()
            return issue

    def is_collaborator(self, user: User, repo: Repo) -> bool:
        """Anyone the sandbox knows (owner, viewer, reviewers, added users) except orgs."""
        return user.type != "Organization"

    def ensure_team(self, org: str, slug: str) -> Team:
        key = (org.lower(), slug.lower())
        team = self.teams.get(key)
        if team is None:
            tid = next(self.ids.team)
            team = Team(tid, node_id("T", tid), org, slug, slug)
            self.teams[key] = team
        return team

    def add_assignees(self, repo: Repo, number: int, logins: Any) -> Issue:
        self.check_writable(repo, "https://docs.github.com/rest/issues/assignees")
        with self.lock:
            issue = self.get_issue(repo, number)
            for login in logins if isinstance(logins, list) else []:
                u = self.find_user(str(login))
                if u is not None and all(a.id != u.id for a in issue.assignees):
                    issue.assignees.append(u)
            issue.updated_at = self.clock()
            return issue

    # --- labels -------------------------------------------------------------------

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

    def remove_label(self, repo: Repo, number: int, name: str) -> Issue:
        doc = f"{D_LABELS}#remove-a-label-from-an-issue"
        self.check_writable(repo, doc)
        with self.lock:
            issue = self.get_issue(repo, number, doc)
            kept = [x for x in issue.labels if x.name.lower() != name.lower()]
            if len(kept) == len(issue.labels):
                raise ApiError(404, "Label does not exist", doc=doc)
            issue.labels = kept
            issue.updated_at = self.clock()
            return issue

    def set_labels(self, repo: Repo, number: int, names: Iterable[str]) -> Issue:
        with self.lock:
            issue = self.get_issue(repo, number)
            issue.labels = []
            self._add_labels(repo, issue, names)
            issue.updated_at = self.clock()
            return issue

    # --- conversation ----------------------------------------------------------------

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

    def find_review_comment(self, repo: Repo, cid: int) -> tuple[Issue, ReviewComment]:
        for issue in repo.pulls():
            for c in issue.pr.review_comments:
                if c.id == cid:
                    return issue, c
        raise not_found("https://docs.github.com/rest/pulls/comments#get-a-review-comment-for-a-pull-request")

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

    # --- reviews -------------------------------------------------------------------------

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

    # --- events --------------------------------------------------------------------

    def emit(self, event: Event) -> None:
        for listener in list(self.listeners):
            listener(event)


def _full_ref(ref: str) -> str:
    return ref if ref.startswith("refs/") else f"refs/{ref}"


def _opt_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _noreply(user: User) -> str:
    return f"{user.id}+{user.login}@users.noreply.github.com"


def check_issue_text(title: str, body: str | None, doc: str) -> None:
    if len(title) > MAX_TITLE:
        raise validation_failed([{"resource": "Issue", "code": "custom", "field": "title",
                                  "message": f"title is too long (maximum is {MAX_TITLE} characters)"}], doc=doc)
    if body is not None and len(body) > MAX_BODY:
        raise validation_failed([{"resource": "Issue", "code": "custom", "field": "body",
                                  "message": f"body is too long (maximum is {MAX_BODY} characters)"}], doc=doc)


def valid_ref_name(ref: str) -> bool:
    """git check-ref-format's rules, which GitHub enforces on ``POST /git/refs``.

    No ``..``, ``@{``, control characters, space or any of ``~^:?*[\\``; no component that
    is empty, starts with ``.`` or ends with ``.lock``; not ending in ``/`` or ``.``; not
    ``@``.
    """
    if ref == "@" or ".." in ref or "@{" in ref or _REF_FORBIDDEN.search(ref):
        return False
    if ref.endswith(("/", ".")):
        return False
    return all(part and not part.startswith(".") and not part.endswith(".lock") for part in ref.split("/"))


def valid_tree_path(path: str) -> bool:
    """A ``POST /git/trees`` path GitHub accepts: relative, no empty, ``.``, ``..`` or
    ``.git`` component, no NUL. GitHub refuses these rather than normalising them, so a
    fake that strips a leading ``/`` would let a client bug through."""
    if not path or "\0" in path:
        return False
    return all(part not in ("", ".", "..") and part.lower() != ".git" for part in path.split("/"))
