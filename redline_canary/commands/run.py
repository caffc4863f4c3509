"""``run``: the canary cycle for every target, then one summary table and exit code."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import httpx

from redline_canary.commands import _validate as validate
from redline_canary.commands._options import (
    SANDBOX_POLL_FLAGS,
    add_default_flag,
    add_scoring_options,
    gate_options,
    is_local_api,
    parse_floor,
)
from redline_canary.commands._profiles_file import load_profiles_file
from redline_canary.commands._targets import (
    check_variant,
    corpus_layers,
    load_acknowledgements,
    load_targets_text,
    parse_targets,
    read_targets_arg,
    with_gate,
)
from redline_canary.corpus.model import CorpusData
from redline_canary.errors import BadInput, combine_exit_codes, mask
from redline_canary.github.app_auth import AppCredentials, add_app_options, app_credentials, resolve_auth
from redline_canary.github.clock import utc_now_iso
from redline_canary.github.recorder import Recorder
from redline_canary.github.transport import validate_api_url
from redline_canary.report.text import inert_line, json_text
from redline_canary.run.corpus_files import load_corpus, require_stack
from redline_canary.run.cycle import BRANCH_PREFIX, LABEL, CycleOptions, branch_name
from redline_canary.run.files import safe_write_text
from redline_canary.run.history import read_history
from redline_canary.run.runner import default_run_id, run_id_lines, run_targets, summary_table
from redline_canary.run.targets import Target
from redline_canary.score.defaults import BUDGET_SHARE_WARN, BY_FLAG, WRITES_PER_HOUR, WRITES_PER_MINUTE
from redline_canary.score.polling import PollConfig
from redline_canary.score.record import KINDS

MAX_TIMEOUT_MINUTES = 24 * 60  # a day: longer than any CI job may run
MAX_CONFIRM = 10  # the janitor recognises attempts up to 50; 10 re-runs is already a lot


def register(sub: Any) -> None:
    p = sub.add_parser("run", help="open seeded and clean PRs, wait for the reviewer, score, clean up")
    add_target_options(p)
    add_default_flag(p, "--variant")  # a target's own "variant" key wins (docs/corpus.md#variants)
    p.add_argument("--api-url", help="GitHub API URL (GitHub Enterprise, or the sandbox)")
    add_app_options(p)
    p.add_argument("--run-id", help="unique id of this run (default: GITHUB_RUN_ID or a timestamp)")
    for flag, kind in (("--history", str), ("--poll-interval", float), ("--stable-polls", int),
                       ("--timeout-minutes", float)):
        add_default_flag(p, flag, kind)
    add_scoring_options(p)  # --corpus, --window, --floor, --profiles and the gate flags, as `score` has them
    p.add_argument("--baseline-history", metavar="FILE",
                   help="history to take the --baseline from (default: the --history file)")
    for flag in ("--confirm", "--parallel", "--budget-share"):
        add_default_flag(p, flag, int)
    p.add_argument("--save-captures", help="keep every scored capture in this folder")
    p.add_argument("--record", metavar="DIR", help="write every request and response of the run into this new "
                   "folder, one scrubbed file each (the github-fixtures format; replay with `sandbox verify DIR`)")
    p.add_argument("--dry-run", action="store_true", help="print the plan; touch nothing")
    p.add_argument("--json", action="store_true", help="print the records as JSON lines")
    p.set_defaults(func=run_run)


def add_target_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--targets", help="JSON/YAML file or inline JSON list of {repo, stack, reviewer?, "
                   "base?, mode?, prefix?} (default: env CANARY_TARGETS)")
    p.add_argument("--repo", help="single target: OWNER/REPO")
    p.add_argument("--stack", help="single target: corpus stack")
    p.add_argument("--reviewer", help="single target: reviewer profile (redline)")
    p.add_argument("--mode", help="single target: blind (default) or marked")
    p.add_argument("--base", help="single target: base branch (default: the repo's default)")
    p.add_argument("--prefix", help="single target: folder to push the corpus under")


def target_items(args: argparse.Namespace, env: Mapping[str, str]) -> tuple[list[Any], str]:
    """The targets as written (a list of objects) and where: the single-target flags (checked
    under their own names), --targets, or CANARY_TARGETS."""
    if args.repo or args.stack:
        if args.targets:
            raise BadInput("--targets and --repo/--stack: give one or the other")
        if not (args.repo and args.stack):
            raise BadInput("--repo and --stack: both are needed for a single target")
        # The flags are checked under their own names, so the message says --base, not
        # "[0].base" of a list the user never wrote.
        validate.repo(args.repo, "--repo")
        if args.base:
            validate.ref_name(args.base, "--base")
        if args.prefix:
            validate.prefix(args.prefix, "--prefix")
        item = {"repo": args.repo, "stack": args.stack}
        for key in ("reviewer", "mode", "base", "prefix"):
            if getattr(args, key):
                item[key] = getattr(args, key)
        return [item], "command line"
    if args.targets:
        text, source = read_targets_arg(args.targets)
    elif env.get("CANARY_TARGETS", "").strip():
        text, source = env["CANARY_TARGETS"], "CANARY_TARGETS"
    else:
        raise BadInput("no targets: give --targets, --repo with --stack, or set CANARY_TARGETS")
    return load_targets_text(text, source), source


def check_run_options(args: argparse.Namespace) -> None:
    """Every numeric, URL and path option of ``run``, before the corpus or the network."""
    validate.number(args.poll_interval, "--poll-interval", low=0, high=3600, low_open=True)
    validate.number(args.timeout_minutes, "--timeout-minutes", low=0, high=MAX_TIMEOUT_MINUTES, low_open=True)
    if args.min_recall is not None:
        validate.number(args.min_recall, "--min-recall", low=0, high=1)
    validate.integer(args.stable_polls, "--stable-polls", low=1, high=100)
    validate.integer(args.confirm, "--confirm", low=0, high=MAX_CONFIRM)
    validate.integer(args.parallel, "--parallel", low=1, high=64)
    validate.integer(args.budget_share, "--budget-share", low=1, high=256)
    validate.integer(args.window, "--window", low=0, high=validate.MAX_WINDOW)
    validate_api_url(args.api_url)
    if args.run_id is not None:
        validate.run_id(args.run_id)
    if args.history:
        validate.history_path(args.history, "--history")
    if args.save_captures is not None:  # given empty is a mistake, not "don't save"
        validate.output_dir(args.save_captures, "--save-captures")
    if args.record is not None:  # `--record ''` once recorded nothing, silently
        validate.output_dir(args.record, "--record")
    if args.baseline_history and not args.baseline:
        raise BadInput("--baseline-history: only used with --baseline")


@dataclass(frozen=True)
class RunOptions:
    """Everything one ``run`` needs, read once from the flags and the environment and
    validated, so the rest of the command never looks at ``argparse`` or ``os.environ``."""

    targets: tuple[Target, ...]
    corpus: CorpusData
    cycle: CycleOptions
    api_url: str | None
    history: Path | None
    parallel: int
    budget_share: int
    dry_run: bool
    json: bool
    record: Path | None
    env: Mapping[str, str] = field(repr=False)  # holds the token: never in a repr
    app: AppCredentials | None = field(default=None, repr=False)  # holds the App's key

    @classmethod
    def from_args(cls, args: argparse.Namespace, env: Mapping[str, str]) -> RunOptions:
        check_run_options(args)
        app = app_credentials(args.app_id, args.app_private_key, env)
        profiles = load_profiles_file(args.profiles) if args.profiles else {}
        items, source = target_items(args, env)
        corpus = load_corpus(corpus_layers(args.corpus, items, source))
        targets = parse_targets(items, source, corpus, sorted(profiles))
        for stack in sorted({t.stack for t in targets}):
            require_stack(corpus, stack)
        for t in targets:
            check_variant(corpus, t.stack, t.variant or args.variant,
                          f"{t.where}.variant" if t.variant else "--variant")
        today = utc_now_iso()[:10]
        rules = gate_options(floor=parse_floor(args.floor), min_recall=args.min_recall,
                             require_citation=args.require_citation, blocker_gate=args.blocker_gate,
                             baseline=args.baseline,
                             acknowledgements=load_acknowledgements(args.acknowledgements, today))
        targets = [with_gate(t, rules, today) for t in targets]
        baseline_from = args.baseline_history or args.history
        needs_history = any(t.gate is not None and t.gate.baseline for t in targets) or rules.baseline
        past = read_history(baseline_from).records if needs_history and baseline_from else []
        cycle = CycleOptions(
            run_id=args.run_id or default_run_id(env),
            poll=PollConfig(args.poll_interval, args.stable_polls, args.timeout_minutes * 60),
            window=args.window, floor=parse_floor(args.floor),
            gate=rules, confirm=args.confirm, baseline_history=tuple(past),
            save_captures=Path(args.save_captures) if args.save_captures else None,
            profiles=profiles, variant=args.variant,
        )
        return cls(tuple(targets), corpus, cycle, args.api_url, Path(args.history) if args.history else None,
                   args.parallel, args.budget_share, args.dry_run, args.json,
                   Path(args.record) if args.record else None, env, app)


def run_run(args: argparse.Namespace) -> int:
    options = RunOptions.from_args(args, os.environ)
    hint = slow_poll_hint(options)
    if hint:
        print(hint, file=sys.stderr)
    return run(options, out=sys.stdout, err=sys.stderr)


def slow_poll_hint(options: RunOptions) -> str | None:
    """Against a local API (the sandbox) GitHub's default 30 s polls, the stable polls and a
    confirmation re-run make a two-PR run take minutes for a reviewer that answers in a
    second: say which flags make it seconds, before the wait starts. Never against GitHub."""
    if not is_local_api(options.api_url):
        return None
    if options.cycle.poll.interval < float(BY_FLAG["--poll-interval"].value):
        return None
    return (f"redline-canary: hint: polling every {options.cycle.poll.interval:g} s (GitHub's pace); against "
            f"the sandbox add {' '.join(SANDBOX_POLL_FLAGS)} for a run in seconds, not minutes")


def run(options: RunOptions, *, out: TextIO, err: TextIO, transport: httpx.BaseTransport | None = None) -> int:
    """The command itself: plan, or run every target and print one summary. ``transport``
    stands in for the network (the sandbox in-process, in tests)."""
    run_id = options.cycle.run_id
    targets = list(options.targets)
    warning = budget_warning(options.budget_share)
    if warning:
        print(f"redline-canary: warning: {warning}", file=err)
    if options.dry_run:
        print(f"run {run_id}: {len(targets)} target(s), nothing will be touched", file=out)
        if options.app is not None:
            owners = sorted({t.repo.split("/")[0].lower() for t in targets})
            print(f"  auth: GitHub App {options.app.app_id}, an installation token (and a budget) for each "
                  f"of {len(owners)} owner(s): {', '.join(owners)}", file=out)
        for t in targets:
            for kind in KINDS:
                print(f"  {t.repo}: {t.stack}/{kind} via {t.reviewer} ({t.mode}) -> branch "
                      f"{branch_name(BRANCH_PREFIX, run_id, t.stack, kind, 1)}, label {LABEL}", file=out)
        return 0
    auth = resolve_auth(options.app, options.env, options.api_url, transport=transport)
    history = options.history
    recorder = Recorder(options.record, run_id=run_id, write=_new_file,
                        secrets=(auth.token,) if auth.token else ()) if options.record else None
    try:
        result = run_targets(targets, options.corpus, options.cycle, auth=auth, api_url=options.api_url,
                             parallel=options.parallel, history=history, budget_share=options.budget_share,
                             transport=transport, recorder=recorder)
    finally:
        auth.close()
    if options.json:
        for r in result.records:
            print(json_text(r.to_json(), indent=None), file=out)
    else:
        print(summary_table(result.records) if result.records else "no records", file=out)
        for target, exc in result.failures:
            print(f"{target.label}: {inert_line(mask(str(exc)))}", file=err)
        if history:
            print(f"history: {len(result.records)} record(s) appended to {history}", file=out)
        if recorder is not None:
            print(f"recorded: {recorder.written} interaction(s) in {recorder.folder}", file=out)
    for line in run_id_lines(run_id, history):
        print(line, file=err)
    if recorder is not None and recorder.failure is not None:  # a recording asked for and cut short
        print(f"redline-canary: {inert_line(mask(str(recorder.failure)))}", file=err)
        return combine_exit_codes((result.exit_code, recorder.failure.exit_code))
    return result.exit_code


def budget_warning(share: int) -> str | None:
    """What a large ``--budget-share`` means in writes, when it means a crawl (docs/github.md#52-secondary)."""
    if share <= BUDGET_SHARE_WARN:
        return None
    per_minute, per_hour = WRITES_PER_MINUTE / share, WRITES_PER_HOUR / share
    return (f"--budget-share {share}: this job paces itself at {max(1, int(per_minute))} write(s) a minute "
            f"({per_minute:.2f} of GitHub's {WRITES_PER_MINUTE}) and {max(1, int(per_hour))} an hour: a PR "
            f"takes minutes to open; give the number of jobs that really share the token at once "
            f"(at most {BUDGET_SHARE_WARN} keeps two writes a minute)")


def _new_file(path: Path, text: str) -> None:
    """One recording file: written whole, never through or over anything at its name."""
    safe_write_text(path, text, new_only=True, mode=0o666)
