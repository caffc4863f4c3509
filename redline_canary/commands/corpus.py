"""``corpus lint`` and ``corpus show``."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from redline_canary import corpus_model
from redline_canary.corpus import load_corpus, require_known_stack
from redline_canary.errors import EXIT_BAD_INPUT, EXIT_PASS
from redline_canary.severity import SCALE


def register(sub: Any) -> None:
    parser = sub.add_parser("corpus", help="lint or summarise the seeded corpus")
    inner = parser.add_subparsers(dest="corpus_command", metavar="ACTION", required=True)
    lint = inner.add_parser("lint", help="check markers, rules, twins and secrets; exit 2 on any problem")
    lint.add_argument("--corpus", help="corpus folder (default: the packaged seeds/)")
    lint.set_defaults(func=run_lint)
    show = inner.add_parser("show", help="per-stack counts and fingerprints")
    show.add_argument("--corpus", help="corpus folder (default: the packaged seeds/)")
    show.add_argument("--stack", help="only this stack")
    show.add_argument("--json", action="store_true", help="machine-readable output")
    show.set_defaults(func=run_show)


def run_lint(args: argparse.Namespace) -> int:
    corpus = load_corpus(args.corpus)
    problems = corpus_model.lint(corpus)
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} problem(s) in {corpus.label}", file=sys.stderr)
        return EXIT_BAD_INPUT
    markers = sum(len(corpus_model.view(corpus, s, "seeded").seeds) for s in corpus.stacks)
    print(f"ok: {len(corpus.stacks)} stacks, {markers} markers, no problems")
    return EXIT_PASS


def show_data(corpus: corpus_model.CorpusData, stack: str | None) -> dict[str, Any]:
    stacks = [stack] if stack else corpus.stacks
    table = {s: corpus_model.summary(corpus, s) for s in stacks}
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
