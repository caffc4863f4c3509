"""``redline-canary sandbox serve``: the local fake GitHub, to play with by hand.

Point ``run --api-url`` (or PyGithub's ``base_url``, or curl) at the printed URL; any token
is accepted. Serves until Ctrl-C (or SIGTERM), then closes every socket and reviewer thread.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from types import FrameType
from typing import Any

from redline_canary import validate
from redline_canary.github_api import CANARY_TOPIC

DEFAULT_REPO = "acme/canary-python"


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "sandbox",
        help="run the local GitHub sandbox",
        description="A local fake of the GitHub REST subset redline-canary uses, with "
        "simulated reviewers (DESIGN §10).",
    )
    actions = parser.add_subparsers(dest="sandbox_action", metavar="ACTION")
    serve = actions.add_parser(
        "serve",
        help="serve the sandbox until Ctrl-C",
        description="Serve the sandbox on 127.0.0.1 and print its URL. Any token is accepted.",
    )
    serve.add_argument("--port", type=int, default=0, help="TCP port (default: ephemeral)")
    serve.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1)")
    serve.add_argument(
        "--reviewer",
        choices=("bandit", "silent", "none"),
        default="bandit",
        help="simulated reviewer attached to every repo (default bandit)",
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
    parser.set_defaults(func=lambda args: _usage(parser))


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


def _serve(args: argparse.Namespace) -> int:
    from redline_canary.sandbox import BanditReviewer, Reviewer, Sandbox, SilentReviewer

    repos = args.repo or [DEFAULT_REPO]
    for name in repos:
        validate.repo(name, "--repo")
    # Checked here, not left to bind(): a port of 70000 would otherwise surface as an
    # OverflowError traceback instead of a one-line bad-input message.
    validate.integer(args.port, "--port", low=0, high=65535)
    validate.number(args.latency, "--latency", low=0, high=3600)
    stop = threading.Event()

    def on_term(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous = signal.signal(signal.SIGTERM, on_term)
    try:
        with Sandbox(host=args.host, port=args.port) as sb:
            for name in repos:
                sb.create_repo(name, topics=[CANARY_TOPIC])
                reviewer: Reviewer | None = None
                if args.reviewer == "bandit":
                    reviewer = BanditReviewer(latency=args.latency)
                elif args.reviewer == "silent":
                    reviewer = SilentReviewer(latency=args.latency)
                if reviewer is not None:
                    sb.attach_reviewer(name, reviewer)
            if args.json:
                print(json.dumps({"url": sb.url, "repos": repos, "reviewer": args.reviewer}))
            else:
                print(f"sandbox listening on {sb.url}")
                print(f"repos: {', '.join(repos)} (reviewer: {args.reviewer})")
                print(f"try: curl -s {sb.url}/repos/{repos[0]}   (Ctrl-C to stop)")
            sys.stdout.flush()
            try:
                while not stop.wait(0.2):
                    pass
            except KeyboardInterrupt:
                pass
    finally:
        signal.signal(signal.SIGTERM, previous)
    return 0
