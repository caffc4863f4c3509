"""Topics and sites (docs/matching.md#topics, docs/corpus.md#sites): a comment is credited to
the defect it describes, at any of the defect's places, never to whatever marker is near."""

from __future__ import annotations

import itertools
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from redline_canary.corpus.markers import Marker, parse_file
from redline_canary.corpus.model import Rule, with_sites
from redline_canary.corpus.publication import Place, PublishedMarker
from redline_canary.corpus.severity import SCALE, Severity
from redline_canary.corpus.topics import NO_TOPICS, TopicIndex, describes, lint_terms
from redline_canary.review.findings import Finding
from redline_canary.score.matching import assign
from tests.helpers.brute import brute_optimum

B, C, MJ, MN = (Severity.BLOCKER, Severity.CRITICAL, Severity.MAJOR, Severity.MINOR)
RULES = {
    "core/hardcoded-secrets": Rule("core/hardcoded-secrets", "Hard-coded credential", B, 798,
                                   ("hard-coded", "hardcoded", "api key", "credential")),
    "core/missing-timeout": Rule("core/missing-timeout", "Network call without a timeout", MJ, 400,
                                 ("timeout", "time out", "hangs")),
    "core/xss": Rule("core/xss", "Cross-site scripting", B, 79, ("xss", "v-html", "unescaped")),
    "core/idor": Rule("core/idor", "Insecure direct object reference", B, 639, ("idor", "ownership")),
}
INDEX = TopicIndex.of(RULES)
_keys = itertools.count()


def seed(n: int, line: int, sev: Severity, rule: str, path: str = "a.py",
         sites: tuple[Place, ...] = ()) -> PublishedMarker:
    return PublishedMarker(Marker("seed", n, path, line, line, sev, rule, None, "d"), path, line, line, sites)


def fnd(line: int, sev: Severity | None, body: str, path: str = "a.py") -> Finding:
    return Finding(f"f{next(_keys)}", path, line, line, sev, body, "bot")


def credited(markers: list[PublishedMarker], findings: list[Finding],
             topics: TopicIndex = INDEX) -> dict[int, tuple[str, bool]]:
    """seed n -> (the body credited to it, caught)."""
    return {p.marker.marker.n: (p.finding.body, p.caught) for p in assign(markers, findings, 4, None, topics).pairs}


def test_a_finding_speaks_of_the_rules_whose_words_it_uses() -> None:
    assert INDEX.topics("Production gateway API key hard-coded as default") == {"core/hardcoded-secrets"}
    assert INDEX.topics("The request has no TIMEOUT and\nhangs") == {"core/missing-timeout"}
    assert INDEX.topics("see CWE-79") == {"core/xss"}
    assert INDEX.topics("rename this variable") == frozenset()
    # Whole words only: "timeouts" is not "timeout", "xssfoo" is not "xss".
    assert INDEX.topics("timeouts xssfoo") == frozenset()


def test_the_hard_coded_key_is_credited_to_the_blocker_not_the_timeout_below_it() -> None:
    """The week-1 case: on the BLOCKER's own line, rated one level lower, the old objective
    credited it to a MAJOR missing-timeout marker two lines below (a catch there) and
    reported the BLOCKER missed."""
    markers = [seed(1, 10, B, "core/hardcoded-secrets"), seed(2, 12, MJ, "core/missing-timeout")]
    comment = fnd(10, C, "Production gateway API key hard-coded as default")
    assert credited(markers, [comment], NO_TOPICS) == {2: (comment.body, True)}  # what it did
    assert credited(markers, [comment]) == {1: (comment.body, False)}  # found, rated CRITICAL


def test_swapped_pairs_are_credited_each_to_its_own_defect() -> None:
    markers = [seed(1, 20, B, "core/xss"), seed(2, 23, B, "core/idor")]
    xss = fnd(23, B, "Stored XSS: the memo is rendered with v-html")
    idor = fnd(20, B, "IDOR: no ownership check on the invoice id")
    got = credited(markers, [xss, idor])
    assert got == {1: (xss.body, True), 2: (idor.body, True)}


def test_an_off_topic_finding_is_noise_not_a_duplicate() -> None:
    a = assign([seed(1, 10, B, "core/xss")], [fnd(10, B, "This call has no timeout")], 4, None, INDEX)
    assert a.pairs == [] and len(a.noise) == 1 and a.duplicates == []


def test_a_finding_without_topics_scores_as_before_topics() -> None:
    markers = [seed(1, 10, B, "core/xss"), seed(2, 12, MJ, "core/missing-timeout")]
    plain = [fnd(10, C, "this looks wrong"), fnd(12, MJ, "and this")]
    assert credited(markers, plain) == credited(markers, plain, NO_TOPICS)


def test_a_site_in_another_file_takes_a_comment_at_distance_zero() -> None:
    """A stored XSS pointed at the lines that build the HTML, 60 lines above the v-html."""
    marker = seed(1, 149, B, "core/xss", path="Table.vue", sites=(Place("store.ts", 27, 29),))
    at_site = fnd(28, B, "memo converted to HTML without escaping (unescaped)", path="store.ts")
    assert credited([marker], [at_site]) == {1: (at_site.body, True)}
    assert credited([seed(1, 149, B, "core/xss", path="Table.vue")], [at_site]) == {}


def test_site_lines_parse_strip_and_attach_to_their_seed() -> None:
    text = "x = 1\n# SEED 1 [BLOCKER] (core/xss) memo rendered unescaped\ny = render(memo)\n" \
           "z = 3  # SITE 1 the memo is built here\n"
    parsed = parse_file("a.py", text)
    assert [(m.kind, m.n, m.anchor_line) for m in parsed.markers] == [("seed", 1, 3), ("site", 1, 4)]
    published = [PublishedMarker(m, "a.py", m.anchor_line) for m in parsed.markers]
    (only,) = with_sites(published)
    assert only.marker.kind == "seed" and only.sites == (Place("a.py", 4, 4, "a.py", 4),)


def test_terms_lint() -> None:
    rules = {
        "core/a-b": Rule("core/a-b", "A", B, None, ("shared", "ab")),
        "core/c-d": Rule("core/c-d", "C", B, None, ("shared",)),
        "core/e-f": Rule("core/e-f", "E", B, None, ()),
    }
    problems = [p.message for p in lint_terms(rules, "rules.yml")]
    assert any("'ab' is shorter than 3" in p for p in problems)
    assert any("'shared' is also a term of core/c-d" in p for p in problems)
    assert any("core/e-f.terms: missing" in p for p in problems)
    both = {"core/a-b": Rule("core/a-b", "A", B, None, ("shared", "abc"), ("shared",)),
            "core/c-d": Rule("core/c-d", "C", B, None, ("shared",), ("shared",))}
    assert lint_terms(both, "rules.yml") == []
    assert describes("the memo is rendered unescaped", RULES["core/xss"])
    assert not describes("the memo is shown", RULES["core/xss"])


# --- brute force with topics ---------------------------------------------------------
def _on(f: Finding, m: PublishedMarker) -> bool:
    return m.marker.rule in INDEX.topics(f.body)


def _objective(pairs: list[tuple[Finding, PublishedMarker]]) -> tuple[int, ...]:
    caught = [(f, m) for f, m in pairs if f.severity is None or f.severity >= m.marker.severity]
    return (len(caught), sum(_on(f, m) for f, m in caught),
            *(sum(m.marker.severity == s for _, m in caught) for s in SCALE),
            len(pairs), sum(_on(f, m) for f, m in pairs),
            -sum(min(abs(f.start - p.line) for p in m.places if p.path == f.path)  # type: ignore[operator]
                 for f, m in pairs))


def _eligible(f: Finding, m: PublishedMarker) -> bool:
    about = INDEX.topics(f.body)
    if about and m.marker.rule not in about:
        return False
    return any(p.path == f.path and abs(f.start - p.line) <= 4 for p in m.places)  # type: ignore[operator]


def _brute(markers: list[PublishedMarker], findings: list[Finding]) -> tuple[int, ...]:
    return brute_optimum(markers, findings, _eligible, _objective)


BODIES = ["", "api key hard-coded", "no timeout here", "XSS via v-html", "IDOR", "timeout and api key", "tidy up"]


def _case(rng: random.Random) -> tuple[list[PublishedMarker], list[Finding]]:
    rules = sorted(RULES)
    markers = []
    for n in range(1, rng.randint(1, 5) + 1):
        sites = tuple(Place(rng.choice(["a.py", "b.py"]), line, line)
                      for line in (rng.randint(1, 20) for _ in range(rng.choice([0, 0, 1, 2]))))
        markers.append(seed(n, rng.randint(1, 20), rng.choice(list(Severity)), rng.choice(rules),
                            rng.choice(["a.py", "b.py"]), sites))
    findings = [fnd(rng.randint(1, 22), rng.choice([*Severity, None]), rng.choice(BODIES), rng.choice(["a.py", "b.py"]))
                for _ in range(rng.randint(0, 6))]
    return markers, findings


def test_the_optimiser_agrees_with_brute_force_with_topics_and_sites() -> None:
    rng = random.Random(20261207)
    for _ in range(300):
        markers, findings = _case(rng)
        a = assign(markers, findings, 4, None, INDEX)
        assert _objective([(p.finding, p.marker) for p in a.pairs]) == _brute(markers, findings), (markers, findings)


@settings(max_examples=60, deadline=None)
@given(st.randoms(use_true_random=False))
def test_shuffling_changes_nothing_with_topics(rnd: random.Random) -> None:
    markers, findings = _case(rnd)
    before = credited(markers, findings)
    rnd.shuffle(findings)
    rnd.shuffle(markers)
    assert credited(markers, findings) == before


def test_blind_publication_strips_site_lines_and_maps_the_site() -> None:
    from redline_canary.corpus.publication import publish_file, publish_markers

    text = ("def build(memo):\n    # SITE 1 the memo becomes HTML here, unescaped\n    return memo\n"
            "def show(memo):\n    return render(build(memo))  # SEED 1 [BLOCKER] (core/xss) memo rendered unescaped\n")
    parsed = parse_file("a.py", text)
    published = publish_file(parsed, "blind", "", True)
    assert "SITE" not in published.text and "SEED" not in published.text
    (seed_marker,) = with_sites(publish_markers(parsed, published))
    assert seed_marker.line == 4 and seed_marker.sites == (Place("a.py", 2, 2, "a.py", 3),)
    assert published.text.splitlines()[1] == "    return memo"
