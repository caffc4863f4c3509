"""``profile learn``: the smallest ``--profiles`` override that reads one comment as expected
(docs/dialects.md#teaching-a-profile-a-new-phrasing).

A vendor rewords a notice or a severity badge on a Monday; the user has the comment and
knows what it means. This searches, smallest first, for a signal rule, a severity pattern
and a citation shape cut from the comment itself, keeps a candidate only when the profile
built from the printed YAML reads the comment as expected *and* reads every shipped
example of that profile exactly as before, and returns the YAML. Every candidate is
checked through :func:`build_profiles`, the loader ``--profiles`` uses, so what is
printed is what a run will load.
"""

from __future__ import annotations

import copy
import json
import re
import unicodedata
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, get_args

import yaml

from redline_canary.commands._profiles_file import build_profiles
from redline_canary.corpus.secrets import find_provider_secrets
from redline_canary.corpus.severity import Severity
from redline_canary.errors import BadInput
from redline_canary.review.comments import Channel
from redline_canary.review.extraction import Signal
from redline_canary.review.profiles import Profile
from redline_canary.review.profiles.citations import PATH_PLAIN
from redline_canary.review.profiles.notices import notice_text

# ``notice=CLASS``: the classes a user meets, and the signal each must read as.
NOTICE_CLASSES: dict[str, Signal] = {
    "timed-out": "error", "failed": "error", "busy": "progress", "rate-limited": "skipped",
    "paused": "skipped", "quota": "skipped", "not-enabled": "skipped", "declined": "skipped",
    "skipped": "skipped", "clean": "clean",
}
LEARNABLE_SIGNALS: tuple[Signal, ...] = tuple(s for s in get_args(Signal) if s != "finding")
_MAX_TRIES = 400  # candidate profiles built per learn: a bound on a hostile body's cost
_MAX_EXAMPLE_BYTES = 1 << 20
_SEVERITY_WORDS = re.compile(
    r"\b(?:crit\w*|high|sev\w*|urgent|block\w*|major|medium|moderate|minor|low|nit\w*|trivial|info\w*"
    r"|important|warn\w*|error|p\d|s\d|sev-?\d|priority|risk|security|bug|suggest\w*)\b"
    r"|[\U0001F300-\U0001FAFF\u2600-\u27BF]",
    re.IGNORECASE,
)
_TOKENS = (
    re.compile(r"!\[[^\]\n]{1,40}\]"),
    re.compile(r"""\balt=["'][^"'\n]{1,40}["']"""),
    re.compile(r"\[[^\]\n]{1,30}\]"),
    re.compile(r"\*\*[^*\n]{1,40}\*\*"),
    re.compile(r"(?<!\w)_[^_\n]{1,40}_(?!\w)"),
    re.compile(r"`[^`\n]{1,30}`"),
    re.compile(r"[^\w\s]{1,3}\s?[A-Za-z][\w-]{1,20}"),
    re.compile(r"\b[A-Za-z][\w-]{1,20}\b"),
)
# Words that say which signal a sentence carries: a learned rule keys on them, not on the
# vendor's name that happens to open the sentence.
_SIGNAL_WORDS: dict[str, re.Pattern[str]] = {
    signal: re.compile(words, re.IGNORECASE) for signal, words in {
        "error": r"\b(?:fail\w*|error\w*|gave up|give up|timed?[ -]?out|crash\w*|broke\w*|abort\w*|could(?:n't| not)"
                 r"|unable|went wrong|took too long)\b",
        "skipped": r"\b(?:skip\w*|limit\w*|quota\w*|pause\w*|disabled|enabled|declin\w*|credit\w*|plan|draft|bots?"
                   r"|branch\w*|size|large|too many|won't|will not|again|ignored|excluded|upgrade|billing)\b",
        "clean": r"\b(?:no|nothing|clean|lgtm|looks good|zero|0)\b",
        "done": r"\b(?:reviewed|complete\w*|finished|done)\b",
        "progress": r"\b(?:reviewing|working|progress|wait\w*|shortly|busy|queued|started|analy\w*)\b",
        "none": r"\b(?:thanks?|thank you|welcome|noted|got it)\b",
    }.items()
}
_PATH_GROUP = rf"(?P<path>{PATH_PLAIN})"


@dataclass(frozen=True)
class Expectation:
    """One ``--expect``: a signal, or a finding (a place, a severity, or both)."""

    signal: Signal | None = None
    severity: Severity | None = None
    path: str | None = None
    start: int | None = None
    end: int | None = None

    def met(self, result: Mapping[str, Any]) -> bool:
        if self.signal is not None:
            return bool(result["signal"] == self.signal)
        findings = result["findings"]
        if self.path is None:
            return bool(findings) and all(f["severity"] == self.severity.name for f in findings if self.severity)
        return any(f["path"] == self.path and f["line"] == self.start and (f["end_line"] or f["line"]) == self.end
                   and (self.severity is None or f["severity"] == self.severity.name) for f in findings)


def parse_expect(values: Sequence[str]) -> list[Expectation]:
    """``signal=S``, ``notice=CLASS``, ``severity=LEVEL``, ``location=path:line[-end]``;
    several keys in one ``--expect`` (space- or comma-separated) describe one finding."""
    out: list[Expectation] = []
    for raw in values:
        keys: dict[str, str] = {}
        for part in re.split(r"[\s,;]+", raw.strip()):
            if not part:
                continue
            key, eq, value = part.partition("=")
            if not eq or not value:
                raise BadInput(f"--expect {raw!r}: {part!r}: expected key=value "
                               "(signal=, notice=, severity=, location=)")
            if key in keys:
                raise BadInput(f"--expect {raw!r}: {key}: given twice")
            keys[key] = value
        out.append(_expectation(raw, keys))
    if not out:
        raise BadInput("--expect: say what the body should read as (e.g. severity=BLOCKER)")
    return out


def _expectation(raw: str, keys: Mapping[str, str]) -> Expectation:
    unknown = sorted(set(keys) - {"signal", "notice", "severity", "location"})
    if unknown:
        raise BadInput(f"--expect {raw!r}: {unknown[0]}: unknown key (expected signal, notice, severity, location)")
    if ("signal" in keys or "notice" in keys) and len(keys) > 1:
        raise BadInput(f"--expect {raw!r}: a signal or notice stands alone (give findings in another --expect)")
    if "signal" in keys:
        if keys["signal"] not in LEARNABLE_SIGNALS:
            raise BadInput(f"--expect {raw!r}: signal: expected one of {', '.join(LEARNABLE_SIGNALS)}")
        return Expectation(signal=next(s for s in LEARNABLE_SIGNALS if s == keys["signal"]))
    if "notice" in keys:
        if keys["notice"] not in NOTICE_CLASSES:
            raise BadInput(f"--expect {raw!r}: notice: expected one of {', '.join(NOTICE_CLASSES)}")
        return Expectation(signal=NOTICE_CLASSES[keys["notice"]])
    severity = None
    if "severity" in keys:
        try:
            severity = Severity.parse(keys["severity"])
        except ValueError as exc:
            raise BadInput(f"--expect {raw!r}: severity: {exc}") from None
    if "location" not in keys:
        return Expectation(severity=severity)
    m = re.fullmatch(r"(?P<path>[^:\s]+):(?P<a>\d+)(?:-(?P<b>\d+))?", keys["location"])
    if m is None:
        raise BadInput(f"--expect {raw!r}: location: expected path:line or path:first-last")
    a, b = int(m["a"]), int(m["b"] or m["a"])
    return Expectation(severity=severity, path=m["path"], start=min(a, b), end=max(a, b))


@dataclass(frozen=True)
class Example:
    name: str
    channel: Channel
    body: str
    login: str | None


def load_examples(root: Path, profile: str) -> list[Example]:
    """The shipped examples a profile reads (``<root>/<profile>/*.md`` beside its ``.expect.json``);
    for a profile with no folder of its own (``generic``, a custom one), every vendor's."""
    folder = root / profile
    sides = sorted(folder.glob("*.expect.json")) if folder.is_dir() else sorted(root.glob("*/*.expect.json"))
    out: list[Example] = []
    for side in sides[:2000]:
        body = side.with_name(side.name.removesuffix(".expect.json") + ".md")
        if not body.is_file() or body.stat().st_size > _MAX_EXAMPLE_BYTES:
            continue
        try:
            expect = json.loads(side.read_text(encoding="utf-8"))
            out.append(Example(f"{side.parent.name}/{body.stem}", expect["channel"],
                               body.read_text(encoding="utf-8"), expect.get("login")))
        except (OSError, ValueError, KeyError, TypeError):
            continue  # an example that cannot be read is no example; the fixture tests guard them
    return out


Classify = Callable[[Profile, Channel, str, "str | None"], dict[str, Any]]


@dataclass
class Learned:
    """What :func:`learn` found: the entry to print, or why there is none."""

    entry: dict[str, Any] | None
    already: bool = False
    examples: int = 0
    tries: int = 0
    reason: str = ""


def learn(name: str, base_doc: Mapping[str, Any] | None, channel: Channel, body: str, login: str | None,
          expectations: Sequence[Expectation], examples: Sequence[Example], classify: Classify) -> Learned:
    """The smallest ``profiles.<name>`` entry that meets ``expectations`` and changes no example."""
    doc: dict[str, Any] = copy.deepcopy(dict(base_doc)) if base_doc else {"profiles": {}}
    doc.setdefault("profiles", {})
    if not isinstance(doc["profiles"], dict):
        raise BadInput("--profiles: profiles: expected a mapping of profile name to settings")
    base_entry = dict(doc["profiles"].get(name) or {})
    base = _build(doc, name, base_entry)
    if base is None:
        raise BadInput(f"--reviewer: unknown profile {name!r}")
    result = classify(base, channel, body, login)
    if all(x.met(result) for x in expectations):
        return Learned(entry=None, already=True, examples=len(examples))
    before = {e.name: classify(base, e.channel, e.body, e.login) for e in examples}
    state = Learned(entry=None, examples=len(examples))
    entry = copy.deepcopy(base_entry)

    def safe(candidate: dict[str, Any], goals: Sequence[Expectation]) -> bool:
        state.tries += 1
        profile = _build(doc, name, candidate)
        if profile is None or not all(x.met(classify(profile, channel, body, login)) for x in goals):
            return False
        return all(classify(profile, e.channel, e.body, e.login) == before[e.name] for e in examples)

    goals: list[Expectation] = []
    where = [replace(x, severity=None) for x in expectations if x.path is not None]
    for kind, part_goals, candidates in (
        ("locations", where, _location_candidates(body, expectations)),
        ("severity", [x for x in expectations if x.signal is None], _severity_candidates(body, expectations)),
        ("signals", [x for x in expectations if x.signal is not None], _signal_candidates(body, expectations)),
    ):
        if not part_goals:
            continue
        goals += part_goals
        if safe(entry, goals):
            continue
        for value in candidates:
            if state.tries >= _MAX_TRIES:
                state.reason = f"no override found within {_MAX_TRIES} candidates"
                return state
            trial = copy.deepcopy(entry)
            trial[kind] = [value, *(trial.get(kind) or [])]
            if safe(trial, goals):
                entry = trial
                break
        else:
            state.reason = (f"no {kind.rstrip('s')} pattern cut from the body reads it as expected "
                            "without changing how a shipped example reads")
            return state
    if not safe(entry, expectations):
        state.reason = "the parts found do not read the body as expected together"
        return state
    state.entry = entry
    return state


def render(name: str, entry: Mapping[str, Any]) -> str:
    """The YAML a ``--profiles`` file takes, for one profile."""
    return yaml.safe_dump({"profiles": {name: dict(entry)}}, sort_keys=False, allow_unicode=True, width=1000)


def _build(doc: Mapping[str, Any], name: str, entry: Mapping[str, Any]) -> Profile | None:
    """The profile a ``--profiles`` document holding ``entry`` as ``profiles.<name>`` gives
    (built from the YAML text, so what is checked is what would be printed)."""
    trial = {**doc, "profiles": {**doc["profiles"], name: dict(entry)}}
    text = yaml.safe_dump(trial, sort_keys=False, allow_unicode=True, width=1000)
    built = build_profiles(yaml.safe_load(text), "<learned>")
    return built.get(name)


def _printable(text: str) -> bool:
    """A candidate goes into YAML a person pastes and a terminal shows: no control, format
    (bidi) or private characters, and no credential-shaped string cut from the comment."""
    return (all(not unicodedata.category(ch).startswith("C") for ch in text)
            and next(iter(find_provider_secrets(text)), None) is None)


def _literal(text: str) -> str:
    """A phrase as a pattern: escaped, any run of blanks matching any other."""
    return r"\s+".join(re.escape(w) for w in text.split())


def _signal_candidates(body: str, expectations: Sequence[Expectation]) -> Iterator[dict[str, Any]]:
    """Runs of 2-8 words of one sentence; those holding a word of the signal's own class
    first ("gave up", not "Greptile gave"), then the shortest."""
    signal = next((x.signal for x in expectations if x.signal is not None), None)
    if signal is None:
        return
    phrases: list[str] = []
    for line in notice_text(body).splitlines()[:40]:
        for sentence in re.split(r"(?<=[.!?])\s+", line.strip(" >#*_-\t")):
            words = sentence.split()[:24]
            phrases += [" ".join(words[i:i + k]) for k in range(2, 9) for i in range(len(words) - k + 1)]
    telling = _SIGNAL_WORDS.get(signal)
    seen: set[str] = set()
    order = {p: i for i, p in reversed(list(enumerate(phrases)))}
    for phrase in sorted(order, key=lambda p: (telling is None or telling.search(p) is None, len(p), order[p])):
        pattern = _literal(phrase)
        if len(phrase) < 6 or pattern in seen or not _printable(phrase):
            continue
        seen.add(pattern)
        rule: dict[str, Any] = {"signal": signal, "pattern": pattern}
        if signal == "progress":
            rule["placeholder"] = True
        yield rule


def _severity_candidates(body: str, expectations: Sequence[Expectation]) -> Iterator[dict[str, Any]]:
    levels = {x.severity for x in expectations if x.severity is not None}
    if len(levels) != 1:
        return  # several levels: each needs its own item text; learn them one body at a time
    level = levels.pop()
    head = body[:2000]
    tokens = {m.group(0).strip() for t in _TOKENS for m in t.finditer(head)}
    ranked = sorted(tokens, key=lambda t: (_SEVERITY_WORDS.search(t) is None, len(t), head.find(t)))
    for token in ranked:
        if len(token) >= 2 and _printable(token):
            yield {"pattern": _literal(token), "level": level.name}


def _location_candidates(body: str, expectations: Sequence[Expectation]) -> Iterator[str]:
    for x in expectations:
        if x.path is None or x.start is None:
            continue
        for m in re.finditer(re.escape(x.path), body):
            after = body[m.end(): m.end() + 80]
            if not _printable(after.split("\n", 1)[0]):
                continue
            a = re.search(rf"(?<!\d){x.start}(?!\d)", after)
            if a is None:
                continue
            pattern = _PATH_GROUP + _glue(after[: a.start()]) + r"(?P<a>\d+)"
            rest = after[a.end():]
            b = re.search(rf"(?<!\d){x.end}(?!\d)", rest[:12]) if x.end != x.start else None
            if b is not None:
                pattern += _glue(rest[: b.start()]) + r"(?P<b>\d+)"
            else:
                pattern += r"(?:\s*[-–]\s*L?(?P<b>\d+))?"
            yield pattern


def _glue(text: str) -> str:
    """The text between a path and its line, as a pattern: digits and blanks generalised."""
    out = []
    for piece in re.split(r"(\s+|\d+)", text):
        if not piece:
            continue
        out.append(r"\s*" if piece.isspace() else r"\d+" if piece.isdigit() else re.escape(piece))
    return "".join(out)


__all__ = ["NOTICE_CLASSES", "Example", "Expectation", "Learned", "learn", "load_examples", "parse_expect", "render"]
