"""``corpus import --from redline SRC --out DIR``: a Redline checkout as this product's corpus.

The edge of :mod:`redline_canary.corpus.redline_import`: it reads the checkout's ``seeded/`` and
``standards/`` into memory (bounded: a checkout is source, not data; confined: nothing
outside SRC is read, whatever a link says), converts, and writes
the corpus all at once into a folder that did not exist or was empty, so a failed import
leaves nothing half-written. The report (markers read, converted, rejected with
``file:line`` and a reason, per stack) goes to stdout, or as JSON with ``--json``.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import yaml

from redline_canary.commands.corpus import write_export
from redline_canary.corpus.redline_import import SIDE_TABLE, convert
from redline_canary.corpus.redline_report import ImportResult, Note
from redline_canary.corpus.redline_scale import SEVERITY_MAP
from redline_canary.errors import EXIT_PASS, BadInput
from redline_canary.report.text import inert_line, json_text
from redline_canary.run.corpus_files import MAX_FILE_BYTES
from redline_canary.score.defaults import IMPORT_MAX_BYTES, IMPORT_MAX_FILES

SOURCES = ("redline",)
_SKIP_DIRS = {".git", "node_modules", "__pycache__", ".venv"}

RULES_HEADER = """\
# The rules catalog, imported from Redline's standards by `redline-canary corpus import --from redline`.
# Severities map Redline's levels through one table (README, "Coming from Redline"):
{table}
# A rule whose markers claimed more than its heading's level was raised to what they claim.
"""
SIDE_HEADER = """\
# Written by `redline-canary corpus import --from redline`: how this corpus relates to the
# Redline checkout it came from. `markers` maps each new SEED number (unique per stack) to
# the Redline `file#n` it was. `skeletons` are clean twins written as the seeded file with
# its markers removed: `corpus lint` reports every seed a skeleton still equals until its
# fix is written. `rejected` lists what was not converted; lint reports each entry until
# you mark the defect by hand and delete the entry.
"""


def register(inner: Any) -> None:
    p = inner.add_parser("import", help="convert another tool's seed corpus (Redline) into this corpus format")
    p.add_argument("src", metavar="SRC", help="the Redline checkout (holds seeded/ and standards/)")
    p.add_argument("--from", dest="source", required=True, choices=SOURCES, help="the format of SRC")
    p.add_argument("--out", required=True, help="corpus folder to create; must not exist or be empty")
    p.add_argument("--keep-secrets", action="store_true",
                   help="report provider-shaped secrets with a suggested replacement, but do not replace them")
    p.add_argument("--json", action="store_true", help="print the import report as JSON")
    p.set_defaults(func=run_import)


def read_checkout(src: Path) -> tuple[dict[str, bytes], list[Note]]:
    """``seeded/**`` and ``standards/**`` of a checkout as relative path → bytes.

    Confined to SRC: ``seeded`` or ``standards`` being a link, or a link inside them that
    resolves outside SRC, is refused (a link to ``~/.netrc`` would otherwise become a
    corpus file that ``run`` pushes to the canary repository); a link that stays inside is
    noted and skipped. Bounded: the files are counted and their sizes summed before one
    byte is read (docs/corpus.md#importing-from-redline)."""
    if not src.is_dir():
        raise BadInput(f"{src}: Redline checkout not found (expected a folder)")
    root = src.resolve()
    for top in ("seeded", "standards"):
        if (src / top).is_symlink():
            raise BadInput(f"{src / top}: is a symbolic link: an import reads only what is inside {src} "
                           "(copy the folder in instead)")
    if not (src / "seeded").is_dir():
        raise BadInput(f"{src}: not a Redline checkout (no seeded/ folder)")
    notes: list[Note] = []
    chosen: list[tuple[str, Path, int]] = []
    total = 0
    for top in ("seeded", "standards"):
        base = src / top
        if not base.is_dir():
            continue
        for path in sorted(base.rglob("*")):
            rel = path.relative_to(src).as_posix()
            if any(part in _SKIP_DIRS for part in path.relative_to(src).parts):
                continue
            if path.is_symlink():
                if not _inside(path, root):
                    raise BadInput(f"{path}: a symbolic link to outside {src}: an import never reads "
                                   "outside its source folder (remove the link)")
                notes.append(Note(rel, 0, "a symbolic link: not followed"))
                continue
            if not path.is_file():
                continue
            try:
                size = path.stat().st_size
            except OSError as exc:
                raise BadInput(f"{path}: cannot read ({exc.strerror or exc.__class__.__name__})") from None
            if size > MAX_FILE_BYTES:
                notes.append(Note(rel, 0, f"larger than 1 MiB ({size} bytes): not imported"))
                continue
            chosen.append((rel, path, size))
            total += size
            if len(chosen) > IMPORT_MAX_FILES:
                raise BadInput(f"{src}: more than {IMPORT_MAX_FILES} files under seeded/ and standards/ "
                               "(is this a Redline checkout?); nothing was read")
            if total > IMPORT_MAX_BYTES:
                raise BadInput(f"{src}: more than {IMPORT_MAX_BYTES // (1024 * 1024)} MiB under seeded/ and "
                               "standards/ (is this a Redline checkout?); nothing was read")
    files: dict[str, bytes] = {}
    for rel, path, _size in chosen:
        try:
            with path.open("rb") as handle:
                files[rel] = handle.read(MAX_FILE_BYTES + 1)
        except OSError as exc:
            raise BadInput(f"{path}: cannot read ({exc.strerror or exc.__class__.__name__})") from None
    return files, notes


def _inside(link: Path, root: Path) -> bool:
    """Whether ``link`` resolves inside ``root`` (a loop or an unreadable hop: no)."""
    try:
        return link.resolve(strict=False).is_relative_to(root)
    except (OSError, RuntimeError):
        return False


def _yaml(doc: Any) -> str:
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=1000, default_flow_style=None)


def corpus_files(result: ImportResult) -> dict[str, str]:
    """Every file of the corpus folder, by relative path."""
    table = "\n".join(f"#   {w} -> {m.level.name}: {m.reason}" for w, m in SEVERITY_MAP.items())
    out = dict(result.files)
    out["rules.yml"] = RULES_HEADER.format(table=table) + _yaml({"rules": result.rules})
    out[SIDE_TABLE] = SIDE_HEADER + _yaml(result.side_table)
    return out


def run_import(args: argparse.Namespace) -> int:
    src = Path(args.src)
    out = Path(args.out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise BadInput(f"--out {out}: exists and is not an empty folder (nothing was written)")
    files, notes = read_checkout(src)
    try:
        result = convert(files, replace_secrets=not args.keep_secrets, source_label=str(src))
    except BadInput as exc:  # the pure converter names the file relative to SRC
        raise BadInput(f"{src}/{exc}") from None
    result.notes[:0] = notes
    if not result.stacks:
        raise BadInput(f"{src}/seeded: no stack folders (seeded/<stack>/...): nothing to import")
    write_export(out, corpus_files(result))
    if args.json:
        print(json_text({"out": str(out), **result.as_json()}))
    else:
        for line in report_lines(result, out):
            print(inert_line(line))
    return EXIT_PASS


def report_lines(result: ImportResult, out: Path) -> list[str]:
    """The import report: totals, a row per stack, then every rejection, secret and note."""
    share = f" ({result.converted / result.read:.1%})" if result.read else ""
    lines = [f"imported into {out}: {result.read} markers read, {result.converted} converted{share}, "
             f"{len(result.rejected)} rejected; {len(result.rules)} rules",
             "stack               files  read  converted  rejected  skeleton twins"]
    for name, s in sorted(result.stacks.items()):
        lines.append(f"{name:<19} {s.files:>5} {s.read:>5} {s.converted:>10} {len(s.rejected):>9} {s.skeletons:>15}")
    lines += [f"rejected: {r}" for r in result.rejected]
    lines += [f"secret: {h}" for h in result.secrets]
    lines += [f"note: {n}" for n in result.notes]
    skeletons = sum(s.skeletons for s in result.stacks.values())
    if skeletons:
        lines.append(f"next: write the {skeletons} clean twins (clean/<stack>/...): `redline-canary corpus lint "
                     f"--corpus {out}` lists every seed a twin does not fix yet")
    return lines
