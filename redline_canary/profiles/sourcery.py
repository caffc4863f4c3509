"""Sourcery (reviewer-dialects §8).

Inline comments open with a bold type tag ``**issue (bug_risk):**`` /
``**suggestion (testing):**``; ``issue`` vs ``suggestion`` is the closest thing to a
severity and a security issue is the top of the scale. The "Reviewer's Guide" comment
and the PR-description summary are walkthroughs.
"""

from __future__ import annotations

from redline_canary.profiles.base import Profile, rule
from redline_canary.profiles.dialect import compile_table
from redline_canary.severity import Severity

_TAG = r"\*\*{kind}\s*(?:\((?P<area>[^)]*)\))?\s*:\*\*"


class SourceryProfile(Profile):
    name = "sourcery"
    description = "Sourcery; **issue (area):** / **suggestion:** / **nitpick:** tags"
    logins = frozenset({"sourcery-ai[bot]"})
    any_bot = False
    trigger_phrases = ("@sourcery-ai",)
    severity_patterns = compile_table([
        (r"\*\*issue\s*\(\s*security\s*\)\s*:\*\*", Severity.BLOCKER),
        (_TAG.format(kind="issue"), Severity.MAJOR),
        (_TAG.format(kind="suggestion"), Severity.MINOR),
        (_TAG.format(kind="nitpick"), Severity.INFO),
    ])
    signal_rules = (
        rule("clean", r"reviewed your changes and they look great"),
        rule("done", r"Sourcery has finished reviewing|I've found \d+ issues?|I've reviewed your changes"),
    )
    labels = (
        (Severity.BLOCKER, "**issue (security):**"),
        (Severity.MAJOR, "**issue (any other area):**"),
        (Severity.MINOR, "**suggestion (...):**"),
        (Severity.INFO, "**nitpick:**"),
        (None, "no tag: INFO"),
    )
