"""The benchmarks CI runs (``.ci/run``: ``python benchmarks/bench_*.py --quick``), read off the tree.

Every ``benchmarks/bench_*.py`` takes ``--quick`` (a small run of the same measurement)
and lets an exception end the process with a non-zero status: no handler may catch
``Exception`` (or everything) and carry on. Read with ``ast``, so nothing is imported or run.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").exists())
BENCHMARKS = sorted((ROOT / "benchmarks").glob("bench_*.py"))


def _calls(tree: ast.AST, method: str) -> list[ast.Call]:
    return [node for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == method]


def quick_flag(tree: ast.AST) -> bool:
    """Whether an ``add_argument("--quick", action="store_true")`` is made and arguments parsed."""
    flags = [call for call in _calls(tree, "add_argument")
             if call.args and isinstance(call.args[0], ast.Constant) and call.args[0].value == "--quick"
             and any(k.arg == "action" and isinstance(k.value, ast.Constant) and k.value.value == "store_true"
                     for k in call.keywords)]
    return bool(flags) and bool(_calls(tree, "parse_args"))


def blanket_handlers(tree: ast.AST) -> list[int]:
    """Lines of ``except:``, ``except Exception`` or ``except BaseException`` (alone or in a tuple)."""
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ExceptHandler):
            continue
        caught = node.type.elts if isinstance(node.type, ast.Tuple) else [node.type]
        if any(t is None or (isinstance(t, ast.Name) and t.id in ("Exception", "BaseException")) for t in caught):
            out.append(node.lineno)
    return out


def test_there_are_benchmarks() -> None:
    assert len(BENCHMARKS) >= 4, BENCHMARKS


@pytest.mark.parametrize("path", BENCHMARKS, ids=[p.name for p in BENCHMARKS])
def test_every_benchmark_has_a_quick_mode(path: Path) -> None:
    assert quick_flag(ast.parse(path.read_text(encoding="utf-8"))), f"{path.name}: no --quick flag"


@pytest.mark.parametrize("path", BENCHMARKS, ids=[p.name for p in BENCHMARKS])
def test_no_benchmark_swallows_an_exception(path: Path) -> None:
    assert blanket_handlers(ast.parse(path.read_text(encoding="utf-8"))) == []


@pytest.mark.parametrize(("source", "quick", "blanket"), [
    ("import argparse\np = argparse.ArgumentParser()\np.add_argument('--quick', action='store_true')\n"
     "p.parse_args()\n", True, []),
    ("p.add_argument('--quick', action='store_true')\n", False, []),  # never parsed
    ("p.add_argument('--fast', action='store_true')\np.parse_args()\n", False, []),
    ("try:\n    f()\nexcept Exception:\n    pass\n", False, [3]),
    ("try:\n    f()\nexcept (ImportError, BaseException):\n    pass\n", False, [3]),
    ("try:\n    f()\nexcept:\n    pass\n", False, [3]),
    ("try:\n    f()\nexcept ImportError:\n    pass\n", False, []),
])
def test_the_checks_fail_when_they_should(source: str, quick: bool, blanket: list[int]) -> None:
    tree = ast.parse(source)
    assert (quick_flag(tree), blanket_handlers(tree)) == (quick, blanket)
