"""Users and teams: who the viewer is, who may be requested, how GitHub names their role."""

from __future__ import annotations

from redline_canary.sandbox.model import (
    Repo,
    Team,
    User,
    node_id,
)
from redline_canary.sandbox.state.base import World


class Users(World):
    """Users are made on first sight (a reviewer, an author, an org owner), never deleted."""

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



