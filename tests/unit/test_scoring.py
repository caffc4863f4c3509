"""Numbers, outcomes and gates for one PR (docs/matching.md), on the mini corpus."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from redline_canary.corpus.severity import Severity
from redline_canary.review.profiles import get_profile
from redline_canary.run.corpus_files import load_corpus
from redline_canary.score.evaluate import ScoreSettings, evaluate
from redline_canary.score.scoring import GateOptions, RecordMeta, wilson
from tests.helpers.factories import HUMAN, capture, inline, issue_comment, review

META = RecordMeta(run_id="r1", recorded_at="2026-11-30T10:00:00Z", repo="acme/canary", pr=7, tool_version="test")
# Pushed lines of the mini stack in blind mode under prefix "p": app.py SEED1@5 (BLOCKER),
# SEED2@10 (BLOCKER), SEED3@15 (MAJOR), SEED4@19 (MAJOR, symbol REFUNDED), BORDERLINE1@24;
# web/Profile.tsx SEED5@7 (BLOCKER), SEED6@8 (MINOR).
APP, TSX = "p/app.py", "p/web/Profile.tsx"


def score(mini_corpus: Path, doc: dict[str, Any], kind: str = "seeded", reviewer: str = "redline",
          **kw: Any) -> dict[str, Any]:
    settings = ScoreSettings(stack="mini", kind=kind, prefix="p", **kw)
    return evaluate(doc, load_corpus(mini_corpus), settings, get_profile(reviewer), META)[1].to_json()


def test_perfect_review(mini_corpus: Path) -> None:
    doc = capture([
        inline(APP, 5, "[BLOCKER] token in source (core/hardcoded-secrets)"),
        inline(APP, 10, "[BLOCKER] SQL injection"),
        inline(APP, 15, "[MAJOR] off by one"),
        inline(APP, 40, "[MAJOR] REFUNDED is not mapped"),
        inline(TSX, 7, "[BLOCKER] XSS"),
        inline(TSX, 8, "[MINOR] alt text"),
    ], [review("done")])
    r = score(mini_corpus, doc)
    assert (r["markers"], r["caught"], r["undercalled"], r["missed"]) == (6, 6, 0, 0)
    assert r["recall"] == 1.0 and r["blocker_recall"] == 1.0 and r["cited"] == 1
    assert r["gate"]["passed"] and r["gate"]["reasons"] == [] and r["gate"]["failing_seeds"] == []
    assert r["recall_ci95"] == [0.6097, 1.0] or tuple(r["recall_ci95"]) == (0.6097, 1.0)


def test_undercall_missed_blocker_fails_gate_and_lists_seeds(mini_corpus: Path) -> None:
    doc = capture([
        inline(APP, 5, "[MINOR] maybe move this to config"),  # undercall of a BLOCKER
        inline(APP, 10, "[BLOCKER] SQL injection"),
        inline(APP, 10, "[BLOCKER] also SQL"),  # duplicate (line 11 would catch SEED 3)
        inline(APP, 80, "[MAJOR] unrelated"),  # noise
        inline(APP, 24, "[MAJOR] float money"),  # borderline
    ])
    r = score(mini_corpus, doc)
    assert (r["caught"], r["undercalled"], r["missed"]) == (1, 1, 4)
    assert (r["duplicates"], r["borderline"], r["noise"]) == (1, 1, 1)
    assert r["blocker_recall"] == round(1 / 3, 4)
    assert r["by_severity"]["BLOCKER"] == {"markers": 3, "caught": 1, "undercalled": 1, "missed": 1}
    assert [s["n"] for s in r["missed_seeds"]] == [3, 4, 5, 6]
    assert [s["n"] for s in r["undercalled_seeds"]] == [1]
    assert r["missed_seeds"][0]["path"] == "app.py" and r["missed_seeds"][0]["line"] == 17
    assert not r["gate"]["passed"] and "blockers found 1/3" in r["gate"]["reasons"][0]  # the MINOR is below the floor


def test_human_comments_and_replies_do_not_count(mini_corpus: Path) -> None:
    first = inline(APP, 10, "[BLOCKER] SQL injection")
    doc = capture([
        first,
        inline(APP, 5, "[BLOCKER] secret", who=HUMAN),
        inline(APP, 5, "[BLOCKER] agreed, the secret", in_reply_to_id=first["id"]),
    ])
    r = score(mini_corpus, doc)
    assert r["caught"] == 1 and r["findings"] == 1


def test_outdated_comment_uses_original_line(mini_corpus: Path) -> None:
    doc = capture([inline(APP, None, "[BLOCKER] injection", original_line=10)])
    assert score(mini_corpus, doc)["caught"] == 1


def test_left_side_and_file_level_only_match_structural(mini_corpus: Path) -> None:
    doc = capture([
        inline(APP, 10, "[BLOCKER] injection", side="LEFT"),
        inline(APP, None, "[MAJOR] REFUNDED status is never labelled", subject_type="file"),
    ])
    r = score(mini_corpus, doc)
    assert [s["n"] for s in r["caught_seeds"]] == [4]
    assert r["noise"] == 1


def test_multi_line_comment(mini_corpus: Path) -> None:
    doc = capture([inline(APP, 20, "[BLOCKER] injection", start_line=8)])
    r = score(mini_corpus, doc)
    assert r["caught"] == 1 and r["duplicates"] == 0


def test_untagged_comment_is_info_for_redline(mini_corpus: Path) -> None:
    doc = capture([inline(APP, 10, "this builds SQL from input")])
    r = score(mini_corpus, doc)
    assert (r["caught"], r["undercalled"]) == (0, 1)


def test_clean_pr_floor_and_borderline(mini_corpus: Path) -> None:
    doc = capture([
        inline(APP, 10, "[MAJOR] hmm"),  # counts
        inline(APP, 12, "[MINOR] style"),  # below floor: reported only
        inline(APP, 24, "[CRITICAL] float money"),  # borderline marker in the clean twin
    ])
    r = score(mini_corpus, doc, kind="clean")
    assert r["clean_false_positives"] == 1 and r["clean_findings_below_floor"] == 1
    assert r["borderline"] == 1 and r["recall"] is None
    assert not r["gate"]["passed"]
    r2 = score(mini_corpus, doc, kind="clean", floor=Severity.CRITICAL)
    assert r2["clean_false_positives"] == 0 and r2["gate"]["passed"]


def test_clean_pr_with_no_findings_but_a_review_passes(mini_corpus: Path) -> None:
    r = score(mini_corpus, capture([], [review("No issues found.")]), kind="clean")
    assert r["outcome"] == "scored" and r["clean_false_positives"] == 0 and r["gate"]["passed"]


@pytest.mark.parametrize("kind", ["seeded", "clean"])
def test_silence_is_never_a_score(mini_corpus: Path, kind: str) -> None:
    doc = capture([inline(APP, 10, "[BLOCKER] x", who=HUMAN)], [], [issue_comment("ping", HUMAN)])
    r = score(mini_corpus, doc, kind=kind)
    assert r["outcome"] == "silent"
    assert r["recall"] is None and r["blocker_recall"] is None
    assert r["clean_false_positives"] is None and r["missed_seeds"] == []
    assert not r["gate"]["passed"]


def test_min_recall_and_citation_gates(mini_corpus: Path) -> None:
    doc = capture([inline(APP, 5, "[BLOCKER] secret"), inline(APP, 10, "[BLOCKER] sql"),
                   inline(TSX, 7, "[BLOCKER] xss (core/xss)")])
    assert score(mini_corpus, doc)["gate"]["passed"]
    r = score(mini_corpus, doc, gate=GateOptions(min_recall=0.9, require_citation=True))
    assert len(r["gate"]["reasons"]) == 2


def test_unrated_by_location_profile_counts_every_clean_finding(mini_corpus: Path) -> None:
    by_location = replace(get_profile("redline"), name="by-location", unrated="location")
    doc = capture([inline(APP, 10, "looks risky"), inline(APP, 12, "[MINOR] style")])
    settings = ScoreSettings(stack="mini", kind="clean", prefix="p")
    r = evaluate(doc, load_corpus(mini_corpus), settings, by_location, META)[1].to_json()
    assert r["clean_false_positives"] == 1 and r["clean_findings_below_floor"] == 1
    settings = ScoreSettings(stack="mini", kind="seeded", prefix="p")
    r = evaluate(doc, load_corpus(mini_corpus), settings, by_location, META)[1].to_json()
    assert r["caught"] == 1  # unrated: severity check skipped


@pytest.mark.parametrize(("k", "n", "expected"), [
    (0, 10, (0.0, 0.2775)), (10, 10, (0.7225, 1.0)), (5, 10, (0.2366, 0.7634)), (1, 3, (0.0615, 0.7923)),
])
def test_wilson_interval_matches_published_values(k: int, n: int, expected: tuple[float, float]) -> None:
    assert wilson(k, n) == expected


def test_wilson_is_none_without_data() -> None:
    assert wilson(0, 0) is None


def _with_fixed_place(mini_corpus: Path, tmp_path: Path, line: str) -> Path:
    """The mini corpus with one line inserted above clean app.py's query (corpus line 10)."""
    import shutil

    corpus = tmp_path / "corpus"
    shutil.copytree(mini_corpus, corpus)
    app = corpus / "clean" / "mini" / "app.py"
    lines = app.read_text().splitlines(keepends=True)
    lines.insert(9, line + "\n")
    app.write_text("".join(lines))
    return corpus


def test_a_clean_twin_with_fixed_places_counts_only_findings_at_them(mini_corpus: Path, tmp_path: Path) -> None:
    """A twin mined from real code is claimed clean where it was fixed, not in the real code
    around it (docs/corpus.md#fixed-places)."""
    doc = capture([
        inline(APP, 11, "[MAJOR] the query is still built from the order id"),  # at the fix: counts
        inline(APP, 20, "[MAJOR] status_label hides unknown statuses"),  # unaudited real code: reported
        inline(APP, 24, "[CRITICAL] float money"),  # the borderline marker still takes it
    ])
    plain = score(mini_corpus, doc, kind="clean")
    assert plain["clean_false_positives"] == 2 and "clean_findings_outside_fix" not in plain
    corpus = _with_fixed_place(mini_corpus, tmp_path,
                               "    # FIXED 2 {lines: 3} the order id is bound as a parameter")
    r = score(corpus, doc, kind="clean")
    assert r["clean_false_positives"] == 1 and r["clean_findings_outside_fix"] == 1
    assert r["borderline"] == 1 and not r["gate"]["passed"]
    quiet = score(corpus, capture([inline(APP, 20, "[MAJOR] status_label hides unknown statuses")]), kind="clean")
    assert quiet["clean_false_positives"] == 0 and quiet["clean_findings_outside_fix"] == 1
    assert quiet["gate"]["passed"]


def test_lint_refuses_a_fixed_line_that_names_no_seed(mini_corpus: Path, tmp_path: Path) -> None:
    from redline_canary.corpus.model import lint

    corpus = _with_fixed_place(mini_corpus, tmp_path, "    # FIXED 9 a fix of nothing")
    problems = [str(p) for p in lint(load_corpus(corpus))]
    assert any("FIXED 9: no SEED 9 in this stack" in p for p in problems), problems


def test_blind_publication_drops_fixed_lines(mini_corpus: Path, tmp_path: Path) -> None:
    from redline_canary.corpus.model import publish

    corpus = _with_fixed_place(mini_corpus, tmp_path,
                               "    # FIXED 2 {lines: 3} the order id is bound as a parameter")
    files, markers = publish(load_corpus(corpus), "mini", "clean", "blind", "p")
    app = next(f for f in files if f.path == APP)
    assert "FIXED" not in app.text and "bound as a parameter" not in app.text
    fixed = [m for m in markers if m.marker.kind == "fixed"]
    assert [(m.line, m.end_line) for m in fixed] == [(10, 12)]
