"""Every code block of the README is accounted for: run by the suite, checked by a named
test, or marked as not run with the reason on the page (tests/helpers/readme.py). A new
block without a marker fails here, in the unit tier, before anyone has to run it."""

from __future__ import annotations

import re

import pytest

from tests.helpers.readme import ROOT, SHELL, blocks, commands, output_matches

KEYS = {"run", "skip", "checked-by", "exits", "files", "stub", "output", "note"}
STUBS = {"pip", "pytest"}
RUNNER = ROOT / "tests" / "integration" / "test_readme.py"


def test_every_block_is_run_checked_or_skipped_with_a_reason() -> None:
    found = blocks()
    assert len(found) > 10  # the parser sees the README's blocks, not none
    runner = RUNNER.read_text(encoding="utf-8")
    problems = []
    for b in found:
        d = b.directive or {}
        if b.is_output:
            continue
        if b.action == "none":
            problems.append(f"{b.id}: no <!-- readme-test: ... --> marker before the block")
            continue
        if set(d) - KEYS:
            problems.append(f"{b.id}: unknown keys {sorted(set(d) - KEYS)}")
        if b.action == "skip" and len(d["skip"].strip()) < 15:
            problems.append(f"{b.id}: skip without a reason a reader can check")
        if b.action == "checked-by" and f"def test_{d['checked-by']}(" not in runner:
            problems.append(f"{b.id}: checked-by={d['checked-by']}, but test_readme.py has no such test")
        if b.lang in (*SHELL, "python") and b.action == "checked-by":
            problems.append(f"{b.id}: a {b.lang} block is run or skipped, not checked by a side test")
        if b.action == "run":
            if b.lang not in SHELL:
                problems.append(f"{b.id}: only shell blocks are run, this one is {b.lang or 'untagged'}")
            if len(b.exits) != len(commands(b.text)):
                problems.append(f"{b.id}: exits= names {len(b.exits)} status(es) for {len(commands(b.text))} commands")
            missing = [src for src, _ in b.files() if not (ROOT / src).exists()]
            if missing:
                problems.append(f"{b.id}: files= names what the checkout lacks: {missing}")
            if set(b.stubs) - STUBS:
                problems.append(f"{b.id}: no stub for {sorted(set(b.stubs) - STUBS)}")
            if "output" in d and b.output is None:
                problems.append(f"{b.id}: output, but no block follows it")
    assert problems == []


def test_every_shell_block_runs_unless_it_needs_what_the_suite_lacks() -> None:
    shell = [b for b in blocks() if b.lang in SHELL and not b.is_output]
    run = [b for b in shell if b.action == "run"]
    assert len(run) >= 5, [b.id for b in run]
    for b in shell:
        if b.action == "skip":  # the reason names what is missing here
            assert re.search(r"GitHub|suite|Actions", (b.directive or {})["skip"]), b.id


def test_a_heredoc_and_continuations_are_one_command() -> None:
    script = "# a comment\nredline-canary a \\\n    --b c\ncat > f <<'END'\n[1,\n 2]\nEND\n\necho done\n"
    assert commands(script) == ["redline-canary a \\\n    --b c", "cat > f <<'END'\n[1,\n 2]\nEND", "echo done"]


@pytest.mark.parametrize(("shown", "printed", "same"), [
    ("a\nb\n", "a\nb\n", True),
    ("a\nb\n", "a\nc\n", False),
    ("a\n...\nd\n", "a\nb\nc\nd\n", True),  # a line of ... stands for the lines left out
    ("a\n...\nd\n", "a\nd\n", True),
    ("a\n...\nd\n", "a\nb\n", False),
    ("a long li...\n", "a long line, cut\n", True),  # a line cut with ... keeps its start
    ("a long li...\n", "another line\n", False),
    ("a\n", "a\nextra\n", False),  # nothing printed beyond what is shown, unless elided
])
def test_shown_output_matching(shown: str, printed: str, same: bool) -> None:
    assert output_matches(shown, printed) is same
