"""Convert a Redline seed corpus into this product's corpus (issue 15). Pure.

Redline keeps ``seeded/<stack>/`` files with ``SEED n [BLOCKER|HIGH|SUGGESTION] (rule-id) text``
markers, one shared ``seeded/clean/`` folder instead of per-stack twins, and its rules as
Markdown standards (headings give the severity, bullets give `` `stack/rule` — text ``, a
``standards/manifest.json`` lists the files). Its scorer finds a marker with a regular
expression anywhere on a line, so real corpora hold every comment syntax and spelling that
regex tolerates. The importer is liberal in what it reads for that reason, and strict in
what it writes: every marker it writes is re-read by :func:`markers.parse_file` and kept
only if it parses to the same marker at the same anchor; anything it cannot convert is
rejected with ``file:line`` and a reason, never written half-converted.

This module owns the checkout: which files make which stack, each file decoded and
scrubbed of provider-shaped secrets, the seeded files and their skeleton clean twins, the
shared clean folder, and the side table (:func:`convert`). One file's markers are
:mod:`redline_markers`'s, the standards and the rule and severity mapping
:mod:`redline_rules`'s, the report's rows :mod:`redline_report`'s.

The filesystem edge (``commands/corpus_import.py``) reads the checkout into a path→bytes
mapping and writes :class:`~redline_canary.corpus.redline_report.ImportResult` out;
nothing here touches a disk.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from redline_canary.corpus.markers import ParsedFile, parse_file
from redline_canary.corpus.publication import without_markers
from redline_canary.corpus.redline_markers import REDLINE_MARKER, convert_lines, drop_leaks, settle
from redline_canary.corpus.redline_report import ImportResult, Note, Rejection, SecretHit, StackReport
from redline_canary.corpus.redline_rules import read_rules, rules_catalog
from redline_canary.corpus.redline_scale import SEVERITY_MAP
from redline_canary.corpus.secrets import PROVIDER_PATTERNS
from redline_canary.corpus.severity import Severity

SHARED_CLEAN_STACK = "shared-clean"  # Redline's seeded/clean/ becomes a precision-only stack
SIDE_TABLE = "redline-import.yml"

# --------------------------------------------------------------------------- secrets

def neutral_secret(value: str) -> str:
    """A stand-in for a provider-shaped token: as long and as random-looking, matching no
    provider's format, and the same every time for the same token (imports are repeatable)."""
    digest = hashlib.sha256(value.encode("utf-8")).hexdigest() * 4
    body = digest[: max(24, min(len(value), 64) - 5)]
    return f"live_{body}"


def _replace_secret(line: str, provider: str, pattern: re.Pattern[str]) -> tuple[str, str]:
    """(the line with the token replaced, what replaced it)."""
    shown: list[str] = []

    def swap(token: str, sep: str = "_") -> str:
        new = neutral_secret(token).replace("_", sep)
        shown.append(new)
        return new

    if provider == "private key block":
        new_line = line.replace("PRIVATE KEY", "SIGNING KEY")
        return new_line, new_line.strip()
    if provider == "Slack webhook":
        return line.replace("hooks.slack.com", "hooks.chat.example.invalid"), "hooks.chat.example.invalid"
    if provider == "credentials in a MongoDB URL":
        new_line = re.sub(r"(mongodb(?:\+srv)?://[^:\s/]+):([^@\s/]+)@", lambda m: f"{m[1]}:{swap(m[2], '-')}/@", line)
    elif provider in ("AWS secret access key", "Azure storage key"):
        new_line = re.sub(r"[A-Za-z0-9/+=]{40,}", lambda m: swap(m[0], "-"), line, count=1)
    else:
        new_line = pattern.sub(lambda m: swap(m[0]), line)
    return new_line, ", ".join(shown)


def scrub_secrets(path: str, text: str, replace: bool) -> tuple[str, list[SecretHit]]:
    """Every provider-shaped token of ``text`` with a neutral stand-in; replaced when asked.

    The stand-in keeps the defect a defect (a live-looking credential in source) while no
    push protection or provider scanner recognises it.
    """
    out: list[str] = []
    hits: list[SecretHit] = []
    for number, line in enumerate(text.split("\n"), start=1):
        new = line
        for provider, pattern in PROVIDER_PATTERNS.items():
            if not pattern.search(new):
                continue
            candidate, shown = _replace_secret(new, provider, pattern)
            safe = not any(p.search(candidate) for p in PROVIDER_PATTERNS.values())
            hits.append(SecretHit(path, number, provider, shown[:100], replace and safe))
            if replace and safe:
                new = candidate
        out.append(new)
    return "\n".join(out), hits


# --------------------------------------------------------------------------- the clean twin

def skeleton(parsed: ParsedFile, trailing_newline: bool) -> str:
    """The seeded file with its marker lines removed and trailing marker comments cut: the
    clean twin before anyone has fixed anything (lint reports every seed it still equals)."""
    out, _ = without_markers(parsed)
    return "\n".join(out) + ("\n" if trailing_newline and out else "")


# --------------------------------------------------------------------------- the whole checkout

def _out_rel(rel: str, notes: list[Note], src: str) -> str:
    """A Redline path the corpus loader would skip (hidden, README.md) under a name it reads."""
    parts = rel.split("/")
    renamed = ["dot" + p if p.startswith(".") else p for p in parts]
    if renamed[-1] == "README.md":
        renamed[-1] = "README.markdown"
    new = "/".join(renamed)
    if new != rel:
        notes.append(Note(src, 0, f"written as {new} (the corpus loader skips hidden files and README.md)"))
    return new


def _stack_files(files: Mapping[str, bytes]) -> dict[str, dict[str, bytes]]:
    stacks: dict[str, dict[str, bytes]] = {}
    for path, data in files.items():
        parts = path.split("/")
        if len(parts) < 3 or parts[0] != "seeded":
            continue
        stacks.setdefault(parts[1], {})["/".join(parts[2:])] = data
    return stacks


def _stack_name(name: str, taken: set[str]) -> str:
    base = re.sub(r"[^a-z0-9-]+", "-", name.lower()).strip("-") or "stack"
    out = base
    k = 2
    while out in taken:
        out = f"{base}-{k}"
        k += 1
    return out


def convert(files: Mapping[str, bytes], *, replace_secrets: bool = True, source_label: str = "") -> ImportResult:
    """A Redline checkout (relative path → bytes) as this product's corpus."""
    notes: list[Note] = []
    catalog, version = read_rules(files, notes)
    out_files: dict[str, str] = {}
    reports: dict[str, StackReport] = {}
    side_markers: list[dict[str, Any]] = []
    skeletons: list[str] = []
    secrets: list[SecretHit] = []
    cited: dict[str, Severity] = {}
    by_stack = _stack_files(files)
    taken: set[str] = set()
    names: dict[str, str] = {}
    for redline_stack in sorted(s for s in by_stack if s != "clean"):
        names[redline_stack] = _stack_name(redline_stack, taken)
        taken.add(names[redline_stack])
    for redline_stack in sorted(s for s in by_stack if s != "clean"):
        stack = names[redline_stack]
        report = reports.setdefault(stack, StackReport())
        counter = 0
        for rel, data in sorted(by_stack[redline_stack].items()):
            src = f"seeded/{redline_stack}/{rel}"
            read = _read_source(src, rel, data, notes, secrets, replace_secrets)
            if read is None:
                continue
            text, out_rel = read
            result = convert_lines(src, out_rel, text, stack, catalog)
            report.read += result.read
            notes += result.notes
            if not result.markers and rel.rsplit("/", 1)[-1].lower() == "readme.md":
                notes.append(Note(src, 0, "a README with no markers: not imported (it would tell the reviewer "
                                          "what the folder is)"))
                continue
            lines, origins, accepted = settle(src, out_rel, result, stack, counter)
            lines, leaks = drop_leaks(src, out_rel, lines, origins)
            notes += leaks
            into = f"seeded/{stack}/{out_rel}"
            report.rejected += [replace(r, into=into) for r in result.rejected]
            for m in accepted:
                side_markers.append({"stack": stack, "n": m.n, "from": f"{src}#{m.orig_n}", "line": m.origin,
                                     "redline_severity": m.word, "severity": m.severity.name, "rule": m.rule})
                cited[m.rule] = max(cited.get(m.rule, Severity.INFO), m.severity)
            counter += len(accepted)
            report.converted += len(accepted)
            report.files += 1
            seeded_text = "\n".join(lines)
            out_files[f"seeded/{stack}/{out_rel}"] = seeded_text
            twin = skeleton(parse_file(out_rel, seeded_text), trailing_newline=seeded_text.endswith("\n"))
            out_files[f"clean/{stack}/{out_rel}"] = twin
            skeletons.append(f"clean/{stack}/{out_rel}")
            report.skeletons += 1
    if "clean" in by_stack:
        _shared_clean(by_stack["clean"], _stack_name(SHARED_CLEAN_STACK, taken), out_files, reports, notes,
                      secrets, replace_secrets)
    rules = rules_catalog(catalog, cited, notes)
    side_table = {
        "source": source_label,
        "standards_version": version,
        "severity_map": {w: m.level.name for w, m in SEVERITY_MAP.items()},
        "markers": side_markers,
        "skeletons": skeletons,
        "rejected": [{"stack": r.stack, "file": r.file, "line": r.line, "reason": r.reason,
                      **({"into": r.into} if r.into else {})}
                     for s in reports.values() for r in s.rejected],
    }
    return ImportResult(out_files, rules, side_table, reports, notes, secrets, version)


def _read_source(src: str, rel: str, data: bytes, notes: list[Note], secrets: list[SecretHit],
                 replace_secrets: bool) -> tuple[str, str] | None:
    """One Redline file as text with provider-shaped secrets scrubbed (each reported), and the
    path it gets in the output corpus; None when it is not text (a note says why)."""
    text = _decode(src, data, notes)
    if text is None:
        return None
    text, hits = scrub_secrets(src, text, replace_secrets)
    secrets += hits
    return text, _out_rel(rel, notes, src)


def _decode(src: str, data: bytes, notes: list[Note]) -> str | None:
    if b"\0" in data[:8192]:
        notes.append(Note(src, 0, "binary file: not imported"))
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        notes.append(Note(src, 0, "not UTF-8 text: not imported"))
        return None
    if "\r" in text:
        notes.append(Note(src, 0, "line endings normalised to LF"))
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def _shared_clean(clean: Mapping[str, bytes], stack: str, out_files: dict[str, str],
                  reports: dict[str, StackReport], notes: list[Note], secrets: list[SecretHit],
                  replace_secrets: bool) -> None:
    """Redline's shared clean folder as a precision-only stack: its seeded and clean files are
    the same clean code, with no markers, so a review of it may only count false positives."""
    report = reports.setdefault(stack, StackReport())
    for rel, data in sorted(clean.items()):
        src = f"seeded/clean/{rel}"
        read = _read_source(src, rel, data, notes, secrets, replace_secrets)
        if read is None:
            continue
        text, out_rel = read
        lines = text.split("\n")
        for i, line in enumerate(lines, start=1):
            if REDLINE_MARKER.search(line):
                report.read += 1
                report.rejected.append(Rejection(src, i, "a marker in Redline's clean folder (clean code has "
                                                         "no defects): removed", stack))
        rows = [(ln, i) for i, ln in enumerate(lines, start=1) if not REDLINE_MARKER.search(ln)]
        kept, leaks = drop_leaks(src, out_rel, [r[0] for r in rows], [r[1] for r in rows])
        notes += leaks
        body = "\n".join(kept)
        out_files[f"seeded/{stack}/{out_rel}"] = body
        out_files[f"clean/{stack}/{out_rel}"] = body
        report.files += 1
    if report.files:
        notes.append(Note("seeded/clean", 0, f"Redline's shared clean folder is the precision-only stack {stack!r} "
                                             "(no markers; its clean PR counts false positives)"))
