"""End to end: a PR opened in the sandbox with PyGithub, a scripted reviewer speaking one
vendor's dialect (woken the way the profile says), scored live by the console script.

Every dialect plays the same scene on the mini corpus (blind, no prefix): SEED1 [BLOCKER]
flagged at the vendor's top level, SEED2 [BLOCKER] at its lowest level (undercalled, or
caught where the vendor's finding is unrated by location), SEED3 [MAJOR] at its major
level, through a summary citation where the vendor writes those. Walkthroughs and trigger
comments add nothing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

try:
    from github import Auth, Github, InputGitTreeElement

    from redline_canary.sandbox import COPILOT, Batch, Identity, Sandbox, ScriptedReviewer
    from redline_canary.sandbox.reviewers import ReviewContext
except ImportError as exc:  # the sandbox is built by another engineer; skip until it lands
    pytest.skip(f"sandbox not usable yet: {exc}", allow_module_level=True)

from redline_canary.corpus.model import publish
from redline_canary.review.profiles import get_profile
from redline_canary.run.corpus_files import load_corpus

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "data" / "corpus"
_VENV = ROOT / ".venv" / "bin" / "redline-canary"
EXE = str(_VENV if _VENV.exists() else Path(sys.executable).parent / "redline-canary")
REPO = "acme/canary"
BRANCH = "redline-canary/e2e"
BLOB = "https://github.com/acme/canary/blob/0123456789abcdef0123456789abcdef01234567"


@dataclass
class Scene:
    identity: Identity
    top: str  # inline body at the vendor's top level
    low: str  # inline body at its lowest level
    major: str | None = None  # inline body at MAJOR level, when SEED3 is flagged inline
    summary: Callable[[str, int], Batch] | None = None  # SEED3 as a summary citation
    noise: list[str] = field(default_factory=list)  # walkthroughs, help texts: never findings
    review_body: str = ""
    caught: int = 2
    undercalled: int = 1


def _shield(n: int) -> str:
    return f"**<sub><sub>![P{n} Badge](https://img.shields.io/badge/P{n}-orange?style=flat)</sub></sub>  Finding**"


SCENES: dict[str, Scene] = {
    "coderabbit": Scene(
        Identity("coderabbitai[bot]", 136622811),
        "_⚠️ Potential issue_ | _🔴 Critical_\n\n**Token committed in source.**",
        "_🛠️ Refactor suggestion_ | _🟡 Minor_\n\n**Query could use a helper.**",
        summary=lambda path, line: Batch(reviews=[{"body": (
            "**Actionable comments posted: 0**\n\n<details>\n<summary>⚠️ Outside diff range comments (1)</summary>"
            f"<blockquote>\n\n<details>\n<summary>{path} (1)</summary><blockquote>\n\n`{line}`: **Slice drops "
            "the last item.**\n\n_⚠️ Potential issue_ | _🟠 Major_\n\n</blockquote></details>\n\n"
            "</blockquote></details>")}]),
        noise=["<!-- This is an auto-generated comment: summarize by coderabbit.ai -->\n## Walkthrough\n\n"
               "Adds `app.py:1` lookups.\n\n<!-- recent_review_start -->"],
    ),
    "codex": Scene(
        Identity("chatgpt-codex-connector[bot]", 199175422),
        _shield(0), _shield(3),
        summary=lambda path, line: Batch(issue_comments=[
            f"### 💡 Codex Review\n\n{BLOB}/{path}#L{line}\n{_shield(2)}\n\nThe slice is one short."]),
        review_body="### 💡 Codex Review\n\nHere are some automated review suggestions for this pull request.",
    ),
    "gemini": Scene(
        Identity("gemini-code-assist[bot]", 176961590),
        "![critical](https://www.gstatic.com/codereviewagent/critical.svg)\n\nToken in source.",
        "![low](https://www.gstatic.com/codereviewagent/low-priority.svg)\n\nQuery style.",
        major="![medium](https://www.gstatic.com/codereviewagent/medium-priority.svg)\n\nOff by one.",
        noise=["## Summary of Changes\n\nHello! This PR edits `app.py:5` and `web/Profile.tsx:7`."],
        review_body="## Code Review\n\nThis pull request adds lookups; see the comments.",
    ),
    "claude": Scene(
        Identity("claude[bot]", 209825114),
        "🔴 **Important**: token committed in source.",
        "🟡 **Nit**: the query could use a helper.",
        summary=lambda path, line: Batch(issue_comments=[
            "**Claude finished @redline-canary's task in 1m 2s** —— [View job](https://x/actions/runs/1)\n\n"
            f"---\n### Code review\n\nFound 1 issue:\n\n1. The page slice drops an item\n\n{BLOB}/{path}#L{line}"]),
    ),
    "bugbot": Scene(
        Identity("cursor[bot]", 206951365),
        "### Token in source\n\n**High Severity**\n\n<!-- BUGBOT_BUG_ID: a1 -->",
        "### Query style\n\n**Low Severity**\n\n<!-- BUGBOT_BUG_ID: a2 -->",
        major="### Off by one\n\n**Medium Severity**\n\n<!-- BUGBOT_BUG_ID: a3 -->",
        review_body="<!-- BUGBOT_REVIEW -->\nCursor Bugbot has reviewed your changes and found 3 potential issues.",
    ),
    "greptile": Scene(
        Identity("greptile-apps[bot]", 165735046),
        '<a href="#"><img alt="P0" src="https://x/badges/p0.svg"></a> **Token in source**',
        '<a href="#"><img alt="P3" src="https://x/badges/p3.svg"></a> **Query style**',
        summary=lambda path, line: Batch(reviews=[{"body": (
            f"<details><summary>Additional Comments (1)</summary>\n\n- `{path}`, line {line}\n  **logic:** the "
            "slice drops an item\n</details>\n\n<sub>2 files reviewed, 3 comments</sub>")}]),
        noise=["<!-- greptile_summary -->\n<h3>Greptile Summary</h3>\n\n<h3>Confidence Score: 2/5</h3>\n\n"
               "No P0 or P1 issues found outside the comments."],
    ),
    "sourcery": Scene(
        Identity("sourcery-ai[bot]", 58596630),
        "**issue (security):** The token is committed in source.",
        "**suggestion:** Extract the query into a helper.",
        major="**issue (bug_risk):** The page drops its last item.",
        noise=["## Reviewer's Guide\n\nAdds lookups in `app.py:5`."],
        review_body="Hey - I've found 3 issues, and left some high level feedback:",
    ),
    "qodo": Scene(
        Identity("qodo-code-review[bot]", 151058649),
        "1. Token committed in source <code>⛨ Security</code>",
        "Use a helper.\n\nSuggestion importance[1-10]: 3",
        summary=lambda path, line: Batch(issue_comments=[
            "<h3>Code Review by Qodo</h3>\n\n<img alt=\"Action required\" src=\"a.png\">\n\n1. Token committed in "
            "source <code>⛨ Security</code>\n\n**Code:** [app.py[R5-5]](https://x/files#diff-1R5)\n\n"
            "<img alt=\"Remediation recommended\" src=\"r.png\">\n\n2. Slice drops an item <code>≡ Correctness"
            f"</code>\n\n**Code:** [{path}[R{line}-{line}]](https://x/files#diff-1R{line})"]),
    ),
    "cubic": Scene(
        Identity("cubic-dev-ai[bot]", 191113872),
        "P0: The token is committed in source.",
        "P3: The query could use a helper.",
        summary=lambda path, line: Batch(reviews=[{"body": (
            f"**3 issues found** across 2 files\n\n<violation number=\"3\" location=\"{path}:{line}\">P2: the slice "
            "drops an item</violation>")}]),
    ),
    "copilot": Scene(COPILOT, "", "", caught=2, undercalled=1),  # bodies built by CopilotV2Reviewer
}


class CopilotV2Reviewer(ScriptedReviewer):
    """Copilot's inline comments carry no severity; its v2 overview, posted after them,
    badges each thread by ``#discussion_r<id>`` and lists a finding with no thread."""

    def __init__(self, seeds: dict[int, tuple[str, int]], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.seeds = seeds

    def act(self, ctx: ReviewContext) -> None:
        (p1, l1), (p2, l2), (p3, l3) = self.seeds[1], self.seeds[2], self.seeds[3]
        ctx.post_review("", comments=[
            {"path": p1, "line": l1, "side": "RIGHT", "body": "An API token is committed in source."},
            {"path": p2, "line": l2, "side": "RIGHT", "body": "The query is built with an f-string."},
        ])
        high, low = ctx.posted_inline
        badge = '<img src="https://x/copilot-code-review/{0}-v2-light.png" alt="{1} severity" height="14">'
        ctx.post_review(
            "<!-- ccr-overview-v2 -->\n## Copilot review overview\n\n### 🟡 Changes recommended\n\n"
            "**Review effort:** Lite\n**Findings:** 2\n\n<details>\n<summary>Open (2)</summary>\n\n"
            f"- {badge.format('high', 'High')} [Token in source](#discussion_r{high}) · New\n"
            f"- {badge.format('low', 'Low')} [Query style](#discussion_r{low}) · New\n\n</details>\n\n"
            "<details>\n<summary>Previously missed (1)</summary>\n\n<details>\n<summary>"
            f"{badge.format('medium', 'Medium')} Slice drops an item</summary>\n\n`{p3}:{l3}`\n\n</details>\n"
            "</details>")


@pytest.fixture
def sb() -> Iterator[Sandbox]:
    with Sandbox() as sandbox:
        sandbox.create_repo(REPO, files={"README.md": "canary\n"})
        yield sandbox


def _published() -> tuple[dict[str, str], dict[int, tuple[str, int]]]:
    files, markers = publish(load_corpus(CORPUS), "mini", "seeded", "blind", "")
    seeds = {m.marker.n: (m.path, m.line) for m in markers if m.marker.kind == "seed"}
    return {f.path: f.text for f in files}, seeds


def _reviewer(name: str, seeds: dict[int, tuple[str, int]]) -> ScriptedReviewer:
    scene = SCENES[name]
    trigger = get_profile(name).trigger
    wake: dict[str, Any] = {"wake_on": ("opened",)}
    if trigger.kind == "comment":
        wake = {"wake_on": ("comment",), "trigger_phrases": (trigger.value,)}
    elif trigger.kind == "request":
        wake = {"wake_on": ("review_requested",)}
    if name == "copilot":
        return CopilotV2Reviewer(seeds, identity=scene.identity, latency=0.01, **wake)
    (p1, l1), (p2, l2), (p3, l3) = seeds[1], seeds[2], seeds[3]
    inl = [{"path": p1, "line": l1, "side": "RIGHT", "body": scene.top},
           {"path": p2, "line": l2, "side": "RIGHT", "body": scene.low}]
    if scene.major is not None:
        inl.append({"path": p3, "line": l3, "side": "RIGHT", "body": scene.major})
    batches = [Batch(inline=inl, reviews=[{"body": scene.review_body}], issue_comments=list(scene.noise))]
    if scene.summary is not None:
        batches.append(scene.summary(p3, l3))
    return ScriptedReviewer(batches, identity=scene.identity, latency=0.01, **wake)


@pytest.mark.parametrize("name", sorted(SCENES))
def test_dialect_scores_live_through_the_sandbox(sb: Sandbox, name: str) -> None:
    files, seeds = _published()
    sb.attach_reviewer(REPO, _reviewer(name, seeds))
    gh = Github(base_url=sb.url, auth=Auth.Token("t"), retry=None,
                seconds_between_requests=None, seconds_between_writes=None)
    repo = gh.get_repo(REPO)
    base = repo.get_git_commit(repo.get_git_ref("heads/main").object.sha)
    tree = repo.create_git_tree(
        [InputGitTreeElement(p, "100644", "blob", content=t) for p, t in files.items()], base_tree=base.tree)
    commit = repo.create_git_commit("canary: seeded", tree, [base])
    ref = repo.create_git_ref(f"refs/heads/{BRANCH}", commit.sha)
    pr = repo.create_pull(base="main", head=BRANCH, title="Routine update", body="")
    try:
        trigger = get_profile(name).trigger
        if trigger.kind == "comment":
            pr.create_issue_comment(trigger.value)
        elif trigger.kind == "request":
            pr.create_review_request(reviewers=[trigger.value])
        assert sb.wait_for_reviewers(10)

        env = {k: v for k, v in os.environ.items() if k != "REDLINE_CANARY_TOKEN"}
        env["GITHUB_TOKEN"] = "t"
        proc = subprocess.run(
            [EXE, "score", "--repo", REPO, "--pr", str(pr.number), "--api-url", sb.url, "--stack", "mini",
             "--kind", "seeded", "--corpus", str(CORPUS), "--reviewer", name, "--json"],
            capture_output=True, text=True, env=env, timeout=120, cwd=ROOT)
        assert proc.stdout, proc.stderr
        record = json.loads(proc.stdout)
        scene = SCENES[name]
        assert record["outcome"] == "scored" and record["reviewer"] == name
        assert (record["caught"], record["undercalled"], record["missed"]) == (
            scene.caught, scene.undercalled, 6 - scene.caught - scene.undercalled)
        assert {s["n"] for s in record["caught_seeds"]} == {1, 3}
        assert record["findings"] == 3 and record["noise"] == 0
        assert record["blocker_recall"] == pytest.approx(1 / 3, abs=1e-3)
        assert proc.returncode == 1  # the undercalled BLOCKER fails the gate
    finally:
        pr.edit(state="closed")
        ref.delete()
    assert sb.open_pulls(REPO) == []
    assert BRANCH not in sb.branches(REPO)


def test_silent_vendor_is_silent_not_recall_zero(sb: Sandbox) -> None:
    """A CodeRabbit skip notice in the live capture: exit 3, the notice in the record."""
    files, _ = _published()
    notice = ("<!-- This is an auto-generated comment: skip review by coderabbit.ai -->\n\n> [!IMPORTANT]\n"
              "> ## Review skipped\n>\n> Auto reviews are disabled on this repository.")
    sb.attach_reviewer(REPO, ScriptedReviewer([Batch(issue_comments=[notice])],
                                              identity=SCENES["coderabbit"].identity, latency=0.01,
                                              wake_on=("comment",), trigger_phrases=("@coderabbitai review",)))
    gh = Github(base_url=sb.url, auth=Auth.Token("t"), retry=None,
                seconds_between_requests=None, seconds_between_writes=None)
    repo = gh.get_repo(REPO)
    base = repo.get_git_commit(repo.get_git_ref("heads/main").object.sha)
    tree = repo.create_git_tree(
        [InputGitTreeElement(p, "100644", "blob", content=t) for p, t in files.items()], base_tree=base.tree)
    ref = repo.create_git_ref(f"refs/heads/{BRANCH}", repo.create_git_commit("c", tree, [base]).sha)
    pr = repo.create_pull(base="main", head=BRANCH, title="Routine update", body="")
    try:
        pr.create_issue_comment("@coderabbitai review")
        assert sb.wait_for_reviewers(10)
        env = {k: v for k, v in os.environ.items() if k != "REDLINE_CANARY_TOKEN"}
        env["GITHUB_TOKEN"] = "t"
        proc = subprocess.run(
            [EXE, "score", "--repo", REPO, "--pr", str(pr.number), "--api-url", sb.url, "--stack", "mini",
             "--kind", "clean", "--corpus", str(CORPUS), "--reviewer", "coderabbit", "--json"],
            capture_output=True, text=True, env=env, timeout=120, cwd=ROOT)
        record = json.loads(proc.stdout)
        assert proc.returncode == 3
        assert record["outcome"] == "silent" and record["clean_false_positives"] is None
        assert "Auto reviews are disabled" in record["notice"]
    finally:
        pr.edit(state="closed")
        ref.delete()
    assert sb.open_pulls(REPO) == [] and BRANCH not in sb.branches(REPO)


@pytest.mark.parametrize(("name", "trigger", "body", "kind", "code", "outcome", "quoted"), [
    # A completion with nothing to say: a clean pass, not "in progress" and not silent.
    ("greptile", "@greptileai", "Reviewed 4 files, nothing to report.", "clean", 0, "scored", None),
    # A review that timed out: the PR ends as error with the notice quoted (exit 4).
    ("codex", "@codex review", "Codex Review: the request timed out. Try again later by commenting "
     "\"@codex review\".", "seeded", 4, "error", "the request timed out"),
])
def test_completion_and_timeout_notices_live_through_the_sandbox(
        sb: Sandbox, name: str, trigger: str, body: str, kind: str, code: int, outcome: str,
        quoted: str | None) -> None:
    files, _ = _published()
    sb.attach_reviewer(REPO, ScriptedReviewer([Batch(issue_comments=[body])], identity=SCENES[name].identity,
                                              latency=0.01, wake_on=("comment",), trigger_phrases=(trigger,)))
    gh = Github(base_url=sb.url, auth=Auth.Token("t"), retry=None,
                seconds_between_requests=None, seconds_between_writes=None)
    repo = gh.get_repo(REPO)
    base = repo.get_git_commit(repo.get_git_ref("heads/main").object.sha)
    tree = repo.create_git_tree(
        [InputGitTreeElement(p, "100644", "blob", content=t) for p, t in files.items()], base_tree=base.tree)
    ref = repo.create_git_ref(f"refs/heads/{BRANCH}", repo.create_git_commit("c", tree, [base]).sha)
    pr = repo.create_pull(base="main", head=BRANCH, title="Routine update", body="")
    try:
        pr.create_issue_comment(trigger)
        assert sb.wait_for_reviewers(10)
        env = {k: v for k, v in os.environ.items() if k != "REDLINE_CANARY_TOKEN"}
        env["GITHUB_TOKEN"] = "t"
        proc = subprocess.run(
            [EXE, "score", "--repo", REPO, "--pr", str(pr.number), "--api-url", sb.url, "--stack", "mini",
             "--kind", kind, "--corpus", str(CORPUS), "--reviewer", name, "--json"],
            capture_output=True, text=True, env=env, timeout=120, cwd=ROOT)
        record = json.loads(proc.stdout)
        assert proc.returncode == code, proc.stderr
        assert record["outcome"] == outcome
        if quoted is None:
            assert record["clean_false_positives"] == 0 and record["gate"]["passed"]
        else:
            assert quoted in record["notice"] and record["recall"] is None
    finally:
        pr.edit(state="closed")
        ref.delete()
    assert sb.open_pulls(REPO) == [] and BRANCH not in sb.branches(REPO)
