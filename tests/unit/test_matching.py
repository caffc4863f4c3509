"""docs/matching.md matching, case by case, plus a brute-force cross-check of the optimiser."""

from __future__ import annotations

import itertools
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from redline_canary.corpus.markers import Marker
from redline_canary.corpus.publication import PublishedMarker
from redline_canary.corpus.severity import SCALE, Severity
from redline_canary.review.findings import Finding
from redline_canary.score.matching import assign
from tests.helpers.brute import brute_optimum

B, C, MJ, MN = (Severity.BLOCKER, Severity.CRITICAL, Severity.MAJOR, Severity.MINOR)


def seed(n: int, line: int, sev: Severity = MJ, path: str = "a.py", rule: str = "core/x-y",
         symbol: str | None = None, lines: int = 1) -> PublishedMarker:
    return PublishedMarker(Marker("seed", n, path, line, line, sev, rule, symbol, "d", lines),
                           path, line, line + lines - 1)


def border(n: int, line: int, path: str = "a.py") -> PublishedMarker:
    return PublishedMarker(Marker("borderline", n, path, line, line), path, line)


_keys = itertools.count()


def fnd(line: int | None, sev: Severity | None = MJ, *, end: int | None = None, path: str = "a.py",
        body: str = "", scoped: bool = True) -> Finding:
    return Finding(f"f{next(_keys)}", path, line, end if end is not None else line, sev, body,
                   "bot", "inline", scoped)


def summary(markers: list[PublishedMarker], findings: list[Finding], window: int = 4,
            cites: bool = True) -> dict[str, object]:
    def cite(body: str, rule: str) -> bool:
        return rule in body

    a = assign(markers, findings, window, cite if cites else None)
    return {
        "caught": sorted(p.marker.marker.n for p in a.pairs if p.caught),
        "under": sorted(p.marker.marker.n for p in a.pairs if not p.caught),
        "dup": len(a.duplicates), "border": len(a.borderline), "noise": len(a.noise),
    }


def test_distance_four_matches_five_does_not() -> None:
    assert summary([seed(1, 10)], [fnd(14)])["caught"] == [1]
    assert summary([seed(1, 10)], [fnd(6)])["caught"] == [1]
    assert summary([seed(1, 10)], [fnd(15)]) == {"caught": [], "under": [], "dup": 0,
                                                  "border": 0, "noise": 1}


def test_custom_window() -> None:
    assert summary([seed(1, 10)], [fnd(12)], window=1)["caught"] == []
    assert summary([seed(1, 10)], [fnd(11)], window=1)["caught"] == [1]


def test_severity_must_be_at_least_the_markers() -> None:
    assert summary([seed(1, 10, C)], [fnd(10, B)])["caught"] == [1]
    assert summary([seed(1, 10, C)], [fnd(10, C)])["caught"] == [1]
    assert summary([seed(1, 10, C)], [fnd(10, MJ)])["under"] == [1]


def test_unrated_finding_is_severity_eligible() -> None:
    assert summary([seed(1, 10, B)], [fnd(10, None)])["caught"] == [1]


def test_one_finding_near_two_markers_catches_one_and_misses_the_other() -> None:
    s = summary([seed(1, 10), seed(2, 12)], [fnd(11)])
    assert len(s["caught"]) == 1 and s["under"] == []  # type: ignore[arg-type]


def test_ambiguous_finding_credits_the_blocker() -> None:
    assert summary([seed(1, 10, MJ), seed(2, 12, B)], [fnd(10, B)])["caught"] == [2]


def test_caught_beats_closer_undercall() -> None:
    # finding A (MINOR) sits on marker 1; finding B (BLOCKER) is 3 lines away from both.
    s = summary([seed(1, 10, MJ), seed(2, 16, MJ)], [fnd(10, MN), fnd(13, B)])
    assert s["caught"] == [1] or s["caught"] == [2]
    # maximum caught is 1 (only B is severe enough); then pairs: A undercalls the other
    assert len(s["caught"]) == 1 and len(s["under"]) == 1  # type: ignore[arg-type]


def test_caught_count_beats_severity_of_the_single_catch() -> None:
    # Two findings, each can catch a MAJOR; one of them could also catch the BLOCKER.
    markers = [seed(1, 10, B), seed(2, 20, MJ), seed(3, 14, MJ)]
    findings = [fnd(14, B), fnd(18, MJ)]
    s = summary(markers, findings)
    assert len(s["caught"]) == 2  # type: ignore[arg-type]
    assert 1 in s["caught"]  # type: ignore[operator]  # BLOCKER credited when the count allows


def test_multi_line_range_covers_every_line_inside() -> None:
    assert summary([seed(1, 30)], [fnd(20, end=40)])["caught"] == [1]
    assert summary([seed(1, 45)], [fnd(20, end=40)])["caught"] == []


def test_left_side_and_file_level_match_only_structural() -> None:
    assert summary([seed(1, 10)], [fnd(10, scoped=False)])["caught"] == []
    structural = seed(1, 10, symbol="REFUNDED")
    assert summary([structural], [fnd(None, scoped=False, body="REFUNDED is not handled")])[
        "caught"] == [1]


def test_structural_symbol_is_matched_as_a_whole_word_on_the_same_path() -> None:
    m = seed(1, 10, symbol="Refund")
    assert summary([m], [fnd(90, body="Refund case is missing")])["caught"] == [1]
    assert summary([m], [fnd(90, body="RefundPolicy is odd")])["caught"] == []
    assert summary([m], [fnd(90, body="Refund missing", path="b.py")])["caught"] == []


def test_duplicates_borderline_noise() -> None:
    markers = [seed(1, 10), border(1, 40)]
    s = summary(markers, [fnd(10), fnd(11), fnd(41), fnd(80)])
    assert s == {"caught": [1], "under": [], "dup": 1, "border": 1, "noise": 1}


def test_finding_near_seed_and_borderline_is_a_duplicate_not_borderline() -> None:
    s = summary([seed(1, 10), border(1, 12)], [fnd(10), fnd(12)])
    assert s["dup"] == 1 and s["border"] == 0


def test_other_path_is_noise() -> None:
    assert summary([seed(1, 10)], [fnd(10, path="b.py")])["noise"] == 1


def test_rule_citation_breaks_ties() -> None:
    markers = [seed(1, 10, rule="core/sql-injection"), seed(2, 12, rule="core/xss")]
    a = assign(markers, [fnd(11, body="this is core/xss")], 4, lambda b, r: r in b)
    assert [p.marker.marker.n for p in a.pairs] == [2] and a.pairs[0].cited


def test_distance_breaks_the_last_tie() -> None:
    a = assign([seed(1, 10), seed(2, 13)], [fnd(12)], 4, None)
    assert [p.marker.marker.n for p in a.pairs] == [2]


# --- brute force ------------------------------------------------------------------
def _objective(pairs: list[tuple[Finding, PublishedMarker]], window: int) -> tuple[int, ...]:
    caught = [(f, m) for f, m in pairs if f.severity is None or f.severity >= m.marker.severity]
    by_sev = tuple(sum(m.marker.severity == s for _, m in caught) for s in SCALE)
    cited = sum(m.marker.rule in (f.body or "") for f, m in caught)
    dist = 0
    for f, m in pairs:
        if f.start is None or f.end is None:
            dist += window + 1
        else:
            dist += _gap(f.start, f.end, m.line, m.end_line)
    # docs/matching.md (revised): citation ranks before the BLOCKER-first preference.
    return (len(caught), cited, *by_sev, len(pairs), -dist)


def _gap(start: int, end: int, a: int, b: int) -> int:
    """Written out the slow way: the least |x - y| over the finding's lines and the extent's."""
    return min(abs(x - y) for x in range(start, end + 1) for y in range(a, b + 1))


def _eligible(f: Finding, m: PublishedMarker, window: int) -> bool:
    if f.path != m.path:
        return False
    if f.line_scoped and f.start is not None and f.end is not None and (
        _gap(f.start, f.end, m.line, m.end_line) <= window
    ):
        return True
    return bool(m.marker.symbol) and m.marker.symbol in f.body.split()


def _brute(markers: list[PublishedMarker], findings: list[Finding], window: int) -> tuple[int, ...]:
    return brute_optimum(markers, findings, lambda f, m: _eligible(f, m, window), lambda p: _objective(p, window))


def _random_case(rng: random.Random) -> tuple[list[PublishedMarker], list[Finding]]:
    sevs = list(Severity)
    markers = [
        seed(n, rng.randint(1, 20), rng.choice(sevs), rng.choice(["a.py", "b.py"]),
             rng.choice(["core/r-a", "core/r-b"]), rng.choice([None, None, "Sym"]),
             rng.choice([1, 1, 1, 3, 7]))
        for n in range(1, rng.randint(1, 5) + 1)
    ]
    findings = []
    for _ in range(rng.randint(0, 6)):
        start = rng.randint(1, 22)
        findings.append(fnd(
            start, rng.choice([*sevs, None]), end=start + rng.choice([0, 0, 2]),
            path=rng.choice(["a.py", "b.py"]), scoped=rng.random() > 0.15,
            body=rng.choice(["", "core/r-a", "core/r-b here", "Sym is missing"]),
        ))
    return markers, findings


def test_optimiser_agrees_with_brute_force_on_random_small_cases() -> None:
    rng = random.Random(20261130)
    for _ in range(400):
        markers, findings = _random_case(rng)
        a = assign(markers, findings, 4, lambda body, rule: rule in body)
        got = _objective([(p.finding, p.marker) for p in a.pairs], 4)
        assert got == _brute(markers, findings, 4), (markers, findings)


@settings(max_examples=60, deadline=None)
@given(st.randoms(use_true_random=False))
def test_shuffling_comments_and_markers_changes_nothing(rnd: random.Random) -> None:
    markers, findings = _random_case(rnd)
    before = summary(markers, findings)
    rnd.shuffle(findings)
    rnd.shuffle(markers)
    assert summary(markers, findings) == before


def test_pathological_capture_still_scores_exactly() -> None:
    markers = [seed(n, 100 + (n % 9) - 4, list(Severity)[n % 5]) for n in range(1, 21)]
    findings = [fnd(100, list(Severity)[i % 5], body="core/x-y") for i in range(500)]
    a = assign(markers, findings, 4, lambda b, r: r in b)
    assert len(a.pairs) == 20 and len(a.duplicates) == 480
    assert all(p.caught for p in a.pairs)


@pytest.mark.parametrize("n_findings", [0, 1, 7])
def test_no_markers_means_everything_is_noise(n_findings: int) -> None:
    assert summary([], [fnd(i + 1) for i in range(n_findings)])["noise"] == n_findings


def test_a_citation_outranks_the_blocker_preference() -> None:
    """docs/matching.md (revised): a comment citing a seed's rule on that seed's line is that seed's,
    even with a BLOCKER four lines away it could also be credited to."""
    mine = seed(1, 10, MJ, rule="core/off-by-one")
    blocker = seed(2, 14, B, rule="core/sql-injection")
    a = assign([mine, blocker], [fnd(10, B, body="core/off-by-one: the slice drops an item")], 4,
               lambda body, rule: rule in body)
    assert [(p.marker.marker.n, p.cited) for p in a.pairs] == [(1, True)]


def test_an_extent_takes_a_comment_on_its_last_line_at_distance_zero() -> None:
    wide = seed(1, 10, MJ, lines=5)
    a = assign([wide], [fnd(14)], 0, None)
    assert [(p.marker.marker.n, p.distance) for p in a.pairs] == [(1, 0)]
    assert assign([wide], [fnd(15)], 0, None).pairs == []
