"""200 targets against the sandbox with GitHub's secondary limits enforced: one token vs a GitHub App.

Prints figures; asserts nothing (issue 16 item 6). The sandbox enforces 80 content-creating
requests a minute and 500 an hour per token (per installation for an App's tokens), on a
simulated clock that runs SCALE times faster than the wall, and every target's reviewer
(Copilot-style: one review after a think time) answers after THINK simulated seconds. The
canary runs its real ``run_targets`` on the same scaled clock (pacing, polling, retry waits),
once with one token and once as an App installed on OWNERS owners (targets spread evenly),
installation tokens living a simulated hour and refreshed before they expire.

Printed per run: the wall time (real and simulated) against the floor the budgets allow
(the content-creating requests each budget must carry, at 500 an hour and 80 a minute, plus
one target's review wait), the content-creating requests per PR by route, the secondary-
limit responses the sandbox gave (goal: 0) and the pacer's slow-downs.

Run: python benchmarks/bench_fleet.py [--targets 200] [--scale 240] [--owners 4]
A full run takes about 3 minutes on 2 cores. ``--quick`` (what CI runs) measures the same two
runs with 8 targets on 2 owners, 8 at once: a few seconds.
"""

from __future__ import annotations

import argparse
import math
import time
from collections import Counter
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from redline_canary.github.app_auth import AppCredentials, Auth, InstallationTokens
from redline_canary.github.client import CANARY_TOPIC
from redline_canary.github.clock import Cancelled, RealClock
from redline_canary.run.corpus_files import load_corpus
from redline_canary.run.cycle import CycleOptions
from redline_canary.run.runner import run_targets
from redline_canary.run.targets import Target
from redline_canary.sandbox import COPILOT, Batch, Sandbox, ScriptedReviewer
from redline_canary.score.polling import PollConfig

TOKEN = "bench-fleet-credential"
APP_ID = 777
PER_MINUTE, PER_HOUR = 80, 500
THINK = 180.0  # simulated seconds a reviewer thinks before its review (3 minutes)
POLL = 60.0  # simulated seconds between polls
STACK = "python"
CONTENT_METHODS = ("POST", "PATCH", "PUT", "DELETE")  # what the sandbox counts (the pacer counts the same)
APP_ROUTES = ("/repos/{owner}/{repo}/installation", "/app/installations/{installation_id}/access_tokens")


class ScaledClock(RealClock):
    """Simulated time: ``scale`` simulated seconds per real second, for the canary's waits."""

    def __init__(self, scale: float) -> None:
        super().__init__()
        self.scale = scale
        self.origin = time.monotonic()

    def now(self) -> float:
        return (time.monotonic() - self.origin) * self.scale

    def sleep(self, seconds: float) -> None:
        if self.cancel.wait(max(0.0, seconds) / self.scale):
            raise Cancelled()


def budget_floor(writes: int) -> float:
    """Simulated seconds before a budget has let ``writes`` content-creating requests through:
    the k-th cannot go before (k-1)//500 hours nor (k-1)//80 minutes after the first."""
    if writes <= 0:
        return 0.0
    return max((writes - 1) // PER_HOUR * 3600.0, (writes - 1) // PER_MINUTE * 60.0)


def fleet(n_targets: int, scale: float, owners: int, app: bool, parallel: int) -> dict[str, Any]:
    """One run of ``n_targets`` against a fresh sandbox; ``owners`` > 1 spreads the repositories."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    corpus = load_corpus()
    with Sandbox(token=TOKEN, listen=False) as sb:
        sb.secondary_limit(PER_MINUTE, PER_HOUR, scale=scale, methods=CONTENT_METHODS)
        # The primary limit (5 000 requests an hour) runs on the wall clock, not the scaled one:
        # lifted, as a real run spread over simulated hours would stay under it.
        sb.primary_limit(limit=10**9)
        if app:
            sb.register_app(APP_ID, key.public_key().public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
            sb.installation_token_lifetime(3600.0 / scale)  # a simulated hour
        names = [f"owner{i % owners}/canary-{i}" for i in range(n_targets)]
        for owner in sorted({n.split("/")[0] for n in names}):
            if app:
                sb.install_app(APP_ID, owner)
        for repo in names:
            sb.create_repo(repo, topics=[CANARY_TOPIC])
            sb.attach_reviewer(repo, ScriptedReviewer(
                [Batch(after=THINK / scale, inline=[{"path": "app/api.py", "line": 20, "body": "looks off"}],
                       reviews=[{"body": "Copilot reviewed 3 out of 3 changed files in this pull request "
                                         "and generated 1 comment."}])],
                identity=COPILOT))
        targets = [Target(repo, STACK, reviewer="copilot") for repo in names]
        clock = ScaledClock(scale)
        options = CycleOptions(run_id="fleet-app" if app else "fleet-token",
                               poll=PollConfig(interval=POLL, stable_polls=2, timeout=40 * 60.0), confirm=0)
        tokens = None
        if app:
            pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                                    serialization.NoEncryption()).decode()
            tokens = InstallationTokens(AppCredentials(str(APP_ID), pem), sb.url, transport=sb.transport())
        auth = Auth(app=tokens) if tokens else Auth(token=TOKEN)
        started = time.monotonic()
        result = run_targets(targets, corpus, options, auth=auth, api_url=sb.url, parallel=parallel,
                             progress=lambda _label, _text: None, clock=clock, transport=sb.transport())
        wall = time.monotonic() - started
        auth.close()
        sb.wait_for_reviewers(5)
        left = sum(len(sb.open_pulls(r)) + len([b for b in sb.branches(r) if b != "main"]) for r in names)
        records = sb.requests
    content = Counter(f"{r.method} {r.route}" for r in records
                      if r.method in CONTENT_METHODS and r.route not in APP_ROUTES and r.status not in (403, 429))
    limited = sum(1 for r in records if r.status in (403, 429) and r.charged)  # the primary limit charges nothing
    limited_routes = Counter(f"{r.method} {r.route}" for r in records if r.status in (403, 429) and r.charged)
    primary = sum(1 for r in records if r.status in (403, 429) and not r.charged)
    prs = sum(1 for r in result.records if r.pr)
    writes = sum(content.values())
    per_budget = math.ceil(writes / (owners if app else 1))
    think_floor = THINK + POLL  # the last target still waits for its reviewer and one poll
    return {
        "wall": wall, "sim": wall * scale, "floor": budget_floor(per_budget) + think_floor,
        "budget_floor": budget_floor(per_budget), "writes": writes, "per_budget": per_budget, "prs": prs,
        "content": content, "limited": limited, "limited_routes": limited_routes,
        "primary": primary, "left": left, "tokens": tokens.fetched if tokens else 0,
        "outcomes": Counter(r.outcome for r in result.records), "exit": result.exit_code,
        "failures": Counter(str(exc).split(": ", 1)[-1][:120] for _t, exc in result.failures),
    }


def report(name: str, r: dict[str, Any], scale: float) -> None:
    print(f"== {name} ==")
    print(f"  wall time: {r['wall']:.1f} s real = {r['sim'] / 3600:.2f} simulated h; floor the budgets allow: "
          f"{r['floor'] / 3600:.2f} h ({r['budget_floor'] / 3600:.2f} h for {r['per_budget']} content-creating "
          f"requests on the busiest budget at {PER_HOUR}/h and {PER_MINUTE}/min, + {(THINK + POLL) / 60:.0f} min "
          f"of review wait) -> {r['sim'] / r['floor']:.2f}x the floor")
    print(f"  PRs: {r['prs']}, outcomes {dict(r['outcomes'])}, exit {r['exit']}, canary PRs/branches left: "
          f"{r['left']}")
    for text, n in r["failures"].most_common(3):
        print(f"    {n} x {text}")
    targets = r["prs"] // 2 or 1
    shared = r["content"].get("POST /repos/{owner}/{repo}/labels", 0)
    print(f"  content-creating requests: {r['writes']} = {(r['writes'] - shared) / max(r['prs'], 1):.2f} per PR "
          f"+ {shared / targets:.2f} per target (the label, once per repository)")
    for route, n in sorted(r["content"].items()):
        print(f"    {n / max(r['prs'], 1):5.2f}/PR  {route}")
    where = f" {dict(r['limited_routes'])}" if r["limited"] else ""
    print(f"  secondary-limit responses: {r['limited']} (goal 0){where}; primary-limit responses: {r['primary']}")
    if r["tokens"]:
        print(f"  installation tokens fetched: {r['tokens']} (one per owner, refreshed each simulated hour)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", type=int, help="default 200 (8 with --quick)")
    parser.add_argument("--scale", type=float, default=240.0, help="simulated seconds per real second")
    parser.add_argument("--owners", type=int,
                        help="owners (App installations) the targets spread over; default 4 (2 with --quick)")
    parser.add_argument("--parallel", type=int, help="targets at once; default 64 (8 with --quick)")
    parser.add_argument("--quick", action="store_true",
                        help="a small run of the same measurement (8 targets, 2 owners), for CI")
    args = parser.parse_args()
    for name, full, quick in (("targets", 200, 8), ("owners", 4, 2), ("parallel", 64, 8)):
        if getattr(args, name) is None:
            setattr(args, name, quick if args.quick else full)
    print(f"{args.targets} targets ({STACK} stack, Copilot-style reviewer thinking {THINK / 60:.0f} simulated "
          f"min, polls every {POLL:.0f} simulated s, {args.parallel} at once); secondary limits "
          f"{PER_MINUTE}/min and {PER_HOUR}/h per token; time scale {args.scale:g}x = one simulated hour per "
          f"{3600 / args.scale:.0f} real s")
    one = fleet(args.targets, args.scale, 1, app=False, parallel=args.parallel)
    report("one token", one, args.scale)
    many = fleet(args.targets, args.scale, args.owners, app=True, parallel=args.parallel)
    report(f"GitHub App, {args.owners} installations ({args.targets // args.owners} targets each)", many,
           args.scale)
    print(f"App vs one token: {one['wall'] / many['wall']:.2f}x faster in wall time")


if __name__ == "__main__":
    main()
