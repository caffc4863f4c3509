"""Blind publication hides the answer key and maps every anchor exactly (docs/publication.md)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from redline_canary.corpus.markers import parse_file
from redline_canary.corpus.model import publish
from redline_canary.corpus.publication import publish_file, publish_markers, pushed_path
from redline_canary.run.corpus_files import load_corpus

SEEDED = (
    "# SEED corpus: DO NOT MERGE\n"
    "# BLOCKER examples below\n"
    "import os\n"
    "# SEED 1 [BLOCKER] (core/command-injection) shell built from input\n"
    "os.system('ls ' + d)\n"
    "x = eval(s)  # SEED 2 [BLOCKER] (core/code-injection) eval of request text\n"
    "y = 1\n"
    "# BORDERLINE 1 could be fine\n"
    "z = y / 3\n"
)


def test_blind_strips_markers_header_and_maps_anchors() -> None:
    parsed = parse_file("app.py", SEEDED)
    pub = publish_file(parsed, "blind", "canary", trailing_newline=True)
    assert pub.path == "canary/app.py"
    assert pub.text == "import os\nos.system('ls ' + d)\nx = eval(s)\ny = 1\nz = y / 3\n"
    pushed = pub.text.splitlines()
    for pm in publish_markers(parsed, pub):
        # the pushed line holds exactly the corpus anchor's code, minus any marker comment
        corpus_line = SEEDED.splitlines()[pm.marker.anchor_line - 1]
        assert pushed[pm.line - 1] == corpus_line.split("  # SEED")[0]
    assert [(m.marker.n, m.line) for m in publish_markers(parsed, pub)] == [(1, 2), (2, 3), (1, 5)]


def test_marked_keeps_the_file_byte_for_byte() -> None:
    parsed = parse_file("app.py", SEEDED)
    pub = publish_file(parsed, "marked", "", trailing_newline=True)
    assert pub.text == SEEDED and pub.path == "app.py"
    assert [m.line for m in publish_markers(parsed, pub)] == [5, 6, 9]


def test_unknown_mode_is_rejected() -> None:
    with pytest.raises(ValueError, match="unknown mode"):
        publish_file(parse_file("a.py", "x=1\n"), "loud", "", True)


@pytest.mark.parametrize(("prefix", "expected"), [
    ("", "web/App.tsx"), ("canary", "canary/web/App.tsx"), ("/canary/", "canary/web/App.tsx"),
    ("a/b", "a/b/web/App.tsx"),
])
def test_pushed_path(prefix: str, expected: str) -> None:
    assert pushed_path(prefix, "web/App.tsx") == expected


def test_blind_corpus_leaks_no_marker_text(mini_corpus: Path) -> None:
    corpus = load_corpus(mini_corpus)
    for kind in ("seeded", "clean"):
        files, markers = publish(corpus, "mini", kind, "blind", "p")
        for f in files:
            assert not re.search(r"SEED|BORDERLINE|DO NOT MERGE", f.text), f.path
        for m in markers:
            text = next(f.text for f in files if f.path == m.path).splitlines()
            assert text[m.line - 1].strip(), "anchor must land on code"
