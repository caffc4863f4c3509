"""CodeRabbit (reviewer-dialects §2).

Severity is one italic segment of the first line (``_⚠️ Potential issue_ | _🟠 Major_``);
the category alone is the older form, so it is only a fallback. Findings outside the
diff and nitpicks live only in the review body, as ``path (N)`` sections holding
``X-Y:`` items. The summary comment (walkthrough) is never a finding; its skip, pause
and rate-limit notices mean the reviewer did not review.
"""

from __future__ import annotations

import re

from redline_canary.comments import Comment
from redline_canary.profiles.base import Profile, SummaryLocation, Trigger, rule
from redline_canary.profiles.dialect import FORMS, clean_path, compile_table, sections
from redline_canary.severity import Severity

_MARKER = r"auto-generated comment: {what} by coderabbit\.ai"
_SECTIONS = {
    "outside": re.compile(r"Outside diff range comments", re.IGNORECASE),
    "nitpick": re.compile(r"Nitpick comments", re.IGNORECASE),
    "file": re.compile(r"^\S+\.[A-Za-z0-9]+\s*\(\d+\)$"),
    "other": re.compile(
        r"Duplicate comments|Additional comments|Prompt for all review comments|Review info"
        r"|Review details|Autofix|Files (?:ignored|selected|skipped)|Commits|Walkthrough",
        re.IGNORECASE,
    ),
}
_FILE = re.compile(r"<summary>\s*(?P<path>[^<>\s]+\.[A-Za-z0-9]+)\s*\(\d+\)\s*</summary>", re.IGNORECASE)
_ITEM = re.compile(r"^(?:>\s?)*[ ]{0,3}`?(?P<a>\d+)(?:\s*-\s*(?P<b>\d+))?`?\s*:\s", re.MULTILINE)
_FENCE = re.compile(r"^\s*(```|~~~).*?^\s*\1", re.MULTILINE | re.DOTALL)


class CodeRabbitProfile(Profile):
    name = "coderabbit"
    description = "CodeRabbit; italic severity segment, outside-diff and nitpick lists mined"
    logins = frozenset({"coderabbitai[bot]"})
    any_bot = False
    trigger = Trigger("comment", "@coderabbitai review")
    trigger_phrases = ("@coderabbitai",)
    mine_summaries = True
    severity_patterns = compile_table([
        (r"🔴\s*Critical(?![A-Za-z])", Severity.BLOCKER),
        (r"🟠\s*Major(?![A-Za-z])", Severity.MAJOR),
        (r"🟡\s*Minor(?![A-Za-z])", Severity.MINOR),
        (r"(?:🔵\s*|_)Trivial(?![A-Za-z])|(?:🧹\s*|_)Nitpick(?![A-Za-z])|💤\s*Low value", Severity.INFO),
    ])
    severity_fallbacks = compile_table([
        (r"⚠️?\s*Potential issue(?![A-Za-z])", Severity.MAJOR),
        (r"🛠️?\s*Refactor suggestion(?![A-Za-z])", Severity.MINOR),
    ])
    signal_rules = (
        rule("skipped", _MARKER.format(what="skip review") + r"|^[>\s]*#+\s*Review skipped\b"),
        rule("skipped", _MARKER.format(what="review paused") + r"|^[>\s]*#+\s*Reviews paused\b"),
        rule("skipped", _MARKER.format(what="rate limited")
             + r"|Review limit reached|Rate limit exceeded|reached your PR review limit"),
        rule("clean", r"No actionable comments were generated"),
    )
    labels = (
        (Severity.BLOCKER, "_🔴 Critical_"),
        (Severity.MAJOR, '_🟠 Major_; a bare "⚠️ Potential issue"'),
        (Severity.MINOR, '_🟡 Minor_; a bare "🛠️ Refactor suggestion"'),
        (Severity.INFO, "Trivial, nitpick (review-body 🧹 Nitpick comments)"),
        (None, "no marker: INFO"),
    )

    def summary_locations(self, comment: Comment) -> list[SummaryLocation]:
        if comment.channel != "review":
            return []  # the walkthrough comment names files, it reports nothing
        out: list[SummaryLocation] = []
        category = ""
        for name, text in sections(comment.body, _SECTIONS):
            if name != "file":
                category = name
                continue
            if category not in ("outside", "nitpick"):
                continue
            m = _FILE.search(text)
            if m is None:
                continue
            path = clean_path(m["path"])
            text = _FENCE.sub("", text)  # suggestion diffs hold lines like "12: x"
            cuts = [i.start() for i in _ITEM.finditer(text)]
            for pos, end in zip(cuts, [*cuts[1:], len(text)][: len(cuts)], strict=True):
                item = _ITEM.match(text, pos)
                assert item is not None
                a = int(item["a"])
                b = int(item["b"]) if item["b"] else a
                level = self.severity(text[pos:end]) or (Severity.INFO if category == "nitpick" else None)
                out.append(SummaryLocation(path, min(a, b), max(a, b), level))
        return out

    def body_location(self, comment: Comment) -> SummaryLocation | None:
        m = FORMS["around"].search(comment.body)
        if m is None:
            return None
        a = int(m["a"])
        b = int(m["b"]) if m["b"] else a
        return SummaryLocation(clean_path(m["path"]), min(a, b), max(a, b))
