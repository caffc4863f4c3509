"""CodeRabbit (docs/dialects.md §2).

Severity is one italic segment of the first line (``_⚠️ Potential issue_ | _🟠 Major_``);
the category alone is the older form, so it is only a fallback. Findings outside the
diff, nitpicks and duplicates (an earlier pass's findings that still stand) live only in
the review body, as ``path (N)`` sections holding
``X-Y:`` items, or (newer) as item summaries holding ``<code>path:a-b</code>``. The
summary comment (walkthrough) is never a finding and, alone, no review (a placeholder);
its skip, pause, rate-limit and failure notices mean the reviewer did not review, and
the "Review triggered" reply to a command is an acknowledgment, not a verdict.
"""

from __future__ import annotations

import re

from redline_canary.corpus.severity import Severity
from redline_canary.review.comments import Comment
from redline_canary.review.profiles.base import PlainHooks, Profile, Trigger, rule
from redline_canary.review.profiles.citations import FORMS, SummaryLocation, clean_path, line_span
from redline_canary.review.profiles.dialect import compile_table, sections

_MARKER = r"auto-generated comment: {what} by coderabbit\.ai"
_SECTIONS = {
    "outside": re.compile(r"Outside (?:the )?diff(?: range)? comments|Comments outside (?:the )?diff", re.IGNORECASE),
    "nitpick": re.compile(r"Nitpick comments", re.IGNORECASE),
    # Findings of an earlier pass that still stand; their inline thread may sit on an older
    # commit, so they are findings of this pass too (deduplicated against inline ones).
    "duplicate": re.compile(r"Duplicate comments", re.IGNORECASE),
    "file": re.compile(r"^\S+\.[A-Za-z0-9]+\s*\(\d+\)$"),
    "other": re.compile(
        r"Additional comments|Prompt for all review comments|Review info"
        r"|Review details|Autofix|Files (?:ignored|selected|skipped)|Commits|Walkthrough",
        re.IGNORECASE,
    ),
}
_FILE = re.compile(r"<summary>\s*(?P<path>[^<>\s]+\.[A-Za-z0-9]+)\s*\(\d+\)\s*</summary>", re.IGNORECASE)
_ITEM = re.compile(r"^(?:>\s?)*[ ]{0,3}`?(?P<a>\d+)(?:\s*-\s*(?P<b>\d+))?`?\s*:\s", re.MULTILINE)
# Newer review bodies put each outside-diff item's place in its <summary>:
# `<summary><em>🟠 Major</em> · Bug · <code>path:295-299</code></summary>` (the shape a
# public review gate tests against; index ref 70198174996).
_CODE_ITEM = re.compile(
    r"<summary>(?:(?!</summary>).)*?<code>\s*(?P<path>[^<>\s:]+\.[A-Za-z0-9]+):(?P<a>\d+)"
    r"(?:\s*[-–]\s*(?P<b>\d+))?\s*</code>(?:(?!</summary>).)*</summary>",
    re.IGNORECASE | re.DOTALL,
)
# The same item summary under a `path (N)` file section names only the range:
# `<summary><em>🟠 Major</em> · Bug · <code>295-299</code>: title</summary>`.
_CODE_RANGE = re.compile(
    r"<summary>(?:(?!</summary>).)*?<code>\s*(?P<a>\d+)(?:\s*[-–]\s*(?P<b>\d+))?\s*</code>(?:(?!</summary>).)*</summary>",
    re.IGNORECASE | re.DOTALL,
)
_FENCE = re.compile(r"^\s*(```|~~~).*?^\s*\1", re.MULTILINE | re.DOTALL)


class CodeRabbitHooks(PlainHooks):
    """Review bodies list outside-diff and nitpick findings; prompts name a moved line."""

    def summary_locations(self, profile: Profile, comment: Comment) -> list[SummaryLocation]:
        if comment.channel != "review":
            return []  # the walkthrough comment names files, it reports nothing
        out: list[SummaryLocation] = []
        seen: set[tuple[str, int, int]] = set()
        category = ""
        for name, text in sections(comment.body, _SECTIONS):
            if name != "file":
                category = name
            if category not in ("outside", "nitpick", "duplicate"):
                continue
            for loc in (*_code_items(profile, text, category), *_range_items(profile, text, name, category)):
                if (loc.path, loc.start, loc.end) not in seen:
                    seen.add((loc.path, loc.start, loc.end))
                    out.append(loc)
        return out

    def body_location(self, profile: Profile, comment: Comment) -> SummaryLocation | None:
        m = FORMS["around"].search(comment.body)
        if m is None:
            return None
        return SummaryLocation(clean_path(m["path"]), *line_span(m["a"], m["b"]))


def _level(profile: Profile, text: str, category: str) -> Severity | None:
    return profile.severity(text) or (Severity.INFO if category == "nitpick" else None)


def _code_items(profile: Profile, text: str, category: str) -> list[SummaryLocation]:
    """Items whose <summary> holds ``<code>path:a-b</code>``; each item's own severity."""
    found = list(_CODE_ITEM.finditer(text))
    out = []
    ends = [n.start() for n in found[1:]] + [len(text)]
    for m, end in zip(found, ends[: len(found)], strict=True):
        out.append(SummaryLocation(clean_path(m["path"]), *line_span(m["a"], m["b"]),
                                   _level(profile, text[m.start():end], category)))
    return out


def _range_items(profile: Profile, text: str, name: str, category: str) -> list[SummaryLocation]:
    """``X-Y:`` items under a ``path (N)`` file section."""
    if name != "file":
        return []
    m = _FILE.search(text)
    if m is None:
        return []
    path = clean_path(m["path"])
    text = _FENCE.sub("", text)  # suggestion diffs hold lines like "12: x"
    out = []
    found = list(_CODE_RANGE.finditer(text))
    ends = [n.start() for n in found[1:]] + [len(text)]
    for code, end in zip(found, ends[: len(found)], strict=True):
        out.append(SummaryLocation(path, *line_span(code["a"], code["b"]),
                                   _level(profile, text[code.start():end], category)))
    cuts = [i.start() for i in _ITEM.finditer(text)]
    for pos, end in zip(cuts, [*cuts[1:], len(text)][: len(cuts)], strict=True):
        item = _ITEM.match(text, pos)
        assert item is not None
        out.append(SummaryLocation(path, *line_span(item["a"], item["b"]), _level(profile, text[pos:end], category)))
    return out


CODERABBIT = Profile(
    name="coderabbit",
    description="CodeRabbit; italic severity segment, outside-diff and nitpick lists mined",
    logins=frozenset({"coderabbitai[bot]"}),
    any_bot=False,
    trigger=Trigger("comment", "@coderabbitai review"),
    acknowledges=True,  # CodeRabbit replies "Actions performed: Review triggered" to a review command
    trigger_phrases=("@coderabbitai",),
    mine_summaries=True,
    severity_patterns=compile_table([
        (r"🔴\s*Critical(?![A-Za-z])", Severity.BLOCKER),
        (r"🟠\s*Major(?![A-Za-z])", Severity.MAJOR),
        (r"🟡\s*Minor(?![A-Za-z])", Severity.MINOR),
        (r"(?:🔵\s*|_)Trivial(?![A-Za-z])|(?:🧹\s*|_)Nitpick(?![A-Za-z])|💤\s*Low value", Severity.INFO),
    ]),
    severity_fallbacks=compile_table([
        # Stacked categories, "_🛠️ Refactor suggestion_" over "_⚠️ Potential issue_": the
        # higher one rates the comment (fresh set: glific-frontend#3267).
        (r"🛠️?\s*Refactor suggestion_?\s*(?:\|\s*)?_?⚠️?\s*Potential issue(?![A-Za-z])", Severity.MAJOR),
        (r"⚠️?\s*Potential issue(?![A-Za-z])", Severity.MAJOR),
        (r"🛠️?\s*Refactor suggestion(?![A-Za-z])", Severity.MINOR),
    ]),
    signal_rules=(
        # docs/dialects.md §2 (jdx/mise#12718, tojemoc/sofie#61): skip, pause and
        # rate-limit notices, each wrapped in its HTML marker.
        rule("skipped", _MARKER.format(what="skip review") + r"|^[>\s]*#+\s*Review skipped\b"),
        rule("skipped", _MARKER.format(what="review paused") + r"|^[>\s]*#+\s*Reviews paused\b"),
        # ejc3/fcvm#902: "Review limit reached / Next included review available in 54
        # minutes" and the command reply "<summary>⚠️ Action not completed</summary> Review
        # rate limited." (also verbatim in public test suites, index refs 62473308747, 68285269123).
        rule("skipped", _MARKER.format(what="rate limited")
             + r"|Review limit reached|Rate limit exceeded|reached your PR review limit|Review rate limited"
             + r"|Action not completed\b"),
        # "Bot user detected. / To trigger a single review, invoke the `@coderabbitai review`
        # command." (fresh set: zenstack#148): a PR by a bot is not reviewed automatically.
        rule("skipped", r"^\W*Bot user detected\b"),
        # A failed run, e.g. "## Review failed / The head commit changed during the review"
        # (the markers a public CodeRabbit watcher keys on; index ref 52193655987).
        rule("error", _MARKER.format(what="failure") + r"|^[>\s]*#+\s*Review failed\b"),
        # "> [!CAUTION]\n> Failed to replace (edit) comment. This is likely due to insufficient
        # permissions or the comment being deleted." (fresh set: gears-rust#1537): CodeRabbit
        # broke posting its review; "insufficient" there is no quota.
        rule("error", r"^[>\s]*Failed to (?:replace|edit|post|create|update)\b(?: \(\w+\))? comment\b"),
        # "Currently processing new changes in this PR. This may take a few minutes, please
        # wait..." under the `review in progress` marker (sourcenetwork/defradb#4440; index
        # refs 66030045652, 62487927897): working, not a verdict and not yet activity.
        rule("progress", _MARKER.format(what="review in progress")
             + r"|Currently processing new changes in this PR", placeholder=True),
        # The reply to `@coderabbitai review`: "<summary>✅ Action performed</summary> Review
        # triggered." is an acknowledgment, not a review (index refs 52418173542, 53494872117);
        # "Review finished." says the run ended (index ref 71521355609).
        rule("progress", r"Actions? performed\b[\s\S]{0,200}?\b(?:Full )?review triggered", placeholder=True),
        rule("done", r"Actions? performed\b[\s\S]{0,200}?\bReview finished\b"),
        rule("clean", r"No actionable comments were generated"),
        # The review body of a finished pass (jdx/mise#12718).
        rule("done", r"\*\*Actionable comments posted:\s*\d+\*\*|^Actionable comments posted:\s*\d+"),
        # A review split over several bodies (NVIDIA/TensorRT-LLM#6809).
        rule("progress", r"Review continued from previous batch"),
        # The walkthrough comes before the review: alone, it is not a review, so a run that
        # never gets past it is silent, never a clean pass.
        rule("progress", _MARKER.format(what="summarize") + r"|^#+\s*Walkthrough\b", placeholder=True),
        # Chat replies: activity, never a verdict.
        rule("none", r"auto-generated reply by CodeRabbit"),
    ),
    notice_exempt=(
        re.compile(r"<!-- tips_start -->.*?(?:<!-- tips_end -->|\Z)", re.DOTALL),
        re.compile(r"^.*Files? (?:ignored|skipped|selected)\b.*$", re.MULTILINE | re.IGNORECASE),
        # The note under every command reply: "does not re-review already reviewed commits.
        # This command is applicable only when automatic reviews are paused."
        re.compile(r"CodeRabbit is an incremental review system[^\n]*", re.IGNORECASE),
    ),
    labels=(
        (Severity.BLOCKER, "_🔴 Critical_"),
        (Severity.MAJOR, '_🟠 Major_; a bare "⚠️ Potential issue"'),
        (Severity.MINOR, '_🟡 Minor_; a bare "🛠️ Refactor suggestion"'),
        (Severity.INFO, "Trivial, nitpick (review-body 🧹 Nitpick comments)"),
        (None, "no marker: INFO"),
    ),
    hooks=CodeRabbitHooks(),
)
