"""The profile interface: everything vendor-specific about a reviewer (DESIGN §1, §5).

A profile answers five questions about comments on a PR: is this the reviewer, what
severity did it give, where does it point (inline coordinates or ``path:line`` cited in a
summary), does the comment cite a rule, and what does the comment signal (finding, done,
clean, skipped, error...). Vendor profiles subclass :class:`Profile` and override the
hooks; the default :meth:`Profile.extract` turns a whole thread into findings. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from redline_canary.comments import Comment
from redline_canary.findings import Finding, inline_range
from redline_canary.severity import Severity

SIGNALS = ("finding", "clean", "done", "skipped", "error", "progress", "none")
UNRATED_POLICIES = ("info", "location")

# `path/to/file.ext:12`, `:12-15`, `#L12-L15`: what summaries use to point at code.
_CITATION = re.compile(
    r"(?P<path>[\w.\-/]+\.[A-Za-z0-9]+)(?::(?P<a>\d+)(?:\s*[-–]\s*(?P<b>\d+))?"
    r"|#L(?P<la>\d+)(?:-L(?P<lb>\d+))?)"
)


@dataclass(frozen=True)
class Trigger:
    """How to wake the reviewer: ``none``, ``request`` a reviewer login, or post a ``comment``."""

    kind: str = "none"
    value: str = ""


@dataclass(frozen=True)
class SummaryLocation:
    path: str
    start: int
    end: int
    severity: Severity | None = None


@dataclass
class Extraction:
    """What the reviewer said on one PR, as the scorer and the poller need it."""

    findings: list[Finding] = field(default_factory=list)
    activity: int = 0  # reviewer comments, reviews and issue comments seen
    signals: list[tuple[str, str]] = field(default_factory=list)  # (signal, quoted body)

    def has(self, signal: str) -> bool:
        return any(s == signal for s, _ in self.signals)

    def notice(self, *signals: str) -> str | None:
        """The first comment body that carried one of ``signals``, trimmed for a record."""
        for s, body in self.signals:
            if s in signals:
                return body.strip().splitlines()[0][:300] if body.strip() else s
        return None


class Profile:
    """A reviewer dialect. Instances are immutable in spirit: use :meth:`with_logins`."""

    name = "base"
    description = ""
    logins: frozenset[str] = frozenset()
    bot_ids: frozenset[int] = frozenset()
    any_bot = True  # with no logins configured, any user of type Bot is the reviewer
    unrated = "info"  # DESIGN §5: "location" = severity check skipped, counts on clean PR
    trigger = Trigger()
    mine_summaries = False
    # (pattern, severity): the earliest match in a body wins.
    severity_patterns: tuple[tuple[re.Pattern[str], Severity], ...] = ()

    def copy(self, **changes: Any) -> Profile:
        """A copy with some attributes overridden (``--login``, YAML overrides)."""
        clone = object.__new__(type(self))
        clone.__dict__.update(self.__dict__)
        for key, value in changes.items():
            if not hasattr(self, key):
                raise AttributeError(f"profile has no setting {key!r}")
            setattr(clone, key, value)
        return clone

    def with_logins(self, logins: Iterable[str]) -> Profile:
        """A copy that counts only comments by these logins (``--login``)."""
        return self.copy(logins=frozenset(login.lower() for login in logins),
                         bot_ids=frozenset(), any_bot=False)

    # --- hooks -------------------------------------------------------------------
    def is_reviewer(self, comment: Comment) -> bool:
        if comment.login.lower() in self.logins:
            return True
        if comment.user_id is not None and comment.user_id in self.bot_ids:
            return True
        return self.any_bot and not self.logins and comment.user_type == "Bot"

    def severity(self, body: str) -> Severity | None:
        """The severity the body claims, or None when it claims none."""
        best: tuple[int, Severity] | None = None
        for pattern, level in self.severity_patterns:
            m = pattern.search(body)
            if m and (best is None or m.start() < best[0]):
                best = (m.start(), level)
        return best[1] if best else None

    def classify(self, comment: Comment) -> str:
        """One of SIGNALS for a reviewer comment."""
        if comment.channel == "inline":
            return "finding"
        if comment.channel == "review":
            return "done"
        return "none"

    def summary_locations(self, comment: Comment) -> list[SummaryLocation]:
        """``path:line`` citations in a review body or issue comment (when mining)."""
        found: list[SummaryLocation] = []
        for m in _CITATION.finditer(comment.body):
            a = m["a"] or m["la"]
            b = m["b"] or m["lb"] or a
            if a is None:
                continue
            start, end = sorted((int(a), int(b)))
            found.append(SummaryLocation(m["path"], start, end, self.severity(comment.body)))
        return found

    def cites(self, body: str, rule: str) -> bool:
        return bool(rule) and re.search(rf"(?<![\w/-]){re.escape(rule)}(?![\w/-])", body,
                                        re.IGNORECASE) is not None

    # --- the whole thread --------------------------------------------------------
    def rate(self, severity: Severity | None) -> Severity | None:
        """Apply the unrated policy: None survives only for ``unrated: location``."""
        if severity is None and self.unrated != "location":
            return Severity.INFO
        return severity

    def extract(self, comments: Sequence[Comment]) -> Extraction:
        out = Extraction()
        summary: list[Finding] = []
        for c in comments:
            if not self.is_reviewer(c):
                continue
            out.activity += 1
            signal = self.classify(c)
            out.signals.append((signal, c.body))
            if signal in ("skipped", "error") or c.is_reply:
                continue
            if c.channel == "inline":
                start, end, scoped = inline_range(c)
                out.findings.append(Finding(
                    key=f"inline:{c.id}", path=c.path, start=start, end=end,
                    severity=self.rate(self.severity(c.body)), body=c.body, login=c.login,
                    source="inline", line_scoped=scoped,
                ))
            elif self.mine_summaries:
                for i, loc in enumerate(self.summary_locations(c)):
                    summary.append(Finding(
                        key=f"{c.channel}:{c.id}#{i}", path=loc.path, start=loc.start,
                        end=loc.end, severity=self.rate(loc.severity), body=c.body,
                        login=c.login, source="summary",
                    ))
        out.findings.extend(dedupe_summary(out.findings, summary))
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
    "SIGNALS", "UNRATED_POLICIES", "Extraction", "Profile", "SummaryLocation", "Trigger",
    "dedupe_summary",
]
