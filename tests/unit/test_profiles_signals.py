"""Done, clean, skipped, error, progress and none signals per vendor, and what they do to
the PR's outcome: a skip, quota or error notice is never recall 0 and never a clean pass."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from redline_canary.review.capture import comments_from_capture
from redline_canary.review.comments import Comment
from redline_canary.review.profiles import get_profile
from redline_canary.review.profiles.base import comment_from_reaction
from redline_canary.run.corpus_files import load_corpus
from redline_canary.score.evaluate import ScoreSettings, evaluate
from redline_canary.score.scoring import RecordMeta, decide_outcome
from tests.helpers.factories import BOTS, HUMAN, capture, inline, issue_comment, review

DATA = Path(__file__).resolve().parents[1] / "data" / "profiles"
META = RecordMeta(run_id="r1", recorded_at="2026-11-30T10:00:00Z", repo="acme/canary", pr=7, tool_version="test")
WHO = BOTS


def fixture(name: str) -> str:
    """``copilot_v2_review.md`` lives at ``copilot/v2_review.md`` (one folder per vendor)."""
    vendor, _, rest = name.partition("_")
    return (DATA / vendor / rest).read_text(encoding="utf-8")


def comment(profile: str, channel: str, body: str) -> Comment:
    return Comment(channel=channel, id=1, login=get_profile(profile).login_for(channel), user_id=None,
                   user_type="Bot", body=body, state="COMMENTED" if channel == "review" else None)


SIGNALS: list[tuple[str, str, str, str]] = [
    # copilot
    ("copilot", "review", fixture("copilot_v2_clean.md"), "clean"),
    ("copilot", "review", "## Pull request overview\n\nCopilot reviewed 2 out of 2 changed files in this "
     "pull request and generated no new comments.", "clean"),
    ("copilot", "review", fixture("copilot_legacy_suppressed.md"), "done"),  # suppressed N>=1: not clean
    ("copilot", "review", fixture("copilot_v2_review.md"), "done"),
    ("copilot", "review", "Copilot was unable to review this pull request because the user who requested "
     "the review has reached their quota limit.", "skipped"),
    ("copilot", "review", "Copilot encountered an error and was unable to review this pull request. You can "
     "try again by re-requesting a review.", "error"),
    ("copilot", "inline", "Missing null check.", "finding"),
    # coderabbit
    ("coderabbit", "issue", fixture("coderabbit_skip.md"), "skipped"),
    ("coderabbit", "issue", "<!-- This is an auto-generated comment: review paused by coderabbit.ai -->\n"
     "## Reviews paused\n\nResume with `@coderabbitai resume`.", "skipped"),
    ("coderabbit", "issue", "<!-- This is an auto-generated comment: rate limited by coderabbit.ai -->\n"
     "## Review limit reached\n\nyou've reached your PR review limit, so we couldn't start this review.",
     "skipped"),
    ("coderabbit", "issue", fixture("coderabbit_walkthrough.md")
     + "\n<!-- recent_review_start -->\nNo actionable comments were generated in the recent review. 🎉", "clean"),
    # The walkthrough alone is no review: a placeholder until the review or "clean" arrives.
    ("coderabbit", "issue", fixture("coderabbit_walkthrough.md"), "progress"),
    ("coderabbit", "issue", "<!-- This is an auto-generated reply by CodeRabbit -->\n## CodeRabbit Commands\n"
     "- `@coderabbitai review` to trigger an incremental review.", "none"),
    ("coderabbit", "review", fixture("coderabbit_review.md"), "done"),
    # codex
    ("codex", "issue", "To use Codex here, create a Codex account and connect to github.", "skipped"),
    ("codex", "issue", "You have reached your Codex usage limits for code reviews.", "skipped"),
    ("codex", "issue", "Codex usage limits have been reached for code reviews. Please check with the admins "
     "of this repo to increase the limits by adding credits.", "skipped"),
    ("codex", "issue", "Codex Review: Something went wrong. Try again later by commenting “@codex review”.",
     "error"),
    ("codex", "issue", fixture("codex_clean.md"), "clean"),
    ("codex", "reaction", "👍", "clean"),
    ("codex", "reaction", "👀", "progress"),
    ("codex", "issue", "<!-- codex-pull-request-review-summary -->\n## Codex Review Summary\n\n| Review | "
     "Status | Commit | Review trigger |\n|---|---|---|---|\n| 📝 **Code Review** | ⏳ **Running** | "
     "`79f9eb2` | Manual request |", "progress"),
    ("codex", "issue", "<!-- codex-pull-request-review-summary -->\n## Codex Review Summary\n\n| Review | "
     "Status | Commit | Review trigger |\n|---|---|---|---|\n| 📝 **Code Review** | ✅ **Completed** "
     '<relative-time datetime="2026-10-01T10:00:00Z"></relative-time> | `79f9eb2` | Manual request |', "done"),
    ("codex", "review", "### 💡 Codex Review\n\nHere are some automated review suggestions for this pull "
     "request.\n\n**Reviewed commit:** `79f9eb2a01`\n\n<details> <summary>ℹ️ About Codex in GitHub</summary>"
     "\n\nCodex has been enabled to automatically review pull requests.</details>", "done"),
    ("codex", "issue", fixture("codex_issue_finding.md"), "finding"),
    # gemini
    ("gemini", "issue", "> [!NOTE]\n> Gemini is unable to generate a review for this pull request due to the "
     "file types involved not being currently supported.", "skipped"),
    ("gemini", "issue", "You have reached your daily quota limit. Please try again tomorrow.", "skipped"),
    ("gemini", "review", "## Code Review\n\nI have no feedback to provide.", "clean"),
    ("gemini", "review", "## Code Review\n\nI have no additional feedback to provide as the changes are "
     "well-documented.", "clean"),
    ("gemini", "review", "## Code Review\n\nThis pull request adds order lookups. I found two issues.", "done"),
    ("gemini", "issue", "## Summary of Changes\n\nHello, I'm Gemini Code Assist! This PR adds `p/app.py:5`.\n\n"
     "<details><summary>Using Gemini Code Assist</summary>/gemini review</details>", "progress"),
    # claude
    ("claude", "issue", "**Claude Code is working…** <img src=\"spinner.gif\" />\n\n- [ ] Read the diff",
     "progress"),
    ("claude", "issue", "**Claude finished @octocat's task in 1m 14s** —— [View job](https://github.com/acme/"
     "canary/actions/runs/1)\n\n---\n### Code review\n\nNo issues found. Checked for bugs and CLAUDE.md "
     "compliance.", "clean"),
    ("claude", "issue", "**Claude finished @octocat's task in 2m 3s** —— [View job](https://github.com/acme/"
     "canary/actions/runs/1)\n\n---\n### Code review\n\nFound 1 issue:\n\n1. SQL built from input\n\n"
     "https://github.com/acme/canary/blob/0123456789abcdef0123456789abcdef01234567/p/app.py#L9-L10",
     "done"),
    ("claude", "issue", "**Claude encountered an error after 45s** —— [View job](https://github.com/acme/"
     "canary/actions/runs/1)", "error"),
    # bugbot
    ("bugbot", "review", "<!-- BUGBOT_REVIEW -->\n✅ Bugbot reviewed your changes and found no new issues!",
     "clean"),
    ("bugbot", "review", "<!-- BUGBOT_REVIEW -->\n✅ BugBot reviewed your changes and found no bugs!", "clean"),
    ("bugbot", "review", "<!-- BUGBOT_REVIEW -->\nCursor Bugbot has reviewed your changes and found 2 potential "
     "issues.\n\n<!-- BUGBOT_FIX_ALL -->", "done"),
    ("bugbot", "issue", "<!-- BUGBOT_FREE_TIER_DISABLED_UPSELL -->\n### This PR is being reviewed by Cursor "
     "Bugbot\n\nYour team is on the Bugbot Free tier and has used its reviews.", "skipped"),
    ("bugbot", "inline", fixture("bugbot_inline.md"), "finding"),
    # greptile
    ("greptile", "issue", "<!-- greptile_summary -->\n<h3>Greptile Summary</h3>\n\nAdds lookups.\n\n"
     "<h3>Confidence Score: 5/5</h3>\n\n- The PR appears safe to merge.\n- No P0 or P1 issues found.\n\n"
     "Reviews (1) · Last reviewed commit: [\"add lookups\"](https://github.com/acme/canary/commit/abc)", "clean"),
    ("greptile", "issue", "<!-- greptile_summary -->\n<h3>Greptile Summary</h3>\n\n<h2>Confidence Score: "
     "2/5</h2>\n\n<h2>Findings</h2>\n\n1. <img alt=\"P0\" src=\"p0.svg\">&nbsp;**SQL injection** "
     "<a href=\"#discussion_r11\">▶</a>\n\nReviews (1) · Last reviewed commit: [\"x\"](https://github.com/acme/"
     "canary/commit/abc)", "done"),
    ("greptile", "review", "<sub>2 files reviewed, 0 comments</sub>\n\n[Edit Code Review Agent Settings]"
     "(https://app.greptile.com) | [Greptile](https://greptile.com)", "clean"),
    ("greptile", "reaction", "😕", "error"),
    ("greptile", "reaction", "👀", "progress"),
    # sourcery
    ("sourcery", "review", "Hey - I've reviewed your changes and they look great!", "clean"),
    ("sourcery", "review", "Hey - I've found 2 issues, and left some high level feedback:\n\n- Consider a "
     "helper.", "done"),
    ("sourcery", "issue", "## Reviewer's Guide\n\nThis PR adds order lookups in `p/app.py`.", "progress"),
    # qodo
    ("qodo", "issue", "## PR Reviewer Guide 🔍\n\n<table><tr><td>⏱️ Estimated effort to review: 2 🔵🔵⚪⚪⚪"
     "</td></tr><tr><td>🧪 No relevant tests</td></tr><tr><td>⚡ No major issues detected</td></tr></table>",
     "clean"),
    ("qodo", "issue", "## PR Code Suggestions ✨\n\nNo code suggestions found for the PR.", "clean"),
    ("qodo", "issue", fixture("qodo_code_review.md"), "done"),
    ("qodo", "issue", "ⓘ You are approaching your monthly quota for Qodo.", "progress"),
    ("qodo", "issue", "You have reached your monthly quota for Qodo reviews.", "skipped"),
    # cubic
    ("cubic", "review", "**2 issues found** across 3 files\n\n<details><summary>Prompt for AI agents</summary>"
     "\n\n<violation number=\"1\" location=\"p/app.py:10\">P0: SQL from input</violation>\n</details>", "done"),
    ("cubic", "review", "**0 issues found** across 3 files", "clean"),
    # redline: reviews may stream, stability decides
    ("redline", "review", "done", "progress"),
]


@pytest.mark.parametrize(("name", "channel", "body", "expected"), SIGNALS)
def test_signal(name: str, channel: str, body: str, expected: str) -> None:
    assert get_profile(name).classify(comment(name, channel, body)) == expected


def test_every_vendor_has_signal_fixtures() -> None:
    from redline_canary.review.profiles import PROFILES

    assert set(PROFILES) - {name for name, *_ in SIGNALS} == {"generic"}
    seen = {expected for *_, expected in SIGNALS}
    assert seen == {"finding", "clean", "done", "skipped", "error", "progress", "none"}


@pytest.mark.parametrize("name", ["codex", "coderabbit", "claude", "bugbot", "greptile", "sourcery",
                                  "gemini", "qodo", "cubic"])
def test_trigger_comment_is_never_a_finding_nor_activity(name: str) -> None:
    profile = get_profile(name)
    phrase = profile.trigger.value or profile.trigger_phrases[0]
    # Even when the poster is counted as the reviewer (a bot that triggers itself, --login).
    poster = profile.with_logins(["octocat"])
    shapes = [comment(name, "issue", f"{phrase} please, p/app.py:5 looks wrong"),
              comment(name, "inline", f"{phrase}")]
    shapes = [Comment(**{**c.__dict__, "login": "octocat", "path": "p/app.py", "line": 5}) for c in shapes]
    extraction = poster.extract(shapes)
    assert extraction.findings == [] and extraction.activity == 0
    assert all(poster.classify(c) == "none" for c in shapes)


# --- outcomes ----------------------------------------------------------------------------

def _score(mini: Path, doc: dict[str, Any], reviewer: str, kind: str = "seeded") -> dict[str, Any]:
    settings = ScoreSettings(stack="mini", kind=kind, prefix="p")
    return evaluate(doc, load_corpus(mini), settings, get_profile(reviewer), META)[1].to_json()


NOTICES = [
    ("coderabbit", "issue", fixture("coderabbit_skip.md"), "silent",
     "Review skipped: Auto reviews are disabled on this repository."),
    ("coderabbit", "issue", "<!-- This is an auto-generated comment: rate limited by coderabbit.ai -->\n"
     "> [!WARNING]\n> ## Rate limit exceeded\n>\n> Please wait 12 minutes.", "silent", "Rate limit exceeded"),
    ("copilot", "review", "Copilot was unable to review this pull request because the user who requested the "
     "review has reached their quota limit.", "silent", "Copilot was unable to review"),
    ("copilot", "review", "Copilot encountered an error and was unable to review this pull request.", "error",
     "Copilot encountered an error"),
    ("codex", "issue", "You have reached your Codex usage limits for code reviews.", "silent", "usage limits"),
    ("codex", "issue", "Codex Review: Something went wrong. Try again later by commenting “@codex review”.",
     "error", "Something went wrong"),
    ("gemini", "issue", "> [!NOTE]\n> Gemini is unable to generate a review for this pull request due to the "
     "file types involved not being currently supported.", "silent", "Gemini is unable to generate a review"),
    ("claude", "issue", "**Claude encountered an error after 45s** —— [View job](https://x/actions/runs/1)",
     "error", "Claude encountered an error after 45s"),
    ("bugbot", "issue", "<!-- BUGBOT_FREE_TIER_DISABLED_UPSELL -->\n### This PR is being reviewed by Cursor "
     "Bugbot\n\nYour team is on the Bugbot Free tier.", "silent", "This PR is being reviewed by Cursor Bugbot"),
]


@pytest.mark.parametrize(("name", "channel", "body", "outcome", "quoted"), NOTICES)
@pytest.mark.parametrize("kind", ["seeded", "clean"])
def test_notice_makes_the_pr_silent_or_error_with_the_notice_quoted(
        mini_corpus: Path, name: str, channel: str, body: str, outcome: str, quoted: str, kind: str) -> None:
    who = WHO[name]
    doc = capture(reviews=[review(body, who=who)] if channel == "review" else [],
                  issue_comments=[issue_comment(body, who=who)] if channel == "issue" else [])
    r = _score(mini_corpus, doc, name, kind)
    assert r["outcome"] == outcome
    assert quoted in (r["notice"] or "")
    assert r["recall"] is None and r["missed"] == 0 and r["clean_false_positives"] is None
    assert r["gate"]["passed"] is False and quoted in r["gate"]["reasons"][0]


def test_coderabbit_skip_next_to_a_walkthrough_is_still_silent(mini_corpus: Path) -> None:
    who = WHO["coderabbit"]
    doc = capture(issue_comments=[issue_comment(fixture("coderabbit_walkthrough.md"), who=who),
                                  issue_comment(fixture("coderabbit_skip.md"), who=who)])
    r = _score(mini_corpus, doc, "coderabbit", "clean")
    assert r["outcome"] == "silent" and r["gate"]["passed"] is False


def test_codex_thumbs_up_reaction_is_clean_and_done(mini_corpus: Path) -> None:
    reaction = comment_from_reaction({"id": 5, "content": "+1", "created_at": "2026-11-30T10:00:00Z",
                                      "user": WHO["codex"]})
    extraction = get_profile("codex").extract([reaction])
    assert extraction.signals == [("clean", "👍")] and extraction.finished
    assert extraction.activity == 1 and extraction.findings == []
    assert decide_outcome(extraction) == ("scored", None)


@pytest.mark.parametrize("kind", ["seeded", "clean"])
def test_codex_didnt_find_any_major_issues_is_clean_and_done(mini_corpus: Path, kind: str) -> None:
    doc = capture(issue_comments=[issue_comment(fixture("codex_clean.md"), who=WHO["codex"])])
    comments = comments_from_capture(doc)
    extraction = get_profile("codex").extract(comments)
    assert extraction.finished and extraction.has("clean")
    r = _score(mini_corpus, doc, "codex", kind)
    assert r["outcome"] == "scored"
    if kind == "clean":
        assert r["clean_false_positives"] == 0 and r["gate"]["passed"]
    else:
        assert r["caught"] == 0 and r["missed"] == 6 and r["recall"] == 0.0


def test_placeholder_alone_is_silent_not_clean(mini_corpus: Path) -> None:
    body = "**Claude Code is working…**\n\n- [ ] Read the diff"
    doc = capture(issue_comments=[issue_comment(body, who=WHO["claude"])])
    r = _score(mini_corpus, doc, "claude", "clean")
    assert r["outcome"] == "silent" and r["gate"]["passed"] is False


def test_quota_warning_on_a_real_review_does_not_hide_the_review(mini_corpus: Path) -> None:
    doc = capture(issue_comments=[issue_comment(fixture("qodo_code_review.md"), who=WHO["qodo"])])
    r = _score(mini_corpus, doc, "qodo")
    assert r["outcome"] == "scored" and r["caught"] == 2  # SEED1 (Action required), SEED3 (Remediation)


def test_notice_plus_findings_still_scores(mini_corpus: Path) -> None:
    who = WHO["codex"]
    doc = capture([inline("p/app.py", 5, "**<sub><sub>![P0 Badge](x)</sub></sub> Token**", who=who)],
                  issue_comments=[issue_comment("You have reached your Codex usage limits.", who=who)])
    r = _score(mini_corpus, doc, "codex")
    assert r["outcome"] == "scored" and r["caught"] == 1
    assert "usage limits" in (r["notice"] or "")


def test_human_saying_quota_words_is_not_a_notice(mini_corpus: Path) -> None:
    doc = capture(issue_comments=[issue_comment("You have reached your Codex usage limits.", who=HUMAN)])
    assert _score(mini_corpus, doc, "codex")["notice"] is None


def test_codex_help_text_in_a_review_is_not_a_quota_notice() -> None:
    body = ("### 💡 Codex Review\n\n<details><summary>ℹ️ About Codex in GitHub</summary>\n\nAsk your admin "
            "about usage limits or to create an environment. To use Codex here, mention @codex.</details>")
    assert get_profile("codex").classify(comment("codex", "review", body)) == "done"


def test_reactions_without_meaning_are_not_activity() -> None:
    heart = comment_from_reaction({"id": 9, "content": "heart", "user": WHO["codex"]})
    eyes = comment_from_reaction({"id": 10, "content": "eyes", "user": WHO["codex"]})
    extraction = get_profile("codex").extract([heart, eyes])
    assert extraction.activity == 0 and not extraction.finished
    assert decide_outcome(extraction) == ("silent", None)


@pytest.mark.parametrize(("body", "quoted"), [
    ("<!-- marker -->\n> [!WARNING]\n> ## Review limit reached\n>\n> Try again in 5 minutes.\nmore",
     "Review limit reached: Try again in 5 minutes."),
    ("You have reached your Codex usage limits.\nSecond line", "You have reached your Codex usage limits."),
    ("**Claude encountered an error after 45s** —— [View job](https://x/runs/1)\n\nDetails",
     "Claude encountered an error after 45s —— [View job](https://x/runs/1)"),
    ("**Review failed**\nThe diff was too large.", "Review failed: The diff was too large."),
])
def test_notice_quote_is_the_readable_head(body: str, quoted: str) -> None:
    from redline_canary.review.profiles.base import quote

    assert quote(body) == quoted


# --- fail-safe notices (docs/matching.md: done/clean need positive evidence) ---------------------

@pytest.mark.parametrize(("name", "channel", "body", "signal"), [
    # A vendor's own done/clean marker never swallows a notice in the same body.
    ("claude", "issue", "**Claude finished @octocat's task in 3s** —— [View job](https://x/runs/1)\n\n---\n"
     "Code review skipped: the diff is too large to review.", "skipped"),
    ("bugbot", "review", "<!-- BUGBOT_REVIEW -->\nBugbot completed review. Reviews are paused: your team has "
     "reached its monthly usage limit.", "skipped"),
    ("gemini", "review", "## Code Review\n\nI have no feedback to provide.\n\nGemini encountered an error "
     "while generating the rest of this review.", "error"),
    ("cubic", "review", "**0 issues found** across 3 files\n\nThe review limit for your plan has been reached; "
     "upgrade your plan to review the remaining files.", "skipped"),
])
def test_done_or_clean_marker_next_to_a_notice_is_a_notice(name: str, channel: str, body: str,
                                                           signal: str) -> None:
    assert get_profile(name).classify(comment(name, channel, body)) == signal


@pytest.mark.parametrize("name", ["copilot", "coderabbit", "codex", "gemini", "greptile", "sourcery", "qodo",
                                  "cubic", "bugbot", "claude"])
def test_unknown_body_with_notice_words_is_a_notice_and_quoted(mini_corpus: Path, name: str) -> None:
    body = "## Status\n\nWe could not look at this change: the organization's plan has no credits left."
    doc = capture(reviews=[review(body, who=WHO[name])])
    r = _score(mini_corpus, doc, name, "clean")
    assert r["outcome"] == "silent" and "no credits left" in (r["notice"] or "")
    assert r["gate"]["passed"] is False and r["clean_false_positives"] is None


@pytest.mark.parametrize("name", ["copilot", "codex", "greptile", "qodo", "cubic"])
def test_unknown_body_without_notice_words_is_activity_not_done(name: str) -> None:
    c = comment(name, "review", "## Overview\n\nA new layout this profile has never seen.")
    extraction = get_profile(name).extract([c])
    assert extraction.activity == 1 and not extraction.finished and not extraction.findings
    assert decide_outcome(extraction) == ("scored", None)


def test_inline_comment_about_error_handling_or_rate_limits_is_a_finding() -> None:
    body = "**<sub><sub>![P1 Badge](x)</sub></sub> Rate limit errors are skipped**\n\nThe quota check fails open."
    c = Comment(channel="inline", id=1, login="chatgpt-codex-connector[bot]", user_id=None, user_type="Bot",
                body=body, path="p/app.py", line=10)
    extraction = get_profile("codex").extract([c])
    assert extraction.signals[0][0] == "finding" and len(extraction.findings) == 1
    assert decide_outcome(extraction) == ("scored", None)


def test_summary_that_cites_findings_is_a_finding_even_with_notice_words() -> None:
    body = ("### 💡 Codex Review\n\nhttps://github.com/acme/canary/blob/0123456789abcdef0123456789abcdef01234567"
            "/p/app.py#L9-L10\n**<sub><sub>![P0 Badge](x)</sub></sub>  Error handling skips the quota limit**")
    assert get_profile("codex").classify(comment("codex", "issue", body)) == "finding"


def test_working_words_alone_are_a_placeholder_so_the_pr_is_silent(mini_corpus: Path) -> None:
    doc = capture(issue_comments=[issue_comment("Reviewing your changes… this may take a few minutes.",
                                                who=WHO["cubic"])])
    r = _score(mini_corpus, doc, "cubic", "clean")
    assert r["outcome"] == "silent" and r["gate"]["passed"] is False


def test_notice_under_a_heading_is_quoted_from_its_own_line() -> None:
    body = ("## Pull request overview\n\nThis PR adds order lookups.\n\n"
            "Copilot could not review the remaining files because the review limit was reached.")
    extraction = get_profile("copilot").extract([comment("copilot", "review", body)])
    assert extraction.has("skipped")
    assert (extraction.notice("skipped") or "").startswith("Copilot could not review the remaining files")


@pytest.mark.parametrize(("name", "body"), [
    ("redline", "[BLOCKER] Upload errors are skipped silently when the quota is exceeded."),
    ("generic", "**Critical**: the rate limit check fails open, so billing errors are never raised."),
    ("greptile", '<img alt="P1" src="p1.svg"> **Retries are skipped after an error**'),
])
def test_review_body_that_rates_a_finding_is_never_a_notice(name: str, body: str) -> None:
    extraction = get_profile(name).extract([comment(name, "review", body)])
    assert not extraction.has("skipped") and not extraction.has("error")
    assert extraction.activity == 1


@pytest.mark.parametrize(("body", "signal"), [
    ("It looks like you have used all of your free reviews this month. If you want more, upgrade.", "skipped"),
    ("Something went wrong. Try again later.", "error"),
    ("If you'd like this pull request reviewed, upgrade your plan.", "skipped"),
])
def test_unexplained_notice_wordings_fail_safe(body: str, signal: str) -> None:
    assert get_profile("greptile").classify(comment("greptile", "issue", body)) == signal
