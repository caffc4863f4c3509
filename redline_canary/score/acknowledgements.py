"""Acknowledged gaps: a known miss a team has decided to live with, until a date. Pure.

A seed a reviewer never catches would keep the gate red forever, and teams answer that by
switching the gate off. An acknowledgement lets them keep it on: the named miss does not
fail the gate, it is shown as acknowledged everywhere, it expires (an expired entry is a
configuration error naming the entry, so nobody forgets one), and it is reported as no
longer needed as soon as the reviewer catches the seed again::

    acknowledgements:
      - {reviewer: copilot, stack: python, seed: 3, reason: "never flags SSRF", until: 2027-03-01, by: alice}
      - {reviewer: gemini, stack: go, rule: core/timing-attack, reason: "...", until: 2027-01-15, by: bob}

An entry may pin the seed it was written for with ``fingerprint`` (the 12 hex characters
the report and the annotations print beside a miss): when the corpus changes that seed,
the acknowledgement stops applying and says so, so a rewritten seed is judged afresh.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from redline_canary.corpus.rule_ids import RULE_ID
from redline_canary.score.record import Record, Seed

_KEYS = {"reviewer", "stack", "seed", "rule", "reason", "until", "by", "repo", "fingerprint"}
_FINGERPRINT = re.compile(r"^[0-9a-f]{12}$")
MAX_ENTRIES = 1000


class AcknowledgementError(ValueError):
    """A bad acknowledgements document; the message starts with the key path."""


def seed_fingerprint(seed: Seed) -> str:
    """What identifies a seed's defect across line moves: its rule, severity and description."""
    text = f"{seed.rule}|{seed.severity}|{seed.description}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


@dataclass(frozen=True)
class Acknowledgement:
    index: int
    reviewer: str
    stack: str
    reason: str
    until: str  # YYYY-MM-DD (ISO dates compare as strings)
    by: str
    seed: int | None = None
    rule: str | None = None
    repo: str | None = None
    fingerprint: str | None = None

    @property
    def label(self) -> str:
        what = f"SEED {self.seed}" if self.seed is not None else str(self.rule)
        return f"acknowledgements[{self.index}] ({self.reviewer} {self.stack} {what})"

    def names(self, record: Record, seed: Seed) -> bool:
        """Whether this entry is about ``seed`` of ``record`` (fingerprint aside)."""
        if record.reviewer != self.reviewer or record.stack != self.stack:
            return False
        if self.repo is not None and record.repo != self.repo:
            return False
        return seed.n == self.seed if self.seed is not None else seed.rule == self.rule

    def matches_corpus(self, seed: Seed) -> bool:
        return self.fingerprint is None or self.fingerprint == seed_fingerprint(seed)


def parse(doc: Any, today: str) -> tuple[Acknowledgement, ...]:
    """Every entry, checked; an expired one is an error naming it. ``today`` and every
    ``until`` are ISO dates (the edge turns YAML's dates into text: no clock here)."""
    if doc is None:
        return ()
    items = doc.get("acknowledgements") if isinstance(doc, Mapping) else None
    if not isinstance(items, list):
        raise AcknowledgementError("acknowledgements: expected a list of entries")
    if len(items) > MAX_ENTRIES:
        raise AcknowledgementError(f"acknowledgements: {len(items)} entries (at most {MAX_ENTRIES})")
    return tuple(_entry(item, i, today) for i, item in enumerate(items))


def _text(item: Mapping[str, Any], key: str, where: str, *, required: bool = True) -> str | None:
    value = item.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip() or len(value) > 500:
        raise AcknowledgementError(f"{where}.{key}: required text (at most 500 characters)")
    return value.strip()


def _entry(item: Any, i: int, today: str) -> Acknowledgement:
    where = f"acknowledgements[{i}]"
    if not isinstance(item, Mapping):
        raise AcknowledgementError(f"{where}: expected a mapping")
    unknown = sorted(str(k) for k in item if k not in _KEYS)
    if unknown:
        raise AcknowledgementError(f"{where}.{unknown[0]}: unknown key (allowed: {', '.join(sorted(_KEYS))})")
    reviewer, stack = _text(item, "reviewer", where), _text(item, "stack", where)
    reason, by = _text(item, "reason", where), _text(item, "by", where)
    assert reviewer and stack and reason and by
    seed, rule = item.get("seed"), item.get("rule")
    if (seed is None) == (rule is None):
        raise AcknowledgementError(f"{where}: give exactly one of seed (a number) or rule (a rule id)")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 1):
        raise AcknowledgementError(f"{where}.seed: expected a seed number (an integer >= 1)")
    if rule is not None and (not isinstance(rule, str) or not RULE_ID.match(rule)):
        raise AcknowledgementError(f"{where}.rule: expected a rule id like core/ssrf")
    until = item.get("until")
    if not isinstance(until, str) or not is_iso_date(until):
        raise AcknowledgementError(f"{where}.until: expected a date (YYYY-MM-DD)")
    if until < today:
        what = f"SEED {seed}" if seed is not None else rule
        raise AcknowledgementError(
            f"{where} ({reviewer} {stack} {what}, by {by}): expired on {until}; "
            "renew it with a new date or remove it")
    fingerprint = _text(item, "fingerprint", where, required=False)
    if fingerprint is not None and not _FINGERPRINT.match(fingerprint):
        raise AcknowledgementError(f"{where}.fingerprint: expected the 12 hex characters printed beside the miss")
    repo = _text(item, "repo", where, required=False)
    return Acknowledgement(i, reviewer, stack, reason, until, by, seed, rule, repo, fingerprint)


_DAYS = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def is_iso_date(text: str) -> bool:
    """A real calendar date written YYYY-MM-DD."""
    m = re.fullmatch(r"(\d{4})-(\d{2})-(\d{2})", text)
    if not m:
        return False
    year, month, day = (int(g) for g in m.groups())
    if not 1 <= month <= 12 or not 1 <= day <= _DAYS[month - 1]:
        return False
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    return not (month == 2 and day == 29 and not leap)
