"""The two citation grammars, each defined once: a finding citing a *place* (a custom
profile mining summaries) and a finding citing a *rule* (markers, Redline prefixes)."""

from __future__ import annotations

from pathlib import Path

import pytest

from redline_canary.commands._profiles_file import load_profiles_file
from redline_canary.corpus.markers import parse_file
from redline_canary.corpus.redline_scale import prefix_rule
from redline_canary.corpus.rule_ids import RULE_ID, cite_rule
from redline_canary.review.comments import Comment
from redline_canary.review.profiles import Profile


def _miner(tmp_path: Path) -> Profile:
    f = tmp_path / "p.yml"
    f.write_text("profiles:\n  house-miner:\n    extends: generic\n    logins: [\"house[bot]\"]\n"
                 "    mine_summaries: true\n")
    return load_profiles_file(str(f))["house-miner"]


def _review(body: str) -> Comment:
    return Comment(channel="review", id=4, login="house[bot]", user_id=None, user_type="Bot", body=body)


def test_a_mining_custom_profile_reads_every_place_a_summary_cites(tmp_path: Path) -> None:
    profile = _miner(tmp_path)
    body = ("[MAJOR] Three problems:\n- p/app.py:12 unchecked input\n- p/db.py:40 – 35 (range written backwards)\n"
            "- p/web/ui.tsx#L3-L7 raw HTML\n- ./p/app.py:90 relative path\n- README mentions p/app.py only\n")
    found = profile.extract([_review(body)]).findings
    assert [(f.path, f.start, f.end, f.source) for f in found] == [
        ("./p/app.py", 90, 90, "summary"),  # kept as written, as the generic reading always has
        ("p/app.py", 12, 12, "summary"),
        ("p/db.py", 35, 40, "summary"),
        ("p/web/ui.tsx", 3, 7, "summary"),
    ]
    assert {f.severity.name for f in found} == {"MAJOR"}


def test_a_summary_that_names_files_without_lines_cites_nothing(tmp_path: Path) -> None:
    profile = _miner(tmp_path)
    extraction = profile.extract([_review("Touches p/app.py and p/db.py; #L12 alone is no place.")])
    assert extraction.findings == []


@pytest.mark.parametrize(("body", "cited"), [
    ("[HIGH] (py/sql-injection) the query is built by hand", True),
    ("violates PY/SQL-INJECTION.", True),
    ("see py/sql-injection-2 instead", False),
    ("x/py/sql-injection is another rule", False),
    ("py/sql", False),
])
def test_a_finding_cites_a_rule_only_by_its_whole_id(body: str, cited: bool) -> None:
    assert cite_rule(body, "py/sql-injection") is cited


def test_markers_and_redline_prefixes_share_one_rule_id_grammar() -> None:
    parsed = parse_file("app.py", "x = 1  # SEED 1 [MAJOR] (py/sql-injection) query built by hand\n"
                                  "y = 2  # SEED 2 [MAJOR] (Py/SQL_Injection) wrong spelling\n")
    assert [m.rule for m in parsed.markers] == ["py/sql-injection"]
    assert [p.message for p in parsed.problems] == ["malformed rule id 'Py/SQL_Injection'"]
    assert prefix_rule("Redline/HIGH [py/sql-injection]: query built by hand") == "py/sql-injection"
    # Redline's prefix names exactly stack/rule; a deeper id is ours alone.
    assert RULE_ID.match("py/flask/sql-injection")
    assert prefix_rule("Redline/HIGH [py/flask/sql-injection]: x") is None
