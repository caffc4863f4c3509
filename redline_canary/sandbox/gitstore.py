"""Content-addressed git objects with real git SHA-1 ids.

Real ids (not random tokens) keep the sandbox honest: a tree built from the same files
twice has the same sha, ``base_tree`` + inline content behaves like GitHub's merge, and a
client that checks ``sha`` values against ``git hash-object`` gets what GitHub would give.
The store is shared by every repository of a sandbox, as GitHub shares objects across a
fork network.
"""

from __future__ import annotations

import difflib
import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

ObjType = Literal["blob", "tree", "commit"]

# API spelling of modes (GitHub prints "040000"; git itself writes "40000").
MODE_FILE = "100644"
MODE_EXEC = "100755"
MODE_TREE = "040000"
MODE_SUBMODULE = "160000"
MODE_SYMLINK = "120000"
VALID_MODES = frozenset({MODE_FILE, MODE_EXEC, MODE_TREE, MODE_SUBMODULE, MODE_SYMLINK})

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


@dataclass(frozen=True)
class TreeEntry:
    name: str
    mode: str
    type: ObjType
    sha: str


@dataclass(frozen=True)
class FlatEntry:
    """A leaf of a flattened tree (blob, symlink or submodule) at a full path."""

    mode: str
    type: ObjType
    sha: str


@dataclass(frozen=True)
class Signature:
    name: str
    email: str
    date: str  # ISO-8601 "YYYY-MM-DDTHH:MM:SSZ"
    epoch: int


@dataclass(frozen=True)
class Commit:
    sha: str
    tree: str
    parents: tuple[str, ...]
    author: Signature
    committer: Signature
    message: str


@dataclass
class ObjectStore:
    blobs: dict[str, bytes] = field(default_factory=dict)
    trees: dict[str, tuple[TreeEntry, ...]] = field(default_factory=dict)
    commits: dict[str, Commit] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.trees[EMPTY_TREE] = ()

    # --- writing -------------------------------------------------------------------

    def put_blob(self, data: bytes) -> str:
        sha = _hash(b"blob", data)
        self.blobs.setdefault(sha, data)
        return sha

    def put_tree(self, entries: Iterable[TreeEntry]) -> str:
        ordered = tuple(sorted(entries, key=_git_order))
        payload = b"".join(
            (e.mode.lstrip("0") if e.mode == MODE_TREE else e.mode).encode()
            + b" "
            + e.name.encode()
            + b"\0"
            + bytes.fromhex(e.sha)
            for e in ordered
        )
        sha = _hash(b"tree", payload)
        self.trees.setdefault(sha, ordered)
        return sha

    def put_commit(
        self,
        tree: str,
        parents: Iterable[str],
        author: Signature,
        committer: Signature,
        message: str,
    ) -> Commit:
        parents_t = tuple(parents)
        lines = [f"tree {tree}"]
        lines += [f"parent {p}" for p in parents_t]
        lines.append(f"author {author.name} <{author.email}> {author.epoch} +0000")
        lines.append(f"committer {committer.name} <{committer.email}> {committer.epoch} +0000")
        payload = ("\n".join(lines) + "\n\n" + message).encode()
        sha = _hash(b"commit", payload)
        commit = Commit(sha, tree, parents_t, author, committer, message)
        self.commits.setdefault(sha, commit)
        return self.commits[sha]

    # --- reading -------------------------------------------------------------------

    def kind(self, sha: str) -> ObjType | None:
        if sha in self.commits:
            return "commit"
        if sha in self.trees:
            return "tree"
        if sha in self.blobs:
            return "blob"
        return None

    def tree_of(self, sha: str) -> str | None:
        """Resolve a tree-ish: GitHub accepts a commit sha wherever a tree is expected."""
        if sha in self.trees:
            return sha
        commit = self.commits.get(sha)
        return commit.tree if commit else None

    def flatten(self, tree_sha: str, prefix: str = "") -> dict[str, FlatEntry]:
        out: dict[str, FlatEntry] = {}
        for e in self.trees.get(tree_sha, ()):
            path = f"{prefix}{e.name}"
            if e.type == "tree":
                out.update(self.flatten(e.sha, path + "/"))
            else:
                out[path] = FlatEntry(e.mode, e.type, e.sha)
        return out

    def build(self, flat: Mapping[str, FlatEntry]) -> str:
        """Write the nested trees for a flat path map and return the root tree sha."""
        children: dict[str, dict[str, FlatEntry]] = {}
        entries: list[TreeEntry] = []
        for path, leaf in flat.items():
            head, sep, rest = path.partition("/")
            if sep:
                children.setdefault(head, {})[rest] = leaf
            else:
                entries.append(TreeEntry(head, leaf.mode, leaf.type, leaf.sha))
        for name, sub in children.items():
            entries.append(TreeEntry(name, MODE_TREE, "tree", self.build(sub)))
        return self.put_tree(entries)

    def walk(self, tree_sha: str, recursive: bool) -> list[tuple[str, TreeEntry]]:
        """(path, entry) pairs in GitHub's order: a tree, then its contents when recursive."""
        out: list[tuple[str, TreeEntry]] = []

        def visit(sha: str, prefix: str) -> None:
            for e in self.trees.get(sha, ()):
                out.append((prefix + e.name, e))
                if recursive and e.type == "tree":
                    visit(e.sha, prefix + e.name + "/")

        visit(tree_sha, "")
        return out

    def files(self, tree_sha: str) -> dict[str, bytes]:
        return {
            path: self.blobs[leaf.sha]
            for path, leaf in self.flatten(tree_sha).items()
            if leaf.type == "blob" and leaf.sha in self.blobs
        }

    def ancestors(self, sha: str) -> set[str]:
        """Every commit reachable from ``sha``, itself included."""
        seen: set[str] = set()
        stack = [sha]
        while stack:
            cur = stack.pop()
            if cur in seen or cur not in self.commits:
                continue
            seen.add(cur)
            stack.extend(self.commits[cur].parents)
        return seen

    def commits_between(self, base: str, head: str) -> list[str]:
        """Commits reachable from head and not from base (what a PR would list)."""
        exclude = self.ancestors(base)
        return [c for c in self.ancestors(head) if c not in exclude]


@dataclass(frozen=True)
class FileDiff:
    path: str
    status: Literal["added", "modified", "removed"]
    additions: int
    deletions: int
    # 1-based line numbers on the RIGHT side that GitHub lets a review comment target.
    commentable: frozenset[int]
    # Hunks as (first_right_line, right_line_count, first_left_line, left_line_count).
    hunks: tuple[tuple[int, int, int, int], ...]


def diff_trees(store: ObjectStore, base_tree: str, head_tree: str) -> dict[str, FileDiff]:
    """What the PR "Files changed" tab shows: per path, the lines a review may target."""
    old = store.flatten(base_tree)
    new = store.flatten(head_tree)
    out: dict[str, FileDiff] = {}
    for path in sorted(set(old) | set(new)):
        a, b = old.get(path), new.get(path)
        if a == b:
            continue
        a_lines = _lines(store, a)
        b_lines = _lines(store, b)
        status: Literal["added", "modified", "removed"]
        status = "added" if a is None else "removed" if b is None else "modified"
        matcher = difflib.SequenceMatcher(a=a_lines, b=b_lines, autojunk=False)
        adds = dels = 0
        commentable: set[int] = set()
        hunks: list[tuple[int, int, int, int]] = []
        for group in matcher.get_grouped_opcodes(3):
            i1, j1 = group[0][1], group[0][3]
            i2, j2 = group[-1][2], group[-1][4]
            # Unified-diff convention: an empty side starts at the line before it.
            hunks.append((j1 + (j2 > j1), j2 - j1, i1 + (i2 > i1), i2 - i1))
            commentable.update(range(j1 + 1, j2 + 1))
            for tag, ai1, ai2, bj1, bj2 in group:
                if tag in ("replace", "delete"):
                    dels += ai2 - ai1
                if tag in ("replace", "insert"):
                    adds += bj2 - bj1
        out[path] = FileDiff(path, status, adds, dels, frozenset(commentable), tuple(hunks))
    return out


def diff_hunk(store: ObjectStore, base_tree: str, head_tree: str, path: str, line: int) -> str:
    """A plausible ``diff_hunk`` for a comment: the hunk header plus lines up to ``line``."""
    diff = diff_trees(store, base_tree, head_tree).get(path)
    new = store.flatten(head_tree).get(path)
    b_lines = _lines(store, new)
    if diff is None:
        return ""
    for start, count, old_start, old_count in diff.hunks:
        if start <= line < start + max(count, 1) and count:
            body = b_lines[start - 1 : line]
            sign = "+" if diff.status == "added" else " "
            header = f"@@ -{old_start},{old_count} +{start},{count} @@"
            return "\n".join([header, *(sign + s for s in body)])
    return ""


def _lines(store: ObjectStore, leaf: FlatEntry | None) -> list[str]:
    if leaf is None or leaf.type != "blob":
        return []
    return store.blobs.get(leaf.sha, b"").decode("utf-8", "replace").splitlines()


def _git_order(e: TreeEntry) -> bytes:
    return (e.name + "/").encode() if e.type == "tree" else e.name.encode()


def _hash(kind: bytes, payload: bytes) -> str:
    header = kind + b" " + str(len(payload)).encode() + b"\0"
    return hashlib.sha1(header + payload, usedforsecurity=False).hexdigest()
