"""Provider token shapes the corpus must never contain (docs/corpus.md lint).

GitHub push protection rejects a push that carries one of these, and providers revoke
keys found in public repos, so a seeded "hard-coded secret" must look real to a person
while matching none of them. Pure: patterns and a scanner over text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

PROVIDER_PATTERNS: dict[str, re.Pattern[str]] = {
    "AWS access key id": re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}\b"),
    "AWS secret access key": re.compile(
        r"(?i)aws.{0,20}secret.{0,20}['\"][A-Za-z0-9/+=]{40}['\"]"),
    "GitHub token": re.compile(r"\bgh[pousr]_[A-Za-z0-9]{36,}\b"),
    "GitHub fine-grained token": re.compile(r"\bgithub_pat_[A-Za-z0-9_]{22,}\b"),
    "GitLab token": re.compile(r"\bglpat-[A-Za-z0-9_\-]{20,}\b"),
    "Slack token": re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b"),
    "Slack app token": re.compile(r"\bxapp-\d-[A-Za-z0-9-]{10,}\b"),
    "Slack webhook": re.compile(r"hooks\.slack\.com/services/T[A-Z0-9]+/B[A-Z0-9]+/[A-Za-z0-9]+"),
    "Stripe key": re.compile(r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{10,}\b"),
    "Google API key": re.compile(r"\bAIza[0-9A-Za-z_\-]{35}\b"),
    "Google OAuth secret": re.compile(r"\bGOCSPX-[A-Za-z0-9_\-]{20,}\b"),
    "OpenAI key": re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}\b"),
    "Anthropic key": re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{20,}\b"),
    "SendGrid key": re.compile(r"\bSG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}\b"),
    "npm token": re.compile(r"\bnpm_[A-Za-z0-9]{36}\b"),
    "PyPI token": re.compile(r"\bpypi-AgE[A-Za-z0-9_\-]{20,}"),
    "Twilio key": re.compile(r"\b(?:SK|AC)[0-9a-f]{32}\b"),
    "Mailgun key": re.compile(r"\bkey-[0-9a-f]{32}\b"),
    "Shopify token": re.compile(r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b"),
    "Azure storage key": re.compile(r"AccountKey=[A-Za-z0-9+/=]{40,}"),
    "JSON web token": re.compile(r"\beyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]+"),
    "private key block": re.compile(r"-----BEGIN (?:[A-Z]+ )*PRIVATE KEY( BLOCK)?-----"),
    "credentials in a MongoDB URL": re.compile(r"mongodb(?:\+srv)?://[^:\s/]+:[^@\s/]+@"),
}


def find_provider_secrets(text: str) -> Iterator[tuple[int, str]]:
    """(line number, provider name) for every provider-shaped token in ``text``."""
    for number, line in enumerate(text.splitlines(), start=1):
        for name, pattern in PROVIDER_PATTERNS.items():
            if pattern.search(line):
                yield number, name
