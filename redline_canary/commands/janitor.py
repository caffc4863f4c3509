"""``janitor``: remove canary PRs and branches left behind by runs that died.

A canary PR is recognised by three things at once — the ``redline-exempt`` label, a head
branch under the canary prefix, and the hidden run marker in its body — so nothing a
person opened is ever touched. Orphan branches (a run killed between push and PR) are
recognised by the prefix and their age or run id.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
from typing import Any

from redline_canary.cycle import BRANCH_PREFIX, LABEL, branch_name
from redline_canary.errors import BadInput
from redline_canary.github_api import GitHubClient, token_from_env

_MARKER = re.compile(r"<!-- rc:run=([A-Za-z0-9._-]+) -->")
_DURATION = re.compile(r"^(\d+(?:\.\d+)?)([smhd])$")


def register(sub: Any) -> None:
    p = sub.add_parser("janitor", help="close and delete canary PRs/branches left by dead runs")
    p.add_argument("--repo", required=True, help="OWNER/REPO")
    p.add_argument("--older-than", default="2h", help="only leftovers older than this (default 2h)")
    p.add_argument("--run-id", help="only this run's leftovers, whatever their age")
    p.add_argument("--stack", help="with --run-id: only this stack's PRs and branches (matrix jobs of one "
                   "run share a repo; each job's safety net must leave the others' PRs alone)")
    p.add_argument("--api-url", help="GitHub API URL")
    p.add_argument("--dry-run", action="store_true", help="list what would be removed")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=run_janitor)


def parse_duration(text: str) -> dt.timedelta:
    m = _DURATION.match(text.strip())
    if not m:
        raise BadInput(f"--older-than: expected a duration like 30m, 2h or 1d, got {text!r}")
    unit = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}[m[2]]
    return dt.timedelta(**{unit: float(m[1])})


def _parse_time(value: str) -> dt.datetime:
    return dt.datetime.fromisoformat(value.replace("Z", "+00:00"))


# Confirmation re-runs are attempts 2, 3, ...; no run confirms anywhere near this often.
_MAX_ATTEMPTS = 50


def stack_branches(run_id: str, stack: str) -> set[str]:
    """Every branch name a run can use for one stack (branch names are neutral hashes)."""
    return {branch_name(BRANCH_PREFIX, run_id, stack, kind, attempt)
            for kind in ("seeded", "clean") for attempt in range(1, _MAX_ATTEMPTS + 1)}


def run_janitor(args: argparse.Namespace) -> int:
    age = parse_duration(args.older_than)
    if args.stack and not args.run_id:
        raise BadInput("--stack: only together with --run-id")
    only = stack_branches(args.run_id, args.stack) if args.stack else None
    now = dt.datetime.now(dt.timezone.utc)
    client = GitHubClient(token_from_env(), args.api_url)
    removed: dict[str, list[Any]] = {"pulls": [], "branches": []}
    try:
        kept_branches: set[str] = set()
        for pr in client.open_pulls(args.repo):
            head = str((pr.get("head") or {}).get("ref") or "")
            labels = {lab.get("name") for lab in pr.get("labels") or []}
            marker = _MARKER.search(pr.get("body") or "")
            if LABEL not in labels or not head.startswith(BRANCH_PREFIX) or not marker:
                continue
            if only is not None and head not in only:
                kept_branches.add(head)
                continue
            if args.run_id:
                if marker[1] != args.run_id:
                    kept_branches.add(head)
                    continue
            elif now - _parse_time(pr["created_at"]) < age:
                kept_branches.add(head)
                continue
            removed["pulls"].append(pr["number"])
            if not args.dry_run:
                client.close_pull(args.repo, pr["number"])
        for branch, sha in sorted(client.branches_with_prefix(args.repo, BRANCH_PREFIX).items()):
            if branch in kept_branches or (only is not None and branch not in only):
                continue
            if args.run_id:
                if not branch.startswith(f"{BRANCH_PREFIX}{args.run_id}-"):
                    continue
            elif now - _parse_time(client.commit_date(args.repo, sha)) < age:
                continue
            removed["branches"].append(branch)
            if not args.dry_run:
                client.delete_branch(args.repo, branch)
    finally:
        client.close()
    verb = "would remove" if args.dry_run else "removed"
    if args.json:
        print(json.dumps({"repo": args.repo, "dry_run": args.dry_run, **removed}))
    else:
        print(f"{args.repo}: {verb} {len(removed['pulls'])} PR(s) "
              f"{removed['pulls']} and {len(removed['branches'])} branch(es) {removed['branches']}")
    return 0
