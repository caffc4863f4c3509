"""The corpus on disk: find it, read it into :class:`CorpusData` (the edge of docs/corpus.md).

An installed wheel carries the corpus as package data (``_data/seeds``); a source
checkout uses the repository's ``seeds/``. Hidden files and READMEs are not corpus.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from redline_canary.corpus.markers import Problem
from redline_canary.corpus.model import (
    ADJUDICATIONS_FILE,
    IMPORT_TABLE,
    KINDS,
    RUBRIC_FILE,
    CorpusData,
    lint_stack,
    parse_rules,
)
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


def load_corpus(root: Path | str | None = None) -> CorpusData:
    """Read rules.yml and every stack's files; raises BadInput if the folder is unusable."""
    base = Path(root) if root is not None else default_corpus_dir()
    label = str(root) if root is not None else str(base)
    if not base.is_dir():
        raise BadInput(f"{label}: corpus folder not found")
    rules_path = base / "rules.yml"
    problems: list[Problem] = []
    try:
        if not rules_path.is_file():
            raise FileNotFoundError(rules_path)
        doc = yaml.safe_load(_read_bytes(rules_path).decode("utf-8"))
    except FileNotFoundError:
        raise BadInput(f"{rules_path}: rules catalog not found") from None
    except RecursionError:  # yaml recurses per level: a hostile file is refused, not a crash
        raise BadInput(f"{rules_path}: nested too deeply to be a rules catalog") from None
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        line = getattr(getattr(exc, "problem_mark", None), "line", 0) + 1
        why = getattr(exc, "problem", None) or exc.__class__.__name__
        raise BadInput(f"{rules_path}:{line}: not valid YAML ({why})") from None
    rules, rule_problems = parse_rules(doc, str(rules_path))
    problems += rule_problems
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
    corpus = CorpusData(label=label.rstrip("/"), rules=rules, files=files, problems=problems)
    rubric_path, log_path = base / RUBRIC_FILE, base / ADJUDICATIONS_FILE
    if rubric_path.is_file():
        corpus.rubric = _read_bytes(rubric_path).decode("utf-8", errors="replace")
    if log_path.is_file():
        try:
            corpus.adjudications = yaml.safe_load(_read_bytes(log_path).decode("utf-8"))
            corpus.has_adjudications = True
        except RecursionError:
            problems.append(Problem(str(log_path), 1, "nested too deeply to be an adjudication log"))
        except (yaml.YAMLError, UnicodeDecodeError) as exc:
            line = getattr(getattr(exc, "problem_mark", None), "line", 0) + 1
            problems.append(Problem(str(log_path), line, "not valid YAML"))
    import_path = base / IMPORT_TABLE
    if import_path.is_file():
        try:
            corpus.imported = yaml.safe_load(_read_bytes(import_path).decode("utf-8"))
            corpus.has_import_table = True
        except RecursionError:
            problems.append(Problem(str(import_path), 1, "nested too deeply to be an import table"))
        except (yaml.YAMLError, UnicodeDecodeError) as exc:
            line = getattr(getattr(exc, "problem_mark", None), "line", 0) + 1
            problems.append(Problem(str(import_path), line, "not valid YAML"))
    return corpus


def require_known_stack(corpus: CorpusData, stack: str) -> None:
    if stack not in corpus.files:
        known = ", ".join(corpus.stacks)
        raise BadInput(f"{corpus.label}: unknown stack {stack!r} (known: {known})")


def require_stack(corpus: CorpusData, stack: str) -> None:
    """The stack exists and lints clean: a broken answer key would give wrong numbers."""
    require_known_stack(corpus, stack)
    problems = corpus.problems + lint_stack(corpus, stack)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise BadInput(f"{problems[0]}{more}: fix the corpus first (redline-canary corpus lint)")
