"""``janitor``: remove canary PRs and branches left behind by runs that died.

The janitor deletes things in a repository people may also use, so it only ever touches
what this tool provably made, and proves it twice:

- the branch name has the exact shape ``rc/<run-id>-<8 lowercase hex>`` that
  :func:`redline_canary.run.cycle.branch_name` produces (``rc/2.4`` or ``rc/2.5-hotfix`` do
  not), and
- the run marker ``<!-- rc:run=<same run-id> -->`` is in the PR body (for an open PR) or in
  the head commit's message (for a branch with no open canary PR).

The ``redline-exempt`` label is not required: a run killed between opening the PR and
labelling it leaves an unlabelled canary PR, which must still be cleaned. The head branch
of an open PR that is not a canary PR is never deleted, whatever its name or commit say.
And like ``run``, the janitor refuses a repository without the opt-in topic.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TextIO

import httpx

from redline_canary.commands import _validate as validate
from redline_canary.errors import BadInput
from redline_canary.github.app_auth import Credentials, add_app_options
from redline_canary.github.client import CANARY_TOPIC, GitHubClient
from redline_canary.github.transport import validate_api_url
from redline_canary.run.cycle import BRANCH_PREFIX, RUN_MARKER, branch_name
from redline_canary.score.record import KINDS

# ``rc/<run-id>-<8 hex>``: the run id may itself contain ``-``, the token never does, so
# the last ``-`` separates them. Anchored at both ends (\Z: no trailing newline).
_BRANCH = re.compile(r"rc/(?P<run>[A-Za-z0-9._-]{1,100})-(?P<token>[0-9a-f]{8})\Z")
_DURATION = re.compile(r"(\d{1,9}(?:\.\d{1,6})?)([smhd])")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
MAX_AGE = dt.timedelta(days=365)
# Confirmation re-runs are attempts 2, 3, ...; no run confirms anywhere near this often.
_MAX_ATTEMPTS = 50


def register(sub: Any) -> None:
    p = sub.add_parser("janitor", help="close and delete canary PRs/branches left by dead runs")
    p.add_argument("--repo", required=True, help="OWNER/REPO (must carry the topic redline-canary)")
    p.add_argument("--older-than", default="2h", help="only leftovers older than this (default 2h)")
    p.add_argument("--run-id", help="only this run's leftovers, whatever their age")
    p.add_argument("--stack", help="with --run-id: only this stack's PRs and branches (matrix jobs of one "
                   "run share a repo; each job's safety net must leave the others' PRs alone)")
    p.add_argument("--api-url", help="GitHub API URL")
    add_app_options(p)
    p.add_argument("--dry-run", action="store_true", help="list what would be removed")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=run_janitor)


def parse_duration(text: str) -> dt.timedelta:
    """A positive age up to a year: ``30m``, ``2h``, ``1.5d``. Zero would mean "everything,
    including the PRs a live run is waiting on", so it is refused like garbage is."""
    m = _DURATION.fullmatch(text.strip())
    if not m:
        raise BadInput(f"--older-than: expected a duration like 30m, 2h or 1d, got {validate.show(text)}")
    seconds = float(m[1]) * _UNIT_SECONDS[m[2]]
    if not 0 < seconds <= MAX_AGE.total_seconds():
        raise BadInput(f"--older-than: must be more than 0 and at most 365d, got {validate.show(text)}")
    return dt.timedelta(seconds=seconds)


def canary_run_id(branch: str) -> str | None:
    """The run id encoded in a canary-shaped branch name, or None for any other branch."""
    m = _BRANCH.match(branch)
    return m["run"] if m else None


def carries_marker(text: Any, run_id: str) -> bool:
    """This tool's hidden run marker for exactly ``run_id`` (not a prefix of another id)."""
    return isinstance(text, str) and RUN_MARKER.format(run_id=run_id) in text


def stack_branches(run_id: str, stack: str) -> set[str]:
    """Every branch name a run can use for one stack (branch names are neutral hashes)."""
    return {branch_name(BRANCH_PREFIX, run_id, stack, kind, attempt)
            for kind in KINDS for attempt in range(1, _MAX_ATTEMPTS + 1)}


def _parse_time(value: Any) -> dt.datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        when = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=dt.timezone.utc)


@dataclass(frozen=True)
class Scope:
    """Which leftovers this invocation may remove: one run (and stack), or old enough."""

    run_id: str | None
    only: frozenset[str] | None
    age: dt.timedelta
    now: dt.datetime

    def wants(self, branch: str, run_id: str, created: Any) -> bool:
        if self.only is not None and branch not in self.only:
            return False
        if self.run_id is not None:
            return run_id == self.run_id
        when = _parse_time(created)
        return when is not None and self.now - when >= self.age  # unknown age: leave it

    def too_young(self, branch: str, run_id: str, created: Any) -> bool:
        """Left alone *only* because it is younger than ``--older-than`` (the janitor says so)."""
        if self.run_id is not None or (self.only is not None and branch not in self.only):
            return False
        when = _parse_time(created)
        return when is not None and self.now - when < self.age


def _head_ref_here(pr: Mapping[str, Any], repo: str) -> str | None:
    """The PR's head branch when it lives in ``repo`` (or we cannot tell: then assume it
    does, so it is protected). None for a fork's PR, whose branch is not in this repo."""
    head = pr.get("head")
    if not isinstance(head, Mapping) or not isinstance(head.get("ref"), str):
        return None
    head_repo = head.get("repo")
    full_name = head_repo.get("full_name") if isinstance(head_repo, Mapping) else None
    if isinstance(full_name, str) and full_name.lower() != repo.lower():
        return None
    return str(head["ref"])


def _is_canary_pull(pr: Mapping[str, Any], repo: str) -> str | None:
    """The run id when ``pr`` is one of ours: a canary-shaped head branch *in this
    repository* and the same run's marker in the body. None for everything else."""
    head = pr.get("head")
    if not isinstance(head, Mapping):
        return None
    ref = head.get("ref")
    head_repo = head.get("repo")
    full_name = head_repo.get("full_name") if isinstance(head_repo, Mapping) else None
    if not isinstance(ref, str) or not isinstance(full_name, str) or full_name.lower() != repo.lower():
        return None  # a fork's branch of the same name is not ours to judge
    run_id = canary_run_id(ref)
    if run_id is None or not carries_marker(pr.get("body"), run_id):
        return None
    return run_id


@dataclass(frozen=True)
class JanitorOptions:
    """``janitor``'s flags, checked, with the token read from the environment once (and
    kept out of every repr)."""

    repo: str
    older_than: dt.timedelta
    run_id: str | None
    stack: str | None
    api_url: str | None
    dry_run: bool
    json: bool
    credentials: Credentials = field(repr=False)

    @classmethod
    def from_args(cls, args: argparse.Namespace, env: Mapping[str, str]) -> JanitorOptions:
        validate.repo(args.repo, "--repo")
        age = parse_duration(args.older_than)
        if args.run_id is not None:
            validate.run_id(args.run_id)
        if args.stack is not None:
            validate.stack(args.stack)
            if not args.run_id:
                raise BadInput("--stack: only together with --run-id")
        api_url = validate_api_url(args.api_url)
        return cls(args.repo, age, args.run_id, args.stack, api_url, args.dry_run, args.json,
                   Credentials.from_args(args, env))


def run_janitor(args: argparse.Namespace) -> int:
    """The edge: the flags and ``os.environ`` become options here, and only here."""
    return janitor(JanitorOptions.from_args(args, os.environ), out=sys.stdout)


def utc_now() -> dt.datetime:
    """The wall clock, to the microsecond: ``--older-than 0.001s`` must mean what it says."""
    return dt.datetime.now(dt.timezone.utc)


def janitor(options: JanitorOptions, *, out: TextIO, transport: httpx.BaseTransport | None = None,
            now: Callable[[], dt.datetime] = utc_now) -> int:
    """Remove (or with ``dry_run`` list) the leftovers in scope. ``transport`` stands in for
    the network; ``now`` is the wall clock ages are measured from."""
    repo = options.repo
    now_at = now()
    scope = Scope(run_id=options.run_id,
                  only=frozenset(stack_branches(options.run_id, options.stack))
                  if options.stack and options.run_id else None,
                  age=options.older_than, now=now_at)
    auth = options.credentials.auth(options.api_url, transport=transport)
    client = GitHubClient(auth.for_repo(repo), options.api_url, transport=transport)
    removed: dict[str, list[Any]] = {"pulls": [], "branches": []}
    young: dict[str, list[Any]] = {"pulls": [], "branches": [], "run_ids": []}  # ours, but too young
    try:
        flags = client.repo_flags(repo)
        if CANARY_TOPIC not in flags.topics:
            raise BadInput(f"{repo}: not a canary repository: the janitor only cleans repositories "
                           f"with the topic '{CANARY_TOPIC}'")
        if flags.archived:
            raise BadInput(f"{repo}: the repository is archived")
        keep: set[str] = set()  # heads of open PRs we must not delete under
        closing: set[str] = set()  # heads of the canary PRs closed below
        for pr in client.open_pulls(repo):
            ref = _head_ref_here(pr, repo)
            run_id = _is_canary_pull(pr, repo)
            if run_id is None or ref is None:
                if ref is not None:
                    keep.add(ref)  # a person's PR: its head branch is off limits
                continue
            if not scope.wants(ref, run_id, pr.get("created_at")):
                keep.add(ref)
                if scope.too_young(ref, run_id, pr.get("created_at")):
                    young["pulls"].append(pr["number"])
                    young["branches"].append(ref)
                    young["run_ids"].append(run_id)
                continue
            removed["pulls"].append(pr["number"])
            closing.add(ref)
            if not options.dry_run:
                client.close_pull(repo, pr["number"])
        for branch, sha in sorted(client.branches_with_prefix(repo, BRANCH_PREFIX).items()):
            run_id = canary_run_id(branch)
            if run_id is None or branch in keep:
                continue
            if branch not in closing:
                if scope.only is not None and branch not in scope.only:
                    continue
                if scope.run_id is not None and run_id != scope.run_id:
                    continue
                head = client.commit_info(repo, sha)
                if not carries_marker(head.message, run_id):
                    continue
                if not scope.wants(branch, run_id, head.date):
                    if scope.too_young(branch, run_id, head.date):
                        young["branches"].append(branch)
                        young["run_ids"].append(run_id)
                    continue
            removed["branches"].append(branch)
            if not options.dry_run:
                client.delete_branch(repo, branch)
    finally:
        client.close()
        auth.close()
    verb = "would remove" if options.dry_run else "removed"
    young["pulls"].sort()
    young["branches"].sort()
    young["run_ids"] = sorted(set(young["run_ids"]))
    if options.json:
        print(json.dumps({"repo": repo, "dry_run": options.dry_run, **removed, "kept_young": young}), file=out)
    else:
        print(f"{repo}: {verb} {len(removed['pulls'])} PR(s) "
              f"{removed['pulls']} and {len(removed['branches'])} branch(es) {removed['branches']}", file=out)
        if young["pulls"] or young["branches"]:
            print(young_note(repo, young, options.older_than), file=out)
    return 0


def show_duration(age: dt.timedelta) -> str:
    """``2h``, ``30m``, ``1.5d``: an age the way ``--older-than`` takes it."""
    seconds = age.total_seconds()
    for unit in ("d", "h", "m"):
        count = seconds / _UNIT_SECONDS[unit]
        if count >= 1 and abs(count * 10 - round(count * 10)) < 1e-9:
            return f"{count:g}{unit}"
    return f"{seconds:g}s"


def young_note(repo: str, young: Mapping[str, list[Any]], age: dt.timedelta) -> str:
    """What the age limit protected, and the two ways to include it. A live run's PRs look
    exactly like a dead run's, which is why they are not removed by default."""
    runs = young["run_ids"]
    shown = ", ".join(runs[:3]) + (f" and {len(runs) - 3} more" if len(runs) > 3 else "")
    example = runs[0] if len(runs) == 1 else "RUN_ID"
    return (f"{repo}: left alone {len(young['pulls'])} canary PR(s) and {len(young['branches'])} canary "
            f"branch(es) younger than --older-than {show_duration(age)} (run {shown}); a live run's look "
            f"the same. If that run is dead, include them with --run-id {example}, or a smaller --older-than")
