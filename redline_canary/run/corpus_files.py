"""The corpus on disk: find it, read it into :class:`CorpusData` (the edge of docs/corpus.md).

An installed wheel carries the corpus as package data (``_data/seeds``); a source
checkout uses the repository's ``seeds/``. Hidden files and READMEs are not corpus.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from redline_canary.corpus.markers import Problem
from redline_canary.corpus.model import (
    ADJUDICATIONS_FILE,
    IMPORT_TABLE,
    KINDS,
    PACKAGED,
    RUBRIC_FILE,
    CorpusData,
    Rule,
    lint_stack,
    parse_rules,
)
from redline_canary.corpus.variants import lint_variants
from redline_canary.errors import BadInput

_SKIP_NAMES = {"README.md", ".DS_Store"}
# An installed wheel carries the corpus as package data, and pip byte-compiles every .py
# in it: those caches are not corpus.
_SKIP_DIRS = {"__pycache__", "node_modules"}
# A corpus file is source a reviewer reads in a PR; nothing in it is near 1 MiB. A bigger
# one (a vendored bundle, a data dump dropped in by mistake) would make lint and scoring
# take minutes, and GitHub's diff view truncates it anyway: refuse it up front.
MAX_FILE_BYTES = 1 << 20


def _read_bytes(path: Path) -> bytes:
    """The file's bytes, or BadInput when it is too big or unreadable."""
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise BadInput(f"{path}: larger than 1 MiB ({size} bytes); corpus files must be smaller")
        data = path.read_bytes()
    except OSError as exc:
        raise BadInput(f"{path}: cannot read ({exc.strerror or exc.__class__.__name__})") from None
    if len(data) > MAX_FILE_BYTES:  # grew between stat and read
        raise BadInput(f"{path}: larger than 1 MiB; corpus files must be smaller")
    return data


def default_corpus_dir() -> Path:
    package = Path(__file__).resolve().parent.parent  # redline_canary/
    packaged = package / "_data" / "seeds"
    if packaged.is_dir():
        return packaged
    return package.parent / "seeds"


def load_corpus(root: Path | str | Sequence[Path | str] | None = None) -> CorpusData:
    """The corpus of one folder or of several layers (docs/corpus.md#layers).

    ``None`` or an empty list: the packaged corpus. One folder or a list: layers, in order.
    The packaged corpus is the first layer unless the first folder is a complete corpus of
    its own (it holds ``rules.yml``), or ``packaged`` names it explicitly somewhere else in
    the list. Raises BadInput if a folder is unusable, or when two layers define one stack
    (or one rule differently)."""
    if root is None or isinstance(root, (str, Path)):
        folders: list[Path | str] = [] if root is None else [root]
    else:
        folders = list(root)
    if not folders:
        return _load_folder(default_corpus_dir(), None)
    if len(folders) > MAX_LAYERS:
        raise BadInput(f"--corpus: {len(folders)} folders; at most {MAX_LAYERS} layers")
    folders = _once(folders)
    named = [str(f) for f in folders]
    if PACKAGED not in named and not (Path(folders[0]) / "rules.yml").is_file():
        folders = [PACKAGED, *folders]
    layers = [_load_folder(default_corpus_dir(), None) if str(f) == PACKAGED else _load_folder(Path(f), str(f))
              for f in folders]
    return layers[0] if len(layers) == 1 else merge_layers(layers)


MAX_LAYERS = 16


def _once(folders: Sequence[Path | str]) -> list[Path | str]:
    """Each folder once, however it was spelled (``seeds``, ``./seeds/``): the action's input
    and a target's ``corpus`` key may name the same folder."""
    seen: set[str] = set()
    out: list[Path | str] = []
    for folder in folders:
        key = os.path.realpath(default_corpus_dir() if str(folder) == PACKAGED else folder)
        if key not in seen:
            seen.add(key)
            out.append(folder)
    return out


def corpus_layer(base: Path) -> str:
    """"packaged" for the corpus that ships with the tool, else the folder's name: the label
    records carry, so a report can set the public corpus against private code (a name, not
    a path: a path would put a runner's home folder into the history)."""
    try:
        if base.resolve() == default_corpus_dir().resolve():
            return PACKAGED
        return base.resolve().name or "private"
    except OSError:
        return base.name or "private"


def merge_layers(layers: Sequence[CorpusData]) -> CorpusData:
    """Later layers add stacks and rules; a stack defined twice, or one rule defined
    differently, is an error naming both folders."""
    base = layers[0]
    merged = CorpusData(label=base.label, rules=dict(base.rules), files={}, problems=[],
                        rubric=base.rubric, parts=list(layers))
    rule_home = {r: base.label for r in base.rules}
    for layer in layers:
        for rule_id, rule in sorted(layer.rules.items()):
            if rule_id in merged.rules and merged.rules[rule_id] != rule:
                raise BadInput(f"{layer.display_rules()}: rule {rule_id} is also defined in "
                               f"{rule_home[rule_id]}/rules.yml, differently (a rule has one definition: "
                               "remove it from one, or give it another id)")
            merged.rules.setdefault(rule_id, rule)
            rule_home.setdefault(rule_id, layer.label)
        for stack in layer.stacks:
            if stack in merged.files:
                raise BadInput(f"stack {stack!r} is defined in two corpus folders, {merged.roots[stack]} and "
                               f"{layer.label} (stack names are unique across --corpus layers: rename one)")
            merged.files[stack] = layer.files[stack]
            if stack in layer.manifests:
                merged.manifests[stack] = layer.manifests[stack]
            merged.layers[stack] = layer.layer_of(stack)
            merged.roots[stack] = layer.label
        merged.problems += layer.problems
        if layer.rubric is None and layer.has_adjudications:
            layer.rubric = base.rubric  # a private log is judged by the rubric it layers on
        if layer.has_import_table:
            merged.has_import_table = True
            merged.imported = _merge_import_tables(merged.imported, layer.imported)
    return merged


def _merge_import_tables(a: Any, b: Any) -> Any:
    if not isinstance(a, dict):
        return b
    if not isinstance(b, dict):
        return a
    out = dict(a)
    for key in ("markers", "skeletons", "rejected"):
        before, after = a.get(key), b.get(key)
        if isinstance(after, list):
            out[key] = [*(before if isinstance(before, list) else []), *after]
    return out


def _load_folder(base: Path, root: str | None) -> CorpusData:
    """One corpus folder. ``root`` is the folder as the user named it (None: the packaged
    corpus). A folder without ``rules.yml`` is an overlay: it adds stacks only."""
    label = root if root is not None else str(base)
    layer = corpus_layer(base)
    if not base.is_dir():
        raise BadInput(f"{label}: corpus folder not found")
    rules_path = base / "rules.yml"
    problems: list[Problem] = []
    rules: dict[str, Rule] = {}
    try:
        if rules_path.is_file():
            doc = yaml.safe_load(_read_bytes(rules_path).decode("utf-8"))
            rules, rule_problems = parse_rules(doc, str(rules_path))
            problems += rule_problems
    except RecursionError:  # yaml recurses per level: a hostile file is refused, not a crash
        raise BadInput(f"{rules_path}: nested too deeply to be a rules catalog") from None
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        line = getattr(getattr(exc, "problem_mark", None), "line", 0) + 1
        why = getattr(exc, "problem", None) or exc.__class__.__name__
        raise BadInput(f"{rules_path}:{line}: not valid YAML ({why})") from None
    files: dict[str, dict[str, dict[str, bytes]]] = {}
    for kind in KINDS:
        kind_dir = base / kind
        if not kind_dir.is_dir():
            continue
        for stack_dir in sorted(p for p in kind_dir.iterdir() if p.is_dir()):
            stack_files = files.setdefault(stack_dir.name, {k: {} for k in KINDS})
            for path in sorted(stack_dir.rglob("*")):
                rel = path.relative_to(stack_dir).as_posix()
                parts = Path(rel).parts
                if not path.is_file() or path.name in _SKIP_NAMES or any(
                    part.startswith(".") or part in _SKIP_DIRS for part in parts
                ) or path.suffix == ".pyc":
                    continue
                stack_files[kind][rel] = _read_bytes(path)
    if not files:
        raise BadInput(f"{label}: no stacks under seeded/ or clean/")
    corpus = CorpusData(label=label.rstrip("/"), rules=rules, files=files, problems=problems, layer=layer)
    rubric_path, log_path = base / RUBRIC_FILE, base / ADJUDICATIONS_FILE
    if rubric_path.is_file():
        corpus.rubric = _read_bytes(rubric_path).decode("utf-8", errors="replace")
    if log_path.is_file():
        corpus.adjudications, corpus.has_adjudications = _yaml_doc(log_path, "an adjudication log", problems)
    manifests = base / "stacks"
    if manifests.is_dir():
        for path in sorted(manifests.glob("*.yml")):
            doc, ok = _yaml_doc(path, "a stack manifest", problems)
            if ok:
                corpus.manifests[path.stem] = doc
    import_path = base / IMPORT_TABLE
    if import_path.is_file():
        corpus.imported, corpus.has_import_table = _yaml_doc(import_path, "an import table", problems)
    return corpus


def _yaml_doc(path: Path, what: str, problems: list[Problem]) -> tuple[Any, bool]:
    """A corpus side file parsed, or a lint problem naming it (never a crash: a document
    nested past the parser's limit is one more way a file is not what it should be)."""
    try:
        return yaml.safe_load(_read_bytes(path).decode("utf-8")), True
    except RecursionError:
        problems.append(Problem(str(path), 1, f"nested too deeply to be {what}"))
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        line = getattr(getattr(exc, "problem_mark", None), "line", 0) + 1
        problems.append(Problem(str(path), line, "not valid YAML"))
    return None, False


def require_known_stack(corpus: CorpusData, stack: str) -> None:
    if stack not in corpus.files:
        known = ", ".join(corpus.stacks)
        raise BadInput(f"{corpus.label}: unknown stack {stack!r} (known: {known}; a private stack's folder is "
                       "added with --corpus, docs/corpus.md#layers)")


def require_stack(corpus: CorpusData, stack: str) -> None:
    """The stack exists and lints clean: a broken answer key would give wrong numbers."""
    require_known_stack(corpus, stack)
    problems = corpus.problems + lint_stack(corpus, stack) + lint_variants(corpus, stack)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise BadInput(f"{problems[0]}{more}: fix the corpus first (redline-canary corpus lint)")
