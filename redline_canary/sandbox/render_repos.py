"""Repository and git-data shapes: the repository (short and full), refs, trees, commits and
branches, with the sandbox URLs they point at. They are separate from the conversation and
pull-request shapes because they read only the repository record and the git store, never
issues, comments or reviews.
"""

from __future__ import annotations

import base64
from urllib.parse import quote

from redline_canary.sandbox import gitstore as g
from redline_canary.sandbox.model import Repo, iso
from redline_canary.sandbox.render_people import Json, PeopleShapes

VERIFICATION = {
    "verified": False,
    "reason": "unsigned",
    "signature": None,
    "payload": None,
    "verified_at": None,
}


class RepoShapes(PeopleShapes):
    """Repositories and git data; a base of :class:`~.render.Renderer`."""

    # --- repositories ----------------------------------------------------------------

    def repo_base(self, r: Repo) -> str:
        return f"{self.api}/repos/{r.full_name}"

    def repo_html(self, r: Repo) -> str:
        return f"{self.html}/{r.full_name}"

    def repo(self, r: Repo, *, full: bool = False) -> Json:
        b = self.repo_base(r)
        html = self.repo_html(r)
        host = self.html.split("://", 1)[-1]
        open_count = sum(1 for i in r.issues.values() if i.state == "open")
        out: Json = {
            "id": r.id,
            "node_id": r.node_id,
            "name": r.name,
            "full_name": r.full_name,
            "private": r.private,
            "owner": self.user(r.owner),
            "html_url": html,
            "description": r.description,
            "fork": r.fork_of is not None,
            "url": b,
            "forks_url": f"{b}/forks",
            "keys_url": f"{b}/keys{{/key_id}}",
            "collaborators_url": f"{b}/collaborators{{/collaborator}}",
            "teams_url": f"{b}/teams",
            "hooks_url": f"{b}/hooks",
            "issue_events_url": f"{b}/issues/events{{/number}}",
            "events_url": f"{b}/events",
            "assignees_url": f"{b}/assignees{{/user}}",
            "branches_url": f"{b}/branches{{/branch}}",
            "tags_url": f"{b}/tags",
            "blobs_url": f"{b}/git/blobs{{/sha}}",
            "git_tags_url": f"{b}/git/tags{{/sha}}",
            "git_refs_url": f"{b}/git/refs{{/sha}}",
            "trees_url": f"{b}/git/trees{{/sha}}",
            "statuses_url": f"{b}/statuses/{{sha}}",
            "languages_url": f"{b}/languages",
            "stargazers_url": f"{b}/stargazers",
            "contributors_url": f"{b}/contributors",
            "subscribers_url": f"{b}/subscribers",
            "subscription_url": f"{b}/subscription",
            "commits_url": f"{b}/commits{{/sha}}",
            "git_commits_url": f"{b}/git/commits{{/sha}}",
            "comments_url": f"{b}/comments{{/number}}",
            "issue_comment_url": f"{b}/issues/comments{{/number}}",
            "contents_url": f"{b}/contents/{{+path}}",
            "compare_url": f"{b}/compare/{{base}}...{{head}}",
            "merges_url": f"{b}/merges",
            "archive_url": f"{b}/{{archive_format}}{{/ref}}",
            "downloads_url": f"{b}/downloads",
            "issues_url": f"{b}/issues{{/number}}",
            "pulls_url": f"{b}/pulls{{/number}}",
            "milestones_url": f"{b}/milestones{{/number}}",
            "notifications_url": f"{b}/notifications{{?since,all,participating}}",
            "labels_url": f"{b}/labels{{/name}}",
            "releases_url": f"{b}/releases{{/id}}",
            "deployments_url": f"{b}/deployments",
            "created_at": iso(r.created_at),
            "updated_at": iso(r.updated_at),
            "pushed_at": iso(r.pushed_at),
            "git_url": f"git://{host}/{r.full_name}.git",
            "ssh_url": f"git@{host}:{r.full_name}.git",
            "clone_url": f"{html}.git",
            "svn_url": html,
            "homepage": None,
            "size": 0,
            "stargazers_count": 0,
            "watchers_count": 0,
            "language": None,
            "has_issues": r.has_issues,
            "has_projects": True,
            "has_downloads": True,
            "has_wiki": False,
            "has_pages": False,
            "has_discussions": False,
            "forks_count": 0,
            "mirror_url": None,
            "archived": False,
            "disabled": False,
            "open_issues_count": open_count,
            "license": None,
            "allow_forking": True,
            "is_template": False,
            "web_commit_signoff_required": False,
            "topics": list(r.topics),
            "visibility": "private" if r.private else "public",
            "forks": 0,
            "open_issues": open_count,
            "watchers": 0,
            "default_branch": r.default_branch,
        }
        if full:
            out["permissions"] = {
                "admin": r.writable,
                "maintain": r.writable,
                "push": r.writable,
                "triage": True,
                "pull": True,
            }
            out.update(
                {
                    "allow_squash_merge": True,
                    "allow_merge_commit": True,
                    "allow_rebase_merge": True,
                    "allow_auto_merge": False,
                    "delete_branch_on_merge": False,
                    "allow_update_branch": False,
                    "use_squash_pr_title_as_default": False,
                    "squash_merge_commit_message": "COMMIT_MESSAGES",
                    "squash_merge_commit_title": "COMMIT_OR_PR_TITLE",
                    "merge_commit_message": "PR_TITLE",
                    "merge_commit_title": "MERGE_MESSAGE",
                    "custom_properties": {},
                }
            )
            if r.owner.type == "Organization":
                out["organization"] = self.user(r.owner)
            if r.fork_of is not None:
                out["parent"] = self.repo(r.fork_of)
                root = r.fork_of
                while root.fork_of is not None:
                    root = root.fork_of
                out["source"] = self.repo(root)
            out["network_count"] = 0
            out["subscribers_count"] = 0
        return out

    # --- git data --------------------------------------------------------------------------

    def ref(self, r: Repo, ref: str) -> Json:
        sha = r.refs[ref]
        kind = self.state.store.kind(sha) or "commit"
        b = self.repo_base(r)
        return {
            "ref": ref,
            "node_id": r.ref_nodes.get(ref, ""),
            "url": f"{b}/git/{quote(ref)}",
            "object": {"sha": sha, "type": kind, "url": f"{b}/git/{kind}s/{sha}"},
        }

    def tree(self, r: Repo, sha: str, *, shown_sha: str | None = None, recursive: bool = False) -> Json:
        b = self.repo_base(r)
        entries = []
        for path, e in self.state.store.walk(sha, recursive):
            item: Json = {"path": path, "mode": e.mode, "type": e.type, "sha": e.sha}
            if e.type == "blob":
                item["size"] = len(self.state.store.blobs.get(e.sha, b""))
                item["url"] = f"{b}/git/blobs/{e.sha}"
            elif e.type == "tree":
                item["url"] = f"{b}/git/trees/{e.sha}"
            entries.append(item)
        shown = shown_sha or sha
        return {"sha": shown, "url": f"{b}/git/trees/{shown}", "tree": entries, "truncated": False}

    def commit(self, r: Repo, c: g.Commit) -> Json:
        b = self.repo_base(r)
        html = self.repo_html(r)
        return {
            "sha": c.sha,
            "node_id": "C_kwDO" + base64.b64encode(bytes.fromhex(c.sha)).decode().rstrip("="),
            "url": f"{b}/git/commits/{c.sha}",
            "html_url": f"{html}/commit/{c.sha}",
            "author": _sig(c.author),
            "committer": _sig(c.committer),
            "tree": {"sha": c.tree, "url": f"{b}/git/trees/{c.tree}"},
            "message": c.message,
            "parents": [{"sha": p, "url": f"{b}/git/commits/{p}", "html_url": f"{html}/commit/{p}"} for p in c.parents],
            "verification": dict(VERIFICATION),
        }

    def branch(self, r: Repo, name: str) -> Json:
        sha = r.refs[f"refs/heads/{name}"]
        b = self.repo_base(r)
        html = self.repo_html(r)
        c = self.state.store.commits.get(sha)
        inner: Json = {}
        if c is not None:
            inner = {
                "author": _sig(c.author),
                "committer": _sig(c.committer),
                "message": c.message,
                "tree": {"sha": c.tree, "url": f"{b}/git/trees/{c.tree}"},
                "url": f"{b}/git/commits/{sha}",
                "comment_count": 0,
                "verification": dict(VERIFICATION),
            }
        return {
            "name": name,
            "commit": {
                "sha": sha,
                "node_id": "C_kwDO" + base64.b64encode(bytes.fromhex(sha)).decode().rstrip("="),
                "commit": inner,
                "url": f"{b}/commits/{sha}",
                "html_url": f"{html}/commit/{sha}",
                "comments_url": f"{b}/commits/{sha}/comments",
                "author": None,
                "committer": None,
                "parents": [
                    {"sha": p, "url": f"{b}/commits/{p}", "html_url": f"{html}/commit/{p}"}
                    for p in (c.parents if c else ())
                ],
            },
            "_links": {"self": f"{b}/branches/{quote(name)}", "html": f"{html}/tree/{name}"},
            "protected": False,
            "protection": {
                "enabled": False,
                "required_status_checks": {
                    "enforcement_level": "off",
                    "contexts": [],
                    "checks": [],
                },
            },
            "protection_url": f"{b}/branches/{quote(name)}/protection",
        }


def _sig(s: g.Signature) -> Json:
    return {"name": s.name, "email": s.email, "date": s.date}
