"""``issue``: open, update or close the regression issue of each target of a run.

The workflow's ``record`` job runs it against the metrics repository after the history is
merged, with a token that may write issues there and nowhere else. What to do is decided
by :mod:`redline_canary.report.regression_issue` (pure); this edge reads the history, lists the
open issues with the label, applies the actions and prints one line per target.

Exit codes (verdict's table): 0 when every action was applied, whatever the gate said
(the verdict is ``gate``'s to give); 2 for bad input or a token without ``issues: write``;
4 when GitHub failed after retries. One failed action does not stop the others.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TextIO

import httpx

from redline_canary.commands import _validate as validate
from redline_canary.commands._actions_env import ActionsEnv, commands_suspended
from redline_canary.errors import EXIT_PASS, CanaryError, combine_exit_codes, mask
from redline_canary.github.app_auth import Credentials, add_app_options
from redline_canary.github.client import GitHubClient
from redline_canary.github.transport import validate_api_url
from redline_canary.report.regression_issue import DEFAULT_LABEL, Action, Links, OpenIssue, judge, plan
from redline_canary.report.text import inert_line, json_text
from redline_canary.run.history import run_records

_DONE = {"open": "opened", "comment": "commented on", "close": "closed", "nothing": "nothing"}
_DRY = {"open": "would open", "comment": "would comment on", "close": "would close", "nothing": "nothing"}


def register(sub: Any) -> None:
    p = sub.add_parser("issue", help="open, update or close the regression issue of each target of a run")
    p.add_argument("--repo", required=True, help="OWNER/REPO that holds the issues (the metrics repository)")
    p.add_argument("--history", required=True, metavar="FILE", help="JSONL history holding the run's records")
    p.add_argument("--run-id", required=True, action="append", dest="run_ids", metavar="RUN_ID",
                   help="the run to report; repeat for a re-run (a later id supersedes, as in gate)")
    p.add_argument("--run-url", help="link to the workflow run, shown in the issue and its comments")
    p.add_argument("--summary-url", help="link to the summary or scoreboard, shown in the issue")
    p.add_argument("--label", default=DEFAULT_LABEL,
                   help=f"label that marks the issues (default {DEFAULT_LABEL}; created if missing)")
    p.add_argument("--api-url", help="GitHub API URL")
    add_app_options(p)
    p.add_argument("--dry-run", action="store_true", help="say what would be done; write nothing")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=run_issue)


def _login(item: Any) -> str | None:
    user = item.get("user") if isinstance(item, dict) else None
    login = user.get("login") if isinstance(user, dict) else None
    return login.lower() if isinstance(login, str) else None


def _open_issues(client: GitHubClient, repo: str, label: str, markers: set[str]) -> list[OpenIssue]:
    """The labelled open issues; for those of a target of this run, also the comments their
    author wrote (the run markers that make a second invocation comment nothing)."""
    out = []
    for item in client.labelled_issues(repo, label):
        raw = item.get("body")
        body = raw if isinstance(raw, str) else ""
        comments: tuple[str, ...] = ()
        if any(m in body for m in markers):
            author = _login(item)
            comments = tuple(c["body"] for c in client.issue_comments(repo, item["number"])
                             if author is not None and _login(c) == author and isinstance(c.get("body"), str))
        url = item.get("html_url")
        out.append(OpenIssue(item["number"], url if isinstance(url, str) else "", body, comments))
    return out


def _apply(client: GitHubClient, repo: str, label: str, action: Action) -> tuple[int | None, str | None]:
    """Carry out one action; the issue's number and URL afterwards."""
    if action.kind == "open":
        made = client.open_issue(repo, action.title, action.body, label, action.target.marker)
        url = made.get("html_url")
        return int(made["number"]), url if isinstance(url, str) else None
    if action.kind in ("comment", "close") and action.issue is not None:
        if action.body:
            client.comment(repo, action.issue, action.body)
        if action.kind == "close":
            client.close_issue(repo, action.issue)
    return action.issue, None


@dataclass(frozen=True)
class IssueOptions:
    """``issue``'s flags, checked, with the token and the Actions flag read from the
    environment once; the token stays out of every repr."""

    repo: str
    history: str
    run_ids: tuple[str, ...]
    links: Links
    label: str
    api_url: str | None
    dry_run: bool
    json: bool
    credentials: Credentials = field(repr=False)
    actions: ActionsEnv = field(default_factory=ActionsEnv)

    @classmethod
    def from_args(cls, args: argparse.Namespace, env: Mapping[str, str]) -> IssueOptions:
        repo = validate.repo(args.repo, "--repo")
        run_ids = tuple(validate.run_id(x) for x in dict.fromkeys(args.run_ids))
        links = Links(validate.link_url(args.run_url, "--run-url"),
                      validate.link_url(args.summary_url, "--summary-url"))
        label = validate.label(args.label, "--label")
        api_url = validate_api_url(args.api_url)
        return cls(repo, args.history, run_ids, links, label, api_url, args.dry_run, args.json,
                   Credentials.from_args(args, env), ActionsEnv.from_env(env))


def run_issue(args: argparse.Namespace) -> int:
    """The edge: the flags and ``os.environ`` become options here, and only here."""
    return issue(IssueOptions.from_args(args, os.environ), out=sys.stdout, err=sys.stderr)


def issue(options: IssueOptions, *, out: TextIO, err: TextIO, transport: httpx.BaseTransport | None = None) -> int:
    """Plan and apply the issue actions of the run; ``transport`` stands in for the network."""
    repo, label, run_ids = options.repo, options.label, list(options.run_ids)
    records = run_records(options.history, run_ids, lambda line: print(line, file=err))
    results = judge(records, run_ids)
    auth = options.credentials.auth(options.api_url, transport=transport)
    client = GitHubClient(auth.for_repo(options.repo), options.api_url, transport=transport)
    rows: list[dict[str, Any]] = []
    codes = [EXIT_PASS]
    try:
        issues = _open_issues(client, repo, label, {r.target.marker for r in results})
        urls = {i.number: i.url for i in issues}
        for action in plan(results, issues, options.links):
            number, url, error = action.issue, urls.get(action.issue or 0), None
            if not options.dry_run and action.kind != "nothing":
                try:
                    number, made_url = _apply(client, repo, label, action)
                    url = made_url or url
                except CanaryError as exc:
                    codes.append(exc.exit_code)
                    error = inert_line(mask(str(exc)))
                    print(f"redline-canary: {error}", file=err)
            t = action.target
            rows.append({"repo": t.repo, "stack": t.stack, "reviewer": t.reviewer, "run_id": action.run_id,
                         "action": action.kind, "issue": number, "url": url, "why": action.why,
                         "applied": not options.dry_run and action.kind != "nothing" and error is None,
                         "error": error})
    finally:
        client.close()
        auth.close()
    code = combine_exit_codes(codes)
    if options.json:
        print(json_text({"repo": repo, "label": label, "dry_run": options.dry_run, "run_ids": run_ids,
                         "exit_code": code, "actions": rows}), file=out)
        return code
    verbs = _DRY if options.dry_run else _DONE
    # Record text (repo, stack, reviewer, gate reasons) on every line: each is inert, and
    # under Actions the block is also wrapped in stop-commands.
    with commands_suspended(out, active=options.actions.active):
        for row in rows:
            what = verbs[row["action"]] if row["error"] is None else f"could not {row['action']}"
            ref = f" #{row['issue']}" if row["issue"] and row["action"] != "nothing" else ""
            print(inert_line(f"{row['repo']} {row['stack']}/{row['reviewer']}: {what}{ref} — {row['why']}"),
                  file=out)
    return code
