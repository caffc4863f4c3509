"""``targets``: validate the targets a run would measure; ``--matrix`` emits the job matrix.

Why a command of its own: the weekly workflow's ``plan`` job must reject a typo in
``vars.CANARY_TARGETS`` in seconds, with the key path that is wrong and an annotation a
person sees on the run page, before any matrix job opens a pull request. It validates with
exactly the code ``run`` uses (``target_items`` and ``parse_targets``), so what passes here runs there.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from redline_canary.commands._actions_env import annotate_error, append_summary, write_outputs
from redline_canary.commands._options import CORPUS_HELP
from redline_canary.commands._targets import corpus_layers, load_acknowledgements, parse_targets, with_gate
from redline_canary.commands.run import add_target_options, target_items
from redline_canary.errors import EXIT_PASS, BadInput
from redline_canary.github.clock import utc_now_iso
from redline_canary.report.action_outputs import matrix_entry
from redline_canary.report.job_summary import md
from redline_canary.run.corpus_files import load_corpus
from redline_canary.run.targets import Target
from redline_canary.score.verdict import GateOptions

MAX_MATRIX = 256  # GitHub: a matrix generates at most 256 jobs per workflow run


def register(sub: Any) -> None:
    p = sub.add_parser("targets", help="validate targets; --matrix prints the GitHub Actions job matrix")
    add_target_options(p)
    p.add_argument("--corpus", action="append", help=CORPUS_HELP)
    p.add_argument("--profiles", help="YAML file of custom reviewer profiles or overrides")
    p.add_argument("--acknowledgements", metavar="FILE", help="also check this acknowledgements file")
    p.add_argument("--matrix", action="store_true",
                   help='print {"include": [...]} and write matrix=... to $GITHUB_OUTPUT when set')
    p.add_argument("--json", action="store_true", help="print the validated targets as JSON")
    p.set_defaults(func=run_targets_command)


def target_dict(t: Target) -> dict[str, Any]:
    """The target as the ``targets`` input takes it back: only keys that are set."""
    out: dict[str, Any] = {"repo": t.repo, "stack": t.stack, "reviewer": t.reviewer, "mode": t.mode}
    if t.base:
        out["base"] = t.base
    if t.prefix:
        out["prefix"] = t.prefix
    if t.logins:
        out["login"] = list(t.logins)
    if t.variant:
        out["variant"] = t.variant  # a matrix job must publish what its target asked for
    if t.corpus:
        out["corpus"] = list(t.corpus)
    out.update(dict(t.gate_keys))  # the target's own gate options travel with it to its job
    return out


def build_matrix(targets: list[Target]) -> dict[str, list[dict[str, str]]]:
    if len(targets) > MAX_MATRIX:
        raise BadInput(f"{len(targets)} targets: a GitHub Actions matrix holds at most {MAX_MATRIX} jobs")
    return {"include": [matrix_entry(target_dict(t)) for t in targets]}


def run_targets_command(args: argparse.Namespace) -> int:
    try:
        items, source = target_items(args, os.environ)
        corpus = load_corpus(corpus_layers(args.corpus, items, source))
        targets = parse_targets(items, source, corpus)
        # Gate keys and acknowledgement files are checked here too: an expired acknowledgement
        # fails the plan job, naming the entry, before any pull request is opened.
        today = utc_now_iso()[:10]
        run_gate = GateOptions(acknowledgements=load_acknowledgements(args.acknowledgements, today))
        targets = [with_gate(t, run_gate, today) for t in targets]
        matrix = build_matrix(targets) if args.matrix else None
    except BadInput as exc:
        annotate_error("Invalid canary targets", str(exc))
        raise
    if matrix is not None:
        text = json.dumps(matrix, separators=(",", ":"))
        print(text)
        write_outputs({"matrix": text, "count": str(len(targets))})
        rows = "\n".join(f"| {md(t.repo)} | {md(t.stack)} | {md(t.reviewer)} | {md(t.mode)} |" for t in targets)
        append_summary(f"### redline-canary plan: {len(targets)} target(s)\n\n"
                       "| repo | stack | reviewer | mode |\n|---|---|---|---|\n" + rows + "\n")
        print(f"{len(targets)} target(s) valid", file=sys.stderr)
    elif args.json:
        print(json.dumps([target_dict(t) for t in targets], indent=2))
    else:
        for t in targets:
            extra = "".join(f" {k}={v}" for k, v in (("base", t.base), ("prefix", t.prefix)) if v)
            print(f"{t.repo}  {t.stack}  reviewer={t.reviewer}  mode={t.mode}{extra}")
        print(f"{len(targets)} target(s) valid", file=sys.stderr)
    return EXIT_PASS
