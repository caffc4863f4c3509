"""The pure core imports no network, clock, filesystem or subprocess module (DESIGN §2)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "redline_canary"
CORE = [
    "severity", "markers", "publication", "comments", "findings", "matching", "scoring",
    "secrets", "corpus_model", "capture", "evaluate", "render", "baseline",
    "workflow_commands", "actions_outputs", "actions_annotations", "actions_summary", "markdown_fit",
    "polling", "github_errors", "verdict", "defaults", "acknowledgements", "findings_import", "audit", "extraction",
    "profiles/__init__", "profiles/base", "profiles/redline", "profiles/dialect", "profiles/notices",
    "profiles/citations", "profiles/spec",
    "profiles/copilot", "profiles/coderabbit", "profiles/codex", "profiles/gemini",
    "profiles/claude", "profiles/bugbot", "profiles/greptile", "profiles/sourcery",
    "profiles/qodo", "profiles/cubic", "report_model", "report_build", "report_stats", "report_markdown",
    "regression_issue", "redline_scale", "redline_import", "legacy_model", "record", "rule_ids", "doctor_checks",
    "recordings",
]
FORBIDDEN = {
    "os", "io", "pathlib", "shutil", "tempfile", "glob", "socket", "ssl", "select", "http",
    "urllib", "httpx", "requests", "github", "subprocess", "multiprocessing", "threading",
    "asyncio", "time", "datetime", "signal", "fcntl", "sqlite3", "jsonlines", "yaml",
    "tenacity", "random",
}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
            if node.module.startswith("redline_canary."):
                names.add(node.module)
    return names


@pytest.mark.parametrize("module", CORE)
def test_core_module_imports_no_io(module: str) -> None:
    imported = _imports(PACKAGE / f"{module}.py")
    assert not imported & FORBIDDEN, f"{module} imports I/O: {imported & FORBIDDEN}"
    core_modules = {f"redline_canary.{m.replace('/', '.').removesuffix('.__init__')}" for m in CORE}
    ours = {n for n in imported if n.startswith("redline_canary.")}
    assert ours <= core_modules, f"{module} depends on edge modules: {ours - core_modules}"


def test_core_never_calls_open() -> None:
    for module in CORE:
        tree = ast.parse((PACKAGE / f"{module}.py").read_text())
        calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)
                 and isinstance(n.func, ast.Name) and n.func.id in {"open", "print", "input"}]
        assert not calls, f"{module} calls {[c.func.id for c in calls]}"  # type: ignore[attr-defined]
