"""Git data: blobs, trees, commits and refs, with GitHub's validation of each.

The object store is shared by every repository (as GitHub shares objects across a fork
network); refs are per repository, and moving a branch moves the open PRs that name it.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping
from typing import Any

from redline_canary.sandbox import gitstore as g
from redline_canary.sandbox.model import (
    ApiError,
    Repo,
    User,
    iso,
    parse_iso,
)
from redline_canary.sandbox.state.users import Users

D_REFS = "https://docs.github.com/rest/git/refs"
D_TREES = "https://docs.github.com/rest/git/trees"
D_COMMITS = "https://docs.github.com/rest/git/commits"
# Reported for large inline-content trees (docs/github.md §3, googleapis/code-suggester#397).
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
_HEX40 = re.compile(r"^[0-9a-f]{40}$")
_REF_FORBIDDEN = re.compile(r"[\x00-\x20\x7f~^:?*\[\\]")


class GitData(Users):
    """Git objects and refs; a moved branch moves the open PRs whose head or base it is."""

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


def _full_ref(ref: str) -> str:
    return ref if ref.startswith("refs/") else f"refs/{ref}"


def _noreply(user: User) -> str:
    return f"{user.id}+{user.login}@users.noreply.github.com"


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

