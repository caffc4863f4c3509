"""One target's canary cycle (docs/architecture.md#one-walk-of-data): publish → trigger → poll → score → tear down.

Teardown runs in ``finally``: every branch this cycle created is deleted and every PR it
opened is closed, whether the cycle scored, failed, or was cancelled by a signal. The
cycle never sleeps on its own: it asks its :class:`Clock`, so tests run a 40-minute
timeout in milliseconds.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from redline_canary import __version__
from redline_canary.corpus.model import CorpusData, fingerprint
from redline_canary.corpus.severity import Severity
from redline_canary.corpus.variants import NONE, choose_variant, parse_variants, publish_variant
from redline_canary.errors import BadInput, CanaryError, mask
from redline_canary.github.clock import Cancelled, Clock, RealClock, utc_now_iso
from redline_canary.github.forge import CHANNEL_PATHS, BaseCommit, ChannelState, Forge
from redline_canary.github.retry import RetryPolicy
from redline_canary.review.capture import comments_from_capture
from redline_canary.review.comments import comment_from_reaction
from redline_canary.review.profiles import get_profile
from redline_canary.review.profiles.base import Profile
from redline_canary.run.files import safe_write_text
from redline_canary.run.targets import Target
from redline_canary.score.evaluate import ScoreSettings, evaluate
from redline_canary.score.matching import DEFAULT_WINDOW
from redline_canary.score.polling import PollConfig, PollState, activity_fingerprint, describe, observe
from redline_canary.score.record import KINDS, Outcome, PRKind, Record
from redline_canary.score.scoring import DEFAULT_FLOOR, RecordMeta
from redline_canary.score.verdict import GateOptions, confirm, decide, unmet_blockers

LABEL = "redline-exempt"
BRANCH_PREFIX = "rc/"
RUN_MARKER = "<!-- rc:run={run_id} -->"
TEARDOWN_BUDGET = 6.5  # seconds after a signal; GitHub Actions sends SIGKILL at 7.5
Progress = Callable[[str, str], None]


@dataclass
class CycleOptions:
    run_id: str
    poll: PollConfig = field(default_factory=PollConfig)
    window: int = DEFAULT_WINDOW
    floor: Severity = DEFAULT_FLOOR
    gate: GateOptions = field(default_factory=GateOptions)
    confirm: int = 1
    baseline_history: tuple[Record, ...] = ()  # what --baseline compares with
    label: str = LABEL
    branch_prefix: str = BRANCH_PREFIX
    save_captures: Path | None = None
    # Profiles from a --profiles file, read once by the command (they shadow built-ins).
    profiles: Mapping[str, Profile] = field(default_factory=dict)
    variant: str = NONE  # --variant: auto, none or a variant id; a target's own key wins


@dataclass
class Leftovers:
    """What teardown could not remove; reported with exit 4, for the janitor to finish."""

    pulls: list[int] = field(default_factory=list)
    branches: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.pulls or self.branches)


@dataclass
class OpenPR:
    kind: PRKind
    attempt: int
    branch: str
    number: int | None = None
    head_sha: str = ""
    opened_at: float = 0.0
    states: dict[str, ChannelState] = field(default_factory=dict)
    poll: PollState | None = None
    trigger_comment: int | None = None  # its reactions are how some bots say "seen"
    unconfirmed: str | None = None  # why the trigger may not have taken


def branch_name(prefix: str, run_id: str, stack: str, kind: PRKind, attempt: int) -> str:
    """Neutral and unique per run: nothing in it says "seeded" or names a severity."""
    token = hashlib.sha256(f"{stack}/{kind}/{attempt}".encode()).hexdigest()[:8]
    return f"{prefix}{run_id}-{token}"


def pr_text(target: Target, kind: PRKind, run_id: str) -> tuple[str, str, str]:
    """(title, body, commit message): neutral in blind mode, explicit in marked mode."""
    marker = RUN_MARKER.format(run_id=run_id)
    if target.mode == "marked":
        title = f"redline-canary: {kind} corpus for {target.stack}"
        return title, f"{title}. Do not merge.\n\n{marker}\n", f"{title}\n\n{marker}\n"
    title = f"Refresh {target.stack} module"
    body = f"Routine refresh of the {target.stack} module.\n\n{marker}\n"
    # The commit carries the run marker too: the janitor deletes a branch only when its
    # head commit says this tool made it (a branch can outlive its PR, or never get one).
    return title, body, f"{title}\n\n{marker}\n"


class TargetCycle:
    """Runs one target end to end and returns its history records."""

    def __init__(self, client: Forge, target: Target, corpus: CorpusData,
                 options: CycleOptions, clock: Clock, progress: Progress | None = None) -> None:
        self.client = client
        self.target = target
        self.corpus = corpus
        self.options = options
        self.clock = clock
        self.progress = progress or (lambda _label, _text: None)
        profile = get_profile(target.reviewer, dict(options.profiles))  # checked when the target was read
        self.profile: Profile = profile.with_logins(target.logins) if target.logins else profile
        self.prs: list[OpenPR] = []
        self.records: list[Record] = []
        self.leftovers = Leftovers()
        self.unsaved: list[CanaryError] = []  # captures that could not be written: the run exits 2
        self.fingerprint = fingerprint(corpus, target.stack)  # the canonical stack's: variants share it
        variants, _problems = parse_variants(corpus, target.stack)  # lint ran before any target started
        try:
            self.variant_id = choose_variant(target.variant or options.variant, variants, options.run_id,
                                             target.stack)
        except ValueError as exc:
            raise BadInput(str(exc)) from None
        self.variant = variants.get(self.variant_id)
        self.started = clock.now()
        # This target's gate rules: its own keys over the run's flags (the floor included).
        self.rules = target.gate or replace(options.gate, floor=options.floor.name)

    # --- the cycle ----------------------------------------------------------------
    def run(self) -> list[Record]:
        try:
            base = self.client.preflight(self.target.repo, self.target.base)
            self.client.ensure_label(self.target.repo, self.options.label,
                                     description="canary PR: exempt from merge and metrics")
            pending = [self._open(base, "seeded", 1), self._open(base, "clean", 1)]
            self._wait(pending)
            for pr in pending:
                self.records.append(self._score(pr))
            self._confirm(base)
            self._apply_baseline()
        except Cancelled:
            self._record_unscored("cancelled", None)
            raise
        except BadInput as exc:
            # A configuration mistake is not a measurement: nothing is recorded, unless a
            # PR was already opened (a permission missing on a later write): it gets its record.
            if any(pr.number is not None for pr in self.prs):
                self._record_unscored("error", str(exc), opened_only=True)
            raise
        except CanaryError as exc:
            self._record_unscored("error", str(exc))
            raise
        except Exception as exc:  # a bug: the PRs still get records and teardown
            self._record_unscored("error", f"internal error: {exc.__class__.__name__}: {exc}")
            raise
        finally:
            self.teardown()
        return self.records

    def _record_unscored(self, outcome: Outcome, notice: str | None, *, opened_only: bool = False) -> None:
        """Every PR of this cycle gets a record, even when the cycle could not finish; a
        capture that broke the scorer is recorded without its comments rather than lost."""
        prs = self.prs or [OpenPR(kind, 1, "") for kind in KINDS]
        for pr in prs:
            if opened_only and pr.number is None:
                continue
            if any(r.kind == pr.kind and r.attempt == pr.attempt for r in self.records):
                continue
            try:
                record = self._score(pr, outcome=outcome)
            except Exception:
                record = self._score(pr, outcome=outcome, comments=False)
            self.records.append(replace(record, notice=mask(notice or record.notice or "")[:1000] or None))

    def _open(self, base: BaseCommit, kind: PRKind, attempt: int) -> OpenPR:
        t = self.target
        files, _markers = publish_variant(self.corpus, t.stack, kind, t.mode, t.prefix, self.variant)
        branch = branch_name(self.options.branch_prefix, self.options.run_id, t.stack, kind, attempt)
        pr = OpenPR(kind, attempt, branch)
        self.clock.check()  # a signal stops publishing between steps, not only in a sleep
        self.prs.append(pr)  # registered before the push: teardown deletes even a half-made branch
        title, body, message = pr_text(t, kind, self.options.run_id)
        pr.head_sha = self.client.push_commit(t.repo, base, {f.path: f.text for f in files},
                                              branch, message)
        self.clock.check()
        pr.number = self.client.open_pull(t.repo, branch, base.branch, title, body)
        self.clock.check()
        self.client.add_label(t.repo, pr.number, self.options.label)
        trigger = self.profile.trigger
        pr.unconfirmed = None
        if trigger.kind == "request" and trigger.value:
            if not self.client.request_reviewer(t.repo, pr.number, trigger.value,
                                                accept=frozenset(self.profile.logins)):
                pr.unconfirmed = (f"GitHub accepted the review request for {trigger.value} but never listed it, "
                                  "and no review came: review by this reviewer is not enabled for this repository")
        elif trigger.kind == "comment" and trigger.value:
            pr.trigger_comment = self.client.comment(
                t.repo, pr.number, f"{trigger.value}\n\n{RUN_MARKER.format(run_id=self.options.run_id)}")
            if self.profile.acknowledges:
                pr.unconfirmed = (f"the trigger comment {trigger.value!r} drew no reply or reaction from the reviewer: "
                                  "it is not installed or not enabled for this repository")
        pr.opened_at = self.clock.now()
        pr.poll = PollState(started_at=pr.opened_at, unconfirmed=pr.unconfirmed)
        shown = f" (variant {self.variant_id})" if self.variant else ""
        self.progress(self._label(pr), f"opened PR #{pr.number}{shown}")
        if pr.unconfirmed and trigger.kind == "request":
            wait = min(self.options.poll.unconfirmed_timeout, self.options.poll.timeout)
            self.progress(self._label(pr), f"GitHub accepted the review request for {trigger.value} but does not "
                          f"list it: waiting up to {wait / 60:.0f} min for any sign of the reviewer")
        return pr

    def _wait(self, prs: list[OpenPR]) -> None:
        config = self.options.poll
        while True:
            for pr in prs:
                assert pr.poll is not None
                if pr.poll.verdict:
                    continue
                if self._poll_once(pr) == "done":
                    # One poll reads the channels one after another: a review posted just
                    # before its "done" check run can land between the two reads. Anything
                    # posted before the signal is visible to a read that starts after it, so
                    # read everything once more before the verdict stands.
                    pr.poll.verdict = pr.poll.finished_at = None
                    self._poll_once(pr)
                if pr.poll.verdict is not None:
                    self.progress(self._label(pr), describe(pr.poll, config, self.clock.now()))
            if all(pr.poll and pr.poll.verdict for pr in prs):
                return
            self.clock.sleep(config.interval)

    def _poll_once(self, pr: OpenPR) -> str | None:
        """One conditional read of every channel, then the polling decision; the verdict."""
        assert pr.poll is not None and pr.number is not None
        config = self.options.poll
        waited = sum(state.rate_limit_wait for state in pr.states.values())
        self.client.poll(self.target.repo, pr.number, pr.states,
                         reactions=self.profile.reads_reactions,
                         head_sha=pr.head_sha if self.profile.reads_check_runs else None,
                         trigger_comment=pr.trigger_comment if pr.poll.unconfirmed else None)
        if pr.poll.unconfirmed and self._reacted_to_trigger(pr):
            pr.poll.unconfirmed = None
        comments = comments_from_capture(self._capture(pr))
        extraction = self.profile.extract(comments)
        before = (pr.poll.activity, pr.poll.stable)
        waited = sum(state.rate_limit_wait for state in pr.states.values()) - waited
        observe(pr.poll, config, self.clock.now(), activity_fingerprint(comments, self.profile.is_reviewer), extraction,
                rate_limited=waited)
        if (pr.poll.activity, pr.poll.stable) != before and not pr.poll.verdict:
            self.progress(self._label(pr), describe(pr.poll, config, self.clock.now()))
        return pr.poll.verdict

    def _score(self, pr: OpenPR, outcome: Outcome | None = None, *, comments: bool = True) -> Record:
        t = self.target
        capture = self._capture(pr, comments=comments)
        settings = ScoreSettings(stack=t.stack, kind=pr.kind, mode=t.mode, prefix=t.prefix,
                                 window=self.options.window, floor=Severity.parse(self.rules.floor),
                                 gate=self.rules, variant=self.variant)
        charged = sum(v for k, v in self.client.counts.items() if not k.endswith(" 304"))
        not_modified = sum(v for k, v in self.client.counts.items() if k.endswith(" 304"))
        now = self.clock.now()
        meta = RecordMeta(
            run_id=self.options.run_id, attempt=pr.attempt, recorded_at=utc_now_iso(),
            repo=t.repo, pr=pr.number, reviewer=t.reviewer,
            corpus_fingerprint=self.fingerprint, tool_version=__version__,
            timings={
                "elapsed_s": round(now - self.started, 3),
                "review_wait_s": round(((pr.poll.finished_at if pr.poll and pr.poll.finished_at
                                         else now) - pr.opened_at) if pr.opened_at else 0.0, 3),
                "polls": float(pr.poll.polls if pr.poll else 0),
            },
            api_requests={"charged": charged, "not_modified": not_modified},
        )
        verdict = pr.poll.verdict if pr.poll else None
        if outcome is None and verdict == "timeout" and pr.poll and not pr.poll.activity:
            outcome = "silent"
        unconfirmed = outcome is None and verdict == "unconfirmed"
        held_up = outcome is None and verdict == "rate_limited"
        if unconfirmed or held_up:
            outcome = "error"
        if pr.number is None and outcome is None:
            outcome = "error"
        _score, record = evaluate(capture, self.corpus, settings, self.profile, meta, outcome)
        if unconfirmed:
            notice = f"{self.profile.name}: {pr.unconfirmed}"
            record = replace(record, notice=notice,
                             gate=replace(record.gate, reasons=(f"reviewer error: {notice}",)))
        elif held_up and pr.poll is not None:
            notice = (f"GitHub's rate limit held the polls up {pr.poll.rate_limit_wait:.0f} s, past the "
                      f"{self.options.poll.timeout / 60:g}-minute deadline, before any trace of the reviewer: "
                      "it was not watched to the end (ours, not a silent reviewer)")
            record = replace(record, notice=notice, gate=replace(record.gate, reasons=(notice,)))
        if self.options.save_captures:
            self._save_capture(pr, capture)
        self.progress(self._label(pr), f"{record.outcome}, gate "
                      + ("passed" if record.gate.passed else "failed"))
        return record

    def _apply_baseline(self) -> None:
        """With --baseline, each kind's final record is judged against the history as well."""
        if not self.rules.baseline:
            return
        for kind in ("seeded", "clean"):
            mine = [i for i, r in enumerate(self.records) if r.kind == kind]
            if mine:
                last = self.records[mine[-1]]
                gate = decide(last, self.rules, attempts=[self.records[i] for i in mine[:-1]],
                              history=self.options.baseline_history).gate()
                self.records[mine[-1]] = replace(last, gate=gate)

    def _confirm(self, base: BaseCommit) -> None:
        """Re-run a seeded PR that missed a BLOCKER; a blocker counts as missed only if
        every attempt missed it."""
        for attempt in range(2, self.options.confirm + 2):
            last = [r for r in self.records if r.kind == "seeded"][-1]
            rules = self.rules
            if last.outcome != "scored" or not unmet_blockers(last, rules):
                return
            pr = self._open(base, "seeded", attempt)
            self._wait([pr])
            record = self._score(pr)
            self.records.append(confirm([r for r in self.records if r.kind == "seeded"], record, attempt, rules))

    def teardown(self) -> None:
        """Close every PR and delete every branch this cycle made, whatever went wrong.

        Any exception type is caught per step, so one failure never skips the next PR.
        After a signal the runner is killed ``TEARDOWN_BUDGET`` seconds later (GitHub
        Actions sends SIGKILL 7.5 s after SIGINT): the retry policy then gets that deadline,
        on a clock that still sleeps, and skips the pacing queue; short ``Retry-After``
        waits are spent inside the budget. Otherwise teardown gets the full retry policy (a
        secondary rate limit must be waited out, not leave a PR open). Deleting the head
        branch closes a PR on GitHub, so the branch goes first and the PR is closed
        explicitly only when a read shows it still open: one content-creating request less
        per PR, which is what the token's secondary limit counts. What is still left is in
        ``leftovers`` for the runner to report.
        """
        for pr in self.prs:
            deleted = self._teardown_step(pr, "delete", self._delete)
            closed = pr.number is None or (deleted and self._teardown_step(pr, "check", self._closed))
            if not closed:
                closed = self._teardown_step(pr, "close", self._close)
            if not closed and pr.number is not None:
                self.leftovers.pulls.append(pr.number)
            if not deleted:
                self.leftovers.branches.append(pr.branch)

    def _close(self, pr: OpenPR, policy: RetryPolicy | None, pace: bool) -> bool:
        assert pr.number is not None
        self.client.close_pull(self.target.repo, pr.number, policy=policy, pace=pace)
        return True

    def _delete(self, pr: OpenPR, policy: RetryPolicy | None, pace: bool) -> bool:
        """True when no branch is left: deleted now, or already gone, or never made (a
        refused delete of a branch that does not exist is "gone": ``delete_branch``)."""
        self.client.delete_branch(self.target.repo, pr.branch, policy=policy, pace=pace)
        return True

    def _closed(self, pr: OpenPR, policy: RetryPolicy | None, _pace: bool) -> bool:
        assert pr.number is not None
        return not self.client.pull_is_open(self.target.repo, pr.number, policy=policy)

    def _teardown_policy(self) -> tuple[RetryPolicy | None, bool]:
        """(policy, pace): the full policy normally; after a signal, the signal's budget."""
        cancelled_at = getattr(self.clock, "cancelled_at", None)
        if not isinstance(cancelled_at, float):
            return None, True
        calm = RealClock()  # the cancelled clock raises on sleep; this one just sleeps
        policy = self.client.policy.with_deadline(cancelled_at + TEARDOWN_BUDGET, max_attempts=8)
        return replace(policy, clock=calm), False

    def _teardown_step(self, pr: OpenPR, what: str,
                       step: Callable[[OpenPR, RetryPolicy | None, bool], bool]) -> bool:
        """Run one teardown step; any exception is reported, never propagated. A signal that
        lands mid-step (its wait raised Cancelled) re-runs the step under the signal's budget."""
        for _ in range(2):
            policy, pace = self._teardown_policy()
            try:
                return step(pr, policy, pace)
            except Cancelled:
                continue
            except Exception as exc:
                thing = f"PR #{pr.number}" if what != "delete" else f"branch {pr.branch}"
                self.progress(self._label(pr), f"teardown: could not {what} {thing}: {exc}")
                return False
        return False

    # --- helpers ------------------------------------------------------------------
    def _reacted_to_trigger(self, pr: OpenPR) -> bool:
        """A reaction by the reviewer on the trigger comment (👀 while it works) confirms it."""
        state = pr.states.get("trigger_reactions")
        items = state.items if state and state.items else []
        return any(isinstance(r.get("user"), dict) and self.profile.is_reviewer(comment_from_reaction(r))
                   for r in items)

    def _save_capture(self, pr: OpenPR, capture: dict[str, Any]) -> None:
        """A capture that cannot be saved (a full disk; a link, a FIFO or any file already at
        its name, which is refused, never written through) costs the capture, never the
        record: it is named now and counted in the run's exit code (2)."""
        assert self.options.save_captures is not None
        t = self.target
        name = f"{self.options.run_id}-{t.repo.replace('/', '_')}-{t.stack}-{pr.kind}-{pr.attempt}.json"
        try:
            safe_write_text(self.options.save_captures / name, json.dumps(capture, indent=1), new_only=True,
                            mode=0o666)
        except BadInput as exc:
            self.unsaved.append(BadInput(f"capture not saved: {exc}"))
            self.progress(self._label(pr), f"capture not saved: {exc}")

    def _capture(self, pr: OpenPR, *, comments: bool = True) -> dict[str, Any]:
        t = self.target
        channels = tuple(CHANNEL_PATHS) + tuple(x for x in ("reactions", "check_runs") if x in pr.states)
        return {
            "repo": t.repo,
            "pull": {"number": pr.number, "head": {"sha": pr.head_sha, "ref": pr.branch}},
            **{ch: list((pr.states.get(ch) or ChannelState()).items or []) if comments else []
               for ch in channels},
            "manifest": {"stack": t.stack, "kind": pr.kind, "mode": t.mode, "prefix": t.prefix,
                         "fingerprint": self.fingerprint, "reviewer": t.reviewer,
                         "run_id": self.options.run_id, "attempt": pr.attempt, "variant": self.variant_id},
        }

    def _label(self, pr: OpenPR) -> str:
        suffix = f" (attempt {pr.attempt})" if pr.attempt > 1 else ""
        return f"{self.target.repo} {self.target.stack}/{pr.kind}{suffix}"
