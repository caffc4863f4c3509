"""The bad-input probe: every command, many wrong values, one promise (docs/cli.md, README).

For each case the CLI must exit 2, say so in exactly one line on stderr (ours,
``redline-canary: <where>: ...``, or argparse's ``redline-canary <cmd>: error: ...``),
print no traceback, and write or change no file. A user who mistypes a flag or a target
gets a message naming the key, not exit 5 with a crash log and not a half-made PR.

Cases run in-process through ``redline_canary.cli.main`` (fast); the working directory
is an empty temporary folder, so a default output path (``history/seed-scores.jsonl``)
that got written would show up in the snapshot.
"""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from redline_canary.cli import main

ROOT = Path(__file__).resolve().parents[2]
MINI = ROOT / "tests" / "data" / "corpus"
CAPTURE = ROOT / "tests" / "data" / "captures" / "python-bandit-seeded.json"
REDLINE = ROOT / "tests" / "data" / "redline"
OTHERS = "owned by the history/escaping work"

Mutation = Callable[[dict[str, Any]], Any]


@dataclass
class Case:
    name: str
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    owner: str | None = None  # set: the fix lives in another engineer's files (xfail)


def _set(path: str, value: Any) -> Mutation:
    """Mutation setting ``a.b[0].c`` of a capture to ``value`` (or deleting it: ...)."""
    def apply(doc: dict[str, Any]) -> Any:
        keys: list[Any] = []
        for part in path.replace("]", "").replace("[", ".").split("."):
            keys.append(int(part) if part.isdigit() else part)
        target: Any = doc
        for k in keys[:-1]:
            target = target[k]
        if value is ...:
            del target[keys[-1]]
        else:
            target[keys[-1]] = value
        return doc
    return apply


CAPTURE_MUTATIONS: dict[str, Mutation] = {
    "top-level-list": lambda d: [d],
    "pull-not-object": _set("pull", [1]),
    "pull-number-string": _set("pull.number", "1"),
    "repo-int": _set("repo", 5),
    "review-comments-missing": _set("review_comments", ...),
    "review-comments-object": _set("review_comments", {"0": {}}),
    "comment-not-object": _set("review_comments[0]", "hello"),
    "comment-body-int": _set("review_comments[0].body", 7),
    "comment-line-string": _set("review_comments[0].line", "12"),
    "comment-line-bool": _set("review_comments[0].line", True),
    "comment-start-line-float": _set("review_comments[0].start_line", 1.5),
    "comment-id-string": _set("review_comments[0].id", "abc"),
    "comment-id-missing": _set("review_comments[0].id", ...),
    "comment-path-list": _set("review_comments[0].path", ["a.py"]),
    "comment-user-list": _set("review_comments[0].user", ["me"]),
    "comment-user-login-int": _set("review_comments[0].user.login", 3),
    "comment-reply-to-string": _set("review_comments[0].in_reply_to_id", "x"),
    "review-not-object": _set("reviews[0]", 3),
    "review-state-int": _set("reviews[0].state", 1),
    "issue-comments-string": _set("issue_comments", "none"),
    "reactions-object": lambda d: {**d, "reactions": {}},
    "reaction-user-string": lambda d: {**d, "reactions": [{"id": 1, "content": "+1", "user": "bot"}]},
    "reaction-id-string": lambda d: {**d, "reactions": [{"id": "one", "content": "+1"}]},
    "check-run-output-list": lambda d: {**d, "check_runs": [{"id": 1, "name": "x", "output": []}]},
    "check-run-app-slug-int": lambda d: {**d, "check_runs": [{"id": 1, "app": {"slug": 9}}]},
    "check-runs-string": lambda d: {**d, "check_runs": "x"},
    "manifest-list": _set("manifest", []),
    "manifest-stack-list": _set("manifest.stack", ["python"]),
    "manifest-stack-path": _set("manifest.stack", "../python"),
    "manifest-kind-int": _set("manifest.kind", 1),
    "manifest-kind-unknown": _set("manifest.kind", "dirty"),
    "manifest-mode-bool": _set("manifest.mode", False),
    "manifest-attempt-string": _set("manifest.attempt", "1"),
    "manifest-prefix-escape": _set("manifest.prefix", "../../etc"),
    "manifest-reviewer-int": _set("manifest.reviewer", 4),
}

RUN = ["run", "--dry-run", "--corpus", "{mini}", "--repo", "acme/canary-mini", "--stack", "mini"]
RUN_T = ["run", "--dry-run", "--corpus", "{mini}"]
SCORE = ["score", "--capture", "{capture}"]
JAN = ["janitor", "--repo", "acme/canary-mini", "--api-url", "http://127.0.0.1:9"]
ISS = ["issue", "--repo", "acme/metrics", "--history", "{assets}/history.jsonl", "--api-url", "http://127.0.0.1:9"]


def _targets(*items: Any) -> str:
    return json.dumps(list(items))


def _t(**extra: Any) -> str:
    return _targets({"repo": "acme/canary-mini", "stack": "mini", **extra})


# sandbox verify: a recording folder each, holding one hostile 0001.json (made in _make_assets).
RECORDINGS = ("deep-json", "deep-body", "fifo", "dev-zero", "cr-path", "esc-path", "space-path",
              "newline-method", "summary-method", "not-utf8", "too-big")
# corpus import: a Redline checkout each, escaping its folder or too big to read.
IMPORTS = ("seeded-link", "standards-link", "seeded-link-inside", "file-link-outside", "dir-link-outside",
           "loop-link", "deep-manifest", "too-many-bytes", "too-many-files")
IMPOSSIBLE_DATES = {"month-13": "2025-13-45T99:99:99Z", "feb-30": "2025-02-30T10:00:00Z",
                    "hour-24": "2025-06-01T24:00:00Z", "minute-60": "2025-06-01T10:60:00Z",
                    "feb-29-common-year": "2025-02-29T10:00:00Z", "offset-hour-99": "2025-06-01T10:00:00+99:00"}

CASES: list[Case] = [
    # --- run: ids, numbers, URLs, paths ---------------------------------------------
    *[Case(f"run-run-id-{n}", [*RUN, f"--run-id={v}"]) for n, v in [
        ("empty", ""), ("slash", "a/b"), ("space", "a b"), ("long", "x" * 101), ("dotdot", "a..b"),
        ("leading-dot", ".r"), ("unicode", "rün"), ("newline", "r1\n"), ("marker-breaker", "x-->"),
        ("star", "*")]],
    *[Case(f"run-{flag.strip('-')}-{n}", [*RUN, f"{flag}={v}"]) for flag, n, v in [
        ("--poll-interval", "nan", "nan"), ("--poll-interval", "inf", "inf"),
        ("--poll-interval", "negative", "-1"), ("--poll-interval", "zero", "0"),
        ("--poll-interval", "word", "soon"), ("--poll-interval", "huge", "1e9"),
        ("--timeout-minutes", "nan", "nan"), ("--timeout-minutes", "negative", "-5"),
        ("--timeout-minutes", "inf", "inf"), ("--timeout-minutes", "huge", "1e9"),
        ("--timeout-minutes", "zero", "0"),
        ("--min-recall", "above-1", "1.5"), ("--min-recall", "negative", "-0.1"),
        ("--min-recall", "nan", "nan"), ("--min-recall", "inf", "inf"),
        ("--parallel", "zero", "0"), ("--parallel", "huge", "100000"), ("--parallel", "float", "2.5"),
        ("--confirm", "negative", "-1"), ("--confirm", "huge", "1000"),
        ("--window", "negative", "-1"), ("--window", "huge", "100000"),
        ("--stable-polls", "zero", "0"), ("--stable-polls", "huge", "1000000"),
        ("--floor", "unknown", "HUGE"),
        ("--api-url", "ftp", "ftp://example.com"), ("--api-url", "credentials", "https://user:pw@ghe.example"),
        ("--api-url", "user-only", "https://token@ghe.example"), ("--api-url", "no-host", "https://"),
        ("--api-url", "query", "https://ghe.example/api?x=1"), ("--api-url", "fragment", "https://ghe.example/#f"),
        ("--api-url", "words", "not a url"), ("--api-url", "bad-port", "https://ghe.example:99999"),
        ("--api-url", "no-scheme", "ghe.example/api/v3"),
        ("--history", "under-a-file", "{assets}/afile/h.jsonl"),  # a folder is a history (docs/record.md)
        ("--save-captures", "a-file", "{assets}/afile"),
        ("--save-captures", "under-a-file", "{assets}/afile/caps"),
    ]],
    # --- run: a single target from flags ----------------------------------------------
    *[Case(f"run-flag-repo-{n}", [*RUN_T, "--stack", "mini", f"--repo={v}"]) for n, v in [
        ("trailing-newline", "acme/x\n"), ("three-parts", "acme/x/y"), ("no-owner", "/x"),
        ("no-name", "acme/"), ("space", "ac me/x"), ("leading-hyphen", "-acme/x"),
        ("owner-too-long", "a" * 40 + "/x"), ("name-too-long", "acme/" + "x" * 101), ("dotdot", "acme/.."),
        ("no-slash", "acme"), ("tab", "acme/x\t"), ("url", "https://github.com/acme/x")]],
    *[Case(f"run-flag-base-{n}", [*RUN, f"--base={v}"]) for n, v in [
        ("dotdot", "a..b"), ("tilde", "main~1"), ("caret", "main^"), ("colon", "a:b"), ("space", "has space"),
        ("lock", "x.lock"), ("leading-dash", "-x"), ("trailing-slash", "x/"), ("at-brace", "main@{1}"),
        ("star", "feat*"), ("question", "a?"), ("bracket", "a[1"), ("backslash", "a\\b"),
        ("dot-component", "a/.b"), ("trailing-dot", "a."), ("double-slash", "a//b"), ("control", "a\x01b")]],
    *[Case(f"run-flag-prefix-{n}", [*RUN, f"--prefix={v}"]) for n, v in [
        ("parent", "../escape"), ("absolute", "/abs"), ("backslash", "a\\b"), ("inner-parent", "a/../../b"),
        ("nul", "a\x00b"), ("newline", "a\nb"), ("dot", "./x"), ("double-slash", "a//b")]],
    Case("run-flag-mode", [*RUN, "--mode", "blindish"]),
    Case("run-flag-reviewer", [*RUN, "--reviewer", "hal"]),
    Case("run-flag-stack", [*RUN_T, "--repo", "acme/x", "--stack", "cobol"]),
    Case("run-flag-repo-without-stack", [*RUN_T, "--repo", "acme/x"]),
    Case("run-flag-and-targets", [*RUN, "--targets", _t()]),
    Case("run-no-targets", RUN_T),
    # --- run: --targets JSON / YAML / CANARY_TARGETS -----------------------------------
    *[Case(f"run-targets-{n}", [*RUN_T, "--targets", v]) for n, v in [
        ("stack-list", _targets({"repo": "acme/x", "stack": ["mini"]})),
        ("stack-int", _targets({"repo": "acme/x", "stack": 3})),
        ("reviewer-list", _t(reviewer=["copilot"])), ("reviewer-int", _t(reviewer=1)),
        ("reviewer-true", _t(reviewer=True)), ("reviewer-object", _t(reviewer={"name": "x"})),
        ("mode-int", _t(mode=1)), ("mode-list", _t(mode=["blind"])), ("mode-false", _t(mode=False)),
        ("login-int", _t(login=5)), ("login-list-int", _t(login=[1])), ("login-empty", _t(login=[""])),
        ("login-newline", _t(login="bot\n")),
        ("base-int", _t(base=1)), ("base-dotdot", _t(base="a..b")), ("base-list", _t(base=["main"])),
        ("prefix-list", _t(prefix=["a"])), ("prefix-parent", _t(prefix="../x")),
        ("prefix-absolute", _t(prefix="/etc")),
        ("repo-int", _targets({"repo": 1, "stack": "mini"})),
        ("repo-newline", _targets({"repo": "acme/x\n", "stack": "mini"})),
        ("repo-null", _targets({"repo": None, "stack": "mini"})),
        ("unknown-key", _t(branch="x")), ("number", "42"), ("empty-list", "[]"),
        ("item-string", '["acme/x"]'), ("duplicate", _targets(*[{"repo": "acme/x", "stack": "mini"}] * 2)),
        ("truncated", '[{"repo": "acme/x"'), ("targets-not-list", '{"targets": 5}'),
        ("missing-file", "{assets}/nope.json"), ("folder", "{assets}/adir"),
        ("yaml-mixed-keys", "{assets}/mixed-keys.yml"), ("yaml-scalar", "{assets}/scalar.yml"),
        ("binary", "{assets}/binary.json")]],
    Case("run-env-targets", RUN_T, env={"CANARY_TARGETS": _targets({"repo": "acme/x\n", "stack": "mini"})}),
    Case("run-env-targets-garbage", RUN_T, env={"CANARY_TARGETS": "{{{"}),
    Case("run-big-corpus", ["run", "--dry-run", "--corpus", "{assets}/big-corpus", "--repo", "acme/x",
                            "--stack", "mini"]),
    Case("run-profiles-missing", [*RUN, "--profiles", "{assets}/nope.yml"]),
    # --- targets (validates with run's code) ------------------------------------------
    Case("targets-repo-newline", ["targets", "--corpus", "{mini}", "--repo", "acme/x\n", "--stack", "mini"]),
    Case("targets-prefix-escape", ["targets", "--corpus", "{mini}", "--targets", _t(prefix="../..")]),
    Case("targets-base-bad", ["targets", "--corpus", "{mini}", "--matrix", "--targets", _t(base="x y")]),
    Case("targets-reviewer-list", ["targets", "--corpus", "{mini}", "--targets", _t(reviewer=[])]),
    Case("targets-big-corpus", ["targets", "--corpus", "{assets}/big-corpus", "--repo", "acme/x",
                                "--stack", "mini"]),
    # --- score: captures with wrong shapes ----------------------------------------------
    *[Case(f"score-capture-{name}", ["score", "--capture", f"{{assets}}/capture-{name}.json"])
      for name in CAPTURE_MUTATIONS],
    Case("score-capture-missing", ["score", "--capture", "{assets}/nope.json"]),
    Case("score-capture-folder", ["score", "--capture", "{assets}/adir"]),
    Case("score-capture-not-json", ["score", "--capture", "{assets}/afile"]),
    Case("score-capture-binary", ["score", "--capture", "{assets}/binary.json"]),
    Case("corpus-audit-binary", ["corpus", "audit", "{assets}/binary.json"]),
    Case("corpus-audit-no-record", ["corpus", "audit", "{assets}/corrupt.jsonl"]),
    # --- score: flags ------------------------------------------------------------------
    *[Case(f"score-{n}", [*SCORE, *extra]) for n, extra in [
        ("window-negative", ["--window", "-1"]), ("window-huge", ["--window", "1000000"]),
        ("window-word", ["--window", "wide"]),
        ("min-recall-2", ["--min-recall", "2"]), ("min-recall-nan", ["--min-recall", "nan"]),
        ("floor", ["--floor", "nope"]), ("floor-empty", ["--floor", ""]),
        ("kind", ["--kind", "both"]), ("mode", ["--mode", "x"]),
        ("stack-path", ["--stack", "../python"]), ("stack-unknown", ["--stack", "cobol"]),
        ("run-id-slash", ["--run-id", "a/b"]), ("run-id-long", ["--run-id", "r" * 200]),
        ("prefix-parent", ["--prefix", "../x"]), ("login-empty", ["--login", ""]),
        ("login-spaces", ["--login", " bot "]),
        ("history-under-file", ["--history", "{assets}/afile/h.jsonl"]),
        ("save-capture-folder", ["--save-capture", "{assets}/adir"]),
        ("save-capture-itself", ["--save-capture", "{capture}"]),
        ("baseline-without-history", ["--baseline"]), ("reviewer", ["--reviewer", "hal"]),
        ("profiles-missing", ["--profiles", "{assets}/nope.yml"]),
        ("corpus-missing", ["--corpus", "{assets}/nope"]), ("corpus-big", ["--corpus", "{assets}/big-corpus",
                                                                            "--stack", "mini"]),
        ("corpus-big-rules", ["--corpus", "{assets}/big-rules", "--stack", "mini"]),
    ]],
    *[Case(f"score-live-{n}", ["score", *extra]) for n, extra in [
        ("repo-newline", ["--repo", "acme/x\n", "--pr", "1"]), ("pr-zero", ["--repo", "acme/x", "--pr", "0"]),
        ("pr-negative", ["--repo", "acme/x", "--pr", "-3"]), ("pr-missing", ["--repo", "acme/x"]),
        ("api-url-ftp", ["--repo", "acme/x", "--pr", "1", "--api-url", "ftp://x"]),
        ("api-url-credentials", ["--repo", "acme/x", "--pr", "1", "--api-url", "https://u:p@h"]),
        ("both-sources", ["--repo", "acme/x", "--capture", "{capture}"]), ("no-source", []),
    ]],
    # --- corpus ------------------------------------------------------------------------
    Case("corpus-lint-big", ["corpus", "lint", "--corpus", "{assets}/big-corpus"]),
    Case("corpus-show-big", ["corpus", "show", "--corpus", "{assets}/big-corpus"]),
    Case("corpus-lint-big-rules", ["corpus", "lint", "--corpus", "{assets}/big-rules"]),
    Case("corpus-lint-missing", ["corpus", "lint", "--corpus", "{assets}/nope"]),
    Case("corpus-lint-a-file", ["corpus", "lint", "--corpus", "{assets}/afile"]),
    Case("corpus-show-unknown-stack", ["corpus", "show", "--corpus", "{mini}", "--stack", "cobol"]),
    *[Case(f"corpus-mine-{n}", ["corpus", "mine", "--fix", "HEAD", "--out", "{assets}/mined", *extra]) for n, extra in [
        ("not-a-repo", ["--repo", "{assets}/adir", "--stack", "x"]),
        ("repo-a-file", ["--repo", "{assets}/afile", "--stack", "x"]),
        ("stack-path", ["--repo", "{assets}/adir", "--stack", "../x"]),
        ("stack-packaged", ["--repo", "{assets}/adir", "--stack", "python"]),
        ("corpus-missing", ["--repo", "{assets}/adir", "--stack", "x", "--corpus", "{assets}/nope"]),
        ("out-a-file", ["--repo", "{assets}/adir", "--stack", "x", "--out", "{assets}/afile"]),
    ]],
    Case("corpus-no-action", ["corpus"]),
    Case("history-no-action", ["history"]),
    Case("profile-no-action", ["profile"]),
    Case("actions-report-no-records", ["actions-report"]),
    # --- janitor -----------------------------------------------------------------------
    *[Case(f"janitor-older-than-{n}", [*JAN, f"--older-than={v}"]) for n, v in [
        ("zero", "0s"), ("zero-days", "0d"), ("negative", "-1h"), ("exponent", "1e400h"), ("nan", "nanh"),
        ("inf", "infd"), ("too-long", "400d"), ("huge", "99999999999d"), ("empty", ""), ("no-unit", "2"),
        ("unknown-unit", "2w"), ("words", "two hours")]],
    *[Case(f"janitor-run-id-{n}", [*JAN, f"--run-id={v}"]) for n, v in [
        ("empty", ""), ("slash", "a/b"), ("long", "9" * 101), ("regex", "a.*"), ("newline", "r\n")]],
    Case("janitor-stack-without-run-id", [*JAN, "--stack", "python"]),
    Case("janitor-stack-path", [*JAN, "--run-id", "r1", "--stack", "../python"]),
    Case("janitor-repo-newline", ["janitor", "--repo", "acme/x\n", "--api-url", "http://127.0.0.1:9"]),
    Case("janitor-repo-no-slash", ["janitor", "--repo", "acme", "--api-url", "http://127.0.0.1:9"]),
    Case("janitor-api-url-credentials", ["janitor", "--repo", "acme/x", "--api-url", "https://u:p@h"]),
    Case("janitor-api-url-query", ["janitor", "--repo", "acme/x", "--api-url", "http://h/?x=1"]),
    Case("janitor-no-repo", ["janitor"]),
    # --- gate / report / history (readers owned by the history work) -------------------
    Case("gate-history-folder", ["gate", "{assets}/adir", "--run-id", "r1"]),
    Case("gate-history-missing", ["gate", "{assets}/nope.jsonl", "--run-id", "r1"]),
    Case("gate-no-run-id", ["gate", "{assets}/history.jsonl"]),
    Case("gate-unknown-run", ["gate", "{assets}/history.jsonl", "--run-id", "nobody"]),
    Case("gate-corrupt-history", ["gate", "{assets}/corrupt.jsonl", "--run-id", "r1"]),
    Case("gate-binary-history", ["gate", "{assets}/binary.json", "--run-id", "r1"]),
    # --- issue (the regression issue) -------------------------------------------------
    Case("issue-no-repo", ["issue", "--history", "{assets}/history.jsonl", "--run-id", "r1"]),
    Case("issue-no-run-id", ISS),
    Case("issue-no-history", ["issue", "--repo", "acme/metrics", "--run-id", "r1"]),
    Case("issue-repo-no-slash", [*ISS[:2], "acme", *ISS[3:], "--run-id", "r1"]),
    Case("issue-history-missing", [*ISS[:4], "{assets}/nope.jsonl", *ISS[5:], "--run-id", "r1"]),
    Case("issue-history-folder", [*ISS[:4], "{assets}/adir", *ISS[5:], "--run-id", "r1"]),
    Case("issue-history-corrupt", [*ISS[:4], "{assets}/corrupt.jsonl", *ISS[5:], "--run-id", "r1"]),
    Case("issue-unknown-run", [*ISS, "--run-id", "nobody"]),
    Case("issue-run-id-slash", [*ISS, "--run-id", "a/b"]),
    *[Case(f"issue-run-url-{n}", [*ISS, "--run-id", "r1", "--run-url", v]) for n, v in [
        ("javascript", "javascript:alert(1)"), ("space", "https://h/a b"), ("angle", "https://h/<x>"),
        ("credentials", "https://u:p@h/run"), ("no-host", "https:///run"), ("empty", ""), ("paren-quote", "https://h/')")]],
    Case("issue-summary-url-newline", [*ISS, "--run-id", "r1", "--summary-url", "https://h/s\n"]),
    *[Case(f"issue-label-{n}", [*ISS, "--run-id", "r1", "--label", v]) for n, v in [
        ("comma", "a,b"), ("empty", ""), ("long", "x" * 51), ("blank-around", " x"), ("newline", "x\n")]],
    Case("issue-api-url-query", [*ISS[:6], "http://h/?x=1", "--run-id", "r1"]),
    Case("issue-no-token", [*ISS, "--run-id", "r1"], env={"GITHUB_TOKEN": ""}),
    Case("report-missing", ["report", "{assets}/nope.jsonl"]),
    Case("report-since", ["report", "{assets}/history.jsonl", "--since", "2025-13-01"]),
    Case("report-since-words", ["report", "{assets}/history.jsonl", "--since", "last week"]),
    Case("report-markdown-folder", ["report", "{assets}/history.jsonl", "--markdown", "{assets}/adir"]),
    Case("report-binary", ["report", "{assets}/binary.json"]),
    Case("history-merge-no-fragment", ["history", "merge", "{work}/out.jsonl"]),
    Case("history-merge-missing-fragment", ["history", "merge", "{work}/out.jsonl", "{assets}/nope.jsonl"]),
    Case("history-merge-into-missing-fragment", ["history", "merge", "--into", "{work}/out.jsonl",
                                                 "{assets}/nope.jsonl"]),
    Case("history-merge-into-no-fragment", ["history", "merge", "--into", "{work}/out.jsonl"]),
    # --- profile ---------------------------------------------------------------------
    Case("profile-classify-missing-body", ["profile", "classify", "--reviewer", "copilot", "--channel", "inline",
                                           "--body-file", "{assets}/nope.txt"]),
    Case("profile-classify-folder-body", ["profile", "classify", "--reviewer", "copilot", "--channel",
                                          "inline", "--body-file", "{assets}/adir"]),
    Case("profile-classify-binary-body", ["profile", "classify", "--reviewer", "copilot", "--channel",
                                          "inline", "--body-file", "{assets}/binary.json"]),
    Case("profile-classify-reviewer", ["profile", "classify", "--reviewer", "hal", "--channel", "inline",
                                       "--body-file", "{assets}/afile"]),
    Case("profile-classify-channel", ["profile", "classify", "--reviewer", "copilot", "--channel", "smoke",
                                      "--body-file", "{assets}/afile"]),
    Case("profile-list-profiles-missing", ["profile", "list", "--profiles", "{assets}/nope.yml"]),
    Case("profile-list-profiles-garbage", ["profile", "list", "--profiles", "{assets}/binary.json"]),
    # --- sandbox ---------------------------------------------------------------------
    *[Case(f"sandbox-serve-{n}", ["sandbox", "serve", *extra]) for n, extra in [
        ("port-70000", ["--port", "70000"]), ("port-negative", ["--port", "-1"]),
        ("port-word", ["--port", "http"]), ("latency-nan", ["--latency", "nan"]),
        ("latency-negative", ["--latency", "-1"]), ("latency-inf", ["--latency", "inf"]),
        ("repo-three-parts", ["--repo", "a/b/c"]), ("repo-newline", ["--repo", "a/b\n"]),
        ("reviewer", ["--reviewer", "alien"]), ("reviewer-kind", ["--reviewer-kind", "alien"])]],
    # --- issue 24: hostile files the second round found ----------------------------------
    *[Case(f"sandbox-verify-{n}", ["sandbox", "verify", f"{{assets}}/rec-{n}"]) for n in RECORDINGS],
    *[Case(f"corpus-import-{n}", ["corpus", "import", "--from", "redline", f"{{assets}}/import-{n}",
                                  "--out", "{work}/imported"]) for n in IMPORTS],
    Case("run-record-empty", [*RUN, "--record="]),
    Case("run-save-captures-empty", [*RUN, "--save-captures="]),
    Case("run-profiles-control-name", [*RUN, "--profiles", "{assets}/evil-profiles.yml"]),
    Case("profile-list-control-name", ["profile", "list", "--profiles", "{assets}/evil-profiles.yml"]),
    Case("history-merge-into-binary", ["history", "merge", "--into", "{assets}/binary.json",
                                       "{assets}/history.jsonl"]),
    Case("history-merge-into-png", ["history", "merge", "--into", "{assets}/image.png", "{assets}/history.jsonl"]),
    *[Case(f"history-import-date-{n}", ["history", "import", "--from", "redline", f"{{assets}}/redline-{n}.jsonl",
                                        "--out", "{work}/legacy.jsonl"]) for n in IMPOSSIBLE_DATES],
    # Nested past the parser's recursion limit: a crash (exit 5) until each reader refused it.
    Case("run-targets-deep-json", [*RUN_T, "--targets", "{assets}/deep.json"]),
    Case("run-targets-deep-yaml", [*RUN_T, "--targets", "{assets}/deep.yml"]),
    Case("run-profiles-deep", [*RUN, "--profiles", "{assets}/deep.yml"]),
    Case("run-acknowledgements-deep", [*RUN, "--acknowledgements", "{assets}/deep.yml"]),
    Case("score-capture-deep", ["score", "--capture", "{assets}/deep.json"]),
    Case("corpus-lint-deep-rules", ["corpus", "lint", "--corpus", "{assets}/deep-rules"]),
    Case("sandbox-serve-deep-scenario", ["sandbox", "serve", "--scenario", "{assets}/deep.yml"]),
    # --- demo ------------------------------------------------------------------------
    Case("demo-history-folder", ["demo", "--history", "{assets}/adir"]),
    Case("demo-history-under-a-file", ["demo", "--history", "{assets}/afile/demo.jsonl"]),
    # --- argparse level -----------------------------------------------------------------
    Case("unknown-command", ["frobnicate"]),
    Case("unknown-flag", ["run", "--frobnicate"]),
]


def _make_assets(root: Path) -> None:
    """Every input file the cases point at, made once."""
    (root / "adir").mkdir()
    (root / "afile").write_text("just text, not JSON\n")
    (root / "binary.json").write_bytes(b"\xff\xfe\x00\x81garbage")
    (root / "mixed-keys.yml").write_text("- {repo: acme/x, stack: mini, 1: a, true: b}\n")
    (root / "scalar.yml").write_text("just a sentence\n")
    doc = json.loads(CAPTURE.read_text())
    doc["reviews"] = doc["reviews"] or [{"id": 1, "body": "ok", "state": "COMMENTED"}]
    for name, mutate in CAPTURE_MUTATIONS.items():
        (root / f"capture-{name}.json").write_text(json.dumps(mutate(copy.deepcopy(doc))))
    big = root / "big-corpus"
    shutil.copytree(MINI, big)
    (big / "seeded" / "mini" / "huge.py").write_text("x = 1\n" * 200_000)  # 1.2 MB
    (big / "clean" / "mini" / "huge.py").write_text("x = 1\n" * 200_000)
    big_rules = root / "big-rules"
    shutil.copytree(MINI, big_rules)
    with (big_rules / "rules.yml").open("a") as fh:
        fh.write("#" + "x" * (1 << 20) + "\n")
    # A real record, as ``score --history`` writes it (exit 1: bandit misses the BLOCKERs).
    assert main(["score", "--capture", str(CAPTURE), "--run-id", "r1", "--history",
                 str(root / "history.jsonl")]) == 1
    (root / "corrupt.jsonl").write_text("{not json\n[1, 2]\n")
    (root / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\n")
    (root / "evil-profiles.yml").write_text('profiles:\n  "evil\\n":\n    extends: generic\n')
    (root / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    (root / "deep.yml").write_text("a: " + "[" * 50_000 + "]" * 50_000 + "\n")
    shutil.copytree(MINI, root / "deep-rules")
    (root / "deep-rules" / "rules.yml").write_text("rules: " + "[" * 50_000 + "]" * 50_000 + "\n")
    _make_recordings(root)
    _make_imports(root)
    line = json.loads((REDLINE / "data" / "seed-scores.jsonl").read_text().splitlines()[0])
    for name, when in IMPOSSIBLE_DATES.items():
        (root / f"redline-{name}.jsonl").write_text(json.dumps({**line, "scored_at": when}) + "\n")


def _make_recordings(root: Path) -> None:
    """One folder per hostile recording: each a clean one-line refusal, never a hang or a crash."""
    good = json.loads((ROOT / "tests" / "data" / "github-fixtures" / "git-ref_get_200.pygithub.json").read_text())

    def shaped(**request: Any) -> bytes:
        return json.dumps({**good, "request": {**good["request"], **request}}).encode()

    raw: dict[str, bytes] = {
        "deep-json": b'{"request": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
        "deep-body": shaped(body=None).replace(b'"body": null', b'"body": ' + b"[" * 5000 + b"]" * 5000, 1),
        "cr-path": shaped(path="/repos/a/b\r\nX-Injected: 1"),
        "esc-path": shaped(path="/repos/a/b\x1b[31m"),
        "space-path": shaped(path="/repos/a/b c"),
        "newline-method": shaped(method="GET\nPOST"),
        "summary-method": shaped(method="GET\n1 interaction(s) replayed, 0 differ"),
        "not-utf8": b"\xff\xfe{}",
        "too-big": b" " * (16 * 1024 * 1024 + 1),
    }
    for name in RECORDINGS:
        folder = root / f"rec-{name}"
        folder.mkdir()
        target = folder / "0001.json"
        if name == "fifo":
            os.mkfifo(target)
        elif name == "dev-zero":
            target.symlink_to("/dev/zero")
        else:
            target.write_bytes(raw[name])


def _make_imports(root: Path) -> None:
    """Redline checkouts that would make the import read outside SRC, or read too much."""
    outside = root / "outside"
    outside.mkdir()
    (outside / "netrc").write_text("machine example.com password hunter2\n")

    def checkout(name: str) -> Path:
        src = root / f"import-{name}"
        shutil.copytree(REDLINE, src, ignore=shutil.ignore_patterns("data"))
        return src

    for top in ("seeded", "standards"):
        src = root / f"import-{top}-link"
        src.mkdir()
        shutil.copytree(REDLINE / ("standards" if top == "seeded" else "seeded"),
                        src / ("standards" if top == "seeded" else "seeded"))
        (outside / top).mkdir()
        shutil.copytree(REDLINE / top, outside / top, dirs_exist_ok=True)
        (src / top).symlink_to(outside / top)
    src = root / "import-seeded-link-inside"
    src.mkdir()
    shutil.copytree(REDLINE / "seeded", src / "real-seeded")
    (src / "seeded").symlink_to("real-seeded")
    (checkout("file-link-outside") / "seeded" / "python" / "netrc.py").symlink_to(outside / "netrc")
    (checkout("dir-link-outside") / "seeded" / "python" / "home").symlink_to(outside)
    (checkout("loop-link") / "seeded" / "python" / "loop").symlink_to("loop")
    (checkout("deep-manifest") / "standards" / "manifest.json").write_text("[" * 100_000 + "]" * 100_000)
    big = checkout("too-many-bytes") / "seeded" / "python"
    for i in range(70):  # 70 files just under 1 MiB: 70 MB in all, sparse (nothing is read)
        with (big / f"blob{i}.py").open("wb") as fh:
            fh.truncate(1_000_000)
    many = checkout("too-many-files") / "seeded" / "python"
    for i in range(5001):
        (many / f"f{i}.py").write_bytes(b"")


@pytest.fixture(scope="module")
def assets(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("assets")
    _make_assets(root)
    return root


def _snapshot(*roots: Path) -> dict[str, tuple[int, int]]:
    out: dict[str, tuple[int, int]] = {}
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            for name in dirnames + filenames:
                p = Path(dirpath) / name
                st = p.lstat()
                out[str(p)] = (st.st_size, st.st_mtime_ns)
    return out


def _param(case: Case) -> Any:
    marks = [pytest.mark.xfail(strict=False, reason=case.owner)] if case.owner else []
    return pytest.param(case, id=case.name, marks=marks)


def run_case(case: Case, assets: Path, work: Path, monkeypatch: pytest.MonkeyPatch,
             capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    for var in ("CANARY_TARGETS", "GITHUB_ACTIONS", "GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY", "GITHUB_RUN_ID",
                "REDLINE_CANARY_TOKEN"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("GITHUB_TOKEN", "probe-token-not-real")
    for key, value in case.env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.chdir(work)
    subst = {"{assets}": str(assets), "{mini}": str(MINI), "{capture}": str(CAPTURE), "{work}": str(work)}
    argv = []
    for arg in case.argv:
        for key, value in subst.items():
            arg = arg.replace(key, value)
        argv.append(arg)
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's own error exit
        code = exc.code if isinstance(exc.code, int) else 1
    return code, capsys.readouterr().err


def is_one_line_error(err: str) -> bool:
    lines = err.splitlines()
    return (len(lines) == 1 and err.endswith("\n") and "Traceback" not in err
            and (lines[0].startswith("redline-canary: ") or (lines[0].startswith("redline-canary ")
                 and ": error: " in lines[0])))


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_bad_input_exits_2_with_one_line_and_writes_nothing(
    case: Case, assets: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    before = _snapshot(assets, work, MINI)
    code, err = run_case(case, assets, work, monkeypatch, capsys)
    assert code == 2, f"exit {code}: {err}"
    assert is_one_line_error(err), f"stderr is not one error line: {err!r}"
    assert _snapshot(assets, work, MINI) == before, "a file was written or changed"


def test_the_probe_is_broad() -> None:
    """Well over a hundred cases, across every command a user can mistype."""
    commands = {c.argv[0] for c in CASES}
    assert len(CASES) > 200
    assert {"run", "score", "corpus", "janitor", "targets", "gate", "issue", "report", "history", "profile",
            "sandbox"} <= commands


def test_the_probe_names_the_key() -> None:
    """Spot checks that the one line says *which* key is wrong, not just "bad input"."""
    # Exercised through the same runner in the parametrized test; here the words matter.
    from redline_canary.commands._targets import parse_targets
    from redline_canary.errors import BadInput

    corpus_dummy = type("C", (), {"files": {"mini": {}}, "stacks": ["mini"]})()
    with pytest.raises(BadInput, match=r"^x: \[0\]\.reviewer: must be a non-empty string"):
        parse_targets([{"repo": "acme/x", "stack": "mini", "reviewer": ["copilot"]}], "x", corpus_dummy)
    with pytest.raises(BadInput, match=r"^x: \[0\]\.repo: expected OWNER/NAME"):
        parse_targets([{"repo": "acme/x\n", "stack": "mini"}], "x", corpus_dummy)
    with pytest.raises(BadInput, match=r"^x: \[0\]\.prefix: must not contain"):
        parse_targets([{"repo": "acme/x", "stack": "mini", "prefix": "a/../../b"}], "x", corpus_dummy)


def test_history_merge_names_every_corrupt_fragment_line_and_writes_nothing(
    assets: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    # Like `corpus lint`, a merge reports every bad line (one line each), not only the first.
    out = tmp_path / "out.jsonl"
    code = main(["history", "merge", "--into", str(out), str(assets / "corrupt.jsonl")])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert [line.split(": ")[0] for line in err.splitlines()] == [f"{assets / 'corrupt.jsonl'}:1",
                                                                  f"{assets / 'corrupt.jsonl'}:2"]
    assert not out.exists() or out.read_bytes() == b""


@pytest.mark.parametrize(("group", "actions"), [
    ("corpus", ["lint", "show", "export", "audit", "import", "mine"]), ("history", ["merge", "import"]),
    ("profile", ["classify", "learn", "list"]), ("sandbox", ["serve", "verify"])])
def test_a_command_group_given_no_action_lists_its_actions(group: str, actions: list[str]) -> None:
    """``redline-canary corpus`` alone: the list of its actions (its help) on stdout, one
    line on stderr saying what to do, exit 2 (as ``redline-canary`` alone does)."""
    from tests.helpers.clirun import cli_main

    res = cli_main(group)
    assert res.returncode == 2
    for action in actions:
        assert re.search(rf"^\s+{action}\s", res.stdout, re.MULTILINE), (action, res.stdout)
    assert res.stderr.splitlines() == [
        f"redline-canary {group}: error: give an ACTION: {', '.join(actions)} "
        f"(`redline-canary {group} ACTION --help` for its options)"]


def test_actions_report_without_its_records_file_is_a_usage_error(tmp_path: Path) -> None:
    """Bare, it used to print "ERROR (exit 4 ...)" as a job summary and exit 0."""
    from tests.helpers.clirun import cli_main

    res = cli_main("actions-report", cwd=tmp_path)
    assert res.returncode == 2 and res.stdout == ""
    assert is_one_line_error(res.stderr) and "RECORDS" in res.stderr, res.stderr
    # Given, even empty (the action's way of saying "the run wrote no records"), it reports.
    res = cli_main("actions-report", "", "--exit-code", "4", cwd=tmp_path)
    assert res.returncode == 0 and "No records were written" in res.stdout


# --- issue 24: what is not a plain "exit 2, one line" case ----------------------------------

def test_corpus_lint_fails_a_stack_with_no_file(tmp_path: Path) -> None:
    from tests.helpers.clirun import cli_main

    corpus = tmp_path / "corpus"
    shutil.copytree(MINI, corpus)
    (corpus / "seeded" / "empty").mkdir()
    (corpus / "clean" / "empty").mkdir()
    res = cli_main("corpus", "lint", "--corpus", str(corpus))
    assert res.returncode == 2, res.stdout
    assert f"{corpus}/seeded/empty:0: no file in this stack" in res.stdout
    assert res.stderr == f"1 problem(s) in {corpus}\n"


def test_report_html_on_a_full_disk_is_one_line_not_a_crash(tmp_path: Path) -> None:
    """A file-size limit stands in for a full disk (the write fails with EFBIG as it would
    with ENOSPC; a tiny tmpfs needs root): the real CLI in a child process so limited."""
    import resource
    import subprocess
    import sys

    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (2048, 2048))

    history = ROOT / "tests" / "data" / "records" / "demo.jsonl"
    done = subprocess.run([sys.executable, "-m", "redline_canary", "report", str(history), "--html", "site"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300, preexec_fn=small_files,
                          env={**os.environ, "TMPDIR": str(tmp_path)}, check=False)
    assert done.returncode == 2, done.stderr
    assert is_one_line_error(done.stderr) and "cannot write (File too large)" in done.stderr, done.stderr
    assert not list(tmp_path.glob("redline-canary-crash-*"))
    assert [p for p in (tmp_path / "site").rglob("*") if p.is_file()] == []  # nothing half-written


@pytest.mark.parametrize(("share", "warned"), [(40, False), (41, True), (256, True)])
def test_a_budget_share_that_means_a_crawl_is_said_with_its_write_rate(share: int, warned: bool) -> None:
    from tests.helpers.clirun import cli_main

    res = cli_main(*[a.replace("{mini}", str(MINI)) for a in RUN], f"--budget-share={share}")
    assert res.returncode == 0, res.stderr
    warnings = [line for line in res.stderr.splitlines() if "--budget-share" in line]
    if not warned:
        assert warnings == []
        return
    per_minute = 80 / share
    assert warnings == [line for line in warnings if line.startswith("redline-canary: warning: ")]
    assert len(warnings) == 1 and f"({per_minute:.2f} of GitHub's 80)" in warnings[0], warnings
    assert f"and {max(1, int(500 / share))} an hour" in warnings[0]


def test_a_stack_manifest_nested_too_deeply_is_a_lint_problem_not_a_crash(tmp_path: Path) -> None:
    """Every YAML side file of a corpus (rules, log, manifests, import table) is read one way."""
    from tests.helpers.clirun import cli_main

    corpus = tmp_path / "corpus"
    shutil.copytree(MINI, corpus)
    (corpus / "stacks").mkdir()
    (corpus / "stacks" / "mini.yml").write_text("variants: " + "[" * 50_000 + "]" * 50_000)
    res = cli_main("corpus", "lint", "--corpus", str(corpus))
    assert res.returncode == 2 and "Traceback" not in res.stderr, res.stderr
    assert "mini.yml:1: nested too deeply to be a stack manifest" in res.stdout
