"""Per-run variants of a stack (docs/corpus.md#variants): renames published instead of the canonical files. Pure.

Why: the corpus is public, so a reviewer's vendor can tune to it and a model may have
trained on it. A variant renames identifiers, file and folder names and string literals
(hosts, product names) consistently in the seeded side and its twin, so a run can publish
code no one has seen verbatim. A rename never spans a line, so every line count, every
marker's line and the line map stay exactly as in the canonical stack: the answer key is
the same key, and :func:`publish_variant` refuses to publish if that ever stops being true.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

from redline_canary.corpus.keywords import reserved_for
from redline_canary.corpus.markers import Problem
from redline_canary.corpus.model import CANONICAL, KINDS, CorpusData, lint_stack, publish, view
from redline_canary.corpus.publication import PublishedFile, PublishedMarker, publish_file

AUTO, NONE = "auto", "none"
RenameKind = Literal["identifiers", "names", "strings"]
RENAME_KINDS: tuple[RenameKind, ...] = ("identifiers", "names", "strings")
MAX_VARIANTS = 16
MAX_RENAMES = 64
VARIANT_ID = re.compile(r"^[a-z0-9][a-z0-9-]{0,31}$")
_SHAPES: dict[RenameKind, re.Pattern[str]] = {
    # An identifier every language of the corpus accepts.
    "identifiers": re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$"),
    # A file or folder name (or a file's stem): also an identifier, since code imports it.
    "names": re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$"),
    # A host or product name inside a string: no quote, backslash, brace or comment opener,
    # so the lexical structure of every line stays what it was.
    "strings": re.compile(r"^[A-Za-z0-9][A-Za-z0-9 ._:@-]{0,62}[A-Za-z0-9]$"),
}
_WORD = r"[A-Za-z0-9_$]"


@dataclass(frozen=True)
class Variant:
    """One entry of a stack's variants table; each rename is (old, new)."""

    id: str
    identifiers: tuple[tuple[str, str], ...] = ()
    names: tuple[tuple[str, str], ...] = ()
    strings: tuple[tuple[str, str], ...] = ()

    def renames(self) -> tuple[tuple[str, str], ...]:
        return self.identifiers + self.names + self.strings

    def of(self, kind: RenameKind) -> tuple[tuple[str, str], ...]:
        return {"identifiers": self.identifiers, "names": self.names, "strings": self.strings}[kind]


def shown(value: object) -> str:
    """A name from a manifest inside a one-line message: at most 40 characters, control
    characters and quotes escaped (a YAML key may hold a line break)."""
    return json.dumps(str(value)[:40], ensure_ascii=True)[1:-1]


def manifest_at(corpus: CorpusData, stack: str) -> str:
    where = f"stacks/{stack}.yml"
    return f"{corpus.label}/{where}" if corpus.label else where


def parse_variants(corpus: CorpusData, stack: str) -> tuple[dict[str, Variant], list[Problem]]:
    """The stack's variants table (its manifest's ``variants:`` key) and its shape problems."""
    doc = corpus.manifests.get(stack)
    at = manifest_at(corpus, stack)
    if doc is None:
        return {}, []
    if not isinstance(doc, Mapping) or set(doc) - {"variants"}:
        return {}, [Problem(at, 1, "top level: expected a mapping with the one key 'variants'")]
    table = doc.get("variants") or {}
    if not isinstance(table, Mapping):
        return {}, [Problem(at, 1, "variants: expected a mapping of variant id to renames")]
    if len(table) > MAX_VARIANTS:
        return {}, [Problem(at, 1, f"variants: at most {MAX_VARIANTS} variants")]
    out: dict[str, Variant] = {}
    problems: list[Problem] = []
    for ident, body in table.items():
        where = f"variants.{shown(ident)}"
        if not isinstance(ident, str) or not VARIANT_ID.match(ident) or ident in (CANONICAL, AUTO, NONE):
            problems.append(Problem(at, 1, f"{where}: a variant id is lower-case letters, digits and hyphens, "
                                           f"and not {CANONICAL}, {AUTO} or {NONE}"))
            continue
        if not isinstance(body, Mapping) or set(body) - set(RENAME_KINDS) or not body:
            problems.append(Problem(at, 1, f"{where}: expected a mapping with {', '.join(RENAME_KINDS)}"))
            continue
        lists: dict[str, tuple[tuple[str, str], ...]] = {}
        for kind in RENAME_KINDS:
            pairs = body.get(kind) or {}
            if not isinstance(pairs, Mapping) or len(pairs) > MAX_RENAMES:
                problems.append(Problem(at, 1, f"{where}.{kind}: expected a mapping of at most {MAX_RENAMES} "
                                               "old: new renames"))
                break
            bad = [f"{k!r}: {v!r}" for k, v in pairs.items()
                   if not (isinstance(k, str) and isinstance(v, str) and _SHAPES[kind].match(k)
                           and _SHAPES[kind].match(v) and k != v)]
            if bad:
                problems.append(Problem(at, 1, f"{where}.{kind}: {bad[0][:80]} is not a rename of "
                                               f"{kind} (shape {_SHAPES[kind].pattern})"))
                break
            lists[kind] = tuple(sorted(pairs.items()))
        else:
            out[ident] = Variant(ident, lists["identifiers"], lists["names"], lists["strings"])
    return out, problems


# --------------------------------------------------------------------------- applying


def _pattern(olds: list[str]) -> re.Pattern[str] | None:
    """One alternation of every old value, longest first, on whole-word boundaries: one
    pass, so a rename never feeds another (A→B, B→C)."""
    if not olds:
        return None
    alts = "|".join(re.escape(o) for o in sorted(set(olds), key=lambda o: (-len(o), o)))
    return re.compile(rf"(?<!{_WORD})(?:{alts})(?!{_WORD})")


def rename_text(text: str, variant: Variant) -> str:
    """Every old value replaced where it stands as a whole word (never inside a longer word)."""
    table = dict(variant.renames())
    pattern = _pattern(list(table))
    return pattern.sub(lambda m: table[m.group(0)], text) if pattern else text


def rename_path(rel: str, variant: Variant) -> str:
    """A relative path with its renamed folder names and file stems (the suffix stays: it
    decides the language and the comment syntax)."""
    names = dict(variant.names)
    out = []
    for segment in rel.split("/"):
        stem, dot, rest = segment.partition(".")
        out.append(names[segment] if segment in names else
                   names[stem] + dot + rest if stem in names else segment)
    return "/".join(out)


def apply_variant(corpus: CorpusData, stack: str, variant: Variant | None) -> CorpusData:
    """The corpus with ``stack`` replaced by its variant (the same object when None)."""
    if variant is None:
        return corpus
    files: dict[str, dict[str, bytes]] = {}
    for kind, entries in corpus.files.get(stack, {}).items():
        files[kind] = {rename_path(rel, variant): _rename_bytes(data, variant) for rel, data in entries.items()}
    return replace(corpus, files={**corpus.files, stack: files})


def _rename_bytes(data: bytes, variant: Variant) -> bytes:
    try:
        return rename_text(data.decode("utf-8"), variant).encode("utf-8")
    except UnicodeDecodeError:
        return data  # lint already refuses a file that is not UTF-8


def choose_variant(requested: str, variants: Mapping[str, Variant], run_id: str, stack: str) -> str:
    """The variant id a run publishes: ``none`` is canonical; ``auto`` picks among the
    canonical files and every variant, by a hash of the run id (the same run id always
    picks the same one, so a re-run or a confirmation publishes the same code); an id
    names one. Raises ValueError for an id the stack does not have."""
    if requested == NONE:
        return CANONICAL
    if requested == AUTO:
        pool = [CANONICAL, *sorted(variants)]
        digest = hashlib.sha256(f"{run_id}/{stack}".encode()).hexdigest()
        return pool[int(digest[:12], 16) % len(pool)]
    if requested in variants:
        return requested
    known = ", ".join([AUTO, NONE, *sorted(variants)])
    raise ValueError(f"stack {stack} has no variant {requested!r} (known: {known})")


def named_variant(corpus: CorpusData, stack: str, ident: str | None) -> Variant | None:
    """The variant an id names (None, ``none`` or ``canonical``: the canonical files), for the
    commands that re-create one publication (``score``, ``corpus export``). Raises ValueError."""
    if not ident or ident in (NONE, CANONICAL):
        return None
    variants, _problems = parse_variants(corpus, stack)
    if ident not in variants:
        known = ", ".join([NONE, *sorted(variants)])
        raise ValueError(f"stack {stack} has no variant {ident[:40]!r} (known: {known})")
    return variants[ident]


# --------------------------------------------------------------------------- publishing


class VariantBroken(ValueError):
    """A variant moved a line or a marker: the line map would lie, so nothing is published."""


def publish_variant(
    corpus: CorpusData, stack: str, kind: str, mode: str, prefix: str, variant: Variant | None,
) -> tuple[list[PublishedFile], list[PublishedMarker]]:
    """What gets pushed for one PR of a variant, with the check that makes its line map
    exact: every file keeps the canonical file's line map and every marker its pushed line."""
    files, markers = publish(apply_variant(corpus, stack, variant), stack, kind, mode, prefix)
    if variant is None:
        return files, markers
    base_files, base_markers = publish(corpus, stack, kind, mode, prefix)
    by_path = {f.corpus_path: f for f in files}
    for base in base_files:
        mine = by_path.get(rename_path(base.corpus_path, variant))
        if mine is None or mine.line_map != base.line_map or (
                mine.text.count("\n") != base.text.count("\n")):
            raise VariantBroken(f"variant {variant.id} of {stack}: {base.corpus_path} does not keep its lines")
    before = sorted((m.marker.kind, m.marker.n, m.line, m.end_line) for m in base_markers)
    after = sorted((m.marker.kind, m.marker.n, m.line, m.end_line) for m in markers)
    if before != after:
        raise VariantBroken(f"variant {variant.id} of {stack}: a marker moved or changed")
    return files, markers


# --------------------------------------------------------------------------- lint


def lint_variants(corpus: CorpusData, stack: str) -> list[Problem]:
    """Every problem of the stack's variants (docs/corpus.md#variants)."""
    variants, problems = parse_variants(corpus, stack)
    if not variants:
        return problems
    at = manifest_at(corpus, stack)
    paths = sorted({rel for kind in KINDS for rel in corpus.files.get(stack, {}).get(kind, {})})
    texts = {(kind, rel): data.decode("utf-8", errors="replace")
             for kind in KINDS for rel, data in corpus.files.get(stack, {}).get(kind, {}).items()}
    segments = {part for rel in paths for seg in rel.split("/") for part in (seg, seg.partition(".")[0])}
    reserved = reserved_for(paths)
    for ident, variant in sorted(variants.items()):
        where = f"variants.{ident}"
        found = _shape_problems(variant, texts, segments, reserved)
        if not found:
            found = _applied_problems(corpus, stack, variant)
        problems += [Problem(at, 1, f"{where}: {message}") for message in found]
    return problems


def _occurs(value: str, text: str) -> bool:
    pattern = _pattern([value])
    return bool(pattern and pattern.search(text))


def _shape_problems(variant: Variant, texts: Mapping[tuple[str, str], str],
                    segments: set[str], reserved: frozenset[str]) -> list[str]:
    """Collisions, keywords, and renames of something the stack does not contain."""
    out: list[str] = []
    everything = "\n".join(texts.values())
    news: dict[str, str] = {}
    olds = {old for old, _ in variant.renames()}
    for kind in RENAME_KINDS:
        for old, new in variant.of(kind):
            label = f"{kind} {old} -> {new}"
            if old in reserved or new in reserved:
                out.append(f"{label}: renames a reserved word of the stack's languages or the marker grammar")
            if not (_occurs(old, everything) or (kind == "names" and old in segments)):
                out.append(f"{label}: {old!r} does not occur as a whole word in the stack")
            if _occurs(new, everything) or new in segments:
                out.append(f"{label}: {new!r} is already a name in the stack (renames must not collide)")
            if new in olds:
                out.append(f"{label}: {new!r} is also renamed by this variant")
            if new in news:
                out.append(f"{label}: {old!r} and {news[new]!r} would both become {new!r}")
            news[new] = old
    return out


def _applied_problems(corpus: CorpusData, stack: str, variant: Variant) -> list[str]:
    """Lint the renamed stack as a stack, then check it against the canonical one: the same
    lines, the same markers on them, the same syntax, and descriptions that still read true."""
    out: list[str] = []
    renamed = apply_variant(corpus, stack, variant)
    canonical_paths = {kind: set(corpus.files[stack].get(kind, {})) for kind in KINDS}
    for kind in KINDS:
        if len(renamed.files[stack].get(kind, {})) != len(canonical_paths[kind]):
            out.append(f"{kind}: two files would get the same path")
    if out:
        return out
    out += [f"{p.path}:{p.line}: {p.message}" for p in lint_stack(renamed, stack)]
    for kind in KINDS:
        base, mine = view(corpus, stack, kind), view(renamed, stack, kind)
        for rel, pf in sorted(base.parsed.items()):
            new_rel = rename_path(rel, variant)
            other = mine.parsed.get(new_rel)
            if other is None:
                continue
            if len(other.lines) != len(pf.lines):
                out.append(f"{kind}/{new_rel}: the line count changed")
            key_before = [(m.kind, m.n, m.severity, m.rule, m.marker_line, m.anchor_line, m.lines)
                          for m in pf.markers]
            key_after = [(m.kind, m.n, m.severity, m.rule, m.marker_line, m.anchor_line, m.lines)
                         for m in other.markers]
            if key_before != key_after:
                out.append(f"{kind}/{new_rel}: a marker's number, severity, rule or line changed "
                           "(a rename reached the marker grammar)")
            if not (pf.leaks or other.leaks) and (
                    publish_file(pf, "blind", "", True).line_map != publish_file(other, "blind", "", True).line_map):
                out.append(f"{kind}/{new_rel}: blind publication would drop other lines than the canonical file's "
                           "(a rename added or removed a word the header check hides)")
            syntax = _syntax_problem(rel, "\n".join(pf.lines), "\n".join(other.lines))
            if syntax:
                out.append(f"{kind}/{new_rel}: {syntax}")
    for m in view(renamed, stack, "seeded").markers:
        for old, new in variant.renames():
            said = _other_spelling(old, m.description)
            if said:
                out.append(f"{m.kind.upper()} {m.n}: the description still says {said!r} after the rename of "
                           f"{old!r} to {new!r} (rename that spelling too, or reword the description)")
    return out


def _other_spelling(old: str, description: str) -> str | None:
    """Another spelling of a renamed name left in a description (``DOCUMENT``, ``document``
    for ``Document`` only when it is written as code): the answer key would name something
    the reviewer never saw. A lower-case word (``a truncated document``) is prose, not the
    identifier, and is left alone."""
    for m in re.finditer(rf"(?i)(?<!{_WORD}){re.escape(old)}(?!{_WORD})", description):
        said = m.group(0)
        if said != old and not (said.islower() and said.isalpha()):
            return said
    return None


def _syntax_problem(rel: str, before: str, after: str) -> str | None:
    """The checkers lint runs in-process: Python's own parser, a JSON parser. Every other
    language is held lexically by the rename shapes (an identifier stays an identifier, a
    host stays inside its string) and parsed by its own parser in the test suite. A
    canonical file that does not parse itself is not the variant's problem."""
    check: Any
    if rel.endswith(".py"):
        check = ast.parse
    elif rel.endswith(".json"):
        check = json.loads
    else:
        return None
    try:
        check(before)
    except (SyntaxError, ValueError):
        return None
    try:
        check(after)
    except (SyntaxError, ValueError) as exc:
        return f"no longer parses ({exc.__class__.__name__})"
    return None
