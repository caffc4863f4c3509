"""``doctor``: will a first real run work? A checklist from reads only, a fix per failure.

``redline-canary doctor --repo R --reviewer P [--stack S]`` (or ``--targets``, as ``run``
takes them) reads the token, the repository, its default branch, the label, check runs
and recent PRs, and prints one line per check. Exit 2 when a check fails (the run would
trip over it), 0 otherwise; ``--json`` prints the same as one JSON object per target.
With GitHub App credentials it first checks the App, its installation, the installation's
permissions and repository selection, and buys the installation token the reads then use
(docs/github.md#91-doctor-as-a-github-app).
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from redline_canary.commands import _validate as validate
from redline_canary.commands._options import CORPUS_HELP, SANDBOX_TOKEN, is_local_api
from redline_canary.commands._profiles_file import load_profiles_file
from redline_canary.commands._targets import corpus_layers, load_targets_text, parse_targets, read_targets_arg
from redline_canary.corpus.model import CorpusData, view
from redline_canary.errors import BadInput, combine_exit_codes, doctor_exit_code
from redline_canary.github.app_auth import APP_ID_VAR, Credentials, InstallationTokens, add_app_options
from redline_canary.github.client import GitHubClient
from redline_canary.github.clock import wall_now
from redline_canary.github.doctor import gather, gather_app
from redline_canary.github.doctor_checks import Answer, DoctorFacts, as_json, checklist, render_text
from redline_canary.github.transport import validate_api_url
from redline_canary.report.text import json_text
from redline_canary.review.profiles import Profile, get_profile
from redline_canary.run.corpus_files import load_corpus, require_known_stack
from redline_canary.run.cycle import LABEL


def register(sub: Any) -> None:
    p = sub.add_parser("doctor", help="check, by reading only, that a canary run can work on a repository",
                       description="Read the token, the repository, its default branch, the label, check runs "
                       "and recent PRs; print one line per check with the fix for each failure. Writes nothing "
                       "(as a GitHub App: the App, its installation, permissions and repository selection, and one "
                       "installation-token POST, docs/github.md#91-doctor-as-a-github-app). "
                       "Exit 2 on a blocking problem, 0 otherwise.")
    p.add_argument("--repo", help="canary repository OWNER/REPO")
    p.add_argument("--reviewer", default="redline", help="reviewer profile (default: %(default)s)")
    p.add_argument("--stack", help="corpus stack the run will push (checked against the corpus)")
    p.add_argument("--base", help="base branch (default: the repository's default branch)")
    p.add_argument("--targets", help="instead of --repo: the targets of `run` (inline JSON or a file)")
    p.add_argument("--corpus", action="append", help=CORPUS_HELP)
    p.add_argument("--profiles", help="YAML file of custom reviewer profiles or overrides")
    p.add_argument("--api-url", help="GitHub API URL (GitHub Enterprise, or the sandbox)")
    p.add_argument("--json", action="store_true", help="one JSON object per target")
    add_app_options(p)
    p.set_defaults(func=run_doctor)


def _targets(args: argparse.Namespace, extra: Sequence[str], corpus: Callable[[], CorpusData],
             items: tuple[list[Any], str] | None) -> list[tuple[str, str, str | None, str | None, tuple[str, ...]]]:
    """(repo, reviewer, stack, base, logins) per target, validated before any request.
    ``extra`` names the custom profiles; ``corpus`` is read only when it is needed;
    ``items`` are the --targets as read."""
    if items is not None:
        if args.repo or args.stack:
            raise BadInput("--targets and --repo/--stack: give one or the other")
        return [(t.repo, t.reviewer, t.stack, t.base, t.logins)
                for t in parse_targets(items[0], items[1], corpus(), list(extra))]
    if not args.repo:
        raise BadInput("--repo: required (or give --targets)")
    validate.repo(args.repo, "--repo")
    if args.base:
        validate.ref_name(args.base, "--base")
    return [(args.repo, args.reviewer, args.stack, args.base, ())]


def _credentials(args: argparse.Namespace, env: Mapping[str, str]) -> Credentials:
    """The App or the token from the environment. Against the sandbox (a local --api-url)
    "no token" alone sends a newcomer looking for a GitHub token: say that any token works there."""
    try:
        return Credentials.from_args(args, env)
    except BadInput as exc:
        app_given = getattr(args, "app_id", None) or env.get(APP_ID_VAR)
        if app_given or not is_local_api(args.api_url):
            raise
        raise BadInput(f"{exc}; a local API such as the sandbox accepts any token: "
                       f"export REDLINE_CANARY_TOKEN={SANDBOX_TOKEN}") from None


def run_doctor(args: argparse.Namespace) -> int:
    validate_api_url(args.api_url)
    extra = load_profiles_file(args.profiles) if args.profiles else {}
    items: tuple[list[Any], str] | None = None
    if args.targets:
        text, source = read_targets_arg(args.targets)
        items = load_targets_text(text, source), source
    layers = corpus_layers(args.corpus, *items) if items else args.corpus
    corpus = functools.cache(lambda: load_corpus(layers))  # read once, and only if a target needs it
    targets = _targets(args, sorted(extra), corpus, items)
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
    creds = _credentials(args, os.environ)
    auth = creds.auth(args.api_url)
    token = creds.token
    client = GitHubClient(token, args.api_url) if token is not None else None
    codes = []
    try:
        for (repo, _reviewer, target_stack, base, _logins), profile in zip(targets, profiles, strict=True):
            stack_seeds = seeds.get(target_stack) if target_stack else None
            if auth.app is not None:
                facts = _as_app(auth.app, repo, profile, base, target_stack, stack_seeds, args.api_url)
            else:
                assert client is not None and token is not None
                facts = gather(client, repo, profile, token=token, label=LABEL, now=wall_now(), base=base,
                               stack=target_stack, stack_seeds=stack_seeds)
            checks = checklist(facts)
            code = doctor_exit_code(c.status for c in checks)
            codes.append(code)
            if args.json:
                print(json_text(as_json(facts, checks, code), indent=None))
            else:
                print(render_text(facts, checks))
    finally:
        if client is not None:
            client.close()
        auth.close()
    sys.stdout.flush()
    return combine_exit_codes(codes)


def _as_app(tokens: InstallationTokens, repo: str, profile: Profile, base: str | None, stack: str | None,
            stack_seeds: int | None, api_url: str | None) -> DoctorFacts:
    """The App's checks, then, with the installation token they bought, the usual ones."""
    app, token = gather_app(tokens, repo)
    if token is None:
        return DoctorFacts(repo=repo, reviewer=profile.name, logins=tuple(sorted(profile.logins)),
                           needs_check_runs=profile.reads_check_runs, copilot=profile.name == "copilot",
                           label=LABEL, token_hint="app", user=Answer(0), stack=stack, stack_seeds=stack_seeds,
                           app=app)
    client = GitHubClient(token, api_url)
    try:
        app = replace(app, repositories=client.installation_repositories_answer())
        facts = gather(client, repo, profile, token=token, label=LABEL, now=wall_now(), base=base, stack=stack,
                       stack_seeds=stack_seeds)
    finally:
        client.close()
    return replace(facts, app=app)
