"""``score``: score one reviewed PR, from a saved capture or live from GitHub."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from redline_canary import __version__, validate
from redline_canary.app_auth import add_app_options, auth_from_args
from redline_canary.baseline import comparable_runs, compare
from redline_canary.capture import CaptureError, capture_meta, check_capture
from redline_canary.clock import utc_now_iso
from redline_canary.corpus import load_corpus, require_stack
from redline_canary.errors import BadInput
from redline_canary.evaluate import ScoreSettings, evaluate, evaluate_findings
from redline_canary.files import atomic_write_text
from redline_canary.findings import Finding
from redline_canary.findings_import import FindingsError, parse_findings
from redline_canary.history import append_records, open_regular, read_history
from redline_canary.matching import DEFAULT_WINDOW
from redline_canary.options import (
    add_gate_options,
    gate_options,
    load_acknowledgements,
    load_profile,
    parse_floor,
    parse_kind,
    parse_mode,
)
from redline_canary.render import inert_line, json_text, render_baseline, render_record
from redline_canary.verdict import GateOptions, decide, record_exit_code

OFFLINE_REPO = "offline/review"  # the record's repo for a review that never was a PR
MAX_FINDINGS_BYTES = 32 << 20


def add_scoring_options(p: argparse.ArgumentParser) -> None:
    """Options shared by ``score`` and ``run``."""
    p.add_argument("--corpus", help="corpus folder (default: the packaged seeds/)")
    p.add_argument("--mode", help="blind (default) or marked")
    p.add_argument("--prefix", help="folder the corpus was pushed under (default: root)")
    p.add_argument("--window", type=int, default=None,
                   help=f"line window for a match (default {DEFAULT_WINDOW})")
    p.add_argument("--reviewer", help="reviewer profile (default: redline)")
    p.add_argument("--login", action="append", default=[],
                   help="count only comments by this login (repeatable)")
    p.add_argument("--profiles", help="YAML file of custom reviewer profiles and overrides")
    p.add_argument("--floor", help="lowest severity that counts on the clean PR (default MAJOR)")
    p.add_argument("--min-recall", type=float, help="gate: fail below this recall")
    p.add_argument("--require-citation", action="store_true",
                   help="gate: every caught seed's comment must name its rule id")
    p.add_argument("--history", help="append the record to this JSONL file")
    p.add_argument("--json", action="store_true", help="print the record as JSON")


def register(sub: Any) -> None:
    p = sub.add_parser("score", help="score one reviewed PR (offline capture or live)")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--capture", help="capture JSON file saved by run or --save-capture")
    src.add_argument("--repo", help="OWNER/REPO, to score live (needs --pr)")
    src.add_argument("--findings", metavar="FILE",
                     help="a review given as a JSON findings list or SARIF 2.1.0 (needs --stack, --kind)")
    p.add_argument("--reviewer-name", help="with --findings: who reviewed (recorded as given; default: findings)")
    p.add_argument("--pr", type=int, help="pull request number (live)")
    p.add_argument("--api-url", default=None, help="GitHub API URL (default api.github.com)")
    add_app_options(p)
    p.add_argument("--save-capture", help="write the capture that was scored to this file")
    p.add_argument("--stack", help="corpus stack (default: the capture's manifest)")
    p.add_argument("--kind", help="seeded or clean (default: the capture's manifest)")
    p.add_argument("--run-id", help="run id for the record (default: score-<timestamp>)")
    add_scoring_options(p)
    add_gate_options(p)
    p.set_defaults(func=run_score)


def _read_capture(path: str) -> dict[str, Any]:
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BadInput(f"{path}: capture file not found") from None
    except json.JSONDecodeError as exc:
        raise BadInput(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInput(f"{path}: cannot read capture ({exc.__class__.__name__})") from None
    if not isinstance(doc, dict):
        raise BadInput(f"{path}: top level: expected a JSON object")
    try:
        check_capture(doc)
    except CaptureError as exc:
        raise BadInput(f"{path}: {exc}") from None
    return doc


def _live_capture(args: argparse.Namespace) -> dict[str, Any]:
    from redline_canary.github_api import GitHubClient

    if args.pr is None:
        raise BadInput("--pr: required with --repo")
    client = GitHubClient(auth_from_args(args).for_repo(args.repo), api_url=args.api_url)
    return client.capture(args.repo, args.pr)


def check_score_options(args: argparse.Namespace) -> None:
    """Flags first: nothing is read, fetched or written before they are known good."""
    if args.baseline and not args.history:
        raise BadInput("--baseline: needs --history FILE to find the baseline in")
    if args.repo is not None:
        validate.repo(args.repo, "--repo")
    if args.pr is not None:
        validate.integer(args.pr, "--pr", low=1, high=2**31 - 1)
    validate.api_url(args.api_url)
    if args.run_id is not None:
        validate.run_id(args.run_id)
    if args.stack is not None:
        validate.stack(args.stack)
    if args.prefix is not None:
        validate.prefix(args.prefix, "--prefix")
    if args.window is not None:
        validate.integer(args.window, "--window", low=0, high=validate.MAX_WINDOW)
    if args.min_recall is not None:
        validate.number(args.min_recall, "--min-recall", low=0, high=1)
    for i, name in enumerate(args.login):
        validate.login(name, f"--login[{i}]" if len(args.login) > 1 else "--login")
    parse_floor(args.floor)
    if args.history:
        validate.history_path(args.history, "--history")
    if args.save_capture:
        validate.output_file(args.save_capture, "--save-capture")
        if args.capture and Path(args.save_capture).resolve() == Path(args.capture).resolve():
            raise BadInput("--save-capture: is the --capture file itself")


def _read_findings(path: str) -> list[Finding]:
    with open_regular(path, "findings file") as fh:
        data = fh.read(MAX_FINDINGS_BYTES + 1)
    if len(data) > MAX_FINDINGS_BYTES:
        raise BadInput(f"{path}: findings file larger than {MAX_FINDINGS_BYTES // (1 << 20)} MiB")
    try:
        doc = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise BadInput(f"{path}: not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise BadInput(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from None
    except (ValueError, RecursionError):
        raise BadInput(f"{path}: not valid JSON") from None
    try:
        return parse_findings(doc)
    except FindingsError as exc:
        raise BadInput(inert_line(f"{path}: {exc}")) from None


def run_findings(args: argparse.Namespace) -> int:
    """``score --findings``: an offline review scored exactly like a captured one."""
    for flag in ("pr", "save_capture", "api_url"):
        if getattr(args, flag) is not None:
            raise BadInput(f"--{flag.replace('_', '-')}: not used with --findings")
    if not args.stack:
        raise BadInput("--stack: required with --findings")
    if not args.kind:
        raise BadInput("--kind: required with --findings")
    kind = parse_kind(args.kind, "--kind")
    mode = parse_mode(args.mode or "blind", "--mode")
    reviewer = args.reviewer_name or "findings"
    validate.login(reviewer, "--reviewer-name")
    findings = _read_findings(args.findings)
    corpus = load_corpus(args.corpus)
    require_stack(corpus, args.stack)
    rules = gate_rules(args)
    settings = ScoreSettings(
        stack=args.stack, kind=kind, mode=mode, prefix=args.prefix or "",
        window=DEFAULT_WINDOW if args.window is None else args.window,
        floor=parse_floor(args.floor), gate=rules,
    )
    meta = {
        "run_id": args.run_id or f"findings-{utc_now_iso().replace(':', '')}",
        "attempt": 1, "recorded_at": utc_now_iso(), "repo": OFFLINE_REPO, "pr": None,
        "tool_version": __version__,
    }
    _score, record = evaluate_findings(findings, corpus, settings, reviewer, meta)
    return _finish(args, record, None, rules)


def run_score(args: argparse.Namespace) -> int:
    check_score_options(args)
    if args.findings:
        return run_findings(args)
    source = args.capture or f"{args.repo}#{args.pr}"
    doc = _read_capture(args.capture) if args.capture else _live_capture(args)
    repo, number, manifest = capture_meta(doc)
    stack = args.stack or manifest.get("stack")
    if not stack:
        raise BadInput(f"{source}: --stack not given and manifest.stack missing")
    validate.stack(stack, "--stack" if args.stack else f"{source}: manifest.stack")
    if args.prefix is None and manifest.get("prefix"):
        validate.prefix(manifest["prefix"], f"{source}: manifest.prefix")
    kind = parse_kind(args.kind or manifest.get("kind") or "", source)
    mode = parse_mode(args.mode or manifest.get("mode") or "blind", source)
    prefix = args.prefix if args.prefix is not None else str(manifest.get("prefix") or "")
    profile = load_profile(args.reviewer or manifest.get("reviewer") or "redline", args.login,
                           args.profiles)
    corpus = load_corpus(args.corpus)
    require_stack(corpus, stack)
    rules = gate_rules(args)
    settings = ScoreSettings(
        stack=stack, kind=kind, mode=mode, prefix=prefix,
        window=DEFAULT_WINDOW if args.window is None else args.window,
        floor=parse_floor(args.floor), gate=rules,
    )
    meta = {
        "run_id": args.run_id or f"score-{utc_now_iso().replace(':', '')}",
        "attempt": 1,
        "recorded_at": utc_now_iso(),
        "repo": repo or args.repo or "unknown/unknown",
        "pr": number if number is not None else args.pr,
        "tool_version": __version__,
    }
    try:
        _score, record = evaluate(doc, corpus, settings, profile, meta)
    except CaptureError as exc:
        raise BadInput(f"{source}: {exc}") from None
    fp_then = manifest.get("fingerprint")
    if fp_then and fp_then != record["corpus_fingerprint"]:
        print(inert_line(f"warning: {source} was captured with corpus {fp_then}, scoring with "
                         f"{record['corpus_fingerprint']}: line maps may differ"), file=sys.stderr)
    return _finish(args, record, doc, rules)


def gate_rules(args: argparse.Namespace) -> GateOptions:
    """The gate flags, checked, as one GateOptions."""
    return gate_options(floor=parse_floor(args.floor), min_recall=args.min_recall,
                        require_citation=args.require_citation, blocker_gate=args.blocker_gate,
                        baseline=args.baseline,
                        acknowledgements=load_acknowledgements(args.acknowledgements, utc_now_iso()[:10]))


def _finish(args: argparse.Namespace, record: dict[str, Any], doc: dict[str, Any] | None,
            rules: GateOptions) -> int:
    """Baseline, history, output and exit code: the same for every source of a review."""
    history = read_history(args.history) if args.history else None
    for line, why in history.corrupt if history else []:
        print(inert_line(f"{args.history}:{line}: corrupt record skipped ({why})"), file=sys.stderr)
    diff_text = ""
    if args.baseline and history is not None:
        record["gate"] = decide(record, rules, history=history.records).as_json()
        if rules.window:
            runs = comparable_runs(history.records, record, rules.window)
            record["baseline"] = {"window": rules.window, "run_ids": [str(r.get("run_id")) for r in runs]}
        else:
            diff = compare(history.records, record)
            record["baseline"] = {
                "run_id": diff.baseline["run_id"] if diff.baseline else None,
                "newly_missed": [s["n"] for s in diff.newly_missed],
                "newly_caught": [s["n"] for s in diff.newly_caught],
            }
            diff_text = render_baseline(diff.newly_missed, diff.newly_caught, diff.baseline)
    if args.save_capture and doc is not None:
        atomic_write_text(args.save_capture, json.dumps(doc, indent=1))
    if args.history:
        append_records(args.history, [record])
    if args.json:
        print(json_text(record))
    else:
        print(render_record(record))
        if diff_text:
            print(diff_text)
    return record_exit_code(record)
