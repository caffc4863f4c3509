"""One exit-code table (``errors.py``) and one rule; every copy a user reads says the same.

The README's two tables, the action's ``exit-code`` and ``outcome`` outputs and the demo's
closing line are held to ``EXIT_MEANINGS`` and ``OUTCOME_WORDS`` here, so a code that
changes meaning cannot leave an old explanation behind.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
import yaml

from redline_canary.errors import (
    EXIT_BAD_INPUT,
    EXIT_GATE_FAILED,
    EXIT_INFRA,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_MEANINGS,
    EXIT_PASS,
    EXIT_SILENT,
    OUTCOME_WORDS,
    TargetEnd,
    combine_exit_codes,
    exit_code_legend,
    run_exit_code,
)

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _table_after(heading: str) -> dict[int, list[str]]:
    """code -> cells of the first Markdown table after ``heading``."""
    rest = README[README.index(heading):]
    rows: dict[int, list[str]] = {}
    for line in rest.splitlines()[1:]:
        if rows and not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        if cells and cells[0].isdigit():
            rows[int(cells[0])] = cells[1:]
    return rows


@pytest.mark.parametrize("heading", ["## Exit codes", "**What the colours mean.**"])
def test_every_readme_table_lists_every_code_with_its_meaning(heading: str) -> None:
    rows = _table_after(heading)
    assert set(rows) == set(EXIT_MEANINGS), heading
    for code, cells in rows.items():
        assert cells[-1].lower().startswith(EXIT_MEANINGS[code].lower()), (heading, code, cells[-1])


def test_the_actions_outputs_are_the_table() -> None:
    outputs = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))["outputs"]
    assert exit_code_legend() in outputs["exit-code"]["description"]
    described = outputs["outcome"]["description"]
    assert all(re.search(rf"\b{re.escape(word)}\b", described) for word in OUTCOME_WORDS.values()), described


def test_the_demo_prints_the_meaning_from_the_table() -> None:
    tree = ast.parse((ROOT / "redline_canary" / "commands" / "demo.py").read_text(encoding="utf-8"))
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    literals = " ".join(n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str))
    assert "EXIT_MEANINGS" in names
    assert not re.search(r"\b0 pass\b|\b1 gate failed\b", literals), "a hand-made copy of the meanings"


def test_priority_is_internal_interrupted_bad_input_infra_silent_gate_pass() -> None:
    order = [EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_BAD_INPUT, EXIT_INFRA, EXIT_SILENT, EXIT_GATE_FAILED, EXIT_PASS]
    for i, code in enumerate(order):
        assert combine_exit_codes(order[i:]) == code
        assert combine_exit_codes(list(reversed(order[i:]))) == code
    assert combine_exit_codes([]) == EXIT_PASS


@pytest.mark.parametrize(("ends", "cancelled", "expected"), [
    ([TargetEnd((EXIT_PASS,)), TargetEnd((EXIT_GATE_FAILED,))], False, EXIT_GATE_FAILED),
    ([TargetEnd((EXIT_PASS,), leftovers=True)], False, EXIT_INFRA),  # something left: never 0
    ([TargetEnd((EXIT_GATE_FAILED,), leftovers=True)], False, EXIT_INFRA),  # ... nor 1
    ([TargetEnd((EXIT_SILENT,))], True, EXIT_INTERRUPTED),
    ([TargetEnd((EXIT_INTERNAL,))], True, EXIT_INTERNAL),  # a bug outranks an interruption
    ([TargetEnd((EXIT_PASS,), leftovers=True)], True, EXIT_INFRA),
    ([TargetEnd((EXIT_BAD_INPUT,), leftovers=True)], False, EXIT_BAD_INPUT),
    ([], False, EXIT_PASS),
])
def test_the_run_code_rule(ends: list[TargetEnd], cancelled: bool, expected: int) -> None:
    assert run_exit_code(ends, cancelled=cancelled) == expected
