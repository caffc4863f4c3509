"""Every tunable default of ``run`` and ``score``, in one table (in the manner of cibuildwheel's options).

The table feeds both commands' flags (their help shows ``%(default)s``), the polling and
matching defaults, and the composite action's inputs: ``tests/test_defaults.py`` checks
``action.yml`` and both parsers against it, so the CLI and the action cannot drift apart.
Pure data.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Default:
    flag: str  # the CLI flag, spelled the same by every command that takes it
    value: float | int | str
    help: str
    action_input: str | None = None  # the action.yml input carrying it, if any
    commands: tuple[str, ...] = ("run",)  # the commands whose flag defaults to it
    # True for ``score`` flags a capture's manifest may answer first: argparse keeps None
    # (so "not given" stays visible) and the value applies when neither says anything.
    after_manifest: bool = False

    @property
    def dest(self) -> str:
        return self.flag.removeprefix("--").replace("-", "_")


DEFAULTS: tuple[Default, ...] = (
    Default("--poll-interval", 30.0, "seconds between polls", "poll-interval"),
    Default("--stable-polls", 2, "unchanged polls that mean the reviewer is done", "stable-polls"),
    Default("--timeout-minutes", 40.0, "give up waiting after this long; no activity means silent",
            "timeout-minutes"),
    Default("--window", 4, "line window for a match", "window", commands=("run", "score")),
    Default("--confirm", 1, "re-runs of a seeded PR that missed a BLOCKER before it counts", "confirm"),
    Default("--parallel", 4, "targets at once"),
    Default("--budget-share", 1,
            "jobs sharing this token at once: each paces itself at 1/N of GitHub's content-creation "
            "limits (80/min, 500/h); the workflow passes its matrix's max-parallel", "budget-share"),
    Default("--floor", "MAJOR", "lowest severity that counts on the clean PR", "floor", commands=("run", "score")),
    Default("--blocker-gate", "found",
            "gate: a BLOCKER counts when found, located by a comment about it at or above the floor "
            "(found), or only when rated at its marked severity (caught)", "blocker-gate", commands=("run", "score")),
    Default("--history", "history/seed-scores.jsonl", "append records here"),
    # none, not auto: a default that changed the pushed files would change every existing
    # target's PRs (and the README's demo) on upgrade; a team opts in (docs/corpus.md#variants).
    Default("--variant", "none",
            "publish a variant of the stack: auto (picked from the run id, the canonical files "
            "among the choices), none (the canonical files) or a variant id", "variant"),
    # `score` alone: how a capture was made, when its manifest does not say.
    Default("--mode", "blind", "blind or marked", commands=("score",), after_manifest=True),
    Default("--reviewer", "redline", "reviewer profile", commands=("score",), after_manifest=True),
    Default("--reviewer-name", "findings", "with --findings: who reviewed (recorded as given)",
            commands=("score",)),
)
BY_FLAG = {d.flag: d for d in DEFAULTS}
RUN_DEFAULTS = tuple(d for d in DEFAULTS if "run" in d.commands)
SCORE_DEFAULTS = tuple(d for d in DEFAULTS if "score" in d.commands)


def default(flag: str) -> float | int | str:
    return BY_FLAG[flag].value

# doctor: a token expiring sooner than this draws a warning (a weekly job then has at most
# one run left); at most this many recent PRs are read for evidence the reviewer is installed.
TOKEN_EXPIRY_WARN_DAYS = 14
DOCTOR_RECENT_PULLS = 10
