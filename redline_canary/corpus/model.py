"""The corpus as data: rules, stacks, parsed files, lint, fingerprint, publication (docs/corpus.md–§4).

Pure: the filesystem edge (``corpus.py``) reads bytes into :class:`CorpusData`; everything
here works on that, so lint and the fingerprint are testable without a disk.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from redline_canary.corpus.markers import Marker, ParsedFile, Problem, parse_file
from redline_canary.corpus.publication import (
    Place,
    PublishedFile,
    PublishedMarker,
    publish_file,
    publish_markers,
)
from redline_canary.corpus.rule_ids import RULE_ID
from redline_canary.corpus.secrets import find_provider_secrets
from redline_canary.corpus.severity import SCALE, Severity
from redline_canary.corpus.topics import describes, lint_terms

KINDS = ("seeded", "clean")
PACKAGED = "packaged"  # the layer name of the corpus shipped with the package (docs/corpus.md#layers)
CANONICAL = "canonical"  # the variant id of the canonical files (docs/corpus.md#variants)
TWIN_WINDOW = 4
MAX_SITES = 3  # places beyond the extent one defect may have (docs/corpus.md#sites)
RULE_KEYS = ("title", "severity", "cwe", "terms", "shared_terms")


@dataclass(frozen=True)
class Rule:
    """One class of defect. ``terms`` are the words reviewers use for it: they decide which
    rules a comment is about (its *topics*, docs/matching.md#topics). ``shared_terms`` are
    the terms this rule lists on purpose although another rule lists them too."""

    id: str
    title: str
    severity: Severity
    cwe: int | None = None
    terms: tuple[str, ...] = ()
    shared_terms: tuple[str, ...] = ()

    def as_json(self) -> dict[str, Any]:
        return {"title": self.title, "severity": self.severity.name, "cwe": self.cwe,
                "terms": list(self.terms), "shared_terms": list(self.shared_terms)}


@dataclass
class CorpusData:
    """Raw corpus: ``files[stack][kind][relative path] = bytes``; ``label`` prefixes paths."""

    label: str
    rules: dict[str, Rule]
    files: dict[str, dict[str, dict[str, bytes]]]
    problems: list[Problem] = field(default_factory=list)  # rules.yml and decoding problems
    rubric: str | None = None  # seeds/RUBRIC.md, when the corpus has one
    adjudications: Any = None  # seeds/adjudications.yml, parsed
    has_adjudications: bool = False
    imported: Any = None  # redline-import.yml (the side table of a Redline import), parsed
    has_import_table: bool = False
    # stacks/<stack>.yml, parsed: each stack's manifest (its variants table, docs/corpus.md#variants)
    manifests: dict[str, Any] = field(default_factory=dict)
    # Layers (docs/corpus.md#layers): the layer of a one-folder corpus ("packaged" for the
    # shipped corpus, else the folder's name), the layer of each stack of a merged one, the
    # folder each stack's files are shown under, and the layers themselves (each lints its
    # own rubric and adjudication log).
    layer: str = PACKAGED
    layers: dict[str, str] = field(default_factory=dict)
    roots: dict[str, str] = field(default_factory=dict)
    parts: list[CorpusData] = field(default_factory=list)

    @property
    def stacks(self) -> list[str]:
        return sorted(self.files)

    def layer_of(self, stack: str) -> str:
        """The layer ``stack`` came from: "packaged", or the private folder's name."""
        return self.layers.get(stack, self.layer)

    def display_rules(self) -> str:
        return f"{self.label}/rules.yml" if self.label else "rules.yml"

    def display(self, kind: str, stack: str, rel: str) -> str:
        label = self.roots.get(stack, self.label)
        return f"{label}/{kind}/{stack}/{rel}" if label else f"{kind}/{stack}/{rel}"


def parse_rules(doc: Any, source: str) -> tuple[dict[str, Rule], list[Problem]]:
    """rules.yml → catalog; problems carry the YAML key path."""
    problems: list[Problem] = []
    rules: dict[str, Rule] = {}
    if not isinstance(doc, Mapping) or not isinstance(doc.get("rules"), Mapping):
        return rules, [Problem(source, 1, "key 'rules' must be a mapping of rule id to rule")]
    for rule_id, body in doc["rules"].items():
        where = f"rules.{rule_id}"
        if not isinstance(rule_id, str) or not RULE_ID.match(rule_id):
            problems.append(Problem(source, 1, f"{where}: malformed rule id"))
            continue
        if not isinstance(body, Mapping):
            problems.append(Problem(source, 1, f"{where}: must be a mapping"))
            continue
        unknown = sorted(str(k) for k in body if k not in RULE_KEYS)
        if unknown:
            problems.append(Problem(source, 1, f"{where}: unknown key {unknown[0]!r} (a title with a comma "
                                               f"needs quotes; allowed: {', '.join(RULE_KEYS)})"))
            continue
        try:
            severity = Severity.parse(str(body.get("severity", "")))
        except ValueError as exc:
            problems.append(Problem(source, 1, f"{where}.severity: {exc}"))
            continue
        title = body.get("title")
        if not isinstance(title, str) or not title.strip():
            problems.append(Problem(source, 1, f"{where}.title: missing"))
            continue
        cwe = body.get("cwe")
        if cwe is not None and (not isinstance(cwe, int) or isinstance(cwe, bool)):
            problems.append(Problem(source, 1, f"{where}.cwe: must be an integer"))
            continue
        lists: dict[str, tuple[str, ...]] = {}
        for key in ("terms", "shared_terms"):
            value = body.get(key, [])
            if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
                problems.append(Problem(source, 1, f"{where}.{key}: must be a list of strings"))
                break
            lists[key] = tuple(" ".join(t.lower().split()) for t in value)
        else:
            rules[rule_id] = Rule(rule_id, title.strip(), severity, cwe, lists["terms"], lists["shared_terms"])
    return rules, problems


@dataclass
class StackView:
    """One stack's parsed files of one kind."""

    stack: str
    kind: str
    parsed: dict[str, ParsedFile]
    trailing_newline: dict[str, bool]
    problems: list[Problem]
    layer: str = PACKAGED  # the corpus layer the stack came from (CorpusData.layer_of, docs/corpus.md#layers)

    @property
    def markers(self) -> list[Marker]:
        return [m for rel in sorted(self.parsed) for m in self.parsed[rel].markers]

    @property
    def seeds(self) -> list[Marker]:
        return [m for m in self.markers if m.kind == "seed"]


def view(corpus: CorpusData, stack: str, kind: str) -> StackView:
    """Parse one stack/kind; decoding problems become lint problems."""
    parsed: dict[str, ParsedFile] = {}
    newline: dict[str, bool] = {}
    problems: list[Problem] = []
    for rel, data in sorted(corpus.files.get(stack, {}).get(kind, {}).items()):
        shown = corpus.display(kind, stack, rel)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            problems.append(Problem(shown, 1, "file is not UTF-8 text"))
            continue
        pf = parse_file(rel, text)
        parsed[rel] = pf
        newline[rel] = data.endswith(b"\n")
        problems.extend(Problem(shown, p.line, p.message) for p in pf.problems)
    return StackView(stack, kind, parsed, newline, problems, corpus.layer_of(stack))


def publish(
    corpus: CorpusData, stack: str, kind: str, mode: str, prefix: str = ""
) -> tuple[list[PublishedFile], list[PublishedMarker]]:
    """What gets pushed for one PR, and every marker where the reviewer will see it."""
    v = view(corpus, stack, kind)
    files: list[PublishedFile] = []
    markers: list[PublishedMarker] = []
    for rel, pf in sorted(v.parsed.items()):
        pub = publish_file(pf, mode, prefix, v.trailing_newline[rel])
        files.append(pub)
        markers.extend(publish_markers(pf, pub))
    return files, with_sites(markers)


def with_sites(markers: list[PublishedMarker]) -> list[PublishedMarker]:
    """Each SEED marker with the places its ``SITE`` lines point at; the site lines
    themselves are not markers and leave the list."""
    sites: dict[int, list[Place]] = {}
    for p in markers:
        if p.marker.kind == "site":
            sites.setdefault(p.marker.n, []).append(Place(p.path, p.line, p.end_line, p.marker.path,
                                                          p.marker.anchor_line))
    return [replace(p, sites=tuple(sorted(sites.get(p.marker.n, ()), key=lambda s: (s.path, s.line))))
            if p.marker.kind == "seed" else p
            for p in markers if p.marker.kind != "site"]


def export_key(
    stack: str, kind: str, mode: str, fp: str, markers: list[PublishedMarker]
) -> dict[str, Any]:
    """The private answer key of one exported PR: every marker where the reviewer sees it."""
    return {
        "stack": stack, "kind": kind, "mode": mode, "corpus_fingerprint": fp,
        "markers": [
            {
                "kind": p.marker.kind, "n": p.marker.n, "path": p.path, "line": p.line,
                "end_line": p.end_line, "corpus_path": p.marker.path,
                "corpus_line": p.marker.anchor_line,
                "severity": p.marker.severity.name if p.marker.kind == "seed" else None,
                "rule": p.marker.rule or None, "symbol": p.marker.symbol,
                "description": p.marker.description,
                "sites": [{"path": site.path, "line": site.line, "end_line": site.end_line} for site in p.sites],
            }
            for p in sorted(markers, key=lambda p: (p.path, p.line, p.marker.kind, p.marker.n))
        ],
    }


def fingerprint(corpus: CorpusData, stack: str) -> str:
    """sha256 over sorted (relative path, bytes) of both kinds plus the cited rules."""
    digest = hashlib.sha256()
    entries = sorted(
        (f"{kind}/{rel}", data)
        for kind in KINDS
        for rel, data in corpus.files.get(stack, {}).get(kind, {}).items()
    )
    for path, data in entries:
        digest.update(path.encode() + b"\0" + str(len(data)).encode() + b"\0" + data)
    cited = sorted({m.rule for m in view(corpus, stack, "seeded").seeds})
    catalog = {r: corpus.rules[r].as_json() for r in cited if r in corpus.rules}
    digest.update(json.dumps(catalog, sort_keys=True).encode())
    return digest.hexdigest()[:16]


def summary(corpus: CorpusData, stack: str) -> dict[str, Any]:
    """The ``corpus show --json`` entry of one stack."""
    seeds = view(corpus, stack, "seeded").seeds
    by_sev = {s.name: sum(m.severity == s for m in seeds) for s in SCALE}
    return {
        "files": len(corpus.files.get(stack, {}).get("seeded", {})),
        "markers": len(seeds),
        "by_severity": by_sev,
        "structural": sum(m.structural for m in seeds),
        "borderline": sum(
            m.kind == "borderline"
            for kind in KINDS for m in view(corpus, stack, kind).markers
        ),
        "fingerprint": fingerprint(corpus, stack),
    }


def lint(corpus: CorpusData) -> list[Problem]:
    """Every lint problem (docs/corpus.md#lint), all at once, in a stable order."""
    problems = list(corpus.problems)
    problems += lint_terms(corpus.rules, corpus.display_rules())
    from redline_canary.corpus.variants import lint_variants  # variants lint a renamed stack with lint_stack

    for stack in corpus.stacks:
        problems += lint_stack(corpus, stack)
        problems += lint_variants(corpus, stack)
    for part in corpus.parts or [corpus]:
        problems += [Problem(f"{part.label}/stacks/{stack}.yml" if part.label else f"stacks/{stack}.yml", 1,
                             f"manifest of a stack that does not exist ({stack!r})")
                     for stack in sorted(set(part.manifests) - set(part.files))]
        problems += lint_audit_files(part)
        problems += _import_table_shape(part)
    return problems


IMPORT_TABLE = "redline-import.yml"


def _import_at(corpus: CorpusData) -> str:
    return f"{corpus.label}/{IMPORT_TABLE}" if corpus.label else IMPORT_TABLE


def _import_table_shape(corpus: CorpusData) -> list[Problem]:
    if not corpus.has_import_table:
        return []
    doc = corpus.imported
    if not isinstance(doc, Mapping):
        return [Problem(_import_at(corpus), 1, "top level: expected a mapping (markers, skeletons, rejected)")]
    out: list[Problem] = []
    for key in ("markers", "skeletons", "rejected"):
        if doc.get(key) is not None and not isinstance(doc.get(key), list):
            out.append(Problem(_import_at(corpus), 1, f"{key}: expected a list"))
    for i, entry in enumerate(_entries(doc, "rejected")):
        if not isinstance(entry, Mapping) or not isinstance(entry.get("stack"), str):
            out.append(Problem(_import_at(corpus), 1, f"rejected[{i}]: expected a mapping with stack, file, line, "
                                                      "reason"))
    return out


def _entries(doc: Any, key: str) -> list[Any]:
    value = doc.get(key) if isinstance(doc, Mapping) else None
    return value if isinstance(value, list) else []


def skeleton_twins(corpus: CorpusData) -> set[str]:
    """Clean twins a Redline import wrote as skeletons (``clean/<stack>/<path>``)."""
    return {s for s in _entries(corpus.imported, "skeletons") if isinstance(s, str)}


def _import_rejections(corpus: CorpusData, stack: str) -> list[Problem]:
    """A marker the Redline import could not convert is a defect this answer key lacks:
    reported until it is marked by hand and its entry deleted, never silently dropped."""
    out: list[Problem] = []
    for i, entry in enumerate(_entries(corpus.imported, "rejected")):
        if not isinstance(entry, Mapping) or entry.get("stack") != stack:
            continue
        where = f"{entry.get('file')}:{entry.get('line')}"
        into = f" in {entry['into']}" if isinstance(entry.get("into"), str) else ""
        out.append(Problem(_import_at(corpus), 1,
                           f"rejected[{i}]: Redline's {where} was not converted ({entry.get('reason')}): mark it by "
                           f"hand{into}, then delete this entry"))
    return out


RUBRIC_FILE = "RUBRIC.md"
ADJUDICATIONS_FILE = "adjudications.yml"
OUTCOMES = ("twin-fixed", "marker-added", "defect-fixed", "severity-changed", "extent-set",
            "borderline-added", "site-added", "marker-merged", "rejected")
_VERSION_LINE = re.compile(r"^Version:\s*(\d+)\.(\d+)\.(\d+)\s*$", re.MULTILINE)
_VERSION = re.compile(r"^(\d+)\.(\d+)\.(\d+)$")
_PLACE = re.compile(r"^(?P<path>[^:\s][^:]*):(?P<line>\d+)$")


def rubric_version(text: str) -> str | None:
    m = _VERSION_LINE.search(text)
    return ".".join(m.groups()) if m else None


def lint_audit_files(corpus: CorpusData) -> list[Problem]:
    """RUBRIC.md carries a semantic version; adjudications.yml agrees with it, has the
    right shape, a rationale for every decision, and every place it names still exists."""
    log_at = f"{corpus.label}/{ADJUDICATIONS_FILE}" if corpus.label else ADJUDICATIONS_FILE
    rubric_at = f"{corpus.label}/{RUBRIC_FILE}" if corpus.label else RUBRIC_FILE
    problems: list[Problem] = []
    version = None
    if corpus.rubric is not None:
        version = rubric_version(corpus.rubric)
        if version is None:
            problems.append(Problem(rubric_at, 1, "no 'Version: MAJOR.MINOR.PATCH' line"))
    if not corpus.has_adjudications:
        return problems
    doc = corpus.adjudications
    if corpus.rubric is None:
        problems.append(Problem(log_at, 1, f"an adjudication log needs {RUBRIC_FILE} beside it"))
    if not isinstance(doc, Mapping):
        return [*problems, Problem(log_at, 1, "top level: expected a mapping with 'rubric' and 'decisions'")]
    logged = str(doc.get("rubric", ""))
    if not _VERSION.match(logged):
        problems.append(Problem(log_at, 1, f"rubric: expected a version like 1.0.0, got {logged[:20]!r}"))
    elif version is not None and logged != version:
        problems.append(Problem(log_at, 1, f"rubric: {logged} does not agree with {RUBRIC_FILE}'s {version}"))
    decisions = doc.get("decisions")
    if not isinstance(decisions, list):
        return [*problems, Problem(log_at, 1, "decisions: expected a list")]
    seen: set[str] = set()
    for i, entry in enumerate(decisions):
        problems += _lint_decision(corpus, entry, f"decisions[{i}]", log_at, version, seen)
    return problems


def _lint_decision(corpus: CorpusData, entry: Any, where: str, log_at: str, version: str | None,
                   seen: set[str]) -> list[Problem]:
    def bad(message: str) -> list[Problem]:
        return [Problem(log_at, 1, f"{where}: {message}")]

    if not isinstance(entry, Mapping):
        return bad("expected a mapping")
    ident = entry.get("id")
    if not isinstance(ident, str) or not ident.strip():
        return bad("id: missing")
    where = f"{where} ({ident})"
    if ident in seen:
        return bad("id: duplicate")
    seen.add(ident)
    stack, kind, outcome = entry.get("stack"), entry.get("kind"), entry.get("outcome")
    if stack not in corpus.files:
        return bad(f"stack: {str(stack)[:40]!r} is not a stack of this corpus")
    if kind not in KINDS:
        return bad("kind: expected seeded or clean")
    if outcome not in OUTCOMES:
        return bad(f"outcome: expected one of {', '.join(OUTCOMES)}")
    rationale = entry.get("rationale")
    if not isinstance(rationale, str) or len(rationale.split()) < 3:
        return bad("rationale: every decision needs its reason written down")
    raised = entry.get("raised_by")
    if not isinstance(raised, list) or not raised or not all(isinstance(r, str) and r for r in raised):
        return bad("raised_by: expected a non-empty list of review names")
    stamped = str(entry.get("rubric", ""))
    if not _VERSION.match(stamped):
        return bad("rubric: expected the rubric version the decision was made under")
    if version is not None and stamped.split(".")[0] != version.split(".")[0]:
        return bad(f"rubric: made under {stamped}, the rubric is now {version} (a major change: "
                   "re-adjudicate)")
    place = _PLACE.match(str(entry.get("place", "")))
    if place is None:
        return bad("place: expected 'path:line' in the corpus file")
    data = corpus.files[stack].get(kind, {}).get(place["path"])
    if data is None:
        return bad(f"place: {kind}/{stack}/{place['path']} no longer exists")
    if not 1 <= int(place["line"]) <= data.count(b"\n") + 1:
        return bad(f"place: line {place['line']} is past the end of {kind}/{stack}/{place['path']}")
    seed = entry.get("seed")
    if seed is not None:
        numbers = {m.n for m in view(corpus, stack, "seeded").seeds}
        if seed not in numbers:
            return bad(f"seed: SEED {seed} is not in {stack}'s seeded corpus")
    return []


def lint_stack(corpus: CorpusData, stack: str) -> list[Problem]:
    """The lint problems of one stack (what ``score`` and ``run`` refuse to measure with)."""
    seeded = view(corpus, stack, "seeded")
    clean = view(corpus, stack, "clean")
    problems = seeded.problems + clean.problems
    if not any(corpus.files[stack].get(kind) for kind in KINDS):  # an empty folder measures nothing
        problems.append(Problem(corpus.display("seeded", stack, "").rstrip("/"), 0,
                                "no file in this stack (neither seeded/ nor clean/): add its files or remove it"))
    problems += _catalog_problems(corpus, seeded)
    problems += _twin_problems(corpus, seeded, clean)
    problems += _import_rejections(corpus, stack)
    for kind in KINDS:
        for rel, data in sorted(corpus.files[stack].get(kind, {}).items()):
            text = data.decode("utf-8", errors="replace")
            for line, provider in find_provider_secrets(text):
                problems.append(Problem(
                    corpus.display(kind, stack, rel), line,
                    f"string shaped like a real {provider} (push protection would block it)",
                ))
    return problems


def _catalog_problems(corpus: CorpusData, seeded: StackView) -> list[Problem]:
    problems: list[Problem] = []
    first_seen: dict[tuple[str, int], str] = {}
    seeds = {m.n for m in seeded.seeds}
    sites_of: dict[int, int] = {}
    for rel in sorted(seeded.parsed):
        shown = corpus.display("seeded", seeded.stack, rel)
        for m in seeded.parsed[rel].markers:
            if m.kind == "fixed":
                problems.append(Problem(shown, m.marker_line,
                                        f"FIXED {m.n} in a seeded file: a FIXED line marks where the clean twin "
                                        "fixed a seed; write it in the clean file"))
                continue
            if m.kind == "site":
                sites_of[m.n] = sites_of.get(m.n, 0) + 1
                if m.n not in seeds:
                    problems.append(Problem(shown, m.marker_line, f"SITE {m.n}: no SEED {m.n} in this stack"))
                elif sites_of[m.n] == MAX_SITES + 1:
                    problems.append(Problem(shown, m.marker_line,
                                            f"SITE {m.n}: more than {MAX_SITES} sites for one marker"))
                continue
            key = (m.kind, m.n)
            label = "SEED" if m.kind == "seed" else "BORDERLINE"
            if key in first_seen:
                problems.append(Problem(shown, m.marker_line,
                                        f"duplicate {label} {m.n} (first at {first_seen[key]})"))
            else:
                first_seen[key] = f"{shown}:{m.marker_line}"
            if m.kind != "seed":
                continue
            rule = corpus.rules.get(m.rule)
            if rule is None:
                problems.append(Problem(shown, m.marker_line, f"unknown rule {m.rule!r}"))
            elif m.severity > rule.severity:
                problems.append(Problem(
                    shown, m.marker_line,
                    f"severity {m.severity.name} above rule {m.rule}'s {rule.severity.name}",
                ))
            elif rule.terms and not describes(m.description, rule):
                problems.append(Problem(
                    shown, m.marker_line,
                    f"SEED {m.n}: the description uses none of {m.rule}'s terms (nor CWE-{rule.cwe}): "
                    "add the reviewers' word for it to the description or to the rule's terms"))
    return problems


def _twin_problems(corpus: CorpusData, seeded: StackView, clean: StackView) -> list[Problem]:
    problems: list[Problem] = []
    stack = seeded.stack
    seeded_files = set(corpus.files[stack].get("seeded", {}))
    clean_files = set(corpus.files[stack].get("clean", {}))
    for rel in sorted(seeded_files - clean_files):
        problems.append(Problem(corpus.display("seeded", stack, rel), 1,
                                f"clean twin missing: {corpus.display('clean', stack, rel)}"))
    for rel in sorted(clean_files - seeded_files):
        problems.append(Problem(corpus.display("clean", stack, rel), 1,
                                "clean file has no seeded counterpart"))
    for rel, pf in sorted(clean.parsed.items()):
        for m in pf.markers:
            if m.kind in ("seed", "site"):
                problems.append(Problem(corpus.display("clean", stack, rel), m.marker_line,
                                        f"clean file contains {m.kind.upper()} {m.n}"))
            elif m.kind == "fixed" and m.n not in {s.n for s in seeded.seeds}:
                problems.append(Problem(corpus.display("clean", stack, rel), m.marker_line,
                                        f"FIXED {m.n}: no SEED {m.n} in this stack"))
    skeletons = skeleton_twins(corpus)
    for rel in sorted(seeded_files & clean_files):
        if rel not in seeded.parsed or rel not in clean.parsed:
            continue
        still = " (a skeleton from the Redline import: write the fix)" if f"clean/{stack}/{rel}" in skeletons else ""
        if seeded.parsed[rel].leaks or clean.parsed[rel].leaks:
            continue  # already a problem; such a file cannot be published blind
        s_pub = publish_file(seeded.parsed[rel], "blind", "", True)
        c_pub = publish_file(clean.parsed[rel], "blind", "", True)
        s_lines = s_pub.text.splitlines()
        c_text = "\n".join(c_pub.text.splitlines())
        for m in seeded.parsed[rel].seeds_only():
            line = s_pub.line_map[m.anchor_line]
            lo, hi = max(1, line - TWIN_WINDOW), min(len(s_lines), line + TWIN_WINDOW)
            block = "\n".join(s_lines[lo - 1 : hi])
            if _contains_block(c_text, block):
                problems.append(Problem(
                    corpus.display("seeded", stack, rel), m.marker_line,
                    f"SEED {m.n}: clean twin identical within ±{TWIN_WINDOW} lines of the "
                    f"anchor (defect not fixed){still}",
                ))
    return problems


def _contains_block(text: str, block: str) -> bool:
    """Whole-line containment of ``block`` in ``text``."""
    return ("\n" + text + "\n").find("\n" + block + "\n") != -1


