"""The janitor removes exactly what this tool made, and nothing a person made.

Every test builds a canary repository the way real life leaves one — a release branch
``rc/2.4`` someone pushed, a hotfix PR ``rc/2.5-hotfix`` a person is working on, canary
PRs a killed run left (with and without the label, since a run can die between opening a
PR and labelling it), an orphan canary branch a run pushed but never opened a PR for, and
look-alikes that have the canary shape but not the marker — then runs the real
``redline-canary janitor`` in a subprocess against the sandbox over real sockets.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest

from redline_canary.github.client import CANARY_TOPIC
from redline_canary.run.cycle import BRANCH_PREFIX, LABEL, RUN_MARKER, branch_name
from redline_canary.sandbox import Sandbox
from tests.helpers.clirun import cli_main
from tests.helpers.sandboxing import TOKEN

REPO = "acme/product"
ENV = {"GITHUB_TOKEN": TOKEN}
HOURS = 3600.0


def marker(run_id: str) -> str:
    return RUN_MARKER.format(run_id=run_id)


@dataclass
class World:
    """What was set up, by who should survive."""

    sb: Sandbox
    human_branches: set[str] = field(default_factory=set)
    human_pulls: set[int] = field(default_factory=set)
    canary_branches: set[str] = field(default_factory=set)
    canary_pulls: set[int] = field(default_factory=set)

    def label(self, number: int) -> None:
        state = self.sb.state
        state.add_labels(state.get_repo_by_name(REPO), number, [LABEL])

    def canary_pull(self, run_id: str, kind: str, *, labelled: bool) -> int:
        branch = branch_name(BRANCH_PREFIX, run_id, "python", kind, 1)
        self.sb.commit_files(REPO, branch, {"app/x.py": f"{kind} = 1\n"},
                             f"Refresh python module\n\n{marker(run_id)}\n")
        number = self.sb.create_pull(REPO, branch, title="Refresh python module",
                                     body=f"Routine refresh.\n\n{marker(run_id)}\n")
        if labelled:
            self.label(number)
        return number


def build(sb: Sandbox, dead_run: str = "20261130-1") -> World:
    w = World(sb)
    sb.create_repo(REPO, topics=[CANARY_TOPIC])
    # People's things under rc/: a release branch, and a hotfix with an open PR.
    sb.commit_files(REPO, "rc/2.4", {"VERSION": "2.4\n"}, "Release candidate 2.4")
    w.human_branches.add("rc/2.4")
    sb.commit_files(REPO, "rc/2.5-hotfix", {"fix.py": "x = 2\n"}, "Hotfix for 2.5")
    w.human_pulls.add(sb.create_pull(REPO, "rc/2.5-hotfix", title="Hotfix 2.5", author="octocat",
                                     body=f"Quoting a canary PR: {marker(dead_run)}"))
    w.human_branches.add("rc/2.5-hotfix")
    # A person's PR from a branch that *looks* like a canary branch whose commit even
    # carries the marker (cherry-picked), but the PR is theirs: branch and PR stay.
    look_alike = branch_name(BRANCH_PREFIX, dead_run, "python", "seeded", 7)
    sb.commit_files(REPO, look_alike, {"y.py": "y = 1\n"}, f"cherry-pick\n\n{marker(dead_run)}\n")
    w.human_pulls.add(sb.create_pull(REPO, look_alike, title="My work", author="octocat", body="mine"))
    w.human_branches.add(look_alike)
    # Canary-shaped branch whose head commit lacks the marker: not provably ours.
    unmarked = branch_name(BRANCH_PREFIX, dead_run, "python", "clean", 9)
    sb.commit_files(REPO, unmarked, {"z.py": "z = 1\n"}, "work in progress")
    w.human_branches.add(unmarked)
    # Canary-shaped branch whose commit carries *another* run's marker.
    other = branch_name(BRANCH_PREFIX, dead_run, "python", "clean", 8)
    sb.commit_files(REPO, other, {"z.py": "z = 2\n"}, f"x\n\n{marker('someone-else')}\n")
    w.human_branches.add(other)
    # What the dead run left: a labelled PR, an unlabelled PR, an orphan branch.
    for kind, labelled in (("seeded", True), ("clean", False)):
        w.canary_pulls.add(w.canary_pull(dead_run, kind, labelled=labelled))
        w.canary_branches.add(branch_name(BRANCH_PREFIX, dead_run, "python", kind, 1))
    orphan = branch_name(BRANCH_PREFIX, dead_run, "python", "seeded", 2)
    sb.commit_files(REPO, orphan, {"app/x.py": "s = 2\n"}, f"Refresh python module\n\n{marker(dead_run)}\n")
    w.canary_branches.add(orphan)
    return w


def assert_only_canary_things_gone(w: World) -> None:
    branches = set(w.sb.branches(REPO))
    open_numbers = {p.number for p in w.sb.open_pulls(REPO)}
    assert w.human_branches <= branches, f"a person's branch was deleted: {w.human_branches - branches}"
    assert w.human_pulls <= open_numbers, "a person's PR was closed"
    assert not w.canary_branches & branches, f"canary branches left: {w.canary_branches & branches}"
    assert not w.canary_pulls & open_numbers, "canary PRs left open"
    assert "main" in branches


@pytest.fixture()
def old_world() -> Iterator[World]:
    """Everything was made 3 h ago, so age alone protects nothing."""
    offset = [3 * HOURS]
    with Sandbox(token=TOKEN, clock=lambda: time.time() - offset[0]) as sb:
        world = build(sb)
        offset[0] = 0.0
        yield world


def test_janitor_by_age_removes_only_what_carries_the_marker(old_world: World) -> None:
    res = cli_main("janitor", "--repo", REPO, "--api-url", old_world.sb.url, "--older-than", "1h", "--json",
              env=ENV)
    assert res.returncode == 0, res.stderr
    report = json.loads(res.stdout)
    assert sorted(report["pulls"]) == sorted(old_world.canary_pulls)
    assert set(report["branches"]) == old_world.canary_branches
    assert_only_canary_things_gone(old_world)


def test_janitor_by_run_id_finds_an_unlabelled_canary_pr(old_world: World) -> None:
    res = cli_main("janitor", "--repo", REPO, "--api-url", old_world.sb.url, "--run-id", "20261130-1",
              env=ENV)
    assert res.returncode == 0, res.stderr
    assert "removed 2 PR(s)" in res.stdout and "3 branch(es)" in res.stdout
    assert_only_canary_things_gone(old_world)


def test_dry_run_lists_the_same_and_touches_nothing(old_world: World) -> None:
    before = (old_world.sb.branches(REPO), [p.number for p in old_world.sb.open_pulls(REPO)])
    res = cli_main("janitor", "--repo", REPO, "--api-url", old_world.sb.url, "--older-than", "1h",
              "--dry-run", "--json", env=ENV)
    report = json.loads(res.stdout)
    assert res.returncode == 0 and report["dry_run"] is True
    assert set(report["branches"]) == old_world.canary_branches
    assert (old_world.sb.branches(REPO), [p.number for p in old_world.sb.open_pulls(REPO)]) == before
    assert all(r.method == "GET" for r in old_world.sb.requests)


def test_a_run_id_that_is_a_prefix_of_another_leaves_the_other_alone() -> None:
    with Sandbox(token=TOKEN) as sb:
        w = build(sb, dead_run="42-1")
        longer = w.canary_pull("42-1-2", "seeded", labelled=True)  # rc/42-1-2-<hex>
        res = cli_main("janitor", "--repo", REPO, "--api-url", sb.url, "--run-id", "42-1", env=ENV)
        assert res.returncode == 0, res.stderr
        assert_only_canary_things_gone(w)
        assert longer in {p.number for p in sb.open_pulls(REPO)}


def test_young_leftovers_and_a_live_runs_prs_are_kept() -> None:
    with Sandbox(token=TOKEN) as sb:
        w = build(sb)
        res = cli_main("janitor", "--repo", REPO, "--api-url", sb.url, "--json", env=ENV)  # default 2h
        assert res.returncode == 0, res.stderr
        report = json.loads(res.stdout)
        assert {k: report[k] for k in ("repo", "dry_run", "pulls", "branches")} == {
            "repo": REPO, "dry_run": False, "pulls": [], "branches": []}
        assert sorted(report["kept_young"]["pulls"]) == sorted(w.canary_pulls)  # and it says so
        assert w.canary_pulls <= {p.number for p in sb.open_pulls(REPO)}


def test_a_repository_without_the_topic_is_refused_before_anything_is_listed() -> None:
    with Sandbox(token=TOKEN) as sb:
        sb.create_repo(REPO)
        sb.commit_files(REPO, "rc/2.4", {"VERSION": "2.4\n"}, f"x\n\n{marker('r1')}\n")
        res = cli_main("janitor", "--repo", REPO, "--api-url", sb.url, "--run-id", "r1", env=ENV)
        assert res.returncode == 2
        assert res.stderr.strip().splitlines() == [
            f"redline-canary: {REPO}: not a canary repository: the janitor only cleans repositories "
            f"with the topic '{CANARY_TOPIC}'"]
        assert [r.method for r in sb.requests] == ["GET"]  # the repository itself, nothing listed
        assert "rc/2.4" in sb.branches(REPO)


@pytest.mark.parametrize("run_id", ["", "a/b", "x y", "ü", "a" * 101, ".hidden", "a..b", "r1\n", "*"])
def test_janitor_refuses_a_run_id_outside_the_charset(run_id: str) -> None:
    res = cli_main("janitor", "--repo", REPO, "--api-url", "http://127.0.0.1:9", f"--run-id={run_id}", env=ENV)
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1
    assert res.stderr.startswith("redline-canary: --run-id: ")


def test_a_pr_from_a_fork_is_not_ours_even_with_a_canary_name_and_marker() -> None:
    """The tool pushes to the canary repository itself, never to a fork: a fork's PR with
    the same branch name and a copied marker is a person's and stays open. Its branch lives
    in the fork, so our own leftover branch of that name is still cleaned."""
    with Sandbox(token=TOKEN) as sb:
        w = build(sb)
        sb.create_repo("octocat/product", fork_of=REPO)
        branch = branch_name(BRANCH_PREFIX, "20261130-1", "python", "seeded", 1)  # = a leftover's
        sb.commit_files("octocat/product", branch, {"f.py": "f = 1\n"}, f"x\n\n{marker('20261130-1')}\n")
        fork_pr = sb.create_pull(REPO, f"octocat:{branch}", title="From my fork", author="octocat",
                                 body=f"copied {marker('20261130-1')}")
        res = cli_main("janitor", "--repo", REPO, "--api-url", sb.url, "--run-id", "20261130-1", "--json", env=ENV)
        assert res.returncode == 0, res.stderr
        report = json.loads(res.stdout)
        assert fork_pr not in report["pulls"] and fork_pr in {p.number for p in sb.open_pulls(REPO)}
        assert sorted(report["pulls"]) == sorted(w.canary_pulls)
        assert_only_canary_things_gone(w)
        assert branch in sb.branches("octocat/product")


def test_a_dry_run_after_a_killed_run_says_what_the_age_limit_left_alone() -> None:
    """A run was killed a minute ago: its PRs and branches are younger than the default
    --older-than 2h, so nothing is removed, and the janitor says so (how many, whose, how
    to include them) instead of a bare "would remove 0 PR(s)"."""
    with Sandbox(token=TOKEN) as sb:
        w = build(sb)
        before = (sb.branches(REPO), [p.number for p in sb.open_pulls(REPO)])
        for extra in (["--dry-run"], []):
            res = cli_main("janitor", "--repo", REPO, "--api-url", sb.url, *extra, env=ENV)
            assert res.returncode == 0, res.stderr
            lines = res.stdout.splitlines()
            assert lines[0].startswith(f"{REPO}: {'would remove' if extra else 'removed'} 0 PR(s)"), res.stdout
            assert ("left alone 2 canary PR(s) and 3 canary branch(es) younger than --older-than 2h"
                    in res.stdout), res.stdout
            assert "run 20261130-1" in res.stdout and "--run-id 20261130-1" in res.stdout
            assert "--older-than" in lines[-1]
        assert (sb.branches(REPO), [p.number for p in sb.open_pulls(REPO)]) == before
        res = cli_main("janitor", "--repo", REPO, "--api-url", sb.url, "--dry-run", "--json", env=ENV)
        young = json.loads(res.stdout)["kept_young"]
        assert sorted(young["pulls"]) == sorted(w.canary_pulls)
        assert set(young["branches"]) == w.canary_branches and young["run_ids"] == ["20261130-1"]
