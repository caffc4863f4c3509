"""The root of the JSON renderer: the ``Json`` type, the sandbox's two URL roots (API and HTML)
with the state every shape reads, and the people shapes (users, teams) that nearly every other
shape embeds. It is the base the repository, conversation and pull-request shapes build on, kept
separate because it depends on none of them.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from redline_canary.sandbox.model import Team, User, iso
from redline_canary.sandbox.state import State

Json = dict[str, Any]


class PeopleShapes:
    """Users and teams as GitHub sends them; the base of :class:`~.render.Renderer`."""

    def __init__(self, state: State, api: str, html: str) -> None:
        self.state = state
        self.api = api.rstrip("/")
        self.html = html.rstrip("/")

    # --- people ---------------------------------------------------------------------

    def user(self, u: User | None) -> Json | None:
        if u is None:
            return None
        api = f"{self.api}/users/{quote(u.login, safe='')}"
        if u.html_url:
            html = u.html_url
        elif u.type == "Bot":
            html = f"{self.html}/apps/{u.login.removesuffix('[bot]')}"
        else:
            html = f"{self.html}/{u.login}"
        return {
            "login": u.login,
            "id": u.id,
            "node_id": u.node_id,
            "avatar_url": u.avatar_url or f"https://avatars.githubusercontent.com/u/{u.id}?v=4",
            "gravatar_id": "",
            "url": api,
            "html_url": html,
            "followers_url": f"{api}/followers",
            "following_url": f"{api}/following{{/other_user}}",
            "gists_url": f"{api}/gists{{/gist_id}}",
            "starred_url": f"{api}/starred{{/owner}}{{/repo}}",
            "subscriptions_url": f"{api}/subscriptions",
            "organizations_url": f"{api}/orgs",
            "repos_url": f"{api}/repos",
            "events_url": f"{api}/events{{/privacy}}",
            "received_events_url": f"{api}/received_events",
            "type": u.type,
            "user_view_type": "public",
            "site_admin": u.site_admin,
        }

    def user_full(self, u: User, *, private: bool) -> Json:
        out = self.user(u)
        assert out is not None
        owned = [r for r in self.state.repos.values() if r.owner.id == u.id]
        out.update(
            {
                "name": u.name,
                "company": None,
                "blog": "",
                "location": None,
                "email": u.email,
                "hireable": None,
                "bio": None,
                "twitter_username": None,
                "public_repos": sum(1 for r in owned if not r.private),
                "public_gists": 0,
                "followers": 0,
                "following": 0,
                "created_at": iso(u.created_at),
                "updated_at": iso(u.created_at),
            }
        )
        if private:
            out.update(
                {
                    "notification_email": u.email,
                    "private_gists": 0,
                    "total_private_repos": sum(1 for r in owned if r.private),
                    "owned_private_repos": sum(1 for r in owned if r.private),
                    "disk_usage": 0,
                    "collaborators": 0,
                    "two_factor_authentication": True,
                    "plan": {
                        "name": "free",
                        "space": 976562499,
                        "collaborators": 0,
                        "private_repos": 10000,
                    },
                }
            )
        return out

    def team(self, t: Team) -> Json:
        org = self.state.find_user(t.org)
        base = f"{self.api}/organizations/{org.id if org else 0}/team/{t.id}"
        return {
            "name": t.name,
            "id": t.id,
            "node_id": t.node_id,
            "slug": t.slug,
            "description": None,
            "privacy": "closed",
            "notification_setting": "notifications_enabled",
            "url": base,
            "html_url": f"{self.html}/orgs/{t.org}/teams/{t.slug}",
            "members_url": f"{base}/members{{/member}}",
            "repositories_url": f"{base}/repos",
            "permission": "pull",
            "parent": None,
            "type": "organization",
            "organization_id": org.id if org else 0,
        }
