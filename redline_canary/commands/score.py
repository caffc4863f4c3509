"""``score``: score one reviewed PR, from a saved capture, live from GitHub, or a findings file.

:class:`ScoreOptions` reads the flags and the environment once and checks them; :func:`score`
is the command, handed its options, the network (``transport``), the wall clock and its
output streams, so it never looks at ``argparse`` or ``os.environ``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TextIO

import httpx

from redline_canary import __version__
from redline_canary.commands import _validate as validate
from redline_canary.commands._options import (
    add_default_flag,
    add_scoring_options,
    gate_options,
    load_profile,
    parse_floor,
    parse_kind,
    parse_mode,
)
from redline_canary.commands._targets import load_acknowledgements
from redline_canary.corpus.model import CorpusData
from redline_canary.corpus.severity import Severity
from redline_canary.corpus.variants import Variant, named_variant
from redline_canary.errors import BadInput
from redline_canary.github.app_auth import Credentials, add_app_options
from redline_canary.github.clock import utc_now_iso
from redline_canary.github.transport import validate_api_url
from redline_canary.report.text import inert_line, json_text, render_baseline, render_record
from redline_canary.review.capture import CaptureError, capture_meta, check_capture
from redline_canary.review.findings import Finding
from redline_canary.review.findings_file import FindingsError, parse_findings
from redline_canary.run.corpus_files import load_corpus, require_stack
from redline_canary.run.files import safe_write_text
from redline_canary.run.history import append_records, open_regular, read_history
from redline_canary.score.baseline import comparable_runs, compare
from redline_canary.score.defaults import default
from redline_canary.score.evaluate import ScoreSettings, evaluate, evaluate_findings
from redline_canary.score.record import Record
from redline_canary.score.scoring import RecordMeta
from redline_canary.score.verdict import GateOptions, decide, record_exit_code

OFFLINE_REPO = "offline/review"  # the record's repo for a review that never was a PR
MAX_FINDINGS_BYTES = 32 << 20


def register(sub: Any) -> None:
    p = sub.add_parser("score", help="score one reviewed PR (offline capture or live)")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--capture", help="capture JSON file saved by run or --save-capture")
    src.add_argument("--repo", help="OWNER/REPO, to score live (needs --pr)")
    src.add_argument("--findings", metavar="FILE",
                     help="a review given as a JSON findings list or SARIF 2.1.0 (needs --stack, --kind)")
    add_default_flag(p, "--reviewer-name")
    p.add_argument("--pr", type=int, help="pull request number (live)")
    p.add_argument("--api-url", default=None, help="GitHub API URL (default api.github.com)")
    add_app_options(p)
    p.add_argument("--save-capture", help="write the capture that was scored to this file")
    p.add_argument("--stack", help="corpus stack (default: the capture's manifest)")
    p.add_argument("--kind", help="seeded or clean (default: the capture's manifest)")
    p.add_argument("--run-id", help="run id for the record (default: score-<timestamp>)")
    add_default_flag(p, "--mode")
    p.add_argument("--prefix", help="folder the corpus was pushed under (default: the capture's manifest, "
                   "else root)")
    add_default_flag(p, "--reviewer")
    p.add_argument("--login", action="append", default=[],
                   help="count only comments by this login (repeatable)")
    add_scoring_options(p)  # --corpus, --window, --floor, --profiles and the gate flags, as `run` has them
    p.add_argument("--variant", help="the variant of the stack the review saw: a variant id or none "
                   "(default: the capture's manifest, else none; docs/corpus.md#variants)")
    p.add_argument("--history", help="append the record to this JSONL file")
    p.add_argument("--json", action="store_true", help="print the record as JSON")
    p.set_defaults(func=run_score)


# --------------------------------------------------------------------------- options


@dataclass(frozen=True)
class CaptureFile:
    """A capture saved by ``run --save-captures`` or ``score --save-capture``."""

    path: str


@dataclass(frozen=True)
class LivePR:
    """A pull request fetched from GitHub now; the token stays out of every repr."""

    repo: str
    pr: int
    api_url: str | None
    credentials: Credentials = field(repr=False)  # the token, or a GitHub App's key


@dataclass(frozen=True)
class FindingsFile:
    """An offline review (findings JSON or SARIF) that never was a pull request."""

    path: str
    reviewer: str


@dataclass(frozen=True)
class ScoreOptions:
    """Everything one ``score`` needs, read once from the flags and the environment and
    checked before anything is read, fetched or written. ``stack``, ``kind``, ``mode``,
    ``prefix`` and ``reviewer`` are the flags as given (None: the capture's manifest
    decides, then the table's default), because only the capture can complete them."""

    source: CaptureFile | LivePR | FindingsFile
    corpus: CorpusData = field(repr=False)
    stack: str | None
    kind: str | None
    mode: str | None
    prefix: str | None
    reviewer: str | None
    logins: tuple[str, ...]
    profiles_file: str | None
    window: int
    floor: Severity
    gate: GateOptions
    run_id: str | None
    history: str | None
    save_capture: str | None
    json: bool
    variant: str | None = None  # the variant the review saw (None: the capture's manifest, else none)

    @classmethod
    def from_args(cls, args: argparse.Namespace, env: Mapping[str, str]) -> ScoreOptions:
        check_score_options(args)
        source: CaptureFile | LivePR | FindingsFile
        if args.findings:
            for flag in ("pr", "save_capture", "api_url"):
                if getattr(args, flag) is not None:
                    raise BadInput(f"--{flag.replace('_', '-')}: not used with --findings")
            if not args.stack:
                raise BadInput("--stack: required with --findings")
            if not args.kind:
                raise BadInput("--kind: required with --findings")
            parse_kind(args.kind, "--kind")
            parse_mode(args.mode or str(default("--mode")), "--mode")
            source = FindingsFile(args.findings, validate.login(args.reviewer_name, "--reviewer-name"))
        elif args.capture:
            source = CaptureFile(args.capture)
        else:
            if args.pr is None:
                raise BadInput("--pr: required with --repo")
            source = LivePR(args.repo, args.pr, args.api_url, Credentials.from_args(args, env))
        floor = parse_floor(args.floor)
        rules = gate_options(floor=floor, min_recall=args.min_recall, require_citation=args.require_citation,
                             blocker_gate=args.blocker_gate, baseline=args.baseline,
                             acknowledgements=load_acknowledgements(args.acknowledgements, utc_now_iso()[:10]))
        corpus = load_corpus(args.corpus)
        if isinstance(source, FindingsFile):
            require_stack(corpus, args.stack)
        return cls(source=source, corpus=corpus, stack=args.stack, kind=args.kind, mode=args.mode,
                   prefix=args.prefix, reviewer=args.reviewer, logins=tuple(args.login),
                   profiles_file=args.profiles, window=args.window, floor=floor, gate=rules,
                   run_id=args.run_id, history=args.history, save_capture=args.save_capture, json=args.json,
                   variant=args.variant)


def check_score_options(args: argparse.Namespace) -> None:
    """Flags first: nothing is read, fetched or written before they are known good."""
    if args.baseline and not args.history:
        raise BadInput("--baseline: needs --history FILE to find the baseline in")
    if args.repo is not None:
        validate.repo(args.repo, "--repo")
    if args.pr is not None:
        validate.integer(args.pr, "--pr", low=1, high=2**31 - 1)
    validate_api_url(args.api_url)
    if args.run_id is not None:
        validate.run_id(args.run_id)
    if args.stack is not None:
        validate.stack(args.stack)
    if args.prefix is not None:
        validate.prefix(args.prefix, "--prefix")
    validate.integer(args.window, "--window", low=0, high=validate.MAX_WINDOW)
    if args.min_recall is not None:
        validate.number(args.min_recall, "--min-recall", low=0, high=1)
    for i, name in enumerate(args.login):
        validate.login(name, f"--login[{i}]" if len(args.login) > 1 else "--login")
    parse_floor(args.floor)
    if args.history:
        validate.history_path(args.history, "--history")
    if args.save_capture:
        validate.safe_output_file(args.save_capture, "--save-capture")
        if args.capture and Path(args.save_capture).resolve() == Path(args.capture).resolve():
            raise BadInput("--save-capture: is the --capture file itself")


# --------------------------------------------------------------------------- the command


def run_score(args: argparse.Namespace) -> int:
    """The edge: the flags and ``os.environ`` become options here, and only here."""
    return score(ScoreOptions.from_args(args, os.environ), out=sys.stdout, err=sys.stderr)


def _variant(corpus: CorpusData, stack: str, ident: str | None, where: str) -> Variant | None:
    """The variant the review saw (--variant, else a capture's manifest; none: the canonical
    files), so a re-score reads the same line map and names the run did."""
    try:
        return named_variant(corpus, stack, ident)
    except ValueError as exc:
        raise BadInput(f"{where}: {exc}") from None


def score(options: ScoreOptions, *, out: TextIO, err: TextIO, transport: httpx.BaseTransport | None = None,
          now: Callable[[], str] = utc_now_iso) -> int:
    """Score the review, apply the baseline, write what was asked, print, and return the
    exit code. ``transport`` stands in for the network (the sandbox in-process, in tests);
    ``now`` is the wall clock (UTC ISO text) the record and default run id are stamped with."""
    source = options.source
    if isinstance(source, FindingsFile):
        return _score_findings(options, source, out=out, err=err, now=now)
    where = source.path if isinstance(source, CaptureFile) else f"{source.repo}#{source.pr}"
    doc = _read_capture(source.path) if isinstance(source, CaptureFile) else _live_capture(source, transport)
    repo, number, manifest = capture_meta(doc)
    stack = options.stack or manifest.get("stack")
    if not stack:
        raise BadInput(f"{where}: --stack not given and manifest.stack missing")
    validate.stack(stack, "--stack" if options.stack else f"{where}: manifest.stack")
    if options.prefix is None and manifest.get("prefix"):
        validate.prefix(manifest["prefix"], f"{where}: manifest.prefix")
    kind = parse_kind(options.kind or manifest.get("kind") or "", where)
    mode = parse_mode(options.mode or manifest.get("mode") or str(default("--mode")), where)
    prefix = options.prefix if options.prefix is not None else str(manifest.get("prefix") or "")
    profile = load_profile(options.reviewer or manifest.get("reviewer") or str(default("--reviewer")),
                           options.logins, options.profiles_file)
    require_stack(options.corpus, stack)
    settings = ScoreSettings(stack=stack, kind=kind, mode=mode, prefix=prefix, window=options.window,
                             floor=options.floor, gate=options.gate,
                             variant=_variant(options.corpus, stack, options.variant or manifest.get("variant"),
                                              "--variant" if options.variant else f"{where}: manifest.variant"))
    live = source if isinstance(source, LivePR) else None
    meta = RecordMeta(run_id=options.run_id or f"score-{now().replace(':', '')}",
                      recorded_at=now(), repo=repo or (live.repo if live else None) or "unknown/unknown",
                      pr=number if number is not None else (live.pr if live else None), tool_version=__version__)
    try:
        _score, record = evaluate(doc, options.corpus, settings, profile, meta)
    except CaptureError as exc:
        raise BadInput(f"{where}: {exc}") from None
    fp_then = manifest.get("fingerprint")
    if fp_then and fp_then != record.corpus_fingerprint:
        print(inert_line(f"warning: {where} was captured with corpus {fp_then}, scoring with "
                         f"{record.corpus_fingerprint}: line maps may differ"), file=err)
    return _finish(options, record, doc, out=out, err=err)


def _score_findings(options: ScoreOptions, source: FindingsFile, *, out: TextIO, err: TextIO,
                    now: Callable[[], str]) -> int:
    """``score --findings``: an offline review scored exactly like a captured one."""
    assert options.stack is not None and options.kind is not None  # from_args requires both
    findings = _read_findings(source.path)
    settings = ScoreSettings(
        stack=options.stack, kind=parse_kind(options.kind, "--kind"),
        mode=parse_mode(options.mode or str(default("--mode")), "--mode"), prefix=options.prefix or "",
        window=options.window, floor=options.floor, gate=options.gate,
        variant=_variant(options.corpus, options.stack, options.variant, "--variant"),
    )
    meta = RecordMeta(run_id=options.run_id or f"findings-{now().replace(':', '')}",
                      recorded_at=now(), repo=OFFLINE_REPO, tool_version=__version__)
    _score, record = evaluate_findings(findings, options.corpus, settings, source.reviewer, meta)
    return _finish(options, record, None, out=out, err=err)


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


def _live_capture(source: LivePR, transport: httpx.BaseTransport | None) -> dict[str, Any]:
    from redline_canary.github.client import GitHubClient

    auth = source.credentials.auth(source.api_url, transport=transport)
    client = GitHubClient(auth.for_repo(source.repo), api_url=source.api_url, transport=transport)
    try:
        return client.capture(source.repo, source.pr)
    finally:
        client.close()
        auth.close()


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


def _finish(options: ScoreOptions, record: Record, doc: dict[str, Any] | None, *, out: TextIO, err: TextIO) -> int:
    """Baseline, history, output and exit code: the same for every source of a review."""
    rules = options.gate
    history = read_history(options.history) if options.history else None
    for line, why in history.corrupt if history else []:
        print(inert_line(f"{options.history}:{line}: corrupt record skipped ({why})"), file=err)
    diff_text = ""
    if rules.baseline and history is not None:
        record = replace(record, gate=decide(record, rules, history=history.records).gate())
        if rules.window:
            runs = comparable_runs(history.records, record, rules.window)
            record = replace(record, baseline={"window": rules.window, "run_ids": [r.run_id for r in runs]})
        else:
            diff = compare(history.records, record)
            record = replace(record, baseline={
                "run_id": diff.baseline.run_id if diff.baseline else None,
                "newly_missed": [s.n for s in diff.newly_missed],
                "newly_caught": [s.n for s in diff.newly_caught],
            })
            diff_text = render_baseline(diff.newly_missed, diff.newly_caught, diff.baseline)
    if options.save_capture and doc is not None:
        safe_write_text(options.save_capture, json.dumps(doc, indent=1))
    if options.history:
        append_records(options.history, [record], warn=lambda message: print(message, file=err))
    if options.json:
        print(json_text(record.to_json()), file=out)
    else:
        print(render_record(record), file=out)
        if diff_text:
            print(diff_text, file=out)
    return record_exit_code(record)
