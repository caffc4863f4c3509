"""The regression issue: one GitHub issue per target while its gate fails. Pure.

A red run is easy to miss in a list of workflow runs; an open issue is not. So for each
target (repo, stack, reviewer) of a run this module decides one action from the run's
final records (``verdict.final_attempts``, so a confirmation re-run or a re-run of failed
jobs has the last word) and the open issues found:

* **open** — the target's seeded or clean gate failed (outcome ``scored`` or ``silent``;
  an ``error`` or ``cancelled`` PR is no verdict on the reviewer) and no issue is open;
* **comment** — an issue is open and the target still fails: one comment per run;
* **close** — an issue is open and every gate of the target passed: a comment, then closed;
* **nothing** — passing with no issue, no verdict, or this run was already reported.

Idempotent by markers. The issue body carries ``<!-- rc:regression target=… -->`` (how the
issue is found: with the label, never by its title, so a person's issue with the same
title is never touched) and every text this module writes carries
``<!-- rc:regression-run=… -->``, so running the same command twice comments once.

Every field of a record is outside text (anyone who can write the history can forge it):
it goes through :func:`redline_canary.report.text.md_text` or ``md_code``, which turn ``<`` into
``&lt;`` (so no record can write a marker or close the HTML comment one sits in) and show
every mention, issue and commit reference (``@name``, ``@org/team``, ``#123``, ``GH-1``,
``owner/repo#1``, ``owner/repo@sha``, a bare SHA) as a code span, so a record pings nobody
and cross-links nothing. Values inside the markers are percent-encoded.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from redline_canary.report.annotations import corpus_file
from redline_canary.report.text import md_code, md_text, terminal_safe
from redline_canary.score.record import Record
from redline_canary.score.verdict import final_attempts

DEFAULT_LABEL = "redline-canary-regression"
MARKER = "<!-- rc:regression target={target} -->"
RUN_MARKER = "<!-- rc:regression-run={run_id} -->"
MAX_TITLE = 256  # what GitHub's "title is too long" names
MAX_BODY = 60_000  # GitHub refuses more than 65 536 characters; keep a margin
MAX_FIELD = 160  # characters of one record field shown
MAX_ITEMS = 40  # seeds (or reasons) listed per section
_RUN_MARKER = re.compile(r"<!-- rc:regression-run=([A-Za-z0-9._%-]{1,300}) -->")
_SAFE = re.compile(r"[A-Za-z0-9._-]")
_URL_BAD = re.compile(r"[\s<>`\"'\\\x00-\x1f\x7f]")

Status = Literal["failing", "passing", "unknown"]
ActionKind = Literal["open", "comment", "close", "nothing"]


def _enc(value: object) -> str:
    """Percent-encode all but ``A-Z a-z 0-9 . _ -``: a marker value can hold no space, no
    ``/`` (the separator) and nothing that ends the comment."""
    return "".join(c if _SAFE.fullmatch(c) else "".join(f"%{b:02X}" for b in c.encode("utf-8", "replace"))
                   for c in str(value))


def _short(value: object, limit: int = MAX_FIELD) -> str:
    text = terminal_safe(value).strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _text(value: object) -> str:
    return md_text(_short(value))


def _code(value: object) -> str:
    return md_code(_short(value))


def _link(text: str, url: str | None) -> str:
    """``[text](<url>)`` for a URL the CLI validated; anything odd is shown as nothing."""
    if not url or _URL_BAD.search(url) or not url.startswith(("https://", "http://")):
        return text
    return f"[{text}](<{url}>)"


# --- what a run says about each target ------------------------------------------------------

@dataclass(frozen=True)
class Target:
    """What one issue is about: a reviewer on a repository's stack."""

    repo: str
    stack: str
    reviewer: str

    @property
    def marker(self) -> str:
        owner, _, name = self.repo.partition("/")
        return MARKER.format(target=f"{_enc(owner)}/{_enc(name)}/{_enc(self.stack)}/{_enc(self.reviewer)}")

    @property
    def label(self) -> str:
        """One line for a log: ``repo stack/reviewer``, terminal-safe."""
        return terminal_safe(f"{self.repo} {self.stack}/{self.reviewer}")


@dataclass(frozen=True)
class Seed:
    """A BLOCKER seed the reviewer did not catch at its severity, where the corpus holds it."""

    n: int
    file: str  # seeds/seeded/<stack>/<path>
    line: int
    rule: str
    description: str


@dataclass(frozen=True)
class TargetResult:
    """One target's verdict in a run: ``unknown`` when a PR of it ended in error or was
    cancelled and nothing failed (no verdict on the reviewer; an open issue stays as it is)."""

    target: Target
    status: Status
    run_id: str
    reasons: tuple[str, ...] = ()  # "seeded: blocker recall 0/4 < 1.0"
    missed: tuple[Seed, ...] = ()
    undercalled: tuple[Seed, ...] = ()


def _blockers(record: Record, key: str, stack: str, exclude: set[int]) -> tuple[Seed, ...]:
    return tuple(Seed(n=s.n, file=corpus_file("seeds", "seeded", stack, s.path), line=s.line, rule=s.rule,
                      description=s.description or "")
                 for s in record.seeds(key) if s.severity == "BLOCKER" and s.n not in exclude)


def judge(records: Sequence[Record], run_ids: Sequence[str]) -> list[TargetResult]:
    """Per target, in first-seen order, its verdict over the final attempts of ``run_ids``.

    The missed BLOCKERs listed are those of the final seeded attempt that no attempt of the
    same run caught (the confirmation rule of ``verdict.confirm``)."""
    wanted = set(run_ids)
    ours = [r for r in records if r.run_id in wanted]
    order = {rid: i for i, rid in enumerate(run_ids)}
    groups: dict[tuple[str, str, str], list[Record]] = {}
    for r in final_attempts(ours, run_ids):
        groups.setdefault(r.target, []).append(r)
    results = []
    for (repo, stack, reviewer), finals in groups.items():
        target = Target(repo, stack, reviewer)
        run_id = max((r.run_id for r in finals), key=lambda x: order.get(x, -1))
        failing = [r for r in finals if r.outcome in ("scored", "silent") and not r.gate.passed]
        if not failing:
            ok = all(r.outcome == "scored" and r.gate.passed for r in finals)
            results.append(TargetResult(target, "passing" if ok else "unknown", run_id))
            continue
        reasons: list[str] = []
        missed: tuple[Seed, ...] = ()
        undercalled: tuple[Seed, ...] = ()
        for r in failing:
            kind = r.kind
            reasons += [f"{kind}: {x}" for x in r.gate.reasons] or [f"{kind}: gate failed"]
            if kind == "seeded":
                attempts = [a for a in ours if a.run_id == r.run_id and a.kind == "seeded"
                            and a.target == (repo, stack, reviewer)]
                caught = {s.n for a in attempts for s in a.caught_seeds if s.severity == "BLOCKER"}
                missed = _blockers(r, "missed_seeds", stack, caught)
                undercalled = _blockers(r, "undercalled_seeds", stack, caught)
        results.append(TargetResult(target, "failing", run_id, tuple(reasons), missed, undercalled))
    return results


# --- issues and actions ---------------------------------------------------------------------

@dataclass(frozen=True)
class OpenIssue:
    """An open issue carrying the label, as listed (pull requests already left out).
    ``comments``: bodies of the comments its author wrote (whose run markers count; a
    stranger's comment cannot silence a run)."""

    number: int
    url: str
    body: str
    comments: tuple[str, ...] = ()

    def reported_runs(self) -> frozenset[str]:
        return frozenset(m for text in (self.body, *self.comments) for m in _RUN_MARKER.findall(text or ""))


@dataclass(frozen=True)
class Links:
    """Where a reader goes next: this run's page, and the scoreboard or summary."""

    run_url: str | None = None
    summary_url: str | None = None


@dataclass(frozen=True)
class Action:
    kind: ActionKind
    target: Target
    run_id: str
    issue: int | None = None
    title: str = ""  # open only
    body: str = ""  # the issue body (open) or the comment (comment, close; "" = already said)
    why: str = ""  # one line for the log


def find_issue(issues: Iterable[OpenIssue], target: Target) -> OpenIssue | None:
    """The oldest open issue whose body carries the target's marker."""
    mine = [i for i in issues if target.marker in (i.body or "")]
    return min(mine, key=lambda i: i.number) if mine else None


def plan(results: Iterable[TargetResult], issues: Sequence[OpenIssue], links: Links = Links()) -> list[Action]:
    """One action per target (see the module docstring)."""
    actions = []
    for r in results:
        issue = find_issue(issues, r.target)
        run = terminal_safe(r.run_id)
        if r.status == "failing":
            summary = "; ".join(_short(x, 120) for x in r.reasons[:3])
            if issue is None:
                actions.append(Action("open", r.target, r.run_id, None, title(r.target), issue_body(r, links),
                                      f"gate failed in run {run}: {summary}"))
            elif _enc(r.run_id) in issue.reported_runs():
                actions.append(Action("nothing", r.target, r.run_id, issue.number,
                                      why=f"run {run} already reported on #{issue.number}"))
            else:
                actions.append(Action("comment", r.target, r.run_id, issue.number, body=follow_up(r, links),
                                      why=f"still failing in run {run}: {summary}"))
        elif r.status == "passing" and issue is not None:
            # The closing comment went out but the close did not (a failure in between):
            # close without saying it twice.
            said = _enc(r.run_id) in issue.reported_runs()
            actions.append(Action("close", r.target, r.run_id, issue.number, body="" if said else closing(r, links),
                                  why=f"passing again in run {run}"))
        elif r.status == "passing":
            actions.append(Action("nothing", r.target, r.run_id, why=f"passing in run {run}"))
        else:
            left = f"; #{issue.number} left open" if issue is not None else ""
            actions.append(Action("nothing", r.target, r.run_id, issue.number if issue else None,
                                  why=f"no verdict in run {run} (a PR ended in error or was cancelled){left}"))
    return actions


# --- the texts ------------------------------------------------------------------------------

def title(target: Target) -> str:
    text = terminal_safe(f"redline-canary: {target.reviewer} regressed on {target.repo} {target.stack}")
    return text if len(text) <= MAX_TITLE else text[: MAX_TITLE - 1] + "…"


def _who(target: Target) -> str:
    return f"{_code(target.reviewer)} on {_code(target.repo)} (stack {_code(target.stack)})"


def _run(result: TargetResult, links: Links) -> str:
    return _link(f"run {_code(result.run_id)}", links.run_url)


def _details(result: TargetResult, links: Links) -> list[str]:
    lines = ["", "Gate:"]
    lines += [f"- {_text(x)}" for x in result.reasons[:MAX_ITEMS]]
    for heading, seeds in (("Missed BLOCKER seeds", result.missed),
                           ("BLOCKER seeds found but rated below BLOCKER", result.undercalled)):
        if seeds:
            lines += ["", f"{heading} ({len(seeds)}):"]
            lines += [f"- SEED {s.n} {_code(f'{s.file}:{s.line}')} {_code(s.rule)}"
                      + (f" — {_text(s.description)}" if s.description else "") for s in seeds[:MAX_ITEMS]]
            if len(seeds) > MAX_ITEMS:
                lines.append(f"- … and {len(seeds) - MAX_ITEMS} more (see the run)")
    if links.summary_url:
        lines += ["", _link("Summary", links.summary_url)]
    return lines


def _bounded(lines: list[str]) -> str:
    """Join, and cut whole lines from the end past MAX_BODY (the markers come first)."""
    out, size = [], 0
    for i, line in enumerate(lines):
        if size + len(line) + 1 > MAX_BODY:
            out.append(f"… {len(lines) - i} more line(s) cut; the run lists everything")
            break
        out.append(line)
        size += len(line) + 1
    return "\n".join(out) + "\n"


def issue_body(result: TargetResult, links: Links) -> str:
    t = result.target
    return _bounded([
        t.marker,
        RUN_MARKER.format(run_id=_enc(result.run_id)),
        f"The gate of {_who(t)} failed in {_run(result, links)}.",
        *_details(result, links),
        "",
        "redline-canary keeps this issue up to date: one comment on each further failing run, "
        "closed with a comment when the target passes again. It finds the issue by its label "
        "and the marker at the top of this text: keep both.",
    ])


def follow_up(result: TargetResult, links: Links) -> str:
    return _bounded([RUN_MARKER.format(run_id=_enc(result.run_id)),
                     f"Still failing in {_run(result, links)}.", *_details(result, links)])


def closing(result: TargetResult, links: Links) -> str:
    return _bounded([RUN_MARKER.format(run_id=_enc(result.run_id)),
                     f"Passing again in {_run(result, links)}: every gate of {_who(result.target)} passed. "
                     "Closing."])
