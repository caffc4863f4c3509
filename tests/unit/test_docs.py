"""The product explains itself from its own docs/: every citation in code, help texts, the
README, the action and the corpus points at a file and section that exist, and nothing
cites a document the repository does not hold."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CITING = [*sorted((ROOT / "redline_canary").rglob("*.py")), ROOT / "README.md", ROOT / "action.yml",
          *sorted((ROOT / "workflows").glob("*.yml")), *sorted((ROOT / "seeds").glob("*.md")),
          ROOT / "seeds" / "audit" / "README.md", *sorted((ROOT / "docs").glob("*.md")),
          *sorted((ROOT / "benchmarks").glob("*.py"))]
CITATION = re.compile(r"docs/([a-z-]+\.md)(?:#([a-z0-9-]+))?")
# Link targets written relative to docs/ inside docs/ itself: (file.md)(#anchor).
RELATIVE = re.compile(r"\]\(([a-z-]+\.md)(?:#([a-z0-9-]+))?\)")


def slug(heading: str) -> str:
    """GitHub's anchor for a Markdown heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(doc: Path) -> set[str]:
    return {slug(m.group(1)) for m in re.finditer(r"^#+\s+(.*)$", doc.read_text(encoding="utf-8"), re.M)}


def citations() -> list[tuple[str, str, str | None]]:
    found = []
    for path in CITING:
        text = path.read_text(encoding="utf-8")
        for m in CITATION.finditer(text):
            found.append((str(path.relative_to(ROOT)), m.group(1), m.group(2)))
        if path.parent.name == "docs":
            for m in RELATIVE.finditer(text):
                found.append((str(path.relative_to(ROOT)), m.group(1), m.group(2)))
    return found


def test_there_are_citations_to_check() -> None:
    assert len(citations()) > 50


@pytest.mark.parametrize(("where", "doc", "anchor"), citations())
def test_every_docs_citation_resolves(where: str, doc: str, anchor: str | None) -> None:
    target = ROOT / "docs" / doc
    assert target.is_file(), f"{where} cites docs/{doc}, which does not exist"
    if anchor:
        assert anchor in anchors(target), f"{where} cites docs/{doc}#{anchor}: no such heading"


@pytest.mark.parametrize("path", CITING, ids=lambda p: str(p.relative_to(ROOT)))
def test_nothing_cites_a_document_outside_the_repository(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert not re.search(r"DESIGN §|DESIGN\.md|\.\./shared|shared/reference", text), path


def test_the_checks_can_fail(tmp_path: Path) -> None:
    doc = tmp_path / "x.md"
    doc.write_text("# Topics and sites\n## Exit codes\n")
    assert anchors(doc) == {"topics-and-sites", "exit-codes"}
    assert "missing" not in anchors(doc)
