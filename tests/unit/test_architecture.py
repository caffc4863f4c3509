"""The house rules, read off the tree (docs/architecture.md): nothing to list by hand.

* **Purity by folder.** Every module under ``corpus/ review/ score/ report/`` (except
  ``report/html.py``, which writes the scoreboard's files) and the pure modules of
  ``github/`` import no network, clock, filesystem or subprocess module, and call no
  ``open``/``print``/``input``. A new module dropped into a pure folder is checked the moment
  it exists.
* **Dependencies point one way**: the leaf (``errors``) ← corpus ← review ← score ←
  report ← github ← run ← commands ← cli. The sandbox imports only ``errors`` and the pure
  ``github/`` modules.

Each rule is a function of a package folder, so the last tests can show it failing on a
small tree built to break it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").exists()) / "redline_canary"
LAYERS = ("corpus", "review", "score", "report", "github", "run", "commands", "cli")
LEAVES = ("errors",)
PURE_FOLDERS = ("corpus", "review", "score", "report")
IMPURE_IN_PURE_FOLDERS = {"report.html"}
PURE_GITHUB = {"github.decipher", "github.recordings", "github.doctor_checks"}
FORBIDDEN = {
    "os", "io", "pathlib", "shutil", "tempfile", "glob", "socket", "ssl", "select", "http",
    "urllib", "httpx", "requests", "github", "subprocess", "multiprocessing", "threading",
    "asyncio", "time", "datetime", "signal", "fcntl", "sqlite3", "jsonlines", "yaml",
    "tenacity", "random", "concurrent", "logging", "sys",
}


def modules(package: Path) -> Iterator[tuple[str, Path]]:
    """(dotted name relative to the package, file) for every module, ``__init__`` as its folder."""
    for path in sorted(package.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        parts = path.relative_to(package).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        yield ".".join(parts), path


def imports(path: Path, package_name: str) -> tuple[set[str], set[str]]:
    """(outside top-level modules, our modules relative to the package) imported anywhere in
    the file, lazy imports included."""
    outside: set[str] = set()
    ours: set[str] = set()
    prefix = package_name + "."
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        for name in names:
            if name == package_name:
                ours.add("")
            elif name.startswith(prefix):
                ours.add(name[len(prefix):])
            elif "." not in name or isinstance(node, ast.Import) or name == getattr(node, "module", None):
                outside.add(name.split(".")[0])
    return outside, ours


def _existing(ours: set[str], known: set[str]) -> set[str]:
    """``from pkg.score import record`` names the module ``score.record``; keep names that are modules."""
    return {n for n in ours if n in known}


def is_pure(name: str) -> bool:
    top = name.split(".")[0]
    return (top in PURE_FOLDERS and name not in IMPURE_IN_PURE_FOLDERS) or name in PURE_GITHUB


def purity_violations(package: Path) -> list[str]:
    found = dict(modules(package))
    known = set(found)
    problems: list[str] = []
    for name, path in found.items():
        if not is_pure(name):
            continue
        outside, ours = imports(path, package.name)
        for bad in sorted(outside & FORBIDDEN):
            problems.append(f"{name} imports {bad}")
        for dep in sorted(_existing(ours, known)):
            if dep not in {"", "errors"} and not is_pure(dep):
                problems.append(f"{name} imports the edge module {dep}")
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in {
                    "open", "print", "input"}:
                problems.append(f"{name} calls {node.func.id}()")
    return problems


def layer(name: str) -> int | None:
    top = name.split(".")[0]
    return LAYERS.index(top) if top in LAYERS else None


def dependency_violations(package: Path) -> list[str]:
    found = dict(modules(package))
    known = set(found)
    problems: list[str] = []
    for name, path in found.items():
        _, ours = imports(path, package.name)
        deps = _existing(ours, known) - {""}
        top = name.split(".")[0]
        for dep in sorted(deps):
            dep_top = dep.split(".")[0]
            if dep_top == top:
                continue
            if top in LEAVES:
                problems.append(f"{name} (a leaf) imports {dep}")
            elif top == "sandbox":
                if dep != "errors" and dep not in PURE_GITHUB:
                    problems.append(f"sandbox module {name} imports {dep}")
            elif dep_top in LEAVES:
                continue
            elif dep_top == "sandbox":
                if top not in {"commands", "cli"}:
                    problems.append(f"{name} imports the sandbox ({dep})")
            elif layer(name) is not None and layer(dep) is not None and layer(dep) > layer(name):  # type: ignore[operator]
                problems.append(f"{name} ({top}) imports {dep} ({dep_top}), which sits above it")
    return problems


def test_pure_folders_import_no_io() -> None:
    assert purity_violations(PACKAGE) == []


def test_dependencies_point_one_way() -> None:
    assert dependency_violations(PACKAGE) == []


def test_the_package_root_is_short() -> None:
    """At most 12 entries: the three modules every stage may use or that start the program,
    one folder per stage, and nothing else."""
    entries = sorted(p.name for p in PACKAGE.iterdir() if p.name != "__pycache__")
    assert len(entries) <= 12, entries
    assert entries == ["__init__.py", "__main__.py", "cli.py", "commands", "corpus", "errors.py", "github", "report",
                       "review", "run", "sandbox", "score"]


def test_no_module_is_over_600_lines() -> None:
    long = {name: n for name, path in modules(PACKAGE)
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > 600}
    assert long == {}


# --- the rules can fail -------------------------------------------------------------

def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    package = tmp_path / "redline_canary"
    for rel, text in files.items():
        target = package / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    return package


@pytest.mark.parametrize(("rel", "text", "expected"), [
    ("score/new_module.py", "import socket\n", "score.new_module imports socket"),
    ("report/fresh.py", "from pathlib import Path\n", "report.fresh imports pathlib"),
    ("corpus/reader.py", "def f():\n    return open('x')\n", "corpus.reader calls open()"),
    ("review/lazy.py", "def f():\n    import httpx\n", "review.lazy imports httpx"),
    ("score/edge_user.py", "from redline_canary.run import history\n", "score.edge_user imports the edge module"),
])
def test_purity_check_catches_a_new_impure_module(tmp_path: Path, rel: str, text: str, expected: str) -> None:
    package = _tree(tmp_path, {"__init__.py": "", "run/__init__.py": "", "run/history.py": "import os\n",
                               rel: text})
    assert any(p.startswith(expected) for p in purity_violations(package)), purity_violations(package)


@pytest.mark.parametrize(("rel", "text", "expected"), [
    ("corpus/model.py", "from redline_canary.score import record\n", "corpus.model (corpus) imports score.record"),
    ("errors.py", "from redline_canary.report.text import inert_line\n", "errors (a leaf) imports report.text"),
    ("sandbox/api.py", "from redline_canary.run import cycle\n", "sandbox module sandbox.api imports run.cycle"),
    ("github/client.py", "from redline_canary.run.cycle import X\n", "github.client (github) imports run.cycle"),
])
def test_dependency_check_catches_an_edge_pointing_up(tmp_path: Path, rel: str, text: str, expected: str) -> None:
    package = _tree(tmp_path, {"__init__.py": "", "score/__init__.py": "", "score/record.py": "",
                               "report/__init__.py": "", "report/text.py": "", "run/__init__.py": "",
                               "run/cycle.py": "", "corpus/__init__.py": "", "sandbox/__init__.py": "",
                               "github/__init__.py": "", rel: text})
    assert any(p.startswith(expected) for p in dependency_violations(package)), dependency_violations(package)
