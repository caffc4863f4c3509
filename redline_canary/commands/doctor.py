"""``doctor``: will a first real run work? A checklist from reads only, a fix per failure.

``redline-canary doctor --repo R --reviewer P [--stack S]`` (or ``--targets``, as ``run``
takes them) reads the token, the repository, its default branch, the label, check runs
and recent PRs, and prints one line per check. Exit 2 when a check fails (the run would
trip over it), 0 otherwise; ``--json`` prints the same as one JSON object per target.
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from redline_canary.commands import _validate as validate
from redline_canary.commands._options import SANDBOX_TOKEN, is_local_api
from redline_canary.commands._profiles_file import load_profiles_file
from redline_canary.commands._targets import load_targets_text, parse_targets, read_targets_arg
from redline_canary.corpus.model import CorpusData, view
from redline_canary.errors import BadInput, combine_exit_codes, doctor_exit_code
from redline_canary.github.client import GitHubClient
from redline_canary.github.clock import wall_now
from redline_canary.github.doctor import gather
from redline_canary.github.doctor_checks import as_json, checklist, render_text
from redline_canary.github.transport import token_from_env, validate_api_url
from redline_canary.report.text import json_text
from redline_canary.review.profiles import get_profile
from redline_canary.run.corpus_files import load_corpus, require_known_stack
from redline_canary.run.cycle import LABEL


def register(sub: Any) -> None:
    p = sub.add_parser("doctor", help="check, by reading only, that a canary run can work on a repository",
                       description="Read the token, the repository, its default branch, the label, check runs "
                       "and recent PRs; print one line per check with the fix for each failure. Writes nothing. "
                       "Exit 2 on a blocking problem, 0 otherwise.")
    p.add_argument("--repo", help="canary repository OWNER/REPO")
    p.add_argument("--reviewer", default="redline", help="reviewer profile (default: %(default)s)")
    p.add_argument("--stack", help="corpus stack the run will push (checked against the corpus)")
    p.add_argument("--base", help="base branch (default: the repository's default branch)")
    p.add_argument("--targets", help="instead of --repo: the targets of `run` (inline JSON or a file)")
    p.add_argument("--corpus", help="corpus folder for --stack (default: the packaged seeds/)")
    p.add_argument("--profiles", help="YAML file of custom reviewer profiles or overrides")
    p.add_argument("--api-url", help="GitHub API URL (GitHub Enterprise, or the sandbox)")
    p.add_argument("--json", action="store_true", help="one JSON object per target")
    p.set_defaults(func=run_doctor)


def _targets(args: argparse.Namespace, extra: Sequence[str], corpus: Callable[[], CorpusData],
             ) -> list[tuple[str, str, str | None, str | None, tuple[str, ...]]]:
    """(repo, reviewer, stack, base, logins) per target, validated before any request.
    ``extra`` names the custom profiles; ``corpus`` is read only when it is needed."""
    if args.targets:
        if args.repo or args.stack:
            raise BadInput("--targets and --repo/--stack: give one or the other")
        text, source = read_targets_arg(args.targets)
        return [(t.repo, t.reviewer, t.stack, t.base, t.logins)
                for t in parse_targets(load_targets_text(text, source), source, corpus(), list(extra))]
    if not args.repo:
        raise BadInput("--repo: required (or give --targets)")
    validate.repo(args.repo, "--repo")
    if args.base:
        validate.ref_name(args.base, "--base")
    return [(args.repo, args.reviewer, args.stack, args.base, ())]


def _token(api_url: str | None, env: Mapping[str, str]) -> str:
    """The token from the environment. Against the sandbox (a local --api-url) "no token"
    alone sends a newcomer looking for a GitHub token: say that any token works there."""
    try:
        return token_from_env(env)
    except BadInput as exc:
        if not is_local_api(api_url):
            raise
        raise BadInput(f"{exc}; a local API such as the sandbox accepts any token: "
                       f"export REDLINE_CANARY_TOKEN={SANDBOX_TOKEN}") from None


def run_doctor(args: argparse.Namespace) -> int:
    validate_api_url(args.api_url)
    extra = load_profiles_file(args.profiles) if args.profiles else {}
    corpus = functools.cache(lambda: load_corpus(args.corpus))  # read once, and only if a target needs it
    targets = _targets(args, sorted(extra), corpus)
    profiles = []
    for _repo, reviewer, _stack, _base, logins in targets:
        try:
            profile = get_profile(reviewer, extra)
        except KeyError as exc:
            raise BadInput(f"--reviewer: {exc.args[0]}") from None
        profiles.append(profile.with_logins(logins) if logins else profile)
    seeds: dict[str, int] = {}
    stacks = sorted({t[2] for t in targets if t[2]})
    if stacks:
        for stack in stacks:
            require_known_stack(corpus(), stack)
            seeds[stack] = len(view(corpus(), stack, "seeded").seeds)
    token = _token(args.api_url, os.environ)
    client = GitHubClient(token, args.api_url)
    codes = []
    try:
        for (repo, _reviewer, target_stack, base, _logins), profile in zip(targets, profiles, strict=True):
            facts = gather(client, repo, profile, token=token, label=LABEL, now=wall_now(), base=base,
                           stack=target_stack, stack_seeds=seeds.get(target_stack) if target_stack else None)
            checks = checklist(facts)
            code = doctor_exit_code(c.status for c in checks)
            codes.append(code)
            if args.json:
                print(json_text(as_json(facts, checks, code), indent=None))
            else:
                print(render_text(facts, checks))
    finally:
        client.close()
    sys.stdout.flush()
    return combine_exit_codes(codes)
