"""Repositories: creation (with an initial commit, or forked from a parent) and lookup."""

from __future__ import annotations

from collections.abc import Mapping

from redline_canary.sandbox.model import (
    Repo,
    node_id,
    not_found,
)
from redline_canary.sandbox.state.git import GitData


class Repos(GitData):
    """A repository starts with one commit (or its parent's refs, for a fork)."""

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



