"""Every row of the severity mapping table (issue 5), and prose that only mentions a level.

Bodies are written from docs/dialects.md: the first line of an inline comment is
where each vendor puts its level, so each fixture starts with the vendor's markup and
goes on with an ordinary sentence.
"""

from __future__ import annotations

import pytest

from redline_canary.corpus.severity import Severity
from redline_canary.review.comments import Comment
from redline_canary.review.profiles import PROFILES, get_profile

B, C, MJ, MN, INF = (Severity.BLOCKER, Severity.CRITICAL, Severity.MAJOR, Severity.MINOR,
                   Severity.INFO)
SHIELD = "**<sub><sub>![P{n} Badge](https://img.shields.io/badge/P{n}-orange?style=flat)</sub></sub>  Title**"
GREPTILE = ('<a href="#"><img alt="P{n}" src="https://greptile-static-assets.s3.amazonaws.com/'
            'badges/p{n}.svg?v=9" align="top"></a> **Title**')
GEMINI = "![{alt}](https://www.gstatic.com/codereviewagent/{stem}.svg)"

ROWS: list[tuple[str, str, Severity | None]] = [
    # codex, greptile, cubic: P0-P3
    *[("codex", SHIELD.format(n=n) + "\n\nThe order id reaches SQL.", lvl)
      for n, lvl in enumerate((B, C, MJ, MN))],
    *[("greptile", GREPTILE.format(n=n) + "\n\nThe order id reaches SQL.", lvl)
      for n, lvl in enumerate((B, C, MJ, MN))],
    *[("cubic", f"P{n}: The order id reaches SQL unescaped.", lvl)
      for n, lvl in enumerate((B, C, MJ, MN))],
    # greptile legacy category prefixes
    ("greptile", "**logic:** the loop never ends", MJ),
    ("greptile", "**syntax:** missing closing bracket", MJ),
    ("greptile", "**style:** prefer a named constant", MN),
    ("greptile", "**info:** this mirrors the old helper", INF),
    # gemini
    ("gemini", GEMINI.format(alt="critical", stem="critical") + "\n\nSQL built from input.", B),
    ("gemini", GEMINI.format(alt="security-critical", stem="security-critical") + " "
     + GEMINI.format(alt="high", stem="high-priority") + "\n\nToken in source.", B),
    ("gemini", GEMINI.format(alt="high", stem="high-priority") + "\n\nOff by one.", C),
    ("gemini", GEMINI.format(alt="medium", stem="medium-priority") + "\n\nOff by one.", MJ),
    ("gemini", GEMINI.format(alt="low", stem="low-priority") + "\n\nName is vague.", MN),
    # coderabbit: explicit level beats the category that precedes it
    ("coderabbit", "_⚠️ Potential issue_ | _🔴 Critical_\n\n**SQL injection.**", B),
    ("coderabbit", "_🎯 Functional Correctness_ | _🟠 Major_ | _⚡ Quick win_\n\n**Off by one.**", MJ),
    ("coderabbit", "_⚠️ Potential issue_\n\n**Off by one.**", MJ),
    ("coderabbit", "_🛠️ Refactor suggestion_ | _🟡 Minor_\n\n**Extract a helper.**", MN),
    ("coderabbit", "_🛠️ Refactor suggestion_\n\n**Extract a helper.**", MN),
    ("coderabbit", "_🔵 Trivial_\n\n**Typo in the docstring.**", INF),
    ("coderabbit", "_🧹 Nitpick_ | _💤 Low value_\n\n**Rename the variable.**", INF),
    # bugbot
    ("bugbot", "### Token in source\n\n**High Severity**\n\n<!-- DESCRIPTION START -->x<!-- DESCRIPTION END -->", B),
    ("bugbot", "### Off by one\n\n**Medium Severity**\n\nThe page is short.", MJ),
    ("bugbot", "### Vague name\n\n**Low Severity**\n\nRename it.", MN),
    # copilot (inline body: only the old nitpick prefix; badges are tested via discussion_r)
    ("copilot", "[nitpick] The variable name could be clearer.", INF),
    # sourcery
    ("sourcery", "**issue (security):** The token is committed in source.", B),
    ("sourcery", "**issue (bug_risk):** The page drops its last item.", MJ),
    ("sourcery", "**issue(testing):** The new branch has no test.", MJ),
    ("sourcery", "**suggestion:** Extract this into a helper.", MN),
    ("sourcery", "**suggestion (performance):** Cache the lookup.", MN),
    ("sourcery", "**nitpick:** Trailing whitespace.", INF),
    # qodo
    ('qodo', '<img src="x.png" alt="Action required">\n\n1. Token in source <code>⛨ Security</code>', B),
    ('qodo', '<img src="x.png" alt="Remediation recommended">\n\n1. Slice drops an item', MJ),
    *[("qodo", f"Use a parameterised query.\n\nSuggestion importance[1-10]: {n}", lvl)
      for n, lvl in ((10, B), (9, B), (8, C), (7, C), (6, MJ), (5, MJ), (4, MN), (3, MN), (2, INF), (1, INF))],
    # claude (managed review markers)
    ("claude", "🔴 **Important**: the order id reaches SQL unescaped.", B),
    ("claude", "🟡 **Nit**: the name is vague.", INF),
    # redline (canonical)
    ("redline", "[BLOCKER] token in source", B),
    ("redline", "Redline/BLOCKER token in source", B),
    ("redline", "[critical] open redirect", C),
    ("redline", "Redline/HIGH open redirect", MJ),  # one table: redline_scale.SEVERITY_MAP
    ("redline", "[MAJOR] off by one", MJ),
    ("redline", "[MINOR] vague name", MN),
    ("redline", "Redline/SUGGESTION vague name", MN),
    ("redline", "[INFO] note", INF),
]

# Prose that names a level without assigning one: unrated (INFO, or None by location).
MENTIONS: list[tuple[str, str]] = [
    ("codex", "No P1 issues found. The P0 badge rules do not apply here."),
    ("greptile", "No P0 or P1 issues found; P2 work can wait."),
    ("cubic", "This is not a P1 problem: it was fixed, see P0 notes above."),
    ("gemini", "There are no critical issues and nothing high-priority here."),
    ("coderabbit", "No critical issues; the Major refactor can wait. Potential issue? none."),
    ("bugbot", "This is high severity only if the token is real."),
    ("sourcery", "This issue (bug_risk) was already fixed; a suggestion would be overkill."),
    ("qodo", "No action required here; importance is low."),
    ("claude", "Nothing important here; not even a nit."),
    ("copilot", "No high severity problems; a nitpick at most."),
    ("generic", "No critical issues were found in this change."),
]


def _inline(profile_name: str, body: str) -> Comment:
    profile = get_profile(profile_name)
    return Comment(channel="inline", id=7, login=profile.login_for("inline"), user_id=None,
                   user_type="Bot", body=body, path="p/app.py", line=5)


@pytest.mark.parametrize(("name", "body", "expected"), ROWS)
def test_mapping_table_row(name: str, body: str, expected: Severity) -> None:
    extraction = get_profile(name).extract([_inline(name, body)])
    assert [f.severity for f in extraction.findings] == [expected]


@pytest.mark.parametrize(("name", "body"), MENTIONS)
def test_mentioning_a_level_is_not_a_severity(name: str, body: str) -> None:
    profile = get_profile(name)
    assert profile.severity(body) is None
    [finding] = profile.extract([_inline(name, body)]).findings
    assert finding.severity == (None if profile.unrated == "location" else Severity.INFO)


def test_every_vendor_profile_has_a_mapping_row_tested() -> None:
    tested = {name for name, _, _ in ROWS}
    assert set(PROFILES) - tested == {"generic"}


@pytest.mark.parametrize("name", ["copilot", "claude"])
def test_unrated_by_location_profiles_leave_untagged_findings_unrated(name: str) -> None:
    profile = get_profile(name)
    assert profile.unrated == "location"
    [finding] = profile.extract([_inline(name, "This query takes the id from the request.")]).findings
    assert finding.severity is None


@pytest.mark.parametrize("name", sorted(set(PROFILES) - {"copilot", "claude"}))
def test_other_profiles_rate_untagged_findings_info(name: str) -> None:
    [finding] = get_profile(name).extract([_inline(name, "This query takes the id from the request.")]).findings
    assert finding.severity is Severity.INFO
