"""``corpus lint`` and ``corpus show``."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from redline_canary import __version__
from redline_canary.commands import _validate as validate
from redline_canary.commands._groups import add_actions
from redline_canary.commands._options import CORPUS_HELP, load_profile, parse_floor, parse_kind, parse_mode
from redline_canary.corpus import model as corpus_model
from redline_canary.corpus.model import CANONICAL
from redline_canary.corpus.severity import SCALE
from redline_canary.corpus.variants import named_variant, parse_variants, publish_variant
from redline_canary.errors import EXIT_BAD_INPUT, EXIT_PASS, BadInput
from redline_canary.github.clock import utc_now_iso
from redline_canary.report.text import inert_line, json_text
from redline_canary.report.worklist import worklist_markdown
from redline_canary.review.capture import CaptureError, capture_meta, check_capture
from redline_canary.run.corpus_files import load_corpus, require_known_stack, require_stack
from redline_canary.run.files import safe_write_text
from redline_canary.run.history import document_records, open_regular, parse_json, read_history
from redline_canary.score import audit
from redline_canary.score.evaluate import ScoreSettings, evaluate
from redline_canary.score.matching import DEFAULT_WINDOW
from redline_canary.score.record import MODES, Record
from redline_canary.score.scoring import DEFAULT_FLOOR, RecordMeta


def register(sub: Any) -> None:
    parser = sub.add_parser("corpus", help="lint or summarise the seeded corpus")
    inner = add_actions(parser, "corpus_command")
    lint = inner.add_parser("lint", help="check markers, rules, twins and secrets; exit 2 on any problem")
    lint.add_argument("--corpus", action="append", help=CORPUS_HELP)
    lint.set_defaults(func=run_lint)
    show = inner.add_parser("show", help="per-stack counts and fingerprints")
    show.add_argument("--corpus", action="append", help=CORPUS_HELP)
    show.add_argument("--stack", help="only this stack")
    show.add_argument("--json", action="store_true", help="machine-readable output")
    show.set_defaults(func=run_show)
    export = inner.add_parser(
        "export", help="write exactly the files a reviewer would see for one PR (a blind review kit)")
    export.add_argument("--corpus", action="append", help=CORPUS_HELP)
    export.add_argument("--stack", required=True, help="the stack to export")
    export.add_argument("--kind", required=True, choices=corpus_model.KINDS, help="seeded or clean")
    export.add_argument("--mode", default="blind", choices=MODES, help="publication mode (default: %(default)s)")
    export.add_argument("--prefix", default="", help="folder the files are pushed under (default: the root)")
    export.add_argument("--out", required=True, help="folder to create; must not exist or be empty")
    export.add_argument("--key", help="also write the private answer key (JSON) to this file, outside --out")
    export.add_argument("--variant", default="none", help="publish this variant of the stack, or none "
                        "(default: %(default)s; docs/corpus.md#variants)")
    export.set_defaults(func=run_export)
    audit = inner.add_parser(
        "audit", help="the adjudication worklist from scored reviews (records or captures)")
    audit.add_argument("inputs", nargs="+", metavar="RECORD_OR_CAPTURE",
                       help="history JSONL files, a record JSON file (what score --json prints) or a JSON array "
                            "of records, or capture files saved by run or score")
    audit.add_argument("--corpus", action="append", help=CORPUS_HELP)
    audit.add_argument("--window", type=int, default=DEFAULT_WINDOW,
                       help="the window the reviews were scored with (default: %(default)s)")
    audit.add_argument("--floor", default=DEFAULT_FLOOR.name,
                       help="lowest severity that counts on a clean twin (default: %(default)s)")
    audit.add_argument("--markdown", metavar="FILE", help="also write the worklist as Markdown")
    audit.add_argument("--json", action="store_true", help="print the worklist as JSON")
    audit.set_defaults(func=run_audit)
    from redline_canary.commands import corpus_import  # it reuses write_export from here

    corpus_import.register(inner)
    from redline_canary.commands import corpus_mine

    corpus_mine.register(inner)


MAX_AUDIT_BYTES = 256 << 20


def run_lint(args: argparse.Namespace) -> int:
    corpus = load_corpus(args.corpus)
    problems = corpus_model.lint(corpus)
    for p in problems:
        print(inert_line(str(p)))  # file names and entries of an imported table come from outside
    if problems:
        print(f"{len(problems)} problem(s) in {corpus.label}", file=sys.stderr)
        return EXIT_BAD_INPUT
    markers = sum(len(corpus_model.view(corpus, s, "seeded").seeds) for s in corpus.stacks)
    print(f"ok: {len(corpus.stacks)} stacks, {markers} markers, no problems")
    return EXIT_PASS


def show_data(corpus: corpus_model.CorpusData, stack: str | None) -> dict[str, Any]:
    stacks = [stack] if stack else corpus.stacks
    table = {s: corpus_model.summary(corpus, s) for s in stacks}
    for s in stacks:  # JSON only: the Markdown table is what seeds/README.md embeds
        table[s]["layer"] = corpus.layer_of(s)
        table[s]["variants"] = sorted(parse_variants(corpus, s)[0])
    return {"total_markers": sum(t["markers"] for t in table.values()), "stacks": table}


def render_show(data: dict[str, Any]) -> str:
    """A Markdown table (also what seeds/README.md embeds)."""
    head = "| stack | files | markers | " + " | ".join(s.name for s in SCALE) + \
        " | structural | borderline | fingerprint |"
    rule = "|" + "---|" * (len(SCALE) + 6)
    rows = [head, rule]
    for name, t in data["stacks"].items():
        sev = " | ".join(str(t["by_severity"][s.name]) for s in SCALE)
        rows.append(f"| {name} | {t['files']} | {t['markers']} | {sev} | {t['structural']} | "
                    f"{t['borderline']} | `{t['fingerprint']}` |")
    rows.append(f"\nTotal markers: {data['total_markers']}")
    return "\n".join(rows)


def run_show(args: argparse.Namespace) -> int:
    corpus = load_corpus(args.corpus)
    if args.stack:
        require_known_stack(corpus, args.stack)
    data = show_data(corpus, args.stack)
    print(json.dumps(data, indent=2) if args.json else render_show(data))
    return EXIT_PASS


def run_export(args: argparse.Namespace) -> int:
    corpus = load_corpus(args.corpus)
    require_stack(corpus, args.stack)
    try:
        variant = named_variant(corpus, args.stack, args.variant)
    except ValueError as exc:
        raise BadInput(f"--variant: {exc}") from None
    files, markers = publish_variant(corpus, args.stack, args.kind, args.mode, args.prefix, variant)
    out = Path(args.out)
    key_path = validate.safe_output_file(args.key, "--key") if args.key else None  # before the export is written
    if key_path is not None and _inside(key_path, out):
        raise BadInput(f"--key {key_path}: the key must not be written inside --out {out} "
                       "(the reviewer would read it)")
    write_export(out, {f.path: f.text for f in files})
    fp = corpus_model.fingerprint(corpus, args.stack)
    if key_path is not None:
        key = corpus_model.export_key(args.stack, args.kind, args.mode, fp, markers)
        key["variant"] = variant.id if variant else CANONICAL
        safe_write_text(key_path, json.dumps(key, indent=2) + "\n")
    shown = f", variant {variant.id}" if variant else ""
    print(f"exported {len(files)} file(s) of {args.stack}/{args.kind} ({args.mode}{shown}, fingerprint {fp}) to {out}"
          + (f"; key in {key_path}" if key_path else ""))
    return EXIT_PASS


def _inside(path: Path, folder: Path) -> bool:
    try:
        path.resolve().relative_to(folder.resolve())
    except ValueError:
        return False
    return True


def write_export(out: Path, files: dict[str, str]) -> None:
    """All files or none: built in a sibling temporary folder, then renamed into place."""
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise BadInput(f"--out {out}: exists and is not an empty folder (nothing was written)")
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".export-", dir=out.parent))
    try:
        for rel, text in files.items():
            target = staging / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8", newline="")
        if out.exists():
            out.rmdir()
        staging.rename(out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _audit_records(path: str, corpus: corpus_model.CorpusData) -> list[Record]:
    """Records from a history/record file, or the record a capture scores to."""
    with open_regular(path, "audit input") as fh:
        raw = fh.read(MAX_AUDIT_BYTES + 1)
    if len(raw) > MAX_AUDIT_BYTES:
        raise BadInput(f"{path}: larger than {MAX_AUDIT_BYTES >> 20} MiB")
    try:
        doc = parse_json(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        doc = None  # JSONL: read line by line below
    if isinstance(doc, dict) and "run_id" not in doc:
        return [_score_capture(path, doc, corpus)]
    # One record (what `score --json` prints), an array of records, else JSONL line by line.
    document = isinstance(doc, (dict, list))
    read = document_records(doc) if document else read_history(path, what="audit input")
    if read.corrupt:
        number, why = read.corrupt[0]
        where = ("the record" if isinstance(doc, dict) else f"item {number}") if document else f"line {number}"
        if not read.records:
            raise BadInput(f"{path}: no record read: not JSONL records, a JSON record or array of records, "
                           f"nor a capture ({where}: {why})")
        unit = "item(s)" if document else "line(s)"
        print(inert_line(f"{path}: skipped {len(read.corrupt)} {unit} that are not records ({where}: {why})"),
              file=sys.stderr)
    return read.records


def _score_capture(path: str, doc: dict[str, Any], corpus: corpus_model.CorpusData) -> Record:
    try:
        check_capture(doc)
        repo, number, manifest = capture_meta(doc)
    except CaptureError as exc:
        raise BadInput(f"{path}: neither a record nor a capture ({exc})") from None
    stack = manifest.get("stack")
    if not isinstance(stack, str):
        raise BadInput(f"{path}: manifest.stack: missing (needed to audit a capture)")
    require_stack(corpus, stack)
    kind = parse_kind(str(manifest.get("kind") or ""), path)
    mode = parse_mode(str(manifest.get("mode") or "blind"), path)
    profile = load_profile(str(manifest.get("reviewer") or "redline"), [], None)
    settings = ScoreSettings(stack=stack, kind=kind, mode=mode, prefix=str(manifest.get("prefix") or ""))
    meta = RecordMeta(run_id=Path(path).name, recorded_at=utc_now_iso(), repo=repo or "unknown/unknown",
                      pr=number, tool_version=__version__)
    try:
        return evaluate(doc, corpus, settings, profile, meta)[1]
    except CaptureError as exc:
        raise BadInput(f"{path}: {exc}") from None


def run_audit(args: argparse.Namespace) -> int:
    floor = parse_floor(args.floor)
    validate.integer(args.window, "--window", low=0, high=validate.MAX_WINDOW)
    if args.markdown:
        validate.safe_output_file(args.markdown, "--markdown")
    corpus = load_corpus(args.corpus)
    records = [r for path in args.inputs for r in _audit_records(path, corpus)]
    published: dict[tuple[str, str], audit.Published] = {}
    for stack in corpus.stacks:
        fp = corpus_model.fingerprint(corpus, stack)
        for kind in corpus_model.KINDS:
            modes = {r.mode for r in records if r.stack == stack and r.kind == kind}
            mode = "marked" if modes == {"marked"} else "blind"
            files, markers = corpus_model.publish(corpus, stack, kind, mode, "")
            published[(stack, kind)] = audit.Published(files, markers, fp)
    work = audit.worklist(records, published, window=args.window, floor=floor)
    for warning in work.warnings:
        print(inert_line(f"warning: {warning}"), file=sys.stderr)
    if args.markdown:
        safe_write_text(args.markdown, worklist_markdown(work) + "\n")
    if args.json:
        print(json_text({"reviews": work.reviews, "entries": [e.as_json() for e in work.entries]}))
        return EXIT_PASS
    for (stack, kind), entries in sorted(work.by_stack().items()):
        counts = {c: sum(e.category == c for e in entries) for c in audit.CATEGORIES}
        places = len({e.group for e in entries})
        print(inert_line(f"{stack}/{kind}: " + ", ".join(f"{c} {n}" for c, n in counts.items() if n)
                         + f" ({places} place(s))"))
    print(f"{len(work.entries)} entries to adjudicate from {work.reviews} scored review(s)")
    return EXIT_PASS
