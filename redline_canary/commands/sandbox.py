"""``redline-canary sandbox serve``: the local fake GitHub, by hand or from another process.

Point ``run --api-url`` (or PyGithub's ``base_url``, or curl) at the printed URL; any token
is accepted. Serves until Ctrl-C (or SIGTERM), then closes every socket and reviewer thread.

``--scenario FILE`` (YAML, or JSON by ``.json`` suffix) builds a whole world instead of
``--repo``: repositories with or without the opt-in topic, branches and PRs a human made
before the canary ran, a simulated reviewer per repo, and faults and limits, so a test
can drive any failure from outside the Python API. Keys (see
``redline_canary/sandbox/scenario.py`` for the full shape)::

    login, human,
    repos[]: name, topic, reviewer (bandit|silent|none), latency, default_branch, writable,
             files, branches[], pulls[] (head, title, base, body, draft, author),
             review_requests {login: registered|dropped|hidden|rejected}
    faults[]: method, route (OpenAPI template), repo, status, headers, body, delay, drop,
              times (omitted = always), after_write, secondary
    secondary_limit: per_minute, per_hour, window, retry_after, status (403|429),
                     send_retry_after, methods
    primary_limit: limit, remaining, reset_in, status
    ref_visibility_lag: N | {attempts, repo}
    too_quickly: after, times, created, repo
    fine_grained_token: missing [permission names], repos
    token: kind (fine_grained|classic), expires_in_days, scopes, no_access
    tree_payload_cap: bytes

Any problem in the file is one line naming it and the key path, exit 2. With ``--json``
the first stdout line is ``{"url", "repos", "reviewer", "reviewers", "scenario"}``.
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import shlex
import signal
import socket
import sys
import threading
from types import FrameType
from typing import TYPE_CHECKING, Any

from redline_canary.commands import _validate as validate
from redline_canary.commands._groups import add_actions
from redline_canary.commands._options import API_URL_VAR, SANDBOX_POLL_FLAGS, SANDBOX_TOKEN
from redline_canary.errors import BadInput

if TYPE_CHECKING:
    from redline_canary.sandbox import Sandbox

DEFAULT_REPO = "acme/canary-python"
DEFAULT_STACK = "python"  # what the banner's commands push: bandit reviews Python
REVIEWER_KINDS = ("bandit", "silent", "none")
# Raw text (the epilog's YAML needs its line breaks), so wrapped here by hand: no help line
# is wider than 100 characters (tests/unit/test_cli_help.py).
SERVE_DESCRIPTION = """\
Serve the sandbox on 127.0.0.1 and print its URL, the token to export (any token is
accepted) and the doctor and run command lines for it, with fast polling. --scenario FILE
sets up repos, human branches/PRs, reviewers, faults and limits from YAML/JSON; top-level
keys: login, human, repos, faults, secondary_limit, primary_limit, ref_visibility_lag,
too_quickly, fine_grained_token, token, tree_payload_cap (docs/sandbox.md#scenarios).
"""
SCENARIO_HELP = """\
scenario file (YAML, or JSON by .json suffix); every key but repos is optional:
  login: redline-canary              # the token's user
  human: octocat                     # who made the pre-existing branches and PRs
  repos:
    - name: acme/canary-python       # OWNER/NAME, each once
      topic: true                    # carries the opt-in topic
      reviewer: bandit               # bandit | silent | none (default: --reviewer-kind)
      latency: 0.5                   # default: --latency
      default_branch: main
      writable: true                 # false: permissions.push false, writes 403
      files: {README.md: "hi"}       # initial default-branch files
      empty: false                   # true: no commit at all
      labels: [redline-exempt]       # labels that already exist
      copilot_review: false          # true: a ruleset requests Copilot's review
      branches: [rc/2.4]             # one commit each by `human`
      pulls: [{head: rc/2.4, title: Hotfix, base: main, body: "", draft: false, author: octocat,
               reviewed_by: ["coderabbitai[bot]"]}]
      review_requests: {"copilot-pull-request-reviewer[bot]": hidden}
                                     # registered | dropped | hidden | rejected
  faults:                            # times omitted = always
    - {method: POST, route: "/repos/{owner}/{repo}/pulls", status: 502, after_write: true, times: 1}
    # also: repo, headers {..}, body (string = raw), delay, drop, secondary
  secondary_limit: {per_minute: 5, per_hour: 100, window: 60, retry_after: 30,
                    status: 429, send_retry_after: false, methods: [POST, PATCH, PUT]}
  primary_limit: {limit: 5000, remaining: 0, reset_in: 30, status: 403}
  ref_visibility_lag: {attempts: 2, repo: acme/canary-python}   # or just: 2
  too_quickly: {after: 9, times: 3, created: false, repo: acme/canary-python}
  fine_grained_token: {missing: [pull_requests], repos: [acme/canary-python]}
  token: {kind: fine_grained, expires_in_days: 5, no_access: [checks]}
                                     # or {kind: classic, scopes: [public_repo]}
  tree_payload_cap: 2000000
Any problem: one line naming the file and key path, exit 2.
"""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "sandbox",
        help="run the local GitHub sandbox",
        description="A local fake of the GitHub REST subset redline-canary uses, with "
        "simulated reviewers (docs/sandbox.md).",
    )
    actions = add_actions(parser, "sandbox_action")
    serve = actions.add_parser(
        "serve",
        help="serve the sandbox until Ctrl-C",
        description=SERVE_DESCRIPTION,
        epilog=SCENARIO_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    serve.add_argument("--port", type=int, default=0, help="TCP port 0-65535 (default 0: ephemeral)")
    serve.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1)")
    _add_reviewer_kind(serve, "simulated reviewer on every repo, or on scenario repos that name none")
    serve.add_argument(
        "--scenario",
        metavar="FILE",
        help="YAML or JSON world to build: repos, human branches and PRs, reviewers, faults, limits",
    )
    serve.add_argument(
        "--repo",
        action="append",
        metavar="OWNER/NAME",
        help=f"repository to create (repeatable; default {DEFAULT_REPO})",
    )
    serve.add_argument("--latency", type=float, default=1.0, help="reviewer answer delay in seconds (default 1)")
    serve.add_argument("--json", action="store_true", help="print the URL and repos as JSON")
    serve.set_defaults(func=_serve)
    verify = actions.add_parser(
        "verify",
        help="replay a recording against a fresh sandbox and print what differs",
        description="Replay every interaction of DIR (written by `run --record DIR`, or any folder in the "
        "github-fixtures format) against a fresh in-process sandbox and print, per interaction, the "
        "differences the product would notice: status, the headers it reads, key sets and JSON types of "
        "the body (ids, SHAs, dates and URLs are not differences). Exit 1 when any interaction differs.",
    )
    verify.add_argument("dir", metavar="DIR", help="folder of recorded interactions (*.json)")
    _add_reviewer_kind(verify, "simulated reviewer on every recorded repository")
    verify.add_argument("--json", action="store_true", help="one JSON object per interaction, then a summary")
    verify.set_defaults(func=_verify)


def _add_reviewer_kind(p: argparse.ArgumentParser, what: str) -> None:
    """``--reviewer-kind``: what the simulated reviewer does. Elsewhere ``--reviewer`` names
    a profile (copilot, coderabbit, ...), so the sandbox's old ``--reviewer`` is only a
    hidden, deprecated alias that warns (docs/sandbox.md#reviewers)."""
    p.add_argument("--reviewer-kind", choices=REVIEWER_KINDS, default=None,
                   help=f"{what} (default bandit)")
    p.add_argument("--reviewer", dest="reviewer_alias", choices=REVIEWER_KINDS, default=None,
                   help=argparse.SUPPRESS)


def _reviewer_kind(args: argparse.Namespace) -> str:
    """The kind the flags ask for; the deprecated spelling still works, with one warning."""
    kind: str | None = args.reviewer_kind
    alias: str | None = args.reviewer_alias
    if alias is not None:
        if kind is not None and kind != alias:
            raise BadInput(f"--reviewer: deprecated alias of --reviewer-kind, and they disagree "
                           f"({alias} vs {kind}); give --reviewer-kind only")
        print("redline-canary: sandbox --reviewer is deprecated (elsewhere --reviewer names a profile); "
              "use --reviewer-kind", file=sys.stderr)
        kind = alias
    return kind or "bandit"


def _check_address(host: str, port: int) -> None:
    """Refuse what cannot be listened on before any thread starts: exit 2, not a trace."""
    if not 0 <= port <= 65535:
        raise BadInput(f"--port: must be 0-65535, got {port}")
    if not host or any(c.isspace() for c in host):
        raise BadInput(f"--host: not a host name or address: {host!r}")
    try:
        if ipaddress.ip_address(host).version == 6:
            raise BadInput(f"--host: IPv6 addresses are not supported, got {host}; use an IPv4 address or name")
    except ValueError:
        pass  # a name; resolve it below
    try:
        socket.getaddrinfo(host, port, socket.AF_INET, socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise BadInput(f"--host: cannot resolve {host!r} to an IPv4 address") from exc


def _build(args: argparse.Namespace) -> tuple[Sandbox, str | None]:
    """The sandbox for these flags (bound, not started) and the scenario path, if any."""
    from redline_canary.sandbox import BanditReviewer, Reviewer, Sandbox, SilentReviewer
    from redline_canary.sandbox.scenario import CANARY_TOPIC
    from redline_canary.sandbox.scenario_files import load_scenario

    if args.scenario is not None:
        if args.repo:
            raise BadInput("--repo: cannot be combined with --scenario (name repos in the file)")
        scenario = load_scenario(args.scenario)
        return (
            _bind(lambda: Sandbox.from_scenario(
                scenario, host=args.host, port=args.port, default_reviewer=args.reviewer, latency=args.latency
            ), args),
            args.scenario,
        )
    repos = args.repo or [DEFAULT_REPO]
    for name in repos:
        validate.repo(name, "--repo")
    if len({n.lower() for n in repos}) != len(repos):
        raise BadInput("--repo: a repository is named twice")
    sb = _bind(lambda: Sandbox(host=args.host, port=args.port), args)
    for name in repos:
        sb.create_repo(name, topics=[CANARY_TOPIC])
        reviewer: Reviewer | None = None
        if args.reviewer == "bandit":
            reviewer = BanditReviewer(latency=args.latency)
        elif args.reviewer == "silent":
            reviewer = SilentReviewer(latency=args.latency)
        if reviewer is not None:
            sb.attach_reviewer(name, reviewer)
    return sb, None


def _bind(make: Any, args: argparse.Namespace) -> Sandbox:
    try:
        sb: Sandbox = make()
    except OSError as exc:
        raise BadInput(f"--host/--port: cannot listen on {args.host}:{args.port}: {exc.strerror or exc}") from exc
    return sb


def _serve(args: argparse.Namespace) -> int:
    # Checked here, not left to bind(): a port of 70000 would otherwise surface as an
    # OverflowError traceback instead of a one-line bad-input message.
    _check_address(args.host, args.port)
    validate.number(args.latency, "--latency", low=0, high=3600)
    args.reviewer = _reviewer_kind(args)
    sb, scenario = _build(args)
    stop = threading.Event()

    def on_term(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous = signal.signal(signal.SIGTERM, on_term)
    try:
        with sb:
            repos = sb.repo_names()
            if args.json:
                info = {
                    "url": sb.url,
                    "repos": repos,
                    "reviewer": args.reviewer,
                    "reviewers": sb.reviewer_kinds(),
                    "scenario": scenario,
                }
                print(json.dumps(info))
            else:
                print("\n".join(banner(sb.url, repos, sb.reviewer_kinds())))
            sys.stdout.flush()
            try:
                while not stop.wait(0.2):
                    pass
            except KeyboardInterrupt:
                pass
    finally:
        signal.signal(signal.SIGTERM, previous)
    return 0


def banner(url: str, repos: list[str], kinds: dict[str, str]) -> list[str]:
    """What to do next, ready to paste: the environment to export (this API's URL, and a
    token: the sandbox takes any) and the ``doctor`` and ``run`` lines for the first
    repository, with polling fit for a reviewer that answers in a second instead of
    GitHub's 30 s polls (docs/sandbox.md#from-the-command-line)."""
    target = f"--repo {shlex.quote(repos[0])} --stack {DEFAULT_STACK}"
    return [
        f"sandbox listening on {url}",
        "repos: " + ", ".join(f"{n} (reviewer: {kinds.get(n, 'none')})" for n in repos),
        "in another terminal (any token works here; this one says so):",
        f"  export {API_URL_VAR}={url} REDLINE_CANARY_TOKEN={SANDBOX_TOKEN}",
        f"  redline-canary doctor {target}",
        f"  redline-canary run {target} {' '.join(SANDBOX_POLL_FLAGS)} --history sandbox-history.jsonl",
        f"try: curl -s {url}/repos/{repos[0]}   (Ctrl-C to stop)",
    ]


def _verify(args: argparse.Namespace) -> int:
    from redline_canary.errors import verify_exit_code
    from redline_canary.report.text import inert_line, json_text
    from redline_canary.sandbox.verify import load_recording, render, verify

    kind = _reviewer_kind(args)  # the flags before the folder
    outcomes = verify(load_recording(args.dir), reviewer=kind)
    differ = sum(bool(o.differences) for o in outcomes)
    if args.json:
        for o in outcomes:
            print(json_text({"file": o.name, "method": o.method, "path": o.path, "status": o.status,
                             "differences": list(o.differences)}, indent=None))
        print(json_text({"interactions": len(outcomes), "differ": differ}, indent=None))
    else:
        print("\n".join(inert_line(line) for line in render(outcomes).splitlines()))
    return verify_exit_code(differ)
