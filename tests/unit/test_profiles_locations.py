"""Identities, cross-comment severity (Copilot's #discussion_r), and locations cited in
summaries (source "summary", deduplicated against inline findings)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from redline_canary.corpus.severity import Severity
from redline_canary.review.capture import comments_from_capture
from redline_canary.review.comments import Comment
from redline_canary.review.findings import Finding
from redline_canary.review.profiles import get_profile
from redline_canary.review.profiles.base import Extraction
from redline_canary.review.profiles.citations import citations
from redline_canary.run.corpus_files import load_corpus
from redline_canary.score.evaluate import ScoreSettings, evaluate
from redline_canary.score.scoring import RecordMeta
from tests.helpers.factories import HUMAN, capture, inline, issue_comment, review, user

DATA = Path(__file__).resolve().parents[1] / "data" / "profiles"
META = RecordMeta(run_id="r1", recorded_at="2026-11-30T10:00:00Z", repo="acme/canary", pr=7, tool_version="test")
COPILOT_REVIEW = user("copilot-pull-request-reviewer[bot]", 175728472)
COPILOT_INLINE = user("Copilot", 175728472)
BLOB = "https://github.com/acme/canary/blob/0123456789abcdef0123456789abcdef01234567"


def fixture(name: str) -> str:
    """``copilot_v2_review.md`` lives at ``copilot/v2_review.md`` (one folder per vendor)."""
    vendor, _, rest = name.partition("_")
    return (DATA / vendor / rest).read_text(encoding="utf-8")


def extract(profile: str, doc: dict[str, Any]) -> Extraction:
    return get_profile(profile).extract(comments_from_capture(doc))


def located(findings: list[Finding]) -> set[tuple[str | None, int | None, int | None, str | None, str]]:
    return {(f.path, f.start, f.end, f.severity.name if f.severity else None, f.source) for f in findings}


# --- identities --------------------------------------------------------------------------

@pytest.mark.parametrize(("login", "uid", "counted"), [
    ("copilot-pull-request-reviewer[bot]", 175728472, True),
    ("copilot-pull-request-reviewer", None, True),  # GraphQL spelling
    ("Copilot", 175728472, True),
    ("COPILOT", None, True),
    ("copilot-swe-agent[bot]", 198982749, False),  # the coding agent, not the reviewer
    ("octocat", 583231, False),
    ("renamed-bot[bot]", 175728472, True),  # the numeric id is the identity
])
def test_copilot_identities(login: str, uid: int | None, counted: bool) -> None:
    c = Comment(channel="inline", id=1, login=login, user_id=uid, user_type="Bot", body="x",
                path="a.py", line=1)
    assert get_profile("copilot").is_reviewer(c) is counted


def test_copilot_review_and_inline_logins_both_count_in_one_pr() -> None:
    doc = capture([inline("p/app.py", 5, "Token in source.", who=COPILOT_INLINE)],
                  [review("## Pull request overview", who=COPILOT_REVIEW)])
    extraction = extract("copilot", doc)
    assert extraction.activity == 2 and len(extraction.findings) == 1


@pytest.mark.parametrize(("profile", "login"), [
    ("coderabbit", "CodeRabbitAI[bot]"), ("coderabbit", "coderabbitai"), ("codex", "chatgpt-codex-connector"),
    ("gemini", "Gemini-Code-Assist[bot]"), ("claude", "claude"), ("bugbot", "cursor"),
    ("greptile", "greptile-apps"), ("sourcery", "Sourcery-AI[bot]"), ("qodo", "qodo-code-review[bot]"),
    ("qodo", "codium-pr-agent[bot]"), ("cubic", "cubic-dev-ai"),
])
def test_vendor_logins_match_case_insensitively_in_rest_and_graphql_spellings(profile: str, login: str) -> None:
    p = get_profile(profile)
    assert p.is_reviewer(Comment(channel="review", id=1, login=login, user_id=None, user_type="Bot", body=""))
    assert not p.is_reviewer(Comment(channel="review", id=1, login="some-other-bot[bot]", user_id=None,
                                     user_type="Bot", body=""))


def test_claude_via_github_actions_token_counts_only_its_own_comments() -> None:
    actions = user("github-actions[bot]", 41898282)
    doc = capture(
        [inline("p/app.py", 10, "SQL built from input.", who=actions)],
        issue_comments=[
            issue_comment("**Claude finished @octocat's task in 1m** —— [View job](https://x/runs/1)\n\n---\n"
                          f"Found 1 issue:\n\n1. Token committed\n\n{BLOB}/p/app.py#L5", who=actions),
            issue_comment(f"Coverage report: see {BLOB}/p/web/Profile.tsx#L7", who=actions),
        ])
    extraction = extract("claude", doc)
    assert extraction.activity == 2
    assert located(extraction.findings) == {("p/app.py", 10, 10, None, "inline"),
                                            ("p/app.py", 5, 5, None, "summary")}
    only_claude_bot = get_profile("claude").with_logins(["claude[bot]"])
    assert only_claude_bot.extract(comments_from_capture(doc)).activity == 0


def test_cursor_approval_agent_is_not_bugbot() -> None:
    who = user("cursor[bot]", 206951365)
    doc = capture(reviews=[review("", state="APPROVED", who=who),
                           review("<!-- BUGBOT_REVIEW -->\n✅ Bugbot reviewed your changes and found no new issues!",
                                  who=who)])
    extraction = extract("bugbot", doc)
    assert extraction.activity == 1 and extraction.has("clean")


# --- Copilot: severity through #discussion_r ---------------------------------------------

def _copilot_doc(*overviews: str) -> dict[str, Any]:
    inl = [inline("p/app.py", 10, "The order id is interpolated into the query.", who=COPILOT_INLINE,
                  comment_id=9001),
           inline("p/web/Profile.tsx", 8, "This image has no alt text.", who=COPILOT_INLINE, comment_id=9002),
           inline("p/app.py", 19, "Unmapped status.", who=COPILOT_INLINE, comment_id=9003)]
    reviews = []
    for i, body in enumerate(overviews):
        r = review(body, who=COPILOT_REVIEW)
        r["submitted_at"] = f"2026-11-30T10:0{i}:00Z"
        reviews.append(r)
    return capture(inl, reviews)


def test_copilot_severity_comes_from_the_overview_badge_via_discussion_link() -> None:
    extraction = extract("copilot", _copilot_doc(fixture("copilot_v2_review.md")))
    assert located(extraction.findings) == {
        ("p/app.py", 10, 10, "BLOCKER", "inline"),     # High severity, #discussion_r9001
        ("p/web/Profile.tsx", 8, 8, "MINOR", "inline"),  # Low severity, #discussion_r9002
        ("p/app.py", 19, 19, None, "inline"),         # not listed: unrated, counts by location
        ("p/app.py", 15, 15, "MAJOR", "summary"),     # Previously missed, zero-width space in path
    }


def test_copilot_latest_overview_wins_whatever_the_capture_order() -> None:
    old = "- <img alt=\"Low severity\" src=\"low-v2-light.png\"> [SQL](#discussion_r9001) · New"
    new = "- <img alt=\"High severity\" src=\"high-v2-light.png\"> [SQL](#discussion_r9001)"
    doc = _copilot_doc(old, new)
    doc["reviews"].reverse()
    sev = {f.key: f.severity for f in extract("copilot", doc).findings}
    assert sev["inline:9001"] is Severity.BLOCKER


def test_copilot_v2_scores_by_badge(mini_corpus: Path) -> None:
    # SEED2 [BLOCKER] at p/app.py:10 caught by High; SEED6 [MINOR] at Profile.tsx:8 caught by Low;
    # SEED3 [MAJOR] at :15 caught by the Previously-missed summary finding (Medium).
    settings = ScoreSettings(stack="mini", kind="seeded", prefix="p")
    profile = get_profile("copilot")
    r = evaluate(_copilot_doc(fixture("copilot_v2_review.md")), load_corpus(mini_corpus), settings, profile,
                 META)[1].to_json()
    assert r["caught"] == 4 and r["undercalled"] == 0  # SEED4 @19 too: unrated counts by location
    assert {s["n"] for s in r["caught_seeds"]} == {2, 3, 4, 6}


def test_copilot_without_overview_undercalls_nothing(mini_corpus: Path) -> None:
    settings = ScoreSettings(stack="mini", kind="seeded", prefix="p")
    r = evaluate(_copilot_doc("## Pull request overview\n\nCopilot reviewed 2 out of 2 changed files and "
                              "generated 3 comments."), load_corpus(mini_corpus), settings,
                 get_profile("copilot"), META)[1].to_json()
    assert r["caught"] == 3 and r["undercalled"] == 0


def test_copilot_legacy_suppressed_block_is_mined() -> None:
    doc = capture(reviews=[review(fixture("copilot_legacy_suppressed.md"), who=COPILOT_REVIEW)])
    assert located(extract("copilot", doc).findings) == {("p/app.py", 19, 19, None, "summary")}


def test_copilot_walkthrough_sections_are_not_findings() -> None:
    body = fixture("copilot_v2_review.md").split("<summary>Previously missed")[0] + \
        "<details>\n<summary>What changed in this PR</summary>\n\nEdits `p/app.py:5` and `p/web/Profile.tsx:7`.\n"
    doc = capture(reviews=[review(body, who=COPILOT_REVIEW)])
    assert extract("copilot", doc).findings == []


# --- summary mining per vendor -----------------------------------------------------------

def test_coderabbit_outside_diff_and_nitpicks_are_mined_and_deduped() -> None:
    who = user("coderabbitai[bot]", 136622811)
    doc = capture([inline("p/app.py", 15, "_⚠️ Potential issue_ | _🟠 Major_\n\n**Off by one.**", who=who)],
                  [review(fixture("coderabbit_review.md"), who=who)],
                  [issue_comment(fixture("coderabbit_walkthrough.md"), who=who)])
    assert located(extract("coderabbit", doc).findings) == {
        ("p/app.py", 15, 15, "MAJOR", "inline"),
        ("p/web/Profile.tsx", 7, 8, "BLOCKER", "summary"),  # outside diff, 🔴 Critical
        ("p/app.py", 24, 25, "INFO", "summary"),            # nitpick
        # A nitpick on the inline thread's line is another finding (CodeRabbit posts
        # nitpicks only in the body); a duplicate item is a standing finding; prompts and
        # the walkthrough never count.
        ("p/app.py", 15, 15, "INFO", "summary"),
        ("p/app.py", 60, 61, "INFO", "summary"),
    }


def test_coderabbit_outdated_inline_comment_falls_back_to_its_prompt_range() -> None:
    who = user("coderabbitai[bot]", 136622811)
    c = inline("p/app.py", None, "_🟡 Minor_\n\n<details><summary>🤖 Prompt for AI Agents</summary>\n\n"
               "In `@p/app.py` around lines 14 - 15, fix the slice.\n</details>", who=who)
    c["original_line"] = None
    [f] = extract("coderabbit", capture([c])).findings
    assert (f.path, f.start, f.end, f.line_scoped, f.source) == ("p/app.py", 14, 15, True, "inline")


def test_codex_issue_comment_findings_via_blob_permalink() -> None:
    who = user("chatgpt-codex-connector[bot]", 199175422)
    doc = capture(issue_comments=[issue_comment(fixture("codex_issue_finding.md"), who=who)])
    assert located(extract("codex", doc).findings) == {("p/app.py", 9, 10, "BLOCKER", "summary")}
    doc["review_comments"] = [inline("p/app.py", 10, "**<sub><sub>![P0 Badge](x)</sub></sub> SQL**", who=who)]
    assert located(extract("codex", doc).findings) == {("p/app.py", 10, 10, "BLOCKER", "inline")}


def test_bugbot_locations_block_and_bug_id_dedupe() -> None:
    who = user("cursor[bot]", 206951365)
    body = fixture("bugbot_inline.md")
    first = inline("p/app.py", 5, body, who=who, comment_id=500)
    first["created_at"] = "2026-11-30T09:00:00Z"
    again = inline("p/app.py", 6, body.replace("p/app.py#L5-L5", "p/app.py#L6-L6"), who=who, comment_id=501)
    extraction = extract("bugbot", capture([again, first]))
    assert located(extraction.findings) == {
        ("p/app.py", 6, 6, "BLOCKER", "inline"),               # the re-post wins, once
        ("p/web/Profile.tsx", 30, 31, "BLOCKER", "summary"),    # second LOCATIONS entry
        ("p/app.py", 40, 41, "BLOCKER", "summary"),             # Additional Locations permalink
    }


def test_bugbot_outdated_comment_uses_the_locations_block() -> None:
    who = user("cursor[bot]", 206951365)
    c = inline("p/app.py", None, fixture("bugbot_inline.md"), who=who)
    c["original_line"] = None
    findings = extract("bugbot", capture([c])).findings
    assert ("p/app.py", 5, 5, "BLOCKER", "inline") in located(findings)


def test_greptile_line_fallback_and_legacy_additional_comments() -> None:
    who = user("greptile-apps[bot]", 165735046)
    c = inline("p/app.py", None, '<img alt="P1" src="p1.svg"> **Open redirect**\n\n<details><summary>Prompt To '
               "Fix With AI</summary>\n\nPath: p/app.py\nLine: 9-10\n</details>", who=who)
    c["original_line"] = None
    legacy = ("<details><summary>Additional Comments (1)</summary>\n\n- `p/web/Profile.tsx`, line 7-8 "
              f"([link]({BLOB}/p/web/Profile.tsx#L7-L8))\n  **logic:** bio is rendered as HTML\n</details>\n\n"
              "<sub>2 files reviewed, 2 comments</sub>")
    summary = ("<!-- greptile_summary -->\n<h3>Greptile Summary</h3>\nTouches `p/app.py:1`.\n"
               "<h3>Confidence Score: 3/5</h3>")
    extraction = extract("greptile", capture([c], [review(legacy, who=who)], [issue_comment(summary, who=who)]))
    assert located(extraction.findings) == {("p/app.py", 9, 10, "CRITICAL", "inline"),
                                            ("p/web/Profile.tsx", 7, 8, "MAJOR", "summary")}


def test_qodo_sections_and_inline_title_lookup() -> None:
    who = user("qodo-code-review[bot]", 151058649)
    doc = capture([inline("p/app.py", 5, "1. Token committed in source <code>⛨ Security</code>\n\nMove it to "
                          "the environment.", who=who)],
                  [review("", who=who)], [issue_comment(fixture("qodo_code_review.md"), who=who)])
    assert located(extract("qodo", doc).findings) == {
        ("p/app.py", 5, 5, "BLOCKER", "inline"),     # severity looked up by title: Action required
        ("p/app.py", 15, 16, "MAJOR", "summary"),    # Remediation recommended, no inline thread
    }


def test_qodo_pr_agent_suggestion_table_rows_keep_their_own_importance() -> None:
    who = user("qodo-merge-pro[bot]", 151058649)
    body = ("## PR Code Suggestions ✨\n\n<table>\n<tr><td>Security</td><td>Parameterise\n\n"
            "[p/app.py [10-11]](https://github.com/acme/canary/pull/7/files#diff-abcR10-R11)\n\n"
            "Suggestion importance[1-10]: 9</td></tr>\n<tr><td>General</td><td>Name\n\n"
            "[p/app.py [19]](https://github.com/acme/canary/pull/7/files#diff-abcR19)\n\n"
            "Suggestion importance[1-10]: 3</td></tr>\n</table>")
    assert located(extract("qodo", capture(issue_comments=[issue_comment(body, who=who)])).findings) == {
        ("p/app.py", 10, 11, "BLOCKER", "summary"), ("p/app.py", 19, 19, "MINOR", "summary")}


def test_cubic_violations_in_review_body() -> None:
    who = user("cubic-dev-ai[bot]", 191113872)
    body = ("**2 issues found** across 2 files\n\n<details><summary>Prompt for AI agents (all 2 issues)"
            "</summary>\n\n<violation number=\"1\" location=\"p/app.py:10\">P0: SQL built from input</violation>"
            "\n\n<violation number=\"2\" location=\"p/web/Profile.tsx:8\">P3: image has no alt</violation>\n"
            "</details>\n<!-- cubic:attribution IMPORTANT -->")
    assert located(extract("cubic", capture(reviews=[review(body, who=who)])).findings) == {
        ("p/app.py", 10, 10, "BLOCKER", "summary"), ("p/web/Profile.tsx", 8, 8, "MINOR", "summary")}


@pytest.mark.parametrize(("profile", "activity"), [("gemini", 0), ("sourcery", 2)])
def test_vendors_without_summary_findings_do_not_mine_walkthroughs(profile: str, activity: int) -> None:
    """Gemini's "Summary of Changes" is a placeholder until its review arrives (activity 0)."""
    who = user(get_profile(profile).login_for("issue"), 1)
    body = "## Summary of Changes\n\n* `p/app.py:5` adds a token\n* p/web/Profile.tsx#L7 renders HTML"
    extraction = extract(profile, capture(reviews=[review(body, who=who)],
                                          issue_comments=[issue_comment(body, who=who)]))
    assert extraction.findings == [] and extraction.activity == activity


def test_replies_and_human_comments_are_not_findings() -> None:
    who = user("coderabbitai[bot]", 136622811)
    first = inline("p/app.py", 5, "_🔴 Critical_ token", who=who, comment_id=800)
    reply = inline("p/app.py", 5, "_🔴 Critical_ still there", who=who, in_reply_to_id=800)
    human = inline("p/app.py", 10, "_🔴 Critical_ I think so too", who=HUMAN)
    assert [f.key for f in extract("coderabbit", capture([first, reply, human])).findings] == ["inline:800"]


@pytest.mark.parametrize("profile", ["copilot", "coderabbit", "bugbot", "qodo"])
def test_findings_do_not_depend_on_capture_order(profile: str) -> None:
    who = user(get_profile(profile).login_for("review"), 1)
    inline_who = COPILOT_INLINE if profile == "copilot" else who
    doc = capture(
        [inline("p/app.py", 10, "first", who=inline_who, comment_id=9001),
         inline("p/app.py", 5, fixture("bugbot_inline.md"), who=inline_who, comment_id=9002),
         inline("p/app.py", 15, "1. Page slice drops an item", who=inline_who, comment_id=9003)],
        [review(fixture("copilot_v2_review.md"), who=who), review(fixture("coderabbit_review.md"), who=who)],
        [issue_comment(fixture("qodo_code_review.md"), who=who)])
    forward = located(extract(profile, doc).findings)
    for key in ("review_comments", "reviews", "issue_comments"):
        doc[key].reverse()
    assert located(extract(profile, doc).findings) == forward and forward


def test_file_level_comment_is_not_promoted_to_lines_from_its_body() -> None:
    who = user("coderabbitai[bot]", 136622811)
    c = inline("p/app.py", None, "In `@p/app.py` around lines 14 - 15, fix it.", who=who, subject_type="file")
    c["original_line"] = None
    [f] = extract("coderabbit", capture([c])).findings
    assert (f.start, f.end, f.line_scoped) == (None, None, False)


# --- one place, several findings (issue 23) ---------------------------------------------

_RABBIT = user("coderabbitai[bot]", 136622811)
_OUTSIDE = ("**Actionable comments posted: 1**\n\n<details>\n<summary>⚠️ Outside diff range comments (1)</summary>"
            "<blockquote>\n\n<details>\n<summary>p/app.py (1)</summary><blockquote>\n\n`15`: **Token is logged.**\n\n"
            "_⚠️ Potential issue_ | _{level}_\n\nThe bearer token reaches the log.\n\n</blockquote></details>\n\n"
            "</blockquote></details>\n")


def test_two_findings_on_one_line_with_different_severities_stay_two() -> None:
    doc = capture([inline("p/app.py", 15, "_🛠️ Refactor suggestion_ | _🟡 Minor_\n\n**Name the constant.**",
                          who=_RABBIT)],
                  [review(_OUTSIDE.format(level="🔴 Critical"), who=_RABBIT)])
    assert located(extract("coderabbit", doc).findings) == {
        ("p/app.py", 15, 15, "MINOR", "inline"), ("p/app.py", 15, 15, "BLOCKER", "summary")}


def test_summary_item_repeating_an_inline_finding_is_one_finding() -> None:
    doc = capture([inline("p/app.py", 15, "_⚠️ Potential issue_ | _🟠 Major_\n\n**Token is logged.**", who=_RABBIT)],
                  [review(_OUTSIDE.format(level="🟠 Major"), who=_RABBIT)])
    assert located(extract("coderabbit", doc).findings) == {("p/app.py", 15, 15, "MAJOR", "inline")}


def test_nitpick_inside_another_findings_range_is_kept() -> None:
    body = ("**Actionable comments posted: 1**\n\n<details>\n<summary>🧹 Nitpick comments (1)</summary><blockquote>"
            "\n\n<details>\n<summary>p/app.py (1)</summary><blockquote>\n\n`12`: **Prefer an f-string.**\n\n"
            "</blockquote></details>\n\n</blockquote></details>\n")
    doc = capture([inline("p/app.py", 14, "_⚠️ Potential issue_ | _🟠 Major_\n\n**SQL built by concatenation.**",
                          who=_RABBIT, start_line=10)], [review(body, who=_RABBIT)])
    assert located(extract("coderabbit", doc).findings) == {
        ("p/app.py", 10, 14, "MAJOR", "inline"), ("p/app.py", 12, 12, "INFO", "summary")}


@pytest.mark.parametrize(("text", "expected"), [
    ("### docker-compose.yml (164-165)", ("docker-compose.yml", 164, 165)),
    ("- `src/app.py` (lines 12-15): unchecked input", ("src/app.py", 12, 15)),
    ("See src/app.py (line 7).", ("src/app.py", 7, 7)),
    ("**src/app.py (L3-L9)**", ("src/app.py", 3, 9)),
])
def test_path_with_lines_in_parentheses_is_a_location(text: str, expected: tuple[str, int, int]) -> None:
    found = citations(text, ("paren",))
    assert [(c.path, c.start, c.end) for c in found] == [expected]


def test_generic_summary_reads_every_location_form_with_each_items_own_severity() -> None:
    body = ("## Review\n\n| File | Lines | Severity |\n|---|---|---|\n| `p/app.py` | 12-15 | **High** |\n"
            "| `p/db.py` | 40 | **Low** |\n\n### p/web/ui.tsx (lines 3-7)\n\n**Medium**: raw HTML.\n\n"
            "- https://github.com/acme/canary/blob/0123456789abcdef0123456789abcdef01234567/p/auth.py#L9-L10 "
            "**High**: token logged\n")
    doc = capture(reviews=[review(body, who=user("house-bot[bot]", 9))])
    mining = replace(get_profile("generic"), mine_summaries=True)  # a house bot's --profiles entry
    assert located(mining.extract(comments_from_capture(doc)).findings) == {
        ("p/app.py", 12, 15, "CRITICAL", "summary"), ("p/db.py", 40, 40, "MINOR", "summary"),
        ("p/web/ui.tsx", 3, 7, "MAJOR", "summary"), ("p/auth.py", 9, 10, "CRITICAL", "summary")}


def test_claude_summary_with_path_and_lines_in_parentheses_is_mined() -> None:
    body = ("**Claude finished @alice's task in 2m**\n\n### Issues\n\n1. **p/app.py (lines 12-15)**: the API key "
            "is hard-coded.\n2. **p/db.py (line 40)**: SQL built by string concatenation.\n")
    doc = capture(issue_comments=[issue_comment(body, who=user("claude[bot]", 209825114))])
    assert {(f.path, f.start, f.end) for f in extract("claude", doc).findings} == {
        ("p/app.py", 12, 15), ("p/db.py", 40, 40)}
