"""The shipped corpus (issue 3): lint-clean, big enough, parseable, twin rule, no real secrets."""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from redline_canary.corpus.model import lint, summary, view
from redline_canary.corpus.secrets import PROVIDER_PATTERNS
from redline_canary.run.corpus_files import load_corpus
from tests.helpers.clirun import ROOT, cli_main

SEEDS = ROOT / "seeds"
STACKS = ["angular", "csharp", "dom", "express", "go", "java", "javascript", "kotlin",
          "microservices", "nextjs", "nodejs", "python", "react", "react-native", "svelte",
          "swift", "terraform", "vue"]
ALL_FILES = sorted(p for p in SEEDS.glob("*/*/**/*") if p.is_file() and p.name != "README.md")


def files_with(*suffixes: str) -> list[Path]:
    return [p for p in ALL_FILES if p.name.endswith(suffixes)]


def test_corpus_lint_passes_on_the_whole_corpus() -> None:
    res = cli_main("corpus", "lint", "--corpus", str(SEEDS))
    assert res.returncode == 0, res.stdout + res.stderr


def test_every_stack_meets_the_size_rules() -> None:
    corpus = load_corpus(SEEDS)
    assert corpus.stacks == sorted(STACKS)
    total = 0
    structural_stacks = 0
    for stack in STACKS:
        s = summary(corpus, stack)
        assert 2 <= s["files"] <= 6, stack
        assert s["markers"] >= 12, stack
        assert s["by_severity"]["BLOCKER"] >= 3, stack
        assert sum(1 for v in s["by_severity"].values() if v) >= 3, stack
        total += s["markers"]
        structural_stacks += s["structural"] > 0
    assert total >= 220
    assert structural_stacks >= 3


def test_twin_rule_same_file_set_and_every_window_differs() -> None:
    corpus = load_corpus(SEEDS)
    for stack in STACKS:
        assert set(corpus.files[stack]["seeded"]) == set(corpus.files[stack]["clean"]), stack
        assert not any(m.kind == "seed" for m in view(corpus, stack, "clean").markers), stack
    twin = [p for p in lint(corpus) if "clean twin" in p.message]
    assert twin == []


def test_every_cited_rule_is_in_the_catalog_with_title_and_severity() -> None:
    rules = yaml.safe_load((SEEDS / "rules.yml").read_text())["rules"]
    corpus = load_corpus(SEEDS)
    cited = {m.rule for s in STACKS for m in view(corpus, s, "seeded").seeds}
    assert cited <= set(rules)
    for rule_id in cited:
        assert rules[rule_id]["title"] and rules[rule_id]["severity"]


def test_no_string_matches_a_provider_token_pattern() -> None:
    hits = []
    for path in ALL_FILES:
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            hits += [f"{path}:{number}: {name}" for name, pat in PROVIDER_PATTERNS.items()
                     if pat.search(line)]
    assert hits == []


def test_provider_patterns_catch_the_real_shapes() -> None:
    samples = {
        "AWS access key id": "AKIA" + "ABCDEFGHIJKLMNOP",
        "GitHub token": "ghp_" + "x" * 36,
        "Slack token": "xoxb-" + "1234567890-abcdef",
        "Stripe key": "sk_live_" + "a" * 24,
        "Google API key": "AIza" + "b" * 35,
        "private key block": "-----BEGIN RSA " + "PRIVATE KEY-----",
    }
    for name, sample in samples.items():
        assert PROVIDER_PATTERNS[name].search(sample), name


def test_readme_counts_table_is_what_corpus_show_prints() -> None:
    readme = (SEEDS / "README.md").read_text()
    table = cli_main("corpus", "show", "--corpus", str(SEEDS)).stdout.strip()
    assert table in readme, "regenerate with: redline-canary corpus show > table (see seeds/README.md)"


# --- syntax: each language's own parser ----------------------------------------------
def test_python_files_parse() -> None:
    for path in files_with(".py"):
        ast.parse(path.read_text(), filename=str(path))


def test_yaml_files_parse() -> None:
    for path in files_with(".yml", ".yaml"):
        list(yaml.safe_load_all(path.read_text()))


def test_hcl_files_parse() -> None:
    hcl2 = pytest.importorskip("hcl2", reason="python-hcl2 not installed")
    for path in files_with(".tf"):
        with path.open() as fh:
            hcl2.load(fh)


NODE_PARSER = ROOT / ".ci" / "parsers" / "parse.mjs"


def test_web_files_parse_with_npm_parsers() -> None:
    if not shutil.which("node") or not (NODE_PARSER.parent / "node_modules").is_dir():
        pytest.skip("npm parsers not installed (run .ci/install-checkers)")
    files = files_with(".js", ".mjs", ".jsx", ".ts", ".tsx", ".vue", ".svelte", ".html")
    res = subprocess.run(["node", str(NODE_PARSER), *map(str, files)], capture_output=True,
                         text=True, check=False, timeout=300)
    assert res.returncode == 0, "\n".join(ln for ln in res.stdout.splitlines() if ln.startswith("error"))


def test_java_files_parse_with_javac() -> None:
    if not shutil.which("java"):
        pytest.skip("no JDK on this machine")
    res = subprocess.run(["java", str(ROOT / ".ci" / "ParseJava.java"), *map(str, files_with(".java"))],
                         capture_output=True, text=True, check=False, timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr


def test_go_files_parse_with_gofmt() -> None:
    if not shutil.which("gofmt"):
        pytest.skip("gofmt not installed (Debian golang-go)")
    for path in files_with(".go"):
        res = subprocess.run(["gofmt", "-e", "-l", str(path)], capture_output=True, text=True, check=False)
        assert res.returncode == 0, res.stderr


@pytest.mark.parametrize(("suffix", "module"), [
    (".kt", "tree_sitter_kotlin"), (".swift", "tree_sitter_swift"), (".cs", "tree_sitter_c_sharp"),
    (".go", "tree_sitter_go"),
])
def test_files_parse_with_tree_sitter(suffix: str, module: str) -> None:
    ts = pytest.importorskip("tree_sitter", reason="tree-sitter not installed")
    grammar = pytest.importorskip(module, reason=f"{module} not installed")
    parser = ts.Parser(ts.Language(grammar.language()))
    bad = []
    for path in files_with(suffix):
        root = parser.parse(path.read_bytes()).root_node
        if root.has_error:
            bad.append(f"{path}: {_first_error(root)}")
    assert bad == []


def _first_error(node: object) -> str:
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == "ERROR" or n.is_missing:  # type: ignore[attr-defined]
            row = n.start_point[0] + 1  # type: ignore[attr-defined]
            return f"line {row}: {n.type}"
        stack.extend(reversed(n.children))  # type: ignore[attr-defined]
    return "unknown"


def test_corpus_show_json_lists_all_stacks() -> None:
    data = json.loads(cli_main("corpus", "show", "--json").stdout)
    assert sorted(data["stacks"]) == sorted(STACKS)


def test_the_readmes_corpus_size_is_the_corpus() -> None:
    """The README's "(18 stacks, 316 markers)" is a number the code gives, not a memory."""
    import re

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    said = re.search(r"\((\d+) stacks, (\d+) markers\)", " ".join(text.split()))
    assert said, "the README no longer states the corpus size"
    shown = json.loads(cli_main("corpus", "show", "--json", "--corpus", str(SEEDS)).stdout)
    stacks = shown.get("stacks", shown)
    assert (int(said[1]), int(said[2])) == (len(stacks), sum(s["markers"] for s in stacks.values()))
