"""The shipped variants (docs/corpus.md#variants): enough of them, every one lints, and every
renamed file still parses with its language's own parser (the checkers of test_corpus.py)."""

from __future__ import annotations

import ast
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from redline_canary.corpus.model import lint, publish
from redline_canary.corpus.publication import PublishedMarker
from redline_canary.corpus.variants import (
    apply_variant,
    lint_variants,
    parse_variants,
    publish_variant,
    rename_path,
)
from redline_canary.run.corpus_files import load_corpus
from tests.helpers.clirun import ROOT

CORPUS = load_corpus(ROOT / "seeds")
WITH_VARIANTS = sorted(s for s in CORPUS.stacks if parse_variants(CORPUS, s)[0])
NODE_PARSER = ROOT / ".ci" / "parsers" / "parse.mjs"
WEB = (".js", ".mjs", ".jsx", ".ts", ".tsx", ".vue", ".svelte", ".html")


def test_at_least_six_stacks_carry_variants_and_the_python_stack_does_not() -> None:
    # The python stack's captures drive the README's example output: it stays canonical.
    assert len(WITH_VARIANTS) >= 6 and "python" not in WITH_VARIANTS


@pytest.mark.parametrize("stack", WITH_VARIANTS)
def test_every_variant_lints_and_keeps_the_answer_key(stack: str) -> None:
    assert lint_variants(CORPUS, stack) == []
    for variant in parse_variants(CORPUS, stack)[0].values():
        for kind in ("seeded", "clean"):
            files, markers = publish_variant(CORPUS, stack, kind, "blind", "", variant)
            base_files, base_markers = publish(CORPUS, stack, kind, "blind", "")
            def key(ms: list[PublishedMarker]) -> list[tuple[str, int, int, int]]:
                return sorted((m.marker.kind, m.marker.n, m.line, m.end_line) for m in ms)

            assert key(markers) == key(base_markers)
            lines = {rename_path(f.corpus_path, variant): f.text.count("\n") for f in base_files}
            assert {f.corpus_path: f.text.count("\n") for f in files} == lines
            assert {f.text for f in files} & {f.text for f in base_files} != {f.text for f in files}, (
                f"{variant.id} renames nothing")


def test_the_whole_corpus_still_lints() -> None:
    assert lint(CORPUS) == []


def _write_variants(tmp_path: Path) -> list[Path]:
    """Every variant of every stack, both kinds, as files on disk."""
    out: list[Path] = []
    for stack in WITH_VARIANTS:
        for ident, variant in parse_variants(CORPUS, stack)[0].items():
            renamed = apply_variant(CORPUS, stack, variant)
            for kind, entries in renamed.files[stack].items():
                for rel, data in entries.items():
                    path = tmp_path / stack / ident / kind / rel
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_bytes(data)
                    out.append(path)
    return out


def test_renamed_files_parse_with_their_languages_parsers(tmp_path: Path) -> None:
    files = _write_variants(tmp_path)
    checked: set[str] = set()
    for path in files:
        if path.suffix == ".py":
            ast.parse(path.read_text(), filename=str(path))
            checked.add(".py")
        elif path.suffix in (".yml", ".yaml"):
            list(yaml.safe_load_all(path.read_text()))
            checked.add(".yaml")
    web = [p for p in files if p.name.endswith(WEB)]
    if web and shutil.which("node") and (NODE_PARSER.parent / "node_modules").is_dir():
        res = subprocess.run(["node", str(NODE_PARSER), *map(str, web)], capture_output=True, text=True,
                             check=False, timeout=300)
        assert res.returncode == 0, "\n".join(ln for ln in res.stdout.splitlines() if ln.startswith("error"))
        checked.add("web")
    java = [p for p in files if p.suffix == ".java"]
    if java and shutil.which("java"):
        res = subprocess.run(["java", str(ROOT / ".ci" / "ParseJava.java"), *map(str, java)],
                             capture_output=True, text=True, check=False, timeout=300)
        assert res.returncode == 0, res.stdout + res.stderr
        checked.add(".java")
    go = [p for p in files if p.suffix == ".go"]
    if go and shutil.which("gofmt"):
        for path in go:
            res = subprocess.run(["gofmt", "-e", "-l", str(path)], capture_output=True, text=True, check=False)
            assert res.returncode == 0, res.stderr
        checked.add(".go")
    if not checked:
        pytest.skip("no language parser installed (run .ci/install-checkers)")
