"""Completions, timeouts, busy notices and thank-you replies, as a user of each vendor meets them
(docs/dialects.md#completions): a reviewer that finished with nothing to say ends the wait as a
clean read, a review that timed out or failed ends the PR as ``error`` with the notice quoted,
"busy working" is progress, and a thank-you reply is never a finding."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from redline_canary.review.comments import Comment
from redline_canary.review.profiles import get_profile
from redline_canary.run.corpus_files import load_corpus
from redline_canary.score.evaluate import ScoreSettings, evaluate
from redline_canary.score.polling import PollConfig, PollState, observe
from redline_canary.score.scoring import RecordMeta
from tests.helpers.factories import BOTS, capture, issue_comment, review

META = RecordMeta(run_id="r1", recorded_at="2026-11-30T10:00:00Z", repo="acme/canary", pr=7, tool_version="test")
WHO = BOTS


def comment(profile: str, channel: str, body: str, **extra: Any) -> Comment:
    return Comment(channel=channel, id=1, login=get_profile(profile).login_for(channel), user_id=None,
                   user_type="Bot", body=body, state="COMMENTED" if channel == "review" else None, **extra)


def _score(mini: Path, doc: dict[str, Any], reviewer: str, kind: str = "clean") -> dict[str, Any]:
    settings = ScoreSettings(stack="mini", kind=kind, prefix="p")
    return evaluate(doc, load_corpus(mini), settings, get_profile(reviewer), META)[1].to_json()


def _doc(name: str, channel: str, body: str) -> dict[str, Any]:
    who = WHO[name]
    return capture(reviews=[review(body, who=who)] if channel == "review" else [],
                   issue_comments=[issue_comment(body, who=who)] if channel == "issue" else [])


COMPLETIONS = [
    ("greptile", "review", "Reviewed 4 files, nothing to report."),
    ("cubic", "review", "No issues found across 3 files"),
    ("qodo", "issue", "Looked at the 5 changed files: no issues found."),
    ("claude", "issue", "I reviewed the diff and found no issues. The retry logic and the tests look correct."),
    ("gemini", "issue", "I didn't find any issues in this pull request."),
    ("sourcery", "review", "Reviewed the changes: nothing to flag."),
    ("generic", "review", "LGTM! Reviewed 5 files, no issues found."),
]


@pytest.mark.parametrize(("name", "channel", "body"), COMPLETIONS)
def test_completion_with_nothing_to_say_ends_the_wait_at_once_as_clean(
        mini_corpus: Path, name: str, channel: str, body: str) -> None:
    extraction = get_profile(name).extract([comment(name, channel, body)])
    assert extraction.has("clean") and extraction.finished and not extraction.findings
    # The first poll that sees it ends the wait: no waiting out the timeout, no "silent".
    state = observe(PollState(started_at=0.0), PollConfig(), 30.0, "f1", extraction)
    assert state.verdict == "done"
    if name != "generic":
        r = _score(mini_corpus, _doc(name, channel, body), name)
        assert r["outcome"] == "scored" and r["clean_false_positives"] == 0 and r["gate"]["passed"]


FAILURES = [
    ("codex", "issue", "Codex Review: the request timed out. Try again later by commenting \"@codex review\".",
     "the request timed out"),
    ("codex", "issue", "Codex couldn't complete this request. Try again later.", "couldn't complete this request"),
    ("coderabbit", "review", "Review timed out. Please try again with `@coderabbitai review`.", "Review timed out"),
    ("qodo", "issue", "The review request timed out.", "The review request timed out"),
    ("greptile", "issue", "Greptile encountered an error while reviewing this PR. Please reach out to support.",
     "Greptile encountered an error"),
    ("sourcery", "issue", "Sourcery failed to review this pull request. Please try again later.",
     "Sourcery failed to review"),
]


@pytest.mark.parametrize(("name", "channel", "body", "quoted"), FAILURES)
def test_timed_out_or_failed_review_ends_the_pr_as_error_with_the_notice_quoted(
        mini_corpus: Path, name: str, channel: str, body: str, quoted: str) -> None:
    r = _score(mini_corpus, _doc(name, channel, body), name, "seeded")
    assert r["outcome"] == "error" and quoted in (r["notice"] or "")
    assert r["recall"] is None and r["gate"]["passed"] is False


DECLINES = [
    ("claude", "issue", "I've already reviewed this PR and won't review it again unless new commits are pushed."),
    ("coderabbit", "issue", "Reviews are not enabled for this repository."),
    ("copilot", "review", "Copilot has been paused for this repository."),
    ("generic", "issue", "Review skipped: draft pull request."),
    ("generic", "issue", "Skipping review: PR author is a bot."),
    ("cubic", "issue", "cubic is paused for this repository. Resume reviews in the cubic dashboard."),
]


@pytest.mark.parametrize(("name", "channel", "body"), DECLINES)
def test_declining_pausing_or_skipping_is_a_skip_never_clean(name: str, channel: str, body: str) -> None:
    extraction = get_profile(name).extract([comment(name, channel, body)])
    assert extraction.has("skipped") and not extraction.has("clean")


@pytest.mark.parametrize(("name", "channel", "body"), [
    ("codex", "issue", "I'm busy working on another task right now. I'll review this PR when I'm done."),
    ("sourcery", "issue", "Sourcery is busy reviewing your pull request. This may take a minute."),
    ("gemini", "issue", "Gemini is currently reviewing this pull request and will post feedback shortly."),
    ("cubic", "issue", "Review in progress: cubic will post its findings shortly."),
])
def test_busy_working_is_progress_so_the_pr_waits_and_is_silent_if_nothing_follows(
        mini_corpus: Path, name: str, channel: str, body: str) -> None:
    extraction = get_profile(name).extract([comment(name, channel, body)])
    assert extraction.signals[0][0] == "progress" and not extraction.finished
    assert _score(mini_corpus, _doc(name, channel, body), name)["outcome"] == "silent"


@pytest.mark.parametrize(("name", "body"), [
    ("coderabbit", "Thank you for addressing this! The change looks good."),
    ("gemini", "Thanks for the update, @alice. Using a parameterized query here resolves it."),
    ("copilot", "Got it, makes sense."),
])
def test_thank_you_reply_is_not_a_finding(name: str, body: str) -> None:
    c = comment(name, "inline", body, path="p/app.py", line=12)
    extraction = get_profile(name).extract([c])
    assert extraction.findings == [] and extraction.signals[0][0] == "none"


def test_thanks_that_goes_on_to_raise_a_defect_is_a_finding() -> None:
    c = comment("coderabbit", "inline", "Thanks for the update, but the key is still hard-coded here.",
                path="p/app.py", line=12)
    assert len(get_profile("coderabbit").extract([c]).findings) == 1


def test_summary_with_findings_is_never_read_as_an_error_notice() -> None:
    body = ("Found 2 issues in this pull request.\n\n1. Upload errors are swallowed: the request failed "
            "silently.\n2. Something went wrong handling the retry budget.")
    extraction = get_profile("greptile").extract([comment("greptile", "issue", body)])
    assert not extraction.has("error") and not extraction.has("skipped")


VENDORS = {"copilot": "Copilot", "coderabbit": "CodeRabbit", "codex": "Codex", "gemini": "Gemini",
           "claude": "Claude", "bugbot": "Bugbot", "greptile": "Greptile", "sourcery": "Sourcery", "qodo": "Qodo",
           "cubic": "cubic"}
# Every notice class, worded the way vendors word them, with no vendor-specific marker:
# what a reworded notice looks like the day it ships (docs/dialects.md#completions).
CLASSES = [
    ("timed out", "error", "{v}: the review request timed out. Please try again."),
    ("failed", "error", "{v} failed to review this pull request. Please try again later."),
    ("busy", "progress", "{v} is busy reviewing another pull request. This may take a few minutes."),
    ("rate limited", "skipped", "{v} is rate limited. Reviews will resume in 20 minutes."),
    ("paused", "skipped", "Reviews are paused for this repository."),
    ("quota", "skipped", "You have used all of your {v} reviews for this month. Upgrade your plan to continue."),
    ("not enabled", "skipped", "{v} is not enabled for this repository."),
    ("declined", "skipped", "I already reviewed this pull request and won't review it again without new commits."),
    ("skipped size", "skipped", "This pull request is too large to review (312 files changed)."),
    ("skipped draft", "skipped", "Review skipped: this pull request is a draft."),
    ("skipped bot", "skipped", "Skipping review: the pull request author is a bot."),
    ("skipped branch", "skipped", "Review skipped: the base branch is not the default branch."),
    ("clean", "clean", "{v} reviewed 4 files and found no issues."),
    ("failed, reworded", "error", "{v} ran into a problem while reviewing. Please re-request a review."),
    ("size, reworded", "skipped", "This PR has more than 100 files; {v} only reviews PRs with up to 100 files."),
    ("draft, reworded", "skipped", "{v} does not review draft pull requests."),
    ("bot author, reworded", "skipped", "Automatic reviews are disabled for pull requests opened by bots."),
    ("branch, reworded", "skipped", "{v} won't review this PR because it targets a non-default branch."),
    ("trial", "skipped", "Your {v} trial has ended. Subscribe to keep getting reviews."),
    ("capacity", "skipped", "{v} is at capacity right now. Please retry in a few minutes."),
    ("clean, terse", "clean", "No new issues in the latest changes."),
    ("clean, nothing", "clean", "{v} found nothing to comment on in this pull request."),
]


@pytest.mark.parametrize("vendor", sorted(VENDORS))
@pytest.mark.parametrize(("label", "signal", "text"), CLASSES, ids=[c[0] for c in CLASSES])
def test_every_notice_class_reads_as_itself_for_every_vendor(vendor: str, label: str, signal: str,
                                                             text: str) -> None:
    body = text.format(v=VENDORS[vendor])
    for channel in ("review", "issue"):
        extraction = get_profile(vendor).extract([comment(vendor, channel, body)])
        assert extraction.signals[0][0] == signal, (channel, body)
        if signal in ("skipped", "error"):
            assert extraction.notice(signal) and not extraction.findings


@pytest.mark.parametrize("body", [
    "This change ensures no issues are reported to users when the cache is cold.",
    "Adds a guard so that no problems are flagged for callers with an empty cart.",
])
def test_a_sentence_about_the_code_is_not_a_clean_verdict(body: str) -> None:
    assert not get_profile("greptile").extract([comment("greptile", "review", body)]).has("clean")
