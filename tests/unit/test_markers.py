"""Marker grammar and anchors across every stack's comment syntax (docs/corpus.md)."""

from __future__ import annotations

import pytest

from redline_canary.corpus.markers import parse_file
from redline_canary.corpus.severity import Severity

M = "SEED 1 [BLOCKER] (core/sql-injection) query built from input"

# (file name, text with the marker on line 2 and code on line 3) for each comment form.
SYNTAXES = [
    ("app.py", f"import os\n# {M}\nrun(q)\n"),
    ("app.js", f"const a = 1;\n// {M}\nrun(q);\n"),
    ("app.ts", f"const a = 1;\n/* {M} */\nrun(q);\n"),
    ("View.jsx", f"<div>\n  {{/* {M} */}}\n  <p>{{q}}</p>\n"),
    ("View.tsx", f"<div>\n  {{/* {M} */}}\n  <p>{{q}}</p>\n"),
    ("main.go", f"package main\n// {M}\nfunc f() {{}}\n"),
    ("App.java", f"class A {{\n  // {M}\n  void f() {{}}\n"),
    ("App.kt", f"class A {{\n  // {M}\n  fun f() {{}}\n"),
    ("App.swift", f"struct A {{\n  // {M}\n  func f() {{}}\n"),
    ("App.cs", f"class A {{\n  // {M}\n  void F() {{}}\n"),
    ("page.html", f"<body>\n<!-- {M} -->\n<div>{{{{q}}}}</div>\n"),
    ("App.vue", f"<template>\n  <!-- {M} -->\n  <div v-html=\"q\"></div>\n"),
    ("App.svelte", f"<main>\n  <!-- {M} -->\n  {{@html q}}\n"),
    ("x.component.html", f"<div>\n  <!-- {M} -->\n  <p [innerHTML]=\"q\"></p>\n"),
    ("main.tf", f"resource \"a\" \"b\" {{\n  # {M}\n  acl = \"public-read\"\n"),
    ("vars.tf", f"resource \"a\" \"b\" {{\n  // {M}\n  acl = \"public-read\"\n"),
    ("iam.tf", f"resource \"a\" \"b\" {{\n  /* {M} */\n  acl = \"public-read\"\n"),
    ("deploy.yaml", f"spec:\n  # {M}\n  privileged: true\n"),
    ("Dockerfile", f"FROM python:3.12\n# {M}\nENV KEY=x\n"),
    ("schema.sql", f"SELECT 1;\n-- {M}\nSELECT * FROM t;\n"),
]


@pytest.mark.parametrize(("name", "text"), SYNTAXES, ids=[s[0] for s in SYNTAXES])
def test_every_comment_syntax_yields_the_marker_anchored_below(name: str, text: str) -> None:
    parsed = parse_file(name, text)
    assert parsed.problems == []
    [m] = parsed.markers
    assert (m.n, m.severity, m.rule, m.marker_line, m.anchor_line) == (
        1, Severity.BLOCKER, "core/sql-injection", 2, 3)
    assert m.description == "query built from input"


def test_trailing_marker_anchors_its_own_line() -> None:
    parsed = parse_file("a.go", f"package a\nx := run(q) // {M}\n")
    assert parsed.markers[0].anchor_line == 2


def test_stacked_markers_share_the_next_code_line_skipping_blanks_and_comments() -> None:
    text = (
        "x = 1\n"
        f"# {M}\n"
        "# SEED 2 [MAJOR] (core/resource-leak) cursor never closed\n"
        "\n"
        "# an ordinary comment\n"
        "cur.execute(q)\n"
    )
    parsed = parse_file("a.py", text)
    assert [(m.n, m.anchor_line) for m in parsed.markers] == [(1, 6), (2, 6)]


def test_block_comment_spanning_lines_is_not_an_anchor() -> None:
    text = f"let a = 1;\n// {M}\n/* a\n   multi-line note\n*/\nrun(q);\n"
    assert parse_file("a.js", text).markers[0].anchor_line == 6


def test_structural_and_borderline_markers() -> None:
    text = (
        "def f(s):\n"
        "    # SEED 4 [MAJOR] (core/missing-case) {symbol: REFUNDED} refunds fall through\n"
        "    return LABELS.get(s)\n"
        "    # BORDERLINE 1 float money, display only\n"
        "    print(total)\n"
    )
    seed, border = parse_file("a.py", text).markers
    assert seed.symbol == "REFUNDED" and seed.structural
    assert border.kind == "borderline" and border.n == 1 and border.anchor_line == 5
    assert border.description == "float money, display only"


@pytest.mark.parametrize(("line", "message"), [
    ("# SEED 1 [HIGH] (core/x-y) d", "unknown severity 'HIGH'"),
    ("# SEED 1 [major] (core/x-y) d", "severity must be upper case"),
    ("# SEED 1 [MAJOR] (Core/X) d", "malformed rule id"),
    ("# SEED 1 [MAJOR] (core) d", "malformed rule id"),
    ("# SEED x [MAJOR] (core/x) d", "bad marker grammar"),
    ("# SEED 1 [MAJOR] (core/x)", "bad marker grammar"),
    ("# SEED 0 [MAJOR] (core/x) d", "must be positive"),
])
def test_grammar_errors_are_reported_with_file_and_line(line: str, message: str) -> None:
    parsed = parse_file("svc/a.py", f"x = 1\n{line}\ny = 2\n")
    assert parsed.markers == []
    [problem] = parsed.problems
    assert str(problem).startswith("svc/a.py:2: ") and message in problem.message


def test_marker_without_code_below_is_an_error() -> None:
    parsed = parse_file("a.py", f"x = 1\n# {M}\n\n# trailing comment\n")
    assert [str(p) for p in parsed.problems] == ["a.py:2: marker has no code below it to anchor to"]


def test_hash_in_a_javascript_string_is_not_a_comment_but_is_refused_as_a_leak() -> None:
    # Not a marker (a `#` in JavaScript opens no comment), and since blind mode would push
    # that text to the reviewer as it stands, lint refuses it (docs/corpus.md).
    parsed = parse_file("a.js", 'const s = "# SEED 1 [MAJOR] (core/x-y) not a marker";\n')
    assert parsed.markers == [] and parsed.leaks == {1}
    assert [p.line for p in parsed.problems] == [1] and "blind mode would push it" in parsed.problems[0].message


def test_a_marker_comment_may_mention_another_seed_but_code_may_not() -> None:
    ok = parse_file("a.py", "x = 1  # SEED 1 [MAJOR] (core/x-y) same flaw as SEED 2\n")
    assert [m.n for m in ok.markers] == [1] and ok.problems == [] and not ok.leaks
    bad = parse_file("a.py", 'x = "SEED 2"  # SEED 1 [MAJOR] (core/x-y) a flaw\n')
    assert [m.n for m in bad.markers] == [1] and bad.leaks == {1}
