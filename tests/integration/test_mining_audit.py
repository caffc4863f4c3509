"""The blind audit of a mined stack, replayed (tests/data/mining/audit/README.md).

Seven fresh reviewers read blind exports of the stack mined from tqdm's eval fix. Scored
through the CLI against the audited stack: every seeded review finds SEED 1, and no clean
review counts a false positive, because the twin is claimed clean where the fix wrote it
(docs/corpus.md#fixed-places). Without its FIXED line the same reviews turn the clean PR
red for three of four healthy reviewers: real objections to tqdm's unchanged code.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.helpers.clirun import cli_main

AUDIT = Path(__file__).resolve().parents[1] / "data" / "mining" / "audit"
SEEDED = sorted(p.name for p in AUDIT.glob("seeded-*.json"))
CLEAN = sorted(p.name for p in AUDIT.glob("clean-*.json"))


def _score(review: str, kind: str, corpus: Path) -> dict[str, object]:
    res = cli_main("score", "--findings", str(AUDIT / review), "--corpus", str(corpus), "--stack", "tqdm-cli",
                   "--kind", kind, "--reviewer-name", review.removesuffix(".json"), "--json")
    assert res.returncode in (0, 1), res.stderr
    record: dict[str, object] = json.loads(res.stdout)
    return record


def test_the_audit_kept_seven_reviews() -> None:
    assert len(SEEDED) == 3 and len(CLEAN) == 4


@pytest.mark.parametrize("review", SEEDED)
def test_every_seeded_review_finds_the_mined_defect(review: str) -> None:
    record = _score(review, "seeded", AUDIT / "corpus")
    assert record["caught"] == 1 and record["missed"] == 0
    assert record["gate"]["passed"]  # type: ignore[index]


@pytest.mark.parametrize("review", CLEAN)
def test_no_clean_review_counts_a_false_positive_outside_the_fix(review: str) -> None:
    record = _score(review, "clean", AUDIT / "corpus")
    assert record["clean_false_positives"] == 0, record
    assert isinstance(record["clean_findings_outside_fix"], int) and record["clean_findings_outside_fix"] >= 4
    assert record["gate"]["passed"]  # type: ignore[index]


def test_without_its_fixed_line_the_twin_is_red_for_healthy_reviewers(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    shutil.copytree(AUDIT / "corpus", corpus)
    twin = corpus / "clean" / "tqdm-cli" / "tqdm" / "cli.py"
    text = twin.read_text(encoding="utf-8")
    assert "# FIXED 1 " in text
    twin.write_text("".join(ln for ln in text.splitlines(keepends=True) if "# FIXED 1 " not in ln), encoding="utf-8")
    counted = {review: _score(review, "clean", corpus)["clean_false_positives"] for review in CLEAN}
    assert sum(1 for n in counted.values() if isinstance(n, int) and n > 0) >= 3, counted
