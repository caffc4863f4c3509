"""How a reviewer's notices read (docs/matching.md): the vendor-neutral vocabulary and its helpers. Pure.

A reviewer body that no rule of its profile explains and that reads like a notice is a
notice, never a clean pass. Vendors reword their skip, quota and billing notices more
often than anything else, so the vocabulary is vendor-neutral on purpose: a reworded
notice must fail safe (silent), never read as "found nothing". Kept apart from the
profile interface so that the words can be read, and changed, on their own.
"""

from __future__ import annotations

import re
from typing import Literal

from redline_canary.review.extraction import quote

_HTML_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_TAG = re.compile(r"<[^>]+>")

_FLAGS = re.IGNORECASE | re.MULTILINE
# Words that make a notice an *error* (the reviewer broke) rather than a skip.
_ERROR_WORDS = re.compile(
    r"\b(?:errors?|failed|failure|something went wrong|crash(?:ed)?|timed out|time-?out|internal"
    r"|(?:couldn't|could not|unable to|cannot|can't) (?:complete|finish)|did not (?:complete|finish)"
    r"|(?:ran into|hit|encountered|had|experienced) (?:a |an |some )?(?:\w+ )?(?:problem|trouble))\b", _FLAGS
)
_SKIP_WORDS = re.compile(
    r"\b(?:skip(?:s|ped|ping)?|limits?|quotas?|exceed(?:s|ed|ing)?|credits?|overage|billing|billed|plan"
    r"|upgrade|paused|too (?:large|big|many files)|not enabled|rate[- ]?limit(?:s|ed)?|disabled|declined"
    r"|suspended|expired|exhausted|insufficient)\b",
    _FLAGS,
)
# Phrases, for bodies a done/clean/progress rule explains: a "Review completed" that also
# says "skipped — limit reached" is a notice. Each phrase is about the reviewer's own run
# (review skipped, limit reached, unable to review), so prose that merely names the
# defect ("adds error handling", "rate limiting") never reads as one.
_DECLINED = r"(?:skipped|paused|failed|disabled|declined|not enabled|rate[- ]limited|cancell?ed|aborted|blocked)\b"
_AUX = r"(?:was|were|has been|have been|is|are)\s+"
_NOTICE_PHRASES = (
    # The review itself was skipped, paused, failed, disabled…
    rf"\breviews?\s+(?:{_AUX})?{_DECLINED}",
    rf"\breviews?\b[^.\n]{{0,30}}?\b{_AUX}{_DECLINED}",
    r"\b(?:skipped|skipping|declined|stopped)\s+(?:the |this |your |automatic |auto[- ])?(?:code )?reviews?\b",
    # …the reviewer could not review…
    r"\b(?:unable|not able|wasn't able|was not able|couldn't|could not|cannot|can't|did not|didn't)\s+(?:to\s+)?"
    r"(?:review|generate (?:a |the )?review|(?:complete|start) (?:the |this |a )?review"
    r"|process (?:this|the) (?:pull request|PR))\b",
    # …a limit, quota, allowance or credit ran out…
    r"\b(?:review|usage|spend|overage|trial|credit|monthly|weekly|daily|hourly|plan|pr review)[- ]limits?\s+"
    r"(?:has been |was |is )?(?:reached|exceeded|hit)\b",
    r"\b(?:reached|exceeded|hit|used up|exhausted)\s+(?:your|the|their|its|our|this|a)\b[^.\n]{0,40}?"
    r"\b(?:limits?|quotas?|allowance|credits?)\b",
    r"\b(?:out of|no remaining|insufficient|not enough)\s+(?:\w+\s+)?credits\b",
    r"\bcredits?\s+(?:are |have been |has been )?(?:exhausted|used up|depleted)\b|\boverage (?:spend )?limit\b",
    r"\bupgrade (?:your|to (?:a |the )?)\s*(?:\w+\s+){0,2}plan\b|\bbilling (?:issue|problem|error|details|limit)\b",
    r"\b(?:used|spent) (?:up )?(?:all )?(?:of )?(?:your|its|their|the)\b[^.\n]{0,30}?\b(?:reviews|credits|quota"
    r"|allowance)\b",
    # …the change is too big…
    r"\b(?:larger|bigger) than the (?:review |size |diff )?limit\b",
    r"\bexceeds? (?:the |our |your )?(?:maximum|max|review|size|diff|file)\b[^.\n]{0,30}?\b(?:limit|number|size)\b",
    r"\btoo (?:large|big|many files(?: changed)?)\s+(?:to|for)\s+(?:a\s+)?review\b|^\W*too many files changed\b",
    # …the reviewer broke, or is not switched on.
    # "Copilot encountered an error", "Cursor Bugbot failed": a named reviewer opens the line.
    r"^\W*(?:(?-i:[A-Z])[\w-]*\s+){1,3}(?:encountered an error|ran into an error|failed)\b",
    r"\b(?:encountered an|an (?:unexpected |internal )?)error\b[^.\n]{0,40}?\b(?:while|when)"
    r" (?:reviewing|generating)\b",
    r"\bsomething went wrong\b",
    r"\b(?:ran into|hit|encountered|had|experienced) (?:a |an |some )?(?:\w+ )?"
    r"(?:problem|issue|error|trouble|failure)s?\b[^.\n]{0,20}?\b(?:while|when) "
    r"(?:reviewing|generating|processing|analy[sz]ing)\b",
    r"\bfailed to (?:review|generate (?:a |the )?review|(?:complete|post|start) (?:the |this |a )?review)\b",
    r"\bnot (?:enabled|available) (?:for|on|in) (?:this|your) (?:repository|repo|organization|account)\b",
    r"^\W*(?:rate limit (?:exceeded|reached)|review limit reached|usage limit reached)\b",
    # …the run timed out (an error: the reviewer started and did not finish)…
    r"\b(?:review|request|run|job|analysis|operation|generation|task)\s+(?:has\s+|had\s+)?timed out\b"
    r"|\btimed out (?:while|during|before|after) (?:reviewing|the review|review|generating|analy[sz]ing)\b"
    r"|^\W*(?:review )?time-?out\b",
    r"\b(?:couldn't|could not|unable to|was unable to|cannot|can't) (?:complete|finish) (?:this|the|your) "
    r"(?:request|review|task|run)\b",
    # …it does not review this kind of PR ("does not review draft pull requests", "only
    # reviews PRs with up to 100 files", "won't review this PR because it targets…")…
    r"\b(?:does not|doesn't|won't|will not|do not|don't|cannot|can't) (?:auto-?|automatically )?review"
    r"(?! again)\b|\bonly reviews?\b[^.\n]{0,60}?\b(?:up to|fewer than|less than|at most|under|with no more)\b",
    # …its trial ran out, or it is over capacity…
    r"\b(?:trial|subscription|license|licence) (?:has |period has )?(?:ended|expired|lapsed)\b"
    r"|\b(?:at|over) capacity\b|\btoo many (?:requests|reviews)\b",
    # …or it declines to review again (already reviewed, a re-review it will not do).
    r"\b(?:won't|will not|not going to|declin\w* to|can't|cannot|not able to) (?:re-?review|review (?:it |this"
    r" (?:PR |pull request )?|the (?:PR |pull request )?)?again)\b|\balready (?:been )?reviewed\b[^.\n]{0,60}?"
    r"\b(?:won't|will not|skip\w*|no new (?:commits|changes))\b",
)
NOTICE_PHRASES = re.compile("|".join(_NOTICE_PHRASES), _FLAGS)
# Bare words, for bodies no rule explains and that cite no finding (and the phrases).
NOTICE_WORDS = re.compile(
    NOTICE_PHRASES.pattern
    + r"|\b(?:skip(?:s|ped|ping)?|limits?|quotas?|exceed(?:s|ed|ing)?|credits?|overage|billing|billed"
    r"|plan|upgrade|unable|failed|failure|errors?|paused|too (?:large|big|many files)|not enabled"
    r"|rate[- ]?limit(?:s|ed)?|(?:wasn't|was not|not) able to|couldn't|could not|cannot|disabled"
    r"|declined|unavailable|suspended|expired|exhausted|insufficient|timed out)\b",
    _FLAGS,
)
# "Working on it" bodies no rule knows: a placeholder, not activity, so a reviewer that
# never got past "Reviewing your changes…" before the timeout is silent, never clean.
WORKING_PHRASES = re.compile(
    r"^\W*(?:[\w-]+\s+){0,3}(?:is|are|am|'m) (?:now |currently |still |busy |already )?(?:reviewing|analy[sz]ing"
    r"|processing|working on|generating|preparing|looking (?:at|into))\b|\bwork in progress\b|\bplease wait\b"
    r"|\bthis (?:may|might|will|can) take (?:a few|several|some|up to)\b"
    r"|^\W*(?:preparing|generating|reviewing|analy[sz]ing|processing)\b[^.\n]{0,80}(?:\.\.\.|…)"
    # "I'm busy working on another task right now", "Codex is still working on it":
    # progress, not a verdict (issue 23).
    r"|\b(?:busy|still) (?:working|reviewing|processing)\b|\b(?:I'm|I am) (?:on it|busy)\b"
    r"|\b(?:review|analysis) (?:is )?(?:in progress|underway|queued|has started)\b"
    r"|\bwill (?:post|share|leave|add) (?:my |the |a )?(?:feedback|review|comments?|findings)\b[^.\n]{0,20}?"
    r"\b(?:shortly|soon|when (?:I'm|I am|it's|it is) (?:done|finished))\b",
    _FLAGS,
)
# A finished review with nothing to say, in words no vendor rule knows: "No issues found",
# "Reviewed 4 files, nothing to report", "found no problems". Read only in a body nothing
# else explains, after the notice vocabulary (a body that also says "skipped" is a notice):
# a completion must end the wait at once, not read as "in progress" until the timeout.
CLEAN_PHRASES = re.compile(
    r"\b(?:no|zero|0) (?:new |further |additional |major |significant |actionable |critical |blocking )?"
    r"(?:issues?|problems?|bugs?|findings?|concerns?|defects?|comments?|suggestions?)\b[^.\n]{0,20}?"
    r"\b(?:found|detected|identified|spotted|flagged|reported|to (?:report|flag|raise)|were generated)\b"
    r"|\bnothing (?:to (?:report|flag|comment on|add|point out)|(?:of )?(?:note|concern) (?:found|to report))\b"
    r"|\b(?:found|identified|detected|spotted|flagged|had|have) (?:no|0|zero) (?:\w+ ){0,2}(?:issues|problems|bugs"
    r"|findings|concerns)\b|\b(?:didn't|did not) (?:find|spot|identify|detect) (?:any )?(?:\w+ ){0,2}"
    r"(?:issues|problems|bugs|findings|concerns)\b|^\W*(?:LGTM|looks good to me)\b"
    r"|^\W*no (?:new |further |additional )?(?:issues|problems|bugs|findings|concerns)\b"
    r"(?![^.\n]*\b(?:but|except|other than)\b)",
    _FLAGS,
)
# A body that says it lists findings ("Found 3 issues", "2 potential issues detected"):
# a summary, whatever its item text says, is never a notice (issue 23: its findings lost).
FINDING_COUNT = re.compile(
    r"\b(?:found|identified|detected|flagged|spotted|posted)\s+\**[1-9]\d*\**\s+(?:\w+\s+){0,2}(?:issues?|problems?"
    r"|bugs?|findings?|comments?|suggestions?)\b|\b[1-9]\d*\**\s+(?:\w+\s+){0,2}(?:issues?|problems?|bugs?"
    r"|findings?)\**\s+(?:were\s+)?(?:found|detected|identified|flagged)\b",
    _FLAGS,
)
# A reply that thanks or acknowledges ("Thank you for addressing this!", "Got it, makes
# sense."): no finding, whatever channel it arrives on, unless it goes on to raise one.
ACK_OPENING = re.compile(
    r"\A\W*(?:@[\w-]+\W+)?(?:thanks?\b|thank you\b|you're welcome\b|glad\b|great[,!.]|understood\b|got it\b"
    r"|acknowledged\b|noted\b|appreciate\b|perfect[,!.]|sounds good\b|makes sense\b)",
    re.IGNORECASE,
)
_ACK_BUT = re.compile(
    r"\b(?:but|however|although|though|still|yet|should|must|consider|please|missing|instead|bug|issue|problem"
    r"|vulnerab\w*|leak\w*|injection|unsafe|incorrect|wrong|broken|fails?|crash\w*|concern)\b",
    re.IGNORECASE,
)


def is_ack(prose: str) -> bool:
    """A short thank-you or acknowledgement that raises nothing (``prose`` from :func:`notice_text`)."""
    text = prose.strip()
    return len(text) <= 400 and bool(ACK_OPENING.search(text)) and _ACK_BUT.search(text) is None
# Words that make a sentence describe the code under review rather than the reviewer's
# own run: "returns 429 when the client exceeded the rate limit", "adds retries if the
# upload failed". A vocabulary match after one of them in its sentence is no notice.
_DESCRIBING = re.compile(
    r"\b(?:when|whenever|if|unless|once|until|after|before|while|so that|instead of|handles?|handled|handling"
    r"|retr(?:y|ies|ied|ying)|adds?|added|adding|fix(?:es|ed|ing)?|prevents?|avoids?|tests?|returns?|throws?"
    r"|raises?|logs?|logged|catch(?:es)?|caught|should|would|shows?|displays?|renders?|maps?|surfaces?"
    r"|this (?:pull request|PR|change|patch|commit)|introduc\w+|updat\w+|implement\w*|configur\w+|now)\b",
    _FLAGS,
)


def first_notice(prose: str, vocabulary: re.Pattern[str]) -> re.Match[str] | None:
    """The first vocabulary match in ``prose`` that speaks of the reviewer, not the code.

    Only the phrases, read in bodies a done/clean rule explains, skip describing
    sentences: there the prose is a review's overview of the PR. In a body nothing
    explains, every word counts (docs/matching.md: a notice must fail safe).
    """
    for m in vocabulary.finditer(prose):
        start = max(prose.rfind(c, 0, m.start()) for c in ".!?\n") + 1
        if vocabulary is not NOTICE_PHRASES or _DESCRIBING.search(prose, start, m.start()) is None:
            return m
    return None


_ABOUT_CODE = re.compile(r"\b(?:ensur\w*|make sure|guarantee\w*|so|users?|callers?|clients?)\b", _FLAGS)


def says_clean(prose: str) -> bool:
    """A completion with nothing to say, not a sentence about the code: "No issues found" is
    one, "this change ensures no issues are reported to users" is not."""
    for m in CLEAN_PHRASES.finditer(prose):
        start = max(prose.rfind(c, 0, m.start()) for c in ".!?\n") + 1
        end = min((i for i in (prose.find(c, m.end()) for c in ".!?\n") if i >= 0), default=len(prose))
        if _DESCRIBING.search(prose, start, m.start()) is None and _ABOUT_CODE.search(prose, start, end) is None:
            return True
    return False


_FENCE = re.compile(r"^[ \t>]*(```|~~~).*?^[ \t>]*\1[^\n]*$", re.MULTILINE | re.DOTALL)
_URL = re.compile(r"\(?https?://[^\s)\]>\"']+\)?")
_INLINE_CODE = re.compile(r"`[^`\n]+`")


def notice_text(body: str) -> str:
    """The prose of a body, as notice detection reads it: no HTML comments or tags, no
    code, no URLs. Markers are the rules' business; code and links are the PR's words."""
    text = _HTML_COMMENT.sub(" ", body)
    text = _FENCE.sub(" ", text)
    text = _URL.sub(" ", text)
    text = _TAG.sub(" ", text)
    return _INLINE_CODE.sub(" ", text)


def notice_kind(text: str) -> Literal["error", "skipped"]:
    """``error`` when the notice says the reviewer broke, else ``skipped`` (it declined)."""
    if _ERROR_WORDS.search(text) and not _SKIP_WORDS.search(text):
        return "error"
    return "skipped"


def excerpt(body: str, pattern: re.Pattern[str]) -> str:
    """The body from the line that carries the notice, when the body's head does not say it.

    A record quotes the head of a notice (:func:`quote`); a notice buried under a review
    heading, an overview paragraph or a table header must still be what the record shows.
    A match that spans lines (a marker, then the status it governs) is quoted from the line
    where it ends: that is where the decisive word is.
    """
    head = quote(body)
    if pattern.search(head) or pattern.search(notice_text(head)):
        return body
    m = pattern.search(body)
    if m is not None:
        at = m.end() - 1 if "\n" in m[0] else m.start()
        return body[body.rfind("\n", 0, at) + 1:]
    lines = body.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if pattern.search(notice_text(line)):
            return "".join(lines[i:])
    return body


__all__ = [
    "ACK_OPENING", "CLEAN_PHRASES", "FINDING_COUNT", "NOTICE_PHRASES", "NOTICE_WORDS", "WORKING_PHRASES", "excerpt",
    "first_notice", "is_ack", "notice_kind", "notice_text", "says_clean",
]
