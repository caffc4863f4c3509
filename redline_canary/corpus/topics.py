"""What a comment is about: the rules whose words it uses (docs/matching.md#topics). Pure.

Matching by place and severity alone credits a comment to whatever marker is near: a
comment about a hard-coded key, on the BLOCKER's own line, was credited to a
missing-timeout marker two lines below. Each rule in ``rules.yml`` therefore carries
``terms``, the words reviewers use for that class of defect; a finding's *topics* are the
rules whose id, ``CWE-<cwe>``, title or any term occurs in its text (case-insensitive, on
word boundaries). A pair (finding, marker) is *on-topic* when the marker's rule is among
the finding's topics, *off-topic* when the finding has topics and the marker's rule is not
one of them, and *neutral* when the finding has none. The matcher never credits an
off-topic pair; a finding without topics scores exactly as it did before topics existed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from redline_canary.corpus.markers import Problem

if TYPE_CHECKING:  # model imports this module for lint; the type is only named here
    from redline_canary.corpus.model import Rule

MIN_TERM = 3  # shorter terms match inside too many unrelated words


def _pattern(phrases: Iterable[str]) -> re.Pattern[str] | None:
    """One case-insensitive pattern matching any phrase not inside a longer word."""
    alternatives = sorted({p.strip().lower() for p in phrases if p.strip()}, key=len, reverse=True)
    if not alternatives:
        return None
    # Whitespace inside a phrase matches any run of whitespace (a comment may wrap a line).
    body = "|".join(r"\s+".join(re.escape(w) for w in phrase.split()) for phrase in alternatives)
    return re.compile(rf"(?<![A-Za-z0-9])(?:{body})(?![A-Za-z0-9])", re.IGNORECASE)


def rule_phrases(rule: Rule) -> list[str]:
    """Everything that names the rule: its id, its CWE, its title and its terms."""
    phrases = [rule.id, rule.title, *rule.terms]
    if rule.cwe is not None:
        phrases += [f"CWE-{rule.cwe}", f"CWE {rule.cwe}"]
    return phrases


@dataclass(frozen=True)
class TopicIndex:
    """The compiled vocabulary of a rules catalog; ``topics`` is its one question."""

    patterns: tuple[tuple[str, re.Pattern[str]], ...]

    @classmethod
    def of(cls, rules: Mapping[str, Rule], extra: Mapping[str, Iterable[str]] | None = None) -> TopicIndex:
        """``extra`` adds phrases per rule id (a profile's own rule-id forms)."""
        built = []
        for rule_id in sorted(rules):
            pattern = _pattern([*rule_phrases(rules[rule_id]), *((extra or {}).get(rule_id, ()))])
            if pattern is not None:
                built.append((rule_id, pattern))
        return cls(tuple(built))

    def topics(self, text: str) -> frozenset[str]:
        """The rule ids the text speaks of (empty: it names no class of defect we know)."""
        return frozenset(rule_id for rule_id, pattern in self.patterns if pattern.search(text))


NO_TOPICS = TopicIndex(())


def describes(description: str, rule: Rule) -> bool:
    """A marker's description uses a term of its own rule (or its CWE): the key and the
    topics speak the same language."""
    phrases = list(rule.terms) + ([f"CWE-{rule.cwe}"] if rule.cwe is not None else [])
    pattern = _pattern(phrases)
    return pattern is not None and pattern.search(description) is not None


def lint_terms(rules: Mapping[str, Rule], source: str) -> list[Problem]:
    """Every rule has terms; each term is at least 3 characters; a term listed under two
    rules must be listed by both in ``shared_terms`` (it makes a comment about one on-topic
    for the other, so it has to be on purpose)."""
    problems: list[Problem] = []
    owners: dict[str, list[str]] = {}
    for rule_id in sorted(rules):
        rule = rules[rule_id]
        where = f"rules.{rule_id}"
        if not rule.terms:
            problems.append(Problem(source, 1, f"{where}.terms: missing: list the words reviewers use for it"))
        for term in rule.terms:
            if len(term) < MIN_TERM:
                problems.append(Problem(source, 1, f"{where}.terms: {term!r} is shorter than {MIN_TERM} characters"))
            owners.setdefault(term, []).append(rule_id)
        for term in rule.shared_terms:
            if term not in rule.terms:
                problems.append(Problem(source, 1, f"{where}.shared_terms: {term!r} is not one of its terms"))
    for term, ids in sorted(owners.items()):
        if len(ids) < 2:
            continue
        unshared = [r for r in ids if term not in rules[r].shared_terms]
        if unshared:
            problems.append(Problem(source, 1, f"rules.{unshared[0]}.terms: {term!r} is also a term of "
                                               f"{', '.join(r for r in ids if r != unshared[0])}: "
                                               "list it under shared_terms of each, or keep it in one"))
    return problems
