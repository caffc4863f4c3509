"""The ``redline`` profile reads Redline's finding format the way its scorer (score-seeds.mjs) does.

Each body below is written the way a Redline-contract bot writes a finding; the expected
level is the one Redline's scorer reads (prefix in any case, else the first bare upper-case
level word, else nothing), mapped through the one table in ``redline_scale``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from redline_canary.commands._profiles_file import build_profiles
from redline_canary.corpus.redline_scale import SEVERITY_MAP, prefix_rule, to_scale
from redline_canary.corpus.severity import Severity
from redline_canary.review.comments import comment_from_github
from redline_canary.review.profiles import get_profile
from redline_canary.run.corpus_files import load_corpus
from redline_canary.score.evaluate import ScoreSettings, evaluate
from redline_canary.score.scoring import RecordMeta
from tests.helpers.factories import capture, inline, review

B, H, S = (SEVERITY_MAP[w].level for w in ("BLOCKER", "HIGH", "SUGGESTION"))

BODIES: list[tuple[str, Severity | None, str | None]] = [
    ("Redline/BLOCKER [core/sql-injection]: the id reaches SQL.", B, "core/sql-injection"),
    ("redline/high [core/missing-timeout]: no timeout on the call.", H, "core/missing-timeout"),
    ("REDLINE/Suggestion [react/key-is-index]: use a stable key.", S, "react/key-is-index"),
    ("**Redline/BLOCKER [`core/xss`]**: unescaped HTML.", B, "core/xss"),
    ("**Redline/BLOCKER** [core/xss]: the bold ends before the id, so Redline reads none.", B, None),
    ("> Redline/HIGH [core/off-by-one]: last item dropped.", H, "core/off-by-one"),
    ("Redline/BLOCKER: pre-2.1 bots write no rule id.", B, None),
    ("Looks fine overall.\nRedline/HIGH [core/off-by-one]: but this drops an item.", H, "core/off-by-one"),
    # no prefix: the first bare level word, upper case only
    ("HIGH: the retry loop never backs off.", H, None),
    ("This is a SUGGESTION, not a BLOCKER.", S, None),
    ("high risk of a crash here", None, None),  # lower-case prose is no level
    ("The query is built by concatenation.", None, None),  # untagged
    # a prefix that does not open a line is not a prefix; its level word still is one
    ("As the Redline/BLOCKER rule says [core/xss], escape it.", B, None),
]


@pytest.mark.parametrize(("body", "level", "rule"), BODIES)
def test_redline_profile_reads_levels_and_prefix_rule_as_redline_does(
        body: str, level: Severity | None, rule: str | None) -> None:
    profile = get_profile("redline")
    assert profile.severity(body) == level
    assert prefix_rule(body) == rule


def test_one_table_maps_every_redline_level_and_refuses_others() -> None:
    assert [to_scale(w) for w in ("blocker", "High", "SUGGESTION")] == [Severity.BLOCKER, Severity.MAJOR,
                                                                         Severity.MINOR]
    assert all(m.reason for m in SEVERITY_MAP.values())
    with pytest.raises(ValueError, match="unknown Redline severity 'MEDIUM'"):
        to_scale("MEDIUM")


def _untagged_finding_level(profile_doc: dict[str, object] | None) -> Severity | None:
    profile = (build_profiles(profile_doc, "p.yml")["redline"] if profile_doc else get_profile("redline"))
    comment = comment_from_github("inline", inline("app.py", 5, "The query is built by concatenation."))
    findings = profile.extract([comment]).findings
    assert len(findings) == 1
    return findings[0].severity


def test_untagged_comment_is_info_unless_configured_as_redlines_lowest_level() -> None:
    assert _untagged_finding_level(None) == Severity.INFO
    assert _untagged_finding_level({"profiles": {"redline": {"untagged": "lowest"}}}) == S
    assert _untagged_finding_level({"profiles": {"redline": {"untagged": "MAJOR"}}}) == Severity.MAJOR


def test_untagged_option_names_a_bad_value() -> None:
    from redline_canary.errors import BadInput

    with pytest.raises(BadInput, match=r"p.yml: profiles.redline.untagged: expected lowest or a severity"):
        build_profiles({"profiles": {"redline": {"untagged": "sometimes"}}}, "p.yml")


def test_cited_prefix_counts_rule_attribution_the_redline_way(mini_corpus: Path) -> None:
    """``cited`` accepts the rule id anywhere in the body; Redline counts only the prefix's id."""
    app = "p/app.py"
    doc = capture([
        inline(app, 5, "Redline/BLOCKER [core/hardcoded-secrets]: token committed in source."),
        inline(app, 10, "Redline/BLOCKER [core/xss]: wrong rule in the prefix (core/sql-injection in prose)."),
        inline(app, 15, "[MAJOR] off by one, see core/off-by-one."),
    ], [review("done")])
    settings = ScoreSettings(stack="mini", kind="seeded", prefix="p")
    meta = RecordMeta(run_id="r1", recorded_at="2026-11-30T10:00:00Z", repo="acme/canary", pr=7,
                      tool_version="test")
    record = evaluate(doc, load_corpus(mini_corpus), settings, get_profile("redline"), meta)[1]
    assert record.caught == 3
    assert record.cited == 3
    assert record.cited_prefix == 1
    written = list(record.to_json())
    assert written.index("cited_prefix") == written.index("cited") + 1


def test_readme_documents_the_one_table_as_the_code_has_it() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Coming from Redline"):]
    for word, mapped in SEVERITY_MAP.items():
        assert f"| {word} | {mapped.level.name} | {mapped.reason} |" in section
