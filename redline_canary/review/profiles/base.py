"""The profile engine: how one :class:`ProfileSpec` reads a reviewer's comments (docs/matching.md#findings).

A profile answers five questions about comments on a PR: is this the reviewer, what
severity did it give, where does it point (inline coordinates or ``path:line`` cited in a
summary), does the comment cite a rule, and what does the comment signal (finding, done,
clean, skipped, error...). A vendor declares data (:mod:`.spec`); the few dialects that
need code supply :class:`Hooks`; :meth:`Profile.extract` turns a whole thread into
findings. The notice vocabulary lives in :mod:`.notices`, the citation grammar in
:mod:`.citations`. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from redline_canary.corpus.rule_ids import cite_rule
from redline_canary.corpus.severity import Severity
from redline_canary.review.comments import (
    CHECK_CHANNEL,
    REACTION_CHANNEL,
    Channel,
    Comment,
    comment_from_reaction,
)
from redline_canary.review.extraction import Extraction, Signal, quote
from redline_canary.review.findings import Finding, inline_range
from redline_canary.review.profiles.citations import SummaryLocation, cited, clean_path, line_span
from redline_canary.review.profiles.dialect import ITEM_START, items
from redline_canary.review.profiles.notices import (
    FINDING_COUNT,
    NOTICE_PHRASES,
    NOTICE_WORDS,
    WORKING_PHRASES,
    excerpt,
    first_notice,
    is_ack,
    notice_kind,
    notice_text,
    says_clean,
)
from redline_canary.review.profiles.spec import (
    SIGNALS,
    ProfileSpec,
    SeverityTable,
    SignalRule,
    Trigger,
    rule,
)

_DISCUSSION = re.compile(r"#discussion_r(\d+)")
# Where one item of a summary starts: a list item, heading, <details>, or a table row.
_ITEM_OR_ROW = re.compile(ITEM_START.pattern + r"|^[ \t>]*\|", re.MULTILINE | re.IGNORECASE)


def normalize_login(login: str) -> str:
    """REST says ``name[bot]``, GraphQL says ``name``; both name the same account."""
    login = login.strip().lower()
    return login[: -len("[bot]")] if login.endswith("[bot]") else login


class Hooks(Protocol):
    """The code a dialect may need besides its data; :class:`PlainHooks` is the default.

    Each hook gets the profile, so it reads severities with the profile's own tables.
    """

    def is_reviewer(self, profile: Profile, comment: Comment) -> bool:
        """Whether ``comment`` is the reviewer's (refining :meth:`Profile.is_listed`)."""
        ...

    def summary_locations(self, profile: Profile, comment: Comment) -> list[SummaryLocation]:
        """``path:line`` citations in a review body or issue comment (when mining)."""
        ...

    def body_location(self, profile: Profile, comment: Comment) -> SummaryLocation | None:
        """Where an inline comment's own body says it points, for outdated comments whose
        ``line`` and ``original_line`` are gone (docs/dialects.md, fact 4)."""
        ...

    def inline_extra_locations(self, profile: Profile, comment: Comment) -> list[SummaryLocation]:
        """Further places an inline comment names (Bugbot's LOCATIONS); kept as summary
        findings, deduplicated against inline ones."""
        ...

    def inline_severities(self, profile: Profile, comments: Sequence[Comment]) -> dict[int, Severity]:
        """Severities other comments give inline comments, by inline comment id."""
        ...


class PlainHooks:
    """The hooks of a dialect that is all data; vendor hooks extend these."""

    def is_reviewer(self, profile: Profile, comment: Comment) -> bool:
        return profile.is_listed(comment)

    def summary_locations(self, profile: Profile, comment: Comment) -> list[SummaryLocation]:
        """Every location form a summary may use (``path:line`` and ``path#L`` as written, and
        permalinks, ``path (lines a-b)``, table rows), each rated by its own list item when
        that item carries a marker, else by the header above the items ("[MAJOR] Three
        problems:"), never by a neighbouring item."""
        body = comment.body
        chunks = items(body, _ITEM_OR_ROW)
        taken: list[tuple[int, int]] = []
        found: list[tuple[int, str, int, int]] = []
        for form in ("blob", "table", "paren", "generic"):
            for m, c in cited(body, form):
                if any(a < m.end() and m.start() < b for a, b in taken):
                    continue
                taken.append(m.span())
                found.append((m.start(), c.path if form == "generic" else clean_path(c.path), c.start, c.end))
        out: list[SummaryLocation] = []
        # The header above the first cited item rates items that carry no marker of their own.
        first_cited = min((pos for pos, *_ in found), default=0)
        header_end = max((at for at, _t in chunks if at <= first_cited), default=0)
        whole = profile.severity(body[:header_end])
        for pos, path, start, end in sorted(found):
            chunk = next((t for at, t in reversed(chunks) if at <= pos), body)
            out.append(SummaryLocation(path, start, end, profile.severity(chunk) or whole))
        return out

    def body_location(self, profile: Profile, comment: Comment) -> SummaryLocation | None:
        return None

    def inline_extra_locations(self, profile: Profile, comment: Comment) -> list[SummaryLocation]:
        return []

    def inline_severities(self, profile: Profile, comments: Sequence[Comment]) -> dict[int, Severity]:
        """With ``discussion_links``: the badge on the line that links the thread.

        Comments are read oldest first so the latest review's list wins: bots rewrite
        their overview on every pass.
        """
        found: dict[int, Severity] = {}
        if not profile.discussion_links:
            return found
        for c in sorted(comments, key=lambda c: (c.created_at, c.id)):
            if c.channel == "inline":
                continue
            for line in c.body.splitlines():
                level = profile.severity(line)
                if level is None:
                    continue
                for m in _DISCUSSION.finditer(line):
                    found[int(m[1])] = level
        return found


PLAIN = PlainHooks()


@dataclass(frozen=True, kw_only=True)
class Profile(ProfileSpec):
    """A reviewer dialect: its declared data, its hooks, and the engine that reads with them.

    Frozen; a variant is ``dataclasses.replace(profile, ...)``.
    """

    hooks: Hooks = PLAIN

    def with_logins(self, logins: Iterable[str]) -> Profile:
        """A copy that counts only comments by these logins (``--login``)."""
        return replace(self, logins=frozenset(login.lower() for login in logins),
                       bot_ids=frozenset(), any_bot=False, exact_logins=True)

    def login_for(self, channel: Channel) -> str:
        """The login this reviewer posts under on ``channel`` (for classifying a lone body)."""
        if channel == "inline" and self.inline_login:
            return self.inline_login
        if not self.logins:
            return "reviewer[bot]"
        return sorted(self.logins, key=lambda x: (not x.endswith("[bot]"), x))[0]

    def is_reviewer(self, comment: Comment) -> bool:
        return self.hooks.is_reviewer(self, comment)

    def is_listed(self, comment: Comment) -> bool:
        """The spec's identity: a listed login or bot id, or any Bot when none is listed."""
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

    def classify(self, comment: Comment) -> Signal:
        """One of SIGNALS for a reviewer comment."""
        return self.reading(comment)[0]

    def reading(self, comment: Comment) -> tuple[Signal, str]:
        """The signal of a reviewer comment and the text a record quotes for it.

        Done and clean need positive evidence (docs/matching.md). A body a rule explains keeps
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
            # A reply in a finding's thread (the bot answering the author) and a thank-you
            # raise nothing new; any other inline comment is a finding.
            if comment.is_reply or (self.severity(body) is None and is_ack(notice_text(body))):
                return "none", body
            return "finding", body
        prose = comment.channel in ("review", "issue")
        matched = self.signal_rule(comment)
        cites = prose and self.mining and bool(self.summary_locations(comment))
        text = notice_text(body)  # once: this runs for every comment at every poll
        counted = bool(FINDING_COUNT.search(text))  # "Found 2 issues"
        if matched is not None and matched.signal in ("skipped", "error"):
            # A vendor summary that lists findings is never an error notice, whatever an
            # item's words ("Greptile encountered an error" quoted in a finding): issue 23.
            if not (cites or counted):
                return matched.signal, excerpt(body, matched.pattern)
            matched = None
        # A body that rates something (a severity marker) reports findings, whatever words
        # describe them: "[HIGH] upload errors are skipped" is a finding, not a notice.
        rated = cites or counted or self.severity(body) is not None
        if matched is not None:
            # Only a verdict can swallow a notice; a walkthrough or a "working…" body keeps
            # its rule's meaning (its prose describes the PR, which may well be about reviews).
            if prose and not rated and matched.signal in ("done", "clean"):
                found = self.notice(comment, NOTICE_PHRASES)
                if found is not None:
                    return found
            return matched.signal, body
        if cites:
            return ("finding" if comment.channel == "issue" else self.review_signal), body
        if prose and not rated:
            found = self.notice(comment, NOTICE_WORDS)
            if found is not None:
                return found
            if WORKING_PHRASES.search(text):
                return "progress", body
            # A completion with nothing to say ends the wait at once (docs/dialects.md#completions).
            if says_clean(text):
                return "clean", body
            if is_ack(text):
                return "none", body
        # Activity only: a review nobody's rule explains is not a "done" verdict.
        return ("progress" if comment.channel == "review" else "none"), body

    def placeholder(self, comment: Comment) -> bool:
        """A "working…" body (a placeholder rule, or working words no rule explains)."""
        matched = self.signal_rule(comment)
        if matched is not None:
            return matched.placeholder
        return comment.channel in ("review", "issue") and bool(WORKING_PHRASES.search(notice_text(comment.body)))

    def notice(self, comment: Comment, vocabulary: re.Pattern[str]) -> tuple[Signal, str] | None:
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
                if r.signal == "clean" and self.mining and self.summary_locations(comment):
                    continue
                return r
        return None

    @property
    def mining(self) -> bool:
        """Whether summaries are read for places: the dialect's own, or a ``locations`` shape."""
        return self.mine_summaries or bool(self.citation_patterns)

    def summary_locations(self, comment: Comment) -> list[SummaryLocation]:
        """Places a review body or issue comment cites (read only when mining summaries).

        The dialect's own citations, then those of ``citation_patterns`` (a ``--profiles``
        file's ``locations``), each rated by its own list item (never a neighbour's).
        """
        found = self.hooks.summary_locations(self, comment) if self.mine_summaries else []
        if not self.citation_patterns or comment.channel not in ("review", "issue"):
            return found
        seen = {(f.path, f.start, f.end) for f in found}
        body = comment.body
        chunks = items(body)
        matches = sorted((m for p in self.citation_patterns for m in p.finditer(body)), key=lambda m: m.start())
        for m in matches[:500]:
            path = clean_path(m["path"])
            start, last = line_span(m["a"], m.groupdict().get("b"))
            if path and (path, start, last) not in seen:
                seen.add((path, start, last))
                chunk = next((t for pos, t in reversed(chunks) if pos <= m.start()), body)
                found.append(SummaryLocation(path, start, last, self.severity(chunk)))
        return found

    def dedupe_key(self, comment: Comment) -> str | None:
        """The vendor id (``dedupe_id``) of an inline comment the bot may re-post."""
        m = self.dedupe_id.search(comment.body) if self.dedupe_id and comment.channel == "inline" else None
        return m[1] if m else None

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
        rated = self.hooks.inline_severities(self, mine)
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
            # A notice, a reply, or a body a rule says is nothing (a chat reply, a task summary,
            # a thank-you) reports no finding, whatever files it cites.
            if signal in ("skipped", "error", "none") or c.is_reply:
                continue
            key = self.dedupe_key(c)
            if key is not None and latest[key] is not c:
                continue
            if c.channel == "inline":
                start, end, scoped = inline_range(c)
                path = c.path
                if end is None and c.subject_type != "file" and (c.side or "RIGHT").upper() != "LEFT":
                    loc = self.hooks.body_location(self, c)
                    if loc is not None and (path is None or path == loc.path):
                        path, start, end, scoped = loc.path, loc.start, loc.end, True
                level = rated.get(c.id) or self.severity(c.body)
                out.findings.append(Finding(
                    key=f"inline:{c.id}", path=path, start=start, end=end,
                    severity=self.rate(level), body=c.body, login=c.login,
                    source="inline", line_scoped=scoped, url=c.html_url,
                    word=self.severity_word(c.body) if c.id not in rated else level.name if level else "",
                ))
                locations = self.hooks.inline_extra_locations(self, c) if self.mine_summaries else []
            elif self.mining and c.channel not in (REACTION_CHANNEL, CHECK_CHANNEL):
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
    """Summary citations that repeat a finding already kept go; distinct findings stay.

    A summary item repeats a finding when it is on the same path, its lines overlap, and
    it gives the same severity (or either is unrated): the summary of an inline comment
    is one finding, not two. A different severity on the same lines is another finding
    (a CRITICAL next to a MINOR on one line, a nitpick inside a major finding's range),
    and items of one summary never repeat each other: the vendor listed them apart.
    """
    kept: list[Finding] = []
    seen = list(inline)
    for f in summary:
        own = f.key.split("#", 1)[0]
        if any(
            g.path == f.path and g.start is not None and g.end is not None
            and f.start is not None and f.end is not None
            and g.start <= f.end and f.start <= g.end
            and (g.severity is None or f.severity is None or g.severity == f.severity)
            and not (g.source == "summary" and g.key.split("#", 1)[0] == own)
            for g in seen
        ):
            continue
        kept.append(f)
        seen.append(f)
    return kept


# Besides the engine: what vendor modules write (rule, Trigger) and older import paths kept
# for callers and tests (SIGNALS, Extraction, quote, comment_from_reaction).
__all__ = [
    "PLAIN", "SIGNALS", "Extraction", "Hooks", "PlainHooks", "Profile", "ProfileSpec", "SeverityTable", "SignalRule",
    "Trigger", "comment_from_reaction", "dedupe_summary", "normalize_login", "quote", "rule",
]
