"""``corpus mine --repo PATH --fix SHA --stack NAME --out DIR``: fix commits as a private stack.

The edge of :mod:`redline_canary.corpus.mining` (docs/mining.md): it reads each fix commit
from a local checkout with git (``run/git.py``), refuses what is not the team's own source
(each refusal printed with its reason), has the pure miner place the markers, lints the
new stack in memory against the catalog it will be used with, and only then writes it,
all at once, into ``DIR/seeded/NAME`` and ``DIR/clean/NAME``. An existing stack is never
overwritten; a failure leaves ``DIR`` as it was.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from redline_canary.corpus import mining
from redline_canary.corpus.model import KINDS, CorpusData, Rule, lint_stack
from redline_canary.corpus.severity import Severity
from redline_canary.corpus.topics import describes
from redline_canary.errors import EXIT_PASS, BadInput
from redline_canary.report.text import inert_line
from redline_canary.run.corpus_files import load_corpus
from redline_canary.run.git import GitRepo

DEFAULT_RULE = "core/logic-error"
DEFAULT_SEVERITY = Severity.MAJOR  # docs/corpus.md#rubric: when in doubt, the lower severity


def register(inner: Any) -> None:
    p = inner.add_parser("mine", help="turn fix commits of a local git checkout into a private stack "
                                      "(docs/mining.md)")
    p.add_argument("--repo", required=True, help="the local git checkout holding the fix commits")
    p.add_argument("--fix", action="append", required=True, metavar="SHA",
                   help="a commit that fixed a defect (repeat for several fixes in one stack)")
    p.add_argument("--stack", required=True, help="name of the new stack")
    p.add_argument("--out", required=True, help="corpus folder to add the stack to (created if missing)")
    p.add_argument("--severity", action="append", metavar="S",
                   help=f"marker severity: once for every fix, or once per --fix (default: {DEFAULT_SEVERITY.name})")
    p.add_argument("--rule", action="append", metavar="R",
                   help=f"marker rule id from rules.yml: once, or once per --fix (default: {DEFAULT_RULE})")
    p.add_argument("--description", action="append", metavar="TEXT",
                   help="marker description: once, or once per --fix (default: the commit's subject)")
    p.add_argument("--per", choices=mining.PER_CHOICES, default="hunk",
                   help="one SEED per hunk (default), or one per fix with its other hunks as SITE lines")
    p.add_argument("--path", action="append", metavar="GLOB",
                   help="keep only changed files matching this glob (repeatable; default: every changed file)")
    p.add_argument("--at", action="append", metavar="PATH:LINES",
                   help="mark only the hunks of PATH touching these lines before the fix (LINE or FIRST-LAST; "
                        "repeatable): leave the tidying a fix did beside the defect unmarked")
    p.add_argument("--dry-run", action="store_true",
                   help="print the markers, refusals and each fix's severity, rule and description; write nothing")
    p.add_argument("--corpus", action="append",
                   help="the corpus layers the stack will be used with, for its rules and a name clash "
                        "(default: the packaged corpus)")
    p.set_defaults(func=run_mine)


def _per_fix(values: list[str] | None, fixes: int, flag: str) -> list[str | None]:
    if not values:
        return [None] * fixes
    if len(values) == 1:
        return [values[0]] * fixes
    if len(values) != fixes:
        raise BadInput(f"{flag}: give it once, or once per --fix ({fixes}); got {len(values)}")
    return list(values)


def _fix(repo: GitRepo, rev: str, severity: str | None, rule_id: str | None, description: str | None,
         rules: dict[str, Rule]) -> mining.Fix:
    sha = repo.commit(rev)
    try:
        level = Severity.parse(severity) if severity else DEFAULT_SEVERITY
    except ValueError as exc:
        raise BadInput(f"--severity: {exc}") from None
    rule_id = rule_id or DEFAULT_RULE
    rule = rules.get(rule_id)
    if rule is None:
        raise BadInput(f"--rule {rule_id[:80]!r}: not in the rules catalog (redline-canary corpus lint lists "
                       "none; see rules.yml)")
    if level > rule.severity:
        raise BadInput(f"--severity {level.name}: above rule {rule_id}'s {rule.severity.name}")
    # The commit's subject is read only when no --description was given for this fix.
    text = mining.clean_description(description or repo.message(sha).strip().split("\n", 1)[0],
                                    f"fixed in {sha[:12]}")
    text = mining.with_term(text, rule.terms, rule.cwe, describes(text, rule))
    return mining.Fix(sha, text, level, rule_id)


def _changes(repo: GitRepo, fix: mining.Fix, globs: list[str] | None, at: dict[str, list[tuple[int, int]]],
             taken: dict[str, str], say: list[str]) -> list[mining.FileChange]:
    parents = repo.parents(fix.sha)
    if not parents:
        raise BadInput(f"--fix {fix.sha[:12]}: a root commit has no 'before' to seed from")
    out: list[mining.FileChange] = []
    for change in repo.changes(parents[0], fix.sha):
        where = f"{fix.sha[:12]} {change.path}"
        if globs and not any(Path(change.path).match(g) or change.path == g for g in globs):
            continue
        why = mining.refusal(change.path, change.status, change.new_mode if change.status != "D" else change.old_mode)
        if why is None and change.path in taken:
            why = f"also changed by {taken[change.path][:12]}: mine the two fixes into separate stacks"
        before = after = None
        if why is None:
            before, after = repo.blob(change.old_blob), repo.blob(change.new_blob)
            if before is None or after is None:
                why = "larger than 1 MiB (a corpus file is source a reviewer reads)"
            else:
                why = mining.content_refusal(before) or mining.content_refusal(after)
        if why is not None or before is None or after is None:
            say.append(f"refused {where}: {why}")
            continue
        hunks = mining.parse_hunks(repo.diff(change.old_blob, change.new_blob))
        if not hunks:
            say.append(f"refused {where}: no line changed (a mode change only)")
            continue
        if change.path in at:
            chosen = mining.select_hunks(hunks, at[change.path])
            if len(chosen) < len(hunks):
                say.append(f"unmarked {where}: {len(hunks) - len(chosen)} hunk(s) outside --at")
            if not chosen:
                raise BadInput(f"--at {change.path}: no hunk of {fix.sha[:12]} touches those lines")
            hunks = chosen
        taken[change.path] = fix.sha
        out.append(mining.FileChange(fix, change.path, before, after, hunks))
    return out


def run_mine(args: argparse.Namespace) -> int:
    stack = args.stack
    if not mining.STACK_NAME.match(stack or ""):
        raise BadInput(f"--stack {str(stack)[:60]!r}: lower-case letters, digits, '.', '_' and '-' (a folder name)")
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise BadInput(f"--out {out}: not a folder (a corpus folder holds seeded/ and clean/)")
    for kind in KINDS:
        if os.path.lexists(out / kind / stack):
            raise BadInput(f"--out {out}: {kind}/{stack} already exists: refusing to overwrite a stack "
                           "(choose another --stack, or delete it first)")
    corpus = load_corpus(args.corpus)
    if stack in corpus.files:
        raise BadInput(f"--stack {stack}: the corpus already has a stack of that name "
                       f"({corpus.roots.get(stack, corpus.layer_of(stack))}); stack names are unique across layers")
    repo = GitRepo(args.repo)
    n = len(args.fix)
    fixes = [_fix(repo, rev, sev, rule, desc, corpus.rules) for rev, sev, rule, desc in zip(
        args.fix, _per_fix(args.severity, n, "--severity"), _per_fix(args.rule, n, "--rule"),
        _per_fix(args.description, n, "--description"), strict=True)]
    say: list[str] = []
    taken: dict[str, str] = {}
    at: dict[str, list[tuple[int, int]]] = {}
    for value in args.at or []:
        try:
            path, lines = mining.parse_at(value)
        except ValueError as exc:
            raise BadInput(f"--at {value[:80]!r}: {exc}") from None
        at.setdefault(path, []).append(lines)
    changes = [c for fix in fixes for c in _changes(repo, fix, args.path, at, taken, say)]
    missing = sorted(set(at) - {c.path for c in changes})
    if missing:
        raise BadInput(f"--at {missing[0]}: not a kept changed file of the fixes")
    if not changes:
        for line in say:
            print(inert_line(line))
        raise BadInput(f"--fix: no changed file of {', '.join(f.sha[:12] for f in fixes)} can be a corpus file "
                       "(see the refusals above)")
    mined = mining.mine(changes, args.per)
    check = CorpusData(label=str(out), rules=corpus.rules,
                       files={stack: {"seeded": _bytes(mined.seeded), "clean": _bytes(mined.clean)}})
    for line in say:
        print(inert_line(line))
    for note in mined.notes:
        print(inert_line(f"note: {note}"))
    problems = lint_stack(check, stack)
    if problems:
        for problem in problems:
            print(inert_line(str(problem)))
        raise BadInput(f"{stack}: the mined stack does not lint ({len(problems)} problem(s) above); nothing written")
    if not args.dry_run:
        _write_stack(out, stack, mined)
    for hit in mined.secrets:
        print(inert_line(f"secret: {hit.file}:{hit.line}: a {hit.provider} shape, replaced by a neutral stand-in"))
    seeds = [p for p in mined.placed if p.kind == "seed"]
    for p in mined.placed:
        extent = f" (lines {p.line}-{p.line + p.lines - 1})" if p.lines > 1 else ""
        label = {"seed": "SEED", "site": "SITE", "fixed": "FIXED"}[p.kind]
        side = "clean" if p.kind == "fixed" else "seeded"
        print(inert_line(f"{label} {p.n}: {side}/{stack}/{p.path}:{p.line}{extent} from {p.sha[:12]}"))
    if args.dry_run:
        for fix in fixes:
            print(inert_line(f"{fix.sha[:12]}: [{fix.severity.name}] ({fix.rule}) {fix.description}"))
        print(inert_line(f"dry run: {stack} would have {len(mined.seeded)} file(s) and {len(seeds)} marker(s) "
                         f"from {n} fix(es) and lints; nothing was written to {out}"))
        return EXIT_PASS
    print(inert_line(f"mined {stack}: {len(mined.seeded)} file(s), {len(seeds)} marker(s) from {n} fix(es) into "
                     f"{out}. Next: read each marker's severity, rule and description, then "
                     f"`redline-canary corpus lint --corpus {out}`"))
    return EXIT_PASS


def _bytes(files: dict[str, str]) -> dict[str, bytes]:
    return {rel: text.encode("utf-8") for rel, text in files.items()}


def _write_stack(out: Path, stack: str, mined: mining.Mined) -> None:
    """Both halves of the stack or neither: staged beside them, then renamed into place."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".mine-", dir=out))
    except OSError as exc:
        raise BadInput(f"--out {out}: cannot write ({exc.strerror or exc.__class__.__name__})") from None
    moved: list[Path] = []
    try:
        for kind, files in (("seeded", mined.seeded), ("clean", mined.clean)):
            for rel, text in files.items():
                target = staging / kind / stack / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text, encoding="utf-8", newline="")
        for kind in KINDS:
            if (out / kind).is_symlink():
                raise BadInput(f"--out {out}: {kind} is a symbolic link: refusing to write through it")
            (out / kind).mkdir(exist_ok=True)
            final = out / kind / stack
            if os.path.lexists(final):
                raise BadInput(f"--out {out}: {kind}/{stack} appeared meanwhile: nothing written")
            (staging / kind / stack).rename(final)
            moved.append(final)
    except BaseException as exc:
        for path in moved:
            shutil.rmtree(path, ignore_errors=True)
        if isinstance(exc, OSError):
            raise BadInput(f"--out {out}: cannot write ({exc.strerror or exc.__class__.__name__}); "
                           "nothing was written") from None
        raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
