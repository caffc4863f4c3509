"""The profile interface: everything vendor-specific about a reviewer (DESIGN §1, §5).

A profile answers five questions about comments on a PR: is this the reviewer, what
severity did it give, where does it point (inline coordinates or ``path:line`` cited in a
summary), does the comment cite a rule, and what does the comment signal (finding, done,
clean, skipped, error...). Vendor profiles subclass :class:`Profile` and mostly declare
data (logins, severity patterns, signal rules); the hooks exist for the few vendors
whose dialect needs code, and the default :meth:`Profile.extract` turns a whole thread
into findings. Pure.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from redline_canary.comments import (
    CHECK_CHANNEL,
    REACTION_CHANNEL,
    Comment,
    comment_from_check_run,
    comment_from_reaction,
)
from redline_canary.extraction import Extraction, quote
from redline_canary.findings import Finding, inline_range
from redline_canary.profiles.citations import SummaryLocation, cited
from redline_canary.profiles.notices import (
    NOTICE_PHRASES,
    NOTICE_WORDS,
    WORKING_PHRASES,
    excerpt,
    first_notice,
    notice_kind,
    notice_text,
)
from redline_canary.rule_ids import cite_rule
from redline_canary.severity import Severity

SIGNALS = ("finding", "clean", "done", "skipped", "error", "progress", "none")
UNRATED_POLICIES = ("info", "location")
TRIGGER_KINDS = ("none", "request", "comment")

_DISCUSSION = re.compile(r"#discussion_r(\d+)")

def normalize_login(login: str) -> str:
    """REST says ``name[bot]``, GraphQL says ``name``; both name the same account."""
    login = login.strip().lower()
    return login[: -len("[bot]")] if login.endswith("[bot]") else login


@dataclass(frozen=True)
class Trigger:
    """How to wake the reviewer: ``none``, ``request`` a reviewer login, or post a ``comment``."""

    kind: str = "none"
    value: str = ""


@dataclass(frozen=True)
class SignalRule:
    """A body that matches ``pattern`` (and not ``unless``) carries ``signal``.

    Rules are tried in the profile's order, so a vendor lists its quota and skip
    notices before its "done" markers. A ``clean`` rule never fires on a body that
    itself cites findings: "Findings: None" next to a "Previously missed" entry is not
    a clean review.
    """

    signal: str
    pattern: re.Pattern[str]
    unless: re.Pattern[str] | None = None
    channels: frozenset[str] = frozenset({"review", "issue", REACTION_CHANNEL})
    # A "working…" placeholder (👀, Claude's spinner comment) is not activity: a reviewer
    # that said nothing else before the timeout was silent, not clean.
    placeholder: bool = False

    def matches(self, comment: Comment) -> bool:
        if comment.channel not in self.channels or not self.pattern.search(comment.body):
            return False
        return self.unless is None or not self.unless.search(comment.body)


def rule(signal: str, pattern: str, unless: str | None = None, *,
         channels: Iterable[str] = ("review", "issue", REACTION_CHANNEL),
         placeholder: bool = False) -> SignalRule:
    """A case-insensitive, multi-line :class:`SignalRule` (the form vendor modules write)."""
    flags = re.IGNORECASE | re.MULTILINE
    return SignalRule(signal, re.compile(pattern, flags),
                      re.compile(unless, flags) if unless else None, frozenset(channels),
                      placeholder)


SeverityTable = tuple[tuple[re.Pattern[str], Severity], ...]


class Profile:
    """A reviewer dialect. Instances are immutable in spirit: use :meth:`copy`."""

    name = "base"
    description = ""
    logins: frozenset[str] = frozenset()
    bot_ids: frozenset[int] = frozenset()
    any_bot = True  # with no logins configured, any user of type Bot is the reviewer
    unrated = "info"  # DESIGN §5: "location" = severity check skipped, counts on clean PR
    # The level an untagged finding gets (DESIGN §5: INFO). ``untagged: lowest`` in a profiles
    # file sets it to ``lowest_level``, the vendor's own lowest: Redline's scorer counts an
    # untagged comment as a SUGGESTION, so comparable numbers need that, but it is off by
    # default because it makes every untagged aside of another bot a rated finding.
    untagged_level = Severity.INFO
    lowest_level = Severity.INFO
    trigger = Trigger()
    # Commands that wake the reviewer besides ``trigger``; a comment opening with one is a
    # request to the reviewer, never something the reviewer said.
    trigger_phrases: tuple[str, ...] = ()
    mine_summaries = False
    # What a submitted review that cites findings means when no rule matched: "done" for
    # one-shot reviewers, "progress" for bots that may post several reviews (then
    # stability decides). A review that neither cites findings nor matches a rule is
    # activity only ("progress"): done needs positive evidence (DESIGN §6).
    review_signal = "done"
    # Bots that say "done"/"clean" with a reaction on the PR (Codex, Greptile): polled too.
    reads_reactions = False
    # The vendor always answers its trigger comment (a 👀 reaction, a "review triggered"
    # reply, a "working…" comment): silence after a bounded wait means it never heard it.
    acknowledges = False
    reads_check_runs = False  # poll the head commit's check runs (Bugbot's "finished")
    # (pattern, severity): the earliest match in a body wins. Overrides (from --profiles)
    # are consulted first and fallbacks last, so "Potential issue | Critical" is Critical
    # although the bare category comes first in the line.
    severity_overrides: SeverityTable = ()
    severity_patterns: SeverityTable = ()
    severity_fallbacks: SeverityTable = ()
    signal_rules: tuple[SignalRule, ...] = ()
    # Routine text of the vendor's that reads like a notice but is none ("Files skipped
    # from review", a help block naming usage limits): removed before notice detection.
    notice_exempt: tuple[re.Pattern[str], ...] = ()
    # Reviews and summaries list inline threads as `[title](#discussion_r<id>)` next to a
    # severity badge: the inline comment's severity is read from there.
    discussion_links = False
    # (severity or None for "unrated", vendor wording) rows for `profile list`.
    labels: tuple[tuple[Severity | None, str], ...] = ()

    def copy(self, **changes: Any) -> Profile:
        """A copy with some attributes overridden (``--login``, YAML overrides)."""
        clone = copy.copy(self)
        for key, value in changes.items():
            if not hasattr(self, key):
                raise AttributeError(f"profile has no setting {key!r}")
            setattr(clone, key, value)
        return clone

    def with_logins(self, logins: Iterable[str]) -> Profile:
        """A copy that counts only comments by these logins (``--login``)."""
        return self.copy(logins=frozenset(login.lower() for login in logins),
                         bot_ids=frozenset(), any_bot=False)

    def login_for(self, channel: str) -> str:
        """The login this reviewer posts under on ``channel`` (for classifying a lone body)."""
        if not self.logins:
            return "reviewer[bot]"
        return sorted(self.logins, key=lambda x: (not x.endswith("[bot]"), x))[0]

    # --- hooks -------------------------------------------------------------------
    def is_reviewer(self, comment: Comment) -> bool:
        login = normalize_login(comment.login)
        if login and login in {normalize_login(x) for x in self.logins}:
            return True
        if comment.user_id is not None and comment.user_id in self.bot_ids:
            return True
        return self.any_bot and not self.logins and comment.user_type == "Bot"

    def is_trigger(self, comment: Comment) -> bool:
        """A command addressed to the reviewer (``@codex review``), whoever posted it."""
        phrases = list(self.trigger_phrases)
        if self.trigger.kind == "comment" and self.trigger.value:
            phrases.append(self.trigger.value)
        head = comment.body.lstrip().lower()
        return any(head.startswith(p.lower()) for p in phrases if p)

    def severity(self, body: str) -> Severity | None:
        """The severity the body claims, or None when it claims none."""
        return self.severity_reading(body)[0]

    def severity_word(self, body: str) -> str:
        """The vendor's own words for the severity :meth:`severity` reads ("" if none)."""
        return self.severity_reading(body)[1]

    def severity_reading(self, body: str) -> tuple[Severity | None, str]:
        """(severity, the text that said it): the first marker of the first table that has one."""
        for table in (self.severity_overrides, self.severity_patterns, self.severity_fallbacks):
            best: tuple[int, Severity, str] | None = None
            for pattern, level in table:
                m = pattern.search(body)
                if m and (best is None or m.start() < best[0]):
                    best = (m.start(), level, m.group(0))
            if best:
                return best[1], " ".join(best[2].split())[:60]
        return None, ""

    def severity_marks(self, body: str) -> list[tuple[int, Severity]]:
        """Where each severity marker of a body sits: a list of findings has one per item.

        The fallback table (a bare category) counts only when no proper marker exists.
        """
        for tables in ((self.severity_overrides, self.severity_patterns), (self.severity_fallbacks,)):
            found = sorted((m.start(), level) for table in tables for pattern, level in table
                           for m in pattern.finditer(body))
            if found:
                return found
        return []

    def classify(self, comment: Comment) -> str:
        """One of SIGNALS for a reviewer comment."""
        return self.reading(comment)[0]

    def reading(self, comment: Comment) -> tuple[str, str]:
        """The signal of a reviewer comment and the text a record quotes for it.

        Done and clean need positive evidence (DESIGN §6). A body a rule explains keeps
        the rule's signal unless it also carries a notice phrase ("Review completed" next
        to "skipped: limit reached"); a body no rule explains is checked against the
        notice vocabulary; a body that cites or rates findings is never a notice; any
        other body is activity only. Inline comments are findings: an inline comment
        *about* error handling or a rate limit is the defect, not a notice.
        """
        body = comment.body
        if self.is_trigger(comment):
            return "none", body
        if comment.channel == "inline":
            return "finding", body
        prose = comment.channel in ("review", "issue")
        matched = self.signal_rule(comment)
        if matched is not None and matched.signal in ("skipped", "error"):
            return matched.signal, excerpt(body, matched.pattern)
        cited = prose and self.mine_summaries and bool(self.summary_locations(comment))
        # A body that rates something (a severity marker) reports findings, whatever words
        # describe them: "[HIGH] upload errors are skipped" is a finding, not a notice.
        rated = cited or self.severity(body) is not None
        if matched is not None:
            # Only a verdict can swallow a notice; a walkthrough or a "working…" body keeps
            # its rule's meaning (its prose describes the PR, which may well be about reviews).
            if prose and not rated and matched.signal in ("done", "clean"):
                found = self.notice(comment, NOTICE_PHRASES)
                if found is not None:
                    return found
            return matched.signal, body
        if cited:
            return ("finding" if comment.channel == "issue" else self.review_signal), body
        if prose and not rated:
            found = self.notice(comment, NOTICE_WORDS)
            if found is not None:
                return found
            if WORKING_PHRASES.search(notice_text(body)):
                return "progress", body
        # Activity only: a review nobody's rule explains is not a "done" verdict.
        return ("progress" if comment.channel == "review" else "none"), body

    def placeholder(self, comment: Comment) -> bool:
        """A "working…" body (a placeholder rule, or working words no rule explains)."""
        matched = self.signal_rule(comment)
        if matched is not None:
            return matched.placeholder
        return comment.channel in ("review", "issue") and bool(WORKING_PHRASES.search(notice_text(comment.body)))

    def notice(self, comment: Comment, vocabulary: re.Pattern[str]) -> tuple[str, str] | None:
        """(``skipped`` or ``error``, the text to quote) when the body reads like a notice."""
        text = comment.body
        for exempt in self.notice_exempt:
            text = exempt.sub(" ", text)
        prose = notice_text(text)
        m = first_notice(prose, vocabulary)
        if m is None:
            return None
        line = prose[prose.rfind("\n", 0, m.start()) + 1:]
        line = line[: line.find("\n")] if "\n" in line else line
        kind = notice_kind(line if vocabulary is NOTICE_PHRASES else prose)
        return kind, excerpt(comment.body, re.compile(re.escape(m[0]), re.IGNORECASE))

    def signal_rule(self, comment: Comment) -> SignalRule | None:
        """The first of ``signal_rules`` this (non-inline, non-trigger) comment matches."""
        for r in self.signal_rules:
            if r.matches(comment):
                if r.signal == "clean" and self.mine_summaries and self.summary_locations(comment):
                    continue
                return r
        return None

    def summary_locations(self, comment: Comment) -> list[SummaryLocation]:
        """``path:line`` citations in a review body or issue comment (when mining)."""
        level = self.severity(comment.body)
        return [SummaryLocation(c.path, c.start, c.end, level) for _m, c in cited(comment.body, "generic")]

    def body_location(self, comment: Comment) -> SummaryLocation | None:
        """Where an inline comment's own body says it points, for outdated comments whose
        ``line`` and ``original_line`` are gone (reviewer-dialects, fact 4)."""
        return None

    def inline_extra_locations(self, comment: Comment) -> list[SummaryLocation]:
        """Further places an inline comment names (Bugbot's LOCATIONS); kept as summary
        findings, deduplicated against inline ones."""
        return []

    def inline_severities(self, comments: Sequence[Comment]) -> dict[int, Severity]:
        """Severities other comments give inline comments, by inline comment id.

        Comments are read oldest first so the latest review's list wins: bots rewrite
        their overview on every pass.
        """
        found: dict[int, Severity] = {}
        if not self.discussion_links:
            return found
        for c in sorted(comments, key=lambda c: (c.created_at, c.id)):
            if c.channel == "inline":
                continue
            for line in c.body.splitlines():
                level = self.severity(line)
                if level is None:
                    continue
                for m in _DISCUSSION.finditer(line):
                    found[int(m[1])] = level
        return found

    def dedupe_key(self, comment: Comment) -> str | None:
        """A vendor id that stays the same when the bot re-posts one finding."""
        return None

    def cites(self, body: str, rule: str) -> bool:
        return cite_rule(body, rule)

    # --- the whole thread --------------------------------------------------------
    def rate(self, severity: Severity | None) -> Severity | None:
        """Apply the unrated policy: None survives only for ``unrated: location``."""
        if severity is None and self.unrated != "location":
            return self.untagged_level
        return severity

    def extract(self, comments: Sequence[Comment]) -> Extraction:
        """Findings, activity and signals of the reviewer on one PR.

        Trigger comments and "working…" placeholders are not activity: a reviewer that
        said nothing but "in progress" before the timeout was silent, not clean. Other
        "progress" (a review from a bot that may post several) is activity.
        """
        out = Extraction()
        mine = [c for c in comments if self.is_reviewer(c) and not self.is_trigger(c)]
        rated = self.inline_severities(mine)
        summary: list[Finding] = []
        latest: dict[str, Comment] = {}
        for c in mine:
            key = self.dedupe_key(c)
            if key is not None and (key not in latest
                                    or (c.created_at, c.id) > (latest[key].created_at, latest[key].id)):
                latest[key] = c
        for c in mine:
            signal, said = self.reading(c)
            out.signals.append((signal, said))
            if signal == "progress" and c.channel != "inline" and self.placeholder(c):
                continue
            if c.channel in (REACTION_CHANNEL, CHECK_CHANNEL) and signal == "none":
                continue  # an emoji or check the dialect gives no meaning says nothing
            out.activity += 1
            if signal in ("skipped", "error") or c.is_reply:
                continue
            key = self.dedupe_key(c)
            if key is not None and latest[key] is not c:
                continue
            if c.channel == "inline":
                start, end, scoped = inline_range(c)
                path = c.path
                if end is None and c.subject_type != "file" and (c.side or "RIGHT").upper() != "LEFT":
                    loc = self.body_location(c)
                    if loc is not None and (path is None or path == loc.path):
                        path, start, end, scoped = loc.path, loc.start, loc.end, True
                level = rated.get(c.id) or self.severity(c.body)
                out.findings.append(Finding(
                    key=f"inline:{c.id}", path=path, start=start, end=end,
                    severity=self.rate(level), body=c.body, login=c.login,
                    source="inline", line_scoped=scoped, url=c.html_url,
                    word=self.severity_word(c.body) if c.id not in rated else level.name if level else "",
                ))
                locations = self.inline_extra_locations(c) if self.mine_summaries else []
            elif self.mine_summaries and c.channel not in (REACTION_CHANNEL, CHECK_CHANNEL):
                locations = self.summary_locations(c)
            else:
                locations = []
            for i, loc in enumerate(locations):
                summary.append(Finding(
                    key=f"{c.channel}:{c.id}#{i}", path=loc.path, start=loc.start,
                    end=loc.end, severity=self.rate(loc.severity), body=c.body,
                    login=c.login, source="summary", url=c.html_url,
                    word=self.severity_word(c.body),
                ))
        # Sorted so the citation kept among overlapping ones never depends on capture order.
        out.findings.extend(dedupe_summary(out.findings, sorted(summary, key=Finding.sort_key)))
        return out


def dedupe_summary(inline: Sequence[Finding], summary: Sequence[Finding]) -> list[Finding]:
    """Summary citations that repeat an inline finding (same path, overlapping lines) go."""
    kept: list[Finding] = []
    seen = list(inline)
    for f in summary:
        if any(
            g.path == f.path and g.start is not None and g.end is not None
            and f.start is not None and f.end is not None
            and g.start <= f.end and f.start <= g.end
            for g in seen
        ):
            continue
        kept.append(f)
        seen.append(f)
    return kept


__all__ = [
    "NOTICE_PHRASES",
    "NOTICE_WORDS",
    "REACTION_CHANNEL",
    "SIGNALS",
    "TRIGGER_KINDS",
    "UNRATED_POLICIES",
    "Extraction",
    "Profile",
    "SeverityTable",
    "SignalRule",
    "SummaryLocation",
    "Trigger",
    "comment_from_check_run",
    "comment_from_reaction",
    "dedupe_summary",
    "excerpt",
    "normalize_login",
    "notice_kind",
    "notice_text",
    "quote",
    "rule",
]
