"""Findings given as a file: a JSON list or SARIF 2.1.0, for offline and third-party reviews.

This is how a blind reviewer (a person, a helper, CodeQL, Semgrep, bandit, an LLM) is scored
against the corpus without GitHub: ``score --findings FILE``. Pure: it takes the parsed
document and returns :class:`Finding` values, or raises :class:`FindingsError` naming the key
path of the first bad value, so the command can print ``FILE: key: why`` and exit 2.

Severity words. A file is on one of two scales, decided for the whole file because
"critical" is a word of both: the tool's own (BLOCKER, CRITICAL, MAJOR, MINOR, INFO) or the
common five-level vendor scale, which maps top to top (docs/matching.md#findings: the vendor's top level is
BLOCKER)::

    critical → BLOCKER · high → CRITICAL · medium/moderate → MAJOR · low → MINOR · info/note → INFO

A file that uses blocker, major or minor is on the tool's scale; one that uses high, medium,
moderate or low is on the vendor scale; one that uses both is refused. A file that uses only
critical and info is on the tool's scale when every word is written in capitals, as the
tool writes them, and on the vendor scale otherwise.

SARIF. A result's ``properties.security-severity`` (the CVSS-style score GitHub code
scanning reads) wins when present: ≥ 9.0 BLOCKER, ≥ 7.0 CRITICAL, ≥ 4.0 MAJOR, > 0 MINOR,
else INFO (GitHub's critical/high/medium/low bands). Without it the SARIF ``level`` says how
sure the tool is, not how exploitable the defect is, so it never claims BLOCKER:
``error`` → CRITICAL, ``warning`` → MAJOR, ``note`` → MINOR, ``none`` → INFO. A rule's
``defaultConfiguration.level`` and ``properties.security-severity`` apply to its results
that give none.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from redline_canary.corpus.rule_ids import RULE_ID
from redline_canary.corpus.severity import Severity
from redline_canary.review.findings import Finding

MAX_FINDINGS = 10_000
MAX_BODY = 20_000

VENDOR_WORDS: dict[str, Severity] = {
    "critical": Severity.BLOCKER, "high": Severity.CRITICAL, "medium": Severity.MAJOR,
    "moderate": Severity.MAJOR, "low": Severity.MINOR, "info": Severity.INFO,
    "informational": Severity.INFO, "note": Severity.INFO,
}
SARIF_LEVELS: dict[str, Severity] = {
    "error": Severity.CRITICAL, "warning": Severity.MAJOR, "note": Severity.MINOR, "none": Severity.INFO,
}
_SCALE_WORDS = {s.name: s for s in Severity}


class FindingsError(ValueError):
    """A findings document that cannot be read; the message starts with the key path."""


_TOOL_ONLY = {"blocker", "major", "minor"}
_VENDOR_ONLY = {"high", "medium", "moderate", "low", "informational", "note"}


def scale_of(words: Sequence[str]) -> str:
    """"tool" or "vendor" for a file's severity words (see the module docstring)."""
    lower = {w.strip().lower() for w in words}
    tool, vendor = lower & _TOOL_ONLY, lower & _VENDOR_ONLY
    if tool and vendor:
        raise FindingsError(f"severity: the file mixes the tool's scale ({', '.join(sorted(tool))}) and a "
                            f"vendor scale ({', '.join(sorted(vendor))}); use one")
    if tool:
        return "tool"
    if vendor:
        return "vendor"
    return "tool" if all(w.strip().isupper() for w in words) else "vendor"


def severity_from_word(word: str, scale: str = "tool") -> Severity:
    """A word of ``scale``; FindingsError naming the known words otherwise."""
    key = word.strip()
    level = _SCALE_WORDS.get(key.upper()) if scale == "tool" else VENDOR_WORDS.get(key.lower())
    if level is None:
        known = [s.name for s in Severity] if scale == "tool" else sorted(VENDOR_WORDS)
        raise FindingsError(f"unknown severity {word[:40]!r} (expected one of {', '.join(known)})")
    return level


def security_severity(score: float) -> Severity:
    if score >= 9.0:
        return Severity.BLOCKER
    if score >= 7.0:
        return Severity.CRITICAL
    if score >= 4.0:
        return Severity.MAJOR
    if score > 0:
        return Severity.MINOR
    return Severity.INFO


def parse_findings(doc: Any) -> list[Finding]:
    """A findings list (``[{path, line, end_line?, severity, title?, body, rule?}]``, or
    ``{"findings": [...]}``) or a SARIF log (an object with ``runs``)."""
    if isinstance(doc, Mapping) and "runs" in doc:
        return parse_sarif(doc)
    items = doc.get("findings") if isinstance(doc, Mapping) else doc
    if not isinstance(items, list):
        raise FindingsError("top level: expected a JSON list of findings, {\"findings\": [...]}, or SARIF")
    if len(items) > MAX_FINDINGS:
        raise FindingsError(f"top level: {len(items)} findings (at most {MAX_FINDINGS})")
    words = [item.get("severity") for item in items if isinstance(item, Mapping)]
    scale = scale_of([w for w in words if isinstance(w, str)])
    return [_plain(item, f"[{i}]", i, scale) for i, item in enumerate(items)]


def _text(obj: Mapping[str, Any], key: str, where: str, *, required: bool = False) -> str:
    value = obj.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str):
        raise FindingsError(f"{where}.{key}: expected a string")
    return value[:MAX_BODY]


def _line(obj: Mapping[str, Any], key: str, where: str, *, required: bool) -> int | None:
    value = obj.get(key)
    if value is None and not required:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 10_000_000:
        raise FindingsError(f"{where}.{key}: expected a line number (an integer >= 1)")
    return value


def _path(value: str, where: str) -> str:
    path = value.strip()
    if path.startswith("file://"):
        path = path[len("file://"):]
    while path.startswith("./"):
        path = path[2:]
    if not path or path.startswith("/") or "\0" in path or any(p == ".." for p in path.split("/")):
        raise FindingsError(f"{where}: expected a path relative to the PR's root, got {value[:80]!r}")
    return path


def _plain(item: Any, where: str, index: int, scale: str) -> Finding:
    if not isinstance(item, Mapping):
        raise FindingsError(f"{where}: expected an object")
    path = _path(_text(item, "path", where, required=True), f"{where}.path")
    start = _line(item, "line", where, required=True)
    end = _line(item, "end_line", where, required=False) or start
    assert start is not None and end is not None
    if end < start:
        start, end = end, start
    word = _text(item, "severity", where, required=True)
    try:
        level = severity_from_word(word, scale)
    except FindingsError as exc:
        raise FindingsError(f"{where}.severity: {exc}") from None
    title = _text(item, "title", where)
    body = _text(item, "body", where)
    if not body and not title:
        raise FindingsError(f"{where}: needs a body or a title")
    rule = _text(item, "rule", where).strip()
    text = f"{title}\n\n{body}".strip() if title and body else (body or title)
    return Finding(key=f"finding:{index}", path=path, start=start, end=end, severity=level,
                   body=text, login="", source="inline", word=word.strip()[:60], rule=rule)


# --------------------------------------------------------------------------- SARIF

def parse_sarif(doc: Mapping[str, Any]) -> list[Finding]:
    runs = doc.get("runs")
    if not isinstance(runs, list):
        raise FindingsError("runs: expected a list (SARIF 2.1.0)")
    version = doc.get("version")
    if version is not None and version != "2.1.0":
        raise FindingsError(f"version: SARIF {str(version)[:20]!r} is not supported (2.1.0 is)")
    out: list[Finding] = []
    for r, run in enumerate(runs):
        where = f"runs[{r}]"
        if not isinstance(run, Mapping):
            raise FindingsError(f"{where}: expected an object")
        rules = _sarif_rules(run, where)
        results = run.get("results") or []
        if not isinstance(results, list):
            raise FindingsError(f"{where}.results: expected a list")
        for i, result in enumerate(results):
            if len(out) >= MAX_FINDINGS:
                raise FindingsError(f"{where}.results: more than {MAX_FINDINGS} results")
            found = _sarif_result(result, f"{where}.results[{i}]", rules, len(out))
            if found is not None:
                out.append(found)
    return out


def _sarif_rules(run: Mapping[str, Any], where: str) -> dict[str, Mapping[str, Any]]:
    driver = (run.get("tool") or {}).get("driver") if isinstance(run.get("tool"), Mapping) else None
    rules = driver.get("rules") if isinstance(driver, Mapping) else None
    found: dict[str, Mapping[str, Any]] = {}
    for rule in rules if isinstance(rules, list) else []:
        if isinstance(rule, Mapping) and isinstance(rule.get("id"), str):
            found[rule["id"]] = rule
    return found


def _sarif_score(props: Any, where: str) -> float | None:
    if not isinstance(props, Mapping) or props.get("security-severity") is None:
        return None
    raw = props["security-severity"]
    try:
        score = float(raw) if isinstance(raw, (str, int, float)) and not isinstance(raw, bool) else math.nan
    except ValueError:
        score = math.nan
    if not math.isfinite(score) or not 0 <= score <= 10:
        raise FindingsError(f"{where}.properties.security-severity: expected a number from 0 to 10")
    return score


def _sarif_result(result: Any, where: str, rules: Mapping[str, Mapping[str, Any]], index: int) -> Finding | None:
    if not isinstance(result, Mapping):
        raise FindingsError(f"{where}: expected an object")
    raw_id = result.get("ruleId")
    rule_id: str = raw_id if isinstance(raw_id, str) else ""
    rule = rules.get(rule_id, {})
    message = result.get("message")
    text = message.get("text") if isinstance(message, Mapping) else None
    if not isinstance(text, str):
        raise FindingsError(f"{where}.message.text: expected a string")
    locations = result.get("locations")
    if not isinstance(locations, list) or not locations:
        return None  # a result with no place in the code cannot match a marker
    physical = locations[0].get("physicalLocation") if isinstance(locations[0], Mapping) else None
    if not isinstance(physical, Mapping):
        return None
    artifact = physical.get("artifactLocation")
    uri = artifact.get("uri") if isinstance(artifact, Mapping) else None
    if not isinstance(uri, str):
        raise FindingsError(f"{where}.locations[0].physicalLocation.artifactLocation.uri: expected a string")
    path = _path(uri, f"{where}.locations[0].physicalLocation.artifactLocation.uri")
    region = physical.get("region")
    if not isinstance(region, Mapping):
        return None  # file-level: no line to match
    start = _line(region, "startLine", f"{where}.locations[0].physicalLocation.region", required=True)
    end = _line(region, "endLine", f"{where}.locations[0].physicalLocation.region", required=False) or start
    assert start is not None and end is not None
    score = _sarif_score(result.get("properties"), where)
    if score is None:
        score = _sarif_score(rule.get("properties"), f"{where} rule {rule_id}")
    level_word = result.get("level")
    if level_word is None:
        config = rule.get("defaultConfiguration")
        level_word = config.get("level") if isinstance(config, Mapping) else None
    level_word = level_word if isinstance(level_word, str) else "warning"  # SARIF's default
    if score is not None:
        level, word = security_severity(score), f"security-severity {score:g}"
    elif level_word in SARIF_LEVELS:
        level, word = SARIF_LEVELS[level_word], level_word
    else:
        raise FindingsError(f"{where}.level: expected one of {', '.join(SARIF_LEVELS)}")
    name = f"[{rule_id}] " if rule_id else ""
    return Finding(key=f"sarif:{index}", path=path, start=min(start, end), end=max(start, end),
                   severity=level, body=(name + text)[:MAX_BODY], login="", source="inline",
                   word=word, rule=_catalog_rule(rule_id))


def _catalog_rule(rule_id: str) -> str:
    """A SARIF ruleId counts as a citation only when it is shaped like a catalog rule id."""
    return rule_id if RULE_ID.match(rule_id) else ""


