"""Building a scenario's world in a sandbox: repos, the human's branches and pull requests,
reviewers, then policies and faults, all through the Sandbox's own in-process knobs. It is separate
from reading and validating because it is the only part that needs a Sandbox, and it may assume a
scenario that has already passed validation.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from redline_canary.sandbox.scenario import CANARY_TOPIC, ReviewerKind, Scenario

if TYPE_CHECKING:
    from redline_canary.sandbox.core import Sandbox


def apply_scenario(
    sb: Sandbox,
    scenario: Scenario,
    *,
    default_reviewer: ReviewerKind = "bandit",
    latency: float = 1.0,
) -> None:
    """Build ``scenario``'s world in ``sb``: repos, human branches and PRs, then reviewers
    (attached last, so pre-existing human PRs are not reviewed at start-up), then policies
    and faults (last, so setup never trips over them)."""
    from redline_canary.sandbox.reviewer_kinds import BanditReviewer, SilentReviewer
    from redline_canary.sandbox.reviewers import Reviewer

    human = sb.state.ensure_user(scenario.human)
    for spec in scenario.repos:
        sb.create_repo(
            spec.name,
            files={} if spec.empty else dict(spec.files) if spec.files is not None else None,
            default_branch=spec.default_branch,
            writable=spec.writable,
            topics=[CANARY_TOPIC] if spec.topic else [],
        )
        repo = sb.state.get_repo_by_name(spec.name)
        for branch in spec.branches:
            note = f"notes/{branch.replace('/', '-')}.md"
            sb.state.commit_files(repo, branch, {note: f"Work on {branch}\n"}, f"Start {branch}", author=human)
        repo.copilot_review = spec.copilot_review
        for label in spec.labels:
            sb.add_label(spec.name, label)
        for pull in spec.pulls:
            number = sb.create_pull(
                spec.name,
                pull.head,
                base=pull.base,
                title=pull.title,
                body=pull.body,
                author=pull.author or scenario.human,
                draft=pull.draft,
            )
            for login in pull.reviewed_by:
                sb.add_review(spec.name, number, login)
        for login, mode in spec.review_requests:
            sb.review_requests(spec.name, login, mode)
    for spec in scenario.repos:
        kind = spec.reviewer or default_reviewer
        delay = spec.latency if spec.latency is not None else latency
        reviewer: Reviewer | None = None
        if kind == "bandit":
            reviewer = BanditReviewer(latency=delay)
        elif kind == "silent":
            reviewer = SilentReviewer(latency=delay)
        if reviewer is not None:
            sb.attach_reviewer(spec.name, reviewer)

    if scenario.secondary_limit is not None:
        s = scenario.secondary_limit
        sb.secondary_limit(
            s.per_minute,
            s.per_hour,
            window=s.window,
            retry_after=s.retry_after,
            status=s.status,
            methods=s.methods,
            send_retry_after=s.send_retry_after,
        )
    if scenario.primary_limit is not None:
        p = scenario.primary_limit
        sb.primary_limit(limit=p.limit, remaining=p.remaining, reset_in=p.reset_in, status=p.status)
    if scenario.ref_visibility_lag is not None:
        sb.ref_visibility_lag(scenario.ref_visibility_lag.attempts, repo=scenario.ref_visibility_lag.repo)
    if scenario.too_quickly is not None:
        q = scenario.too_quickly
        sb.submitted_too_quickly(after=q.after, times=q.times, created=q.created, repo=q.repo)
    if scenario.fine_grained_token is not None:
        sb.fine_grained_token(scenario.fine_grained_token.missing, repos=scenario.fine_grained_token.repos)
    if scenario.token is not None:
        t = scenario.token
        sb.token_kind(t.kind, expires_in_days=t.expires_in_days, scopes=t.scopes, no_access=t.no_access)
    if scenario.tree_payload_cap is not None:
        sb.tree_payload_cap(scenario.tree_payload_cap)
    for f in scenario.faults:
        sb.inject_fault(
            f.method,
            f.route,
            status=f.status,
            headers=dict(f.headers),
            body=f.body,
            delay=f.delay,
            drop=f.drop,
            times=f.times,
            after_write=f.after_write,
            secondary=f.secondary,
            repo=f.repo,
        )
