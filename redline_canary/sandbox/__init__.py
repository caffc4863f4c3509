"""A local fake of the GitHub REST subset redline-canary uses, with simulated reviewers.

Real clients (PyGithub with ``base_url``, httpx) talk to it over real sockets, so a canary
run against the sandbox exercises the same code paths as a run against api.github.com. The
HTTP behaviour is one WSGI app (``app.py``): served by wsgiref on a socket (``server.py``),
or, with ``Sandbox(listen=False)``, mounted in the client through ``sb.transport()``
(``GitHubClient(token, sb.url, transport=sb.transport())``) for tests where the wire is
not the point.
Faithful to docs/sandbox.md, ``docs/github.md`` §11 and the recorded fixtures
(``tests/test_sandbox_contract.py`` replays every one of them).

    with Sandbox() as sb:                                  # sb.url = "http://127.0.0.1:PORT"
        sb.create_repo("acme/canary-python", files={"README.md": "hi\n"})
        sb.attach_reviewer("acme/canary-python", BanditReviewer(latency=0.1))
        gh = Github(base_url=sb.url, auth=Auth.Token("any"), retry=None,
                    seconds_between_requests=None, seconds_between_writes=None)
        ...                                                # the product's real code path
        sb.wait_for_reviewers()
        assert sb.open_pulls("acme/canary-python") == []
        assert sb.branches("acme/canary-python") == ["main"]
        sb.request_counts("charged")       # {"GET /repos/{owner}/{repo}/pulls/{pull_number}": 3, ...}

Knobs: ``inject_fault`` (status/headers/body/delay/drop/after_write/secondary, N times or
always, per method+route template), ``secondary_limit`` (403 or 429, with or without
retry-after), ``primary_limit``, ``tree_payload_cap``, ``ref_visibility_lag``,
``submitted_too_quickly``, ``fine_grained_token``, ``review_requests``; GitHub Apps
(``register_app``, ``install_app``, ``installation_token_lifetime``: JWTs checked, expiring
installation tokens, one secondary-limit budget per token or installation); a whole world from a
scenario file or mapping: ``Sandbox.from_scenario`` / ``load_scenario``. Observation:
``requests``, ``request_counts``, ``pulls``/``open_pulls``, ``issues``, ``branches``, ``files``,
``capture`` (the three comment channels as GitHub JSON), ``reviewer_activity``.
"""

from redline_canary.sandbox.core import RepoHandle, Sandbox
from redline_canary.sandbox.limits import Fault, RequestRecord
from redline_canary.sandbox.observation import IssueSummary, PullSummary
from redline_canary.sandbox.reviewer_hub import Activity
from redline_canary.sandbox.reviewer_kinds import (
    BanditReviewer,
    Batch,
    ReplayReviewer,
    ScriptedReviewer,
    SilentReviewer,
)
from redline_canary.sandbox.reviewers import BANDIT_BOT, COPILOT, REDLINE_BOT, Identity, ReviewContext, Reviewer
from redline_canary.sandbox.scenario import Scenario, ScenarioError
from redline_canary.sandbox.scenario_files import load_scenario
from redline_canary.sandbox.scenario_validation import parse_scenario

__all__ = [
    "BANDIT_BOT",
    "COPILOT",
    "REDLINE_BOT",
    "Activity",
    "BanditReviewer",
    "Batch",
    "Fault",
    "Identity",
    "IssueSummary",
    "PullSummary",
    "ReplayReviewer",
    "RepoHandle",
    "RequestRecord",
    "ReviewContext",
    "Reviewer",
    "Sandbox",
    "Scenario",
    "ScenarioError",
    "ScriptedReviewer",
    "SilentReviewer",
    "load_scenario",
    "parse_scenario",
]
