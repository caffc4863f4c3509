"""The one grammar of rule ids, and of a body citing one (docs/corpus.md, docs/matching.md). Pure.

A rule id is ``stack/rule``: lower-case segments of letters, digits and hyphens joined by
``/`` (more than two segments allowed). Markers name one; SARIF ``ruleId``\\ s,
acknowledgements, corpus metadata and imported Redline catalogues are held to the same
pattern; and a finding *cites* a marker's rule when its body holds the id as a whole token.
Redline's finding prefix (``Redline/HIGH [stack/rule]``) names exactly two segments, built
here from the same segment, so the importer, the ``redline`` profile and parity scoring
cannot drift apart from the markers they are compared with.
"""

from __future__ import annotations

import re

SEGMENT = r"[a-z0-9][a-z0-9-]*"
RULE_ID = re.compile(rf"^{SEGMENT}(/{SEGMENT})+$")
# The two-segment form Redline's own prefix grammar accepts (redline_scale.FINDING).
REDLINE_RULE = rf"{SEGMENT}/{SEGMENT}"


def is_segment(text: str) -> bool:
    """One segment alone (``sql-injection``): a rule id whose stack was left out."""
    return re.fullmatch(SEGMENT, text) is not None


def cite_rule(body: str, rule: str) -> bool:
    """The rule id as a whole token of ``body``, in any case: ``[py/sql-injection]``,
    ``(py/sql-injection)`` and "violates py/sql-injection." cite it; ``py/sql-injection-2``
    and ``x/py/sql-injection`` do not."""
    return bool(rule) and re.search(rf"(?<![\w/-]){re.escape(rule)}(?![\w/-])", body,
                                    re.IGNORECASE) is not None


def normalise_rule(raw: str) -> str:
    """A rule id as this grammar spells it: lower case, hyphens, no quotes or backticks.

    For importers reading other tools' spellings (``Py/SQL_Injection``); the result is
    still checked against :data:`RULE_ID`.
    """
    rule = raw.strip().strip("`'\"").lower()
    rule = re.sub(r"[_\s]+", "-", rule)
    rule = re.sub(r"/+", "/", rule).strip("/")
    return rule


__all__ = ["REDLINE_RULE", "RULE_ID", "SEGMENT", "cite_rule", "is_segment", "normalise_rule"]
