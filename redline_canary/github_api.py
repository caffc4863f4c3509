"""The one seam to GitHub. PyGithub does the talking; nothing else imports it.

Tokens are read from the environment and handed to PyGithub; they are never formatted
into a message, a log line or an exception.
"""

from __future__ import annotations

import os
from typing import Any

from github import Auth, Github, GithubException

from redline_canary.errors import BadInput, InfraFailure

DEFAULT_API_URL = "https://api.github.com"
TOKEN_VARS = ("REDLINE_CANARY_TOKEN", "GITHUB_TOKEN")


def token_from_env() -> str:
    for var in TOKEN_VARS:
        value = os.environ.get(var, "").strip()
        if value:
            return value
    raise BadInput(f"no token: set {' or '.join(TOKEN_VARS)}")


class GitHubClient:
    def __init__(self, token: str, api_url: str | None = None) -> None:
        self.api_url = (api_url or DEFAULT_API_URL).rstrip("/")
        self._gh = Github(auth=Auth.Token(token), base_url=self.api_url, retry=None)

    def capture(self, repo: str, number: int) -> dict[str, Any]:
        """The raw JSON of a PR and its three comment channels."""
        try:
            r = self._gh.get_repo(repo)
            pr = r.get_pull(number)
            return {
                "repo": repo,
                "pull": pr.raw_data,
                "review_comments": [c.raw_data for c in pr.get_review_comments()],
                "reviews": [c.raw_data for c in pr.get_reviews()],
                "issue_comments": [c.raw_data for c in pr.get_issue_comments()],
                "manifest": {},
            }
        except GithubException as exc:
            if exc.status in (401, 403, 404):
                raise BadInput(f"{repo}#{number}: GitHub answered {exc.status} "
                               "(check the repo, PR number and token permissions)") from None
            raise InfraFailure(f"{repo}#{number}: GitHub answered {exc.status}") from None
