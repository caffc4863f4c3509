"""What a reviewer profile declares, as data (docs/architecture.md, docs/matching.md#findings). Pure.

A vendor's dialect is mostly data: the logins it posts under, the markup that carries a
severity, the bodies that say "done", "clean", "skipped" or "error", and how to wake it.
:class:`ProfileSpec` holds all of it. It is frozen: a variant (``--login``, an entry of a
``--profiles`` file) is a new spec made with :func:`dataclasses.replace`, so a built-in
never changes under a run and a setting that is not a field here cannot be set at all.
The few dialects that need code besides data add hooks (:class:`~redline_canary.review.profiles.base.Hooks`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal, get_args

from redline_canary.corpus.severity import Severity
from redline_canary.review.comments import REACTION_CHANNEL, Channel, Comment
from redline_canary.review.extraction import Signal

TriggerKind = Literal["none", "request", "comment"]
# docs/matching.md#findings: an untagged finding is INFO, or (``location``) has its severity check skipped
# and counts on a clean PR.
UnratedPolicy = Literal["info", "location"]
# What a submitted review that cites findings means when no rule matched.
ReviewSignal = Literal["done", "progress"]

SIGNALS: tuple[Signal, ...] = get_args(Signal)
UNRATED_POLICIES: tuple[UnratedPolicy, ...] = get_args(UnratedPolicy)
TRIGGER_KINDS: tuple[TriggerKind, ...] = get_args(TriggerKind)
PROSE_CHANNELS: frozenset[Channel] = frozenset({"review", "issue", REACTION_CHANNEL})

# (pattern, severity): the earliest match in a body wins.
SeverityTable = tuple[tuple[re.Pattern[str], Severity], ...]
# (severity or None for "unrated", vendor wording): one row of `profile list`.
Label = tuple[Severity | None, str]


@dataclass(frozen=True)
class Trigger:
    """How to wake the reviewer: ``none``, ``request`` a reviewer login, or post a ``comment``."""

    kind: TriggerKind = "none"
    value: str = ""


@dataclass(frozen=True)
class SignalRule:
    """A body that matches ``pattern`` (and not ``unless``) carries ``signal``.

    Rules are tried in the profile's order, so a vendor lists its quota and skip
    notices before its "done" markers. A ``clean`` rule never fires on a body that
    itself cites findings: "Findings: None" next to a "Previously missed" entry is not
    a clean review.
    """

    signal: Signal
    pattern: re.Pattern[str]
    unless: re.Pattern[str] | None = None
    channels: frozenset[Channel] = PROSE_CHANNELS
    # A "working…" placeholder (👀, Claude's spinner comment) is not activity: a reviewer
    # that said nothing else before the timeout was silent, not clean.
    placeholder: bool = False

    def matches(self, comment: Comment) -> bool:
        if comment.channel not in self.channels or not self.pattern.search(comment.body):
            return False
        return self.unless is None or not self.unless.search(comment.body)


def rule(signal: Signal, pattern: str, unless: str | None = None, *,
         channels: Iterable[Channel] = PROSE_CHANNELS, placeholder: bool = False) -> SignalRule:
    """A case-insensitive, multi-line :class:`SignalRule` (the form vendor modules write)."""
    flags = re.IGNORECASE | re.MULTILINE
    return SignalRule(signal, re.compile(pattern, flags),
                      re.compile(unless, flags) if unless else None, frozenset(channels),
                      placeholder)


@dataclass(frozen=True, kw_only=True)
class ProfileSpec:
    """Everything a profile declares. Defaults are the generic dialect's."""

    name: str
    description: str = ""
    # Who the reviewer is: a listed login (either spelling, ``name[bot]`` or ``name``) or a
    # numeric user id; with neither listed and ``any_bot``, any user of type Bot.
    logins: frozenset[str] = frozenset()
    bot_ids: frozenset[int] = frozenset()
    any_bot: bool = True
    # Set by ``--login``: exactly these logins, none of the dialect's fallback identities
    # (Claude's github-actions[bot] tracking comment).
    exact_logins: bool = False
    # The login inline threads come from when it is not the reviews' (Copilot posts them as
    # ``Copilot``); what ``profile test`` and the fixtures post a lone inline body as.
    inline_login: str = ""
    unrated: UnratedPolicy = "info"
    # The level an untagged finding gets (docs/matching.md#findings: INFO). ``untagged: lowest`` in a profiles
    # file sets it to ``lowest_level``, the vendor's own lowest: Redline's scorer counts an
    # untagged comment as a SUGGESTION, so comparable numbers need that, but it is off by
    # default because it makes every untagged aside of another bot a rated finding.
    untagged_level: Severity = Severity.INFO
    lowest_level: Severity = Severity.INFO
    trigger: Trigger = Trigger()
    # Commands that wake the reviewer besides ``trigger``; a comment opening with one is a
    # request to the reviewer, never something the reviewer said.
    trigger_phrases: tuple[str, ...] = ()
    # Read findings cited in review bodies and summary comments, not only inline threads.
    mine_summaries: bool = False
    # What a submitted review that cites findings means when no rule matched: "done" for
    # one-shot reviewers, "progress" for bots that may post several reviews (then
    # stability decides). A review that neither cites findings nor matches a rule is
    # activity only ("progress"): done needs positive evidence (docs/matching.md).
    review_signal: ReviewSignal = "done"
    # Bots that say "done"/"clean" with a reaction on the PR (Codex, Greptile): polled too.
    reads_reactions: bool = False
    # The vendor always answers its trigger comment (a 👀 reaction, a "review triggered"
    # reply, a "working…" comment): silence after a bounded wait means it never heard it.
    acknowledges: bool = False
    reads_check_runs: bool = False  # poll the head commit's check runs (Bugbot's "finished")
    # Overrides (from --profiles) are consulted first and fallbacks last, so "Potential
    # issue | Critical" is Critical although the bare category comes first in the line.
    severity_overrides: SeverityTable = ()
    severity_patterns: SeverityTable = ()
    severity_fallbacks: SeverityTable = ()
    signal_rules: tuple[SignalRule, ...] = ()
    # Routine text of the vendor's that reads like a notice but is none ("Files skipped
    # from review", a help block naming usage limits): removed before notice detection.
    notice_exempt: tuple[re.Pattern[str], ...] = ()
    # Reviews and summaries list inline threads as `[title](#discussion_r<id>)` next to a
    # severity badge: the inline comment's severity is read from there.
    discussion_links: bool = False
    # A vendor id in an inline body (group 1) that stays the same when the bot re-posts one
    # finding on new lines: only the latest post of each id counts (Bugbot's BUGBOT_BUG_ID).
    dedupe_id: re.Pattern[str] | None = None
    # Citation shapes a ``--profiles`` file adds (``locations:``), each with the groups
    # ``path``, ``a`` and optionally ``b``: read in summaries besides the dialect's own, so a
    # user teaches a profile a new way of writing a place without a release.
    citation_patterns: tuple[re.Pattern[str], ...] = ()
    labels: tuple[Label, ...] = ()


__all__ = [
    "PROSE_CHANNELS", "SIGNALS", "TRIGGER_KINDS", "UNRATED_POLICIES", "Label", "ProfileSpec", "ReviewSignal",
    "SeverityTable", "Signal", "SignalRule", "Trigger", "TriggerKind", "UnratedPolicy", "rule",
]
