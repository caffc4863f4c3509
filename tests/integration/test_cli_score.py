"""``redline-canary score`` end to end through the CLI, offline captures."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests.helpers.clirun import ROOT, cli_main
from tests.helpers.factories import capture, inline, review

APP, TSX = "p/app.py", "p/web/Profile.tsx"
SCHEMA = json.loads((ROOT / "history" / "schema.json").read_text())


def write(tmp_path: Path, doc: dict[str, Any], name: str = "cap.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


def base_args(cap: Path, corpus: Path, *extra: str) -> list[str]:
    return ["score", "--capture", str(cap), "--corpus", str(corpus), "--stack", "mini",
            "--prefix", "p", *extra]


def good_capture() -> dict[str, Any]:
    return capture([inline(APP, 5, "[BLOCKER] secret"), inline(APP, 10, "[BLOCKER] sql"),
                    inline(TSX, 7, "[BLOCKER] xss")], [review("done")])


def test_json_record_is_valid_and_passes(tmp_path: Path, mini_corpus: Path) -> None:
    cap = write(tmp_path, good_capture())
    res = cli_main(*base_args(cap, mini_corpus, "--kind", "seeded", "--json"))
    assert res.returncode == 0, res.stderr
    record = json.loads(res.stdout)
    jsonschema.validate(record, SCHEMA)
    assert record["caught"] == 3 and record["blocker_recall"] == 1.0 and record["missed"] == 3
    assert record["repo"] == "acme/canary" and record["pr"] == 7


def test_table_lists_missed_seeds_and_rates_with_n(tmp_path: Path, mini_corpus: Path) -> None:
    cap = write(tmp_path, capture([inline(APP, 10, "[BLOCKER] sql")]))
    res = cli_main(*base_args(cap, mini_corpus, "--kind", "seeded"))
    assert res.returncode == 1
    assert "blockers:       found 1/3 · rated BLOCKER 1/3" in res.stdout
    assert "rated BLOCKER: 0.33 (1/3, 95% CI 0.06–0.79)" in res.stdout
    assert "app.py:5 [BLOCKER] core/hardcoded-secrets — API token committed in source" in res.stdout
    assert "gate: FAIL" in res.stdout


def test_manifest_supplies_defaults(tmp_path: Path, mini_corpus: Path) -> None:
    doc = good_capture()
    doc["manifest"] = {"stack": "mini", "kind": "clean", "mode": "blind", "prefix": "p"}
    cap = write(tmp_path, doc)
    res = cli_main("score", "--capture", str(cap), "--corpus", str(mini_corpus), "--json")
    record = json.loads(res.stdout)
    assert record["kind"] == "clean" and record["clean_false_positives"] == 3
    assert res.returncode == 1


def test_silent_reviewer_exits_3(tmp_path: Path, mini_corpus: Path) -> None:
    cap = write(tmp_path, capture())
    res = cli_main(*base_args(cap, mini_corpus, "--kind", "seeded", "--json"))
    assert res.returncode == 3 and json.loads(res.stdout)["outcome"] == "silent"


@pytest.mark.parametrize(("doc_text", "flags", "message"), [
    ("{not json", ["--kind", "seeded"], "cap.json:1: not valid JSON"),
    (json.dumps({"repo": "a/b", "reviews": [], "issue_comments": []}), ["--kind", "seeded"],
     "cap.json: review_comments: missing"),
    (json.dumps({"review_comments": [{"body": "x"}], "reviews": [], "issue_comments": []}),
     ["--kind", "seeded"], "review_comments[0].id: missing"),
    (json.dumps(capture()), ["--kind", "dirty"], "--kind/manifest.kind must be seeded or clean"),
    (json.dumps(capture()), ["--kind", "seeded", "--reviewer", "nobody"], "unknown reviewer profile 'nobody'"),
    (json.dumps(capture()), ["--kind", "seeded", "--floor", "HUGE"], "--floor: unknown severity"),
    (json.dumps(capture()), ["--kind", "seeded", "--mode", "loud"], "must be blind or marked"),
])
def test_bad_input_is_one_line_exit_2_and_writes_nothing(
    tmp_path: Path, mini_corpus: Path, doc_text: str, flags: list[str], message: str
) -> None:
    cap = tmp_path / "cap.json"
    cap.write_text(doc_text)
    hist = tmp_path / "h.jsonl"
    res = cli_main(*base_args(cap, mini_corpus, *flags, "--history", str(hist)))
    assert res.returncode == 2
    assert message in res.stderr and len(res.stderr.strip().splitlines()) == 1
    assert not hist.exists()


def test_unknown_stack_and_missing_capture(tmp_path: Path, mini_corpus: Path) -> None:
    cap = write(tmp_path, capture())
    res = cli_main("score", "--capture", str(cap), "--corpus", str(mini_corpus), "--stack", "cobol",
              "--kind", "seeded")
    assert res.returncode == 2 and "unknown stack 'cobol'" in res.stderr
    res = cli_main("score", "--capture", str(tmp_path / "nope.json"), "--stack", "mini", "--kind", "seeded")
    assert res.returncode == 2 and "nope.json: capture file not found" in res.stderr


def test_history_append_and_baseline_flags_newly_missed_blocker(tmp_path: Path, mini_corpus: Path) -> None:
    hist = tmp_path / "h.jsonl"
    first = write(tmp_path, good_capture(), "one.json")
    res = cli_main(*base_args(first, mini_corpus, "--kind", "seeded", "--history", str(hist),
                         "--run-id", "run-1", "--baseline"))
    assert res.returncode == 0 and "baseline: none" in res.stdout
    worse = capture([inline(APP, 5, "[BLOCKER] secret"), inline(TSX, 7, "[BLOCKER] xss"),
                     inline(TSX, 8, "[MINOR] alt")])
    second = write(tmp_path, worse, "two.json")
    res = cli_main(*base_args(second, mini_corpus, "--kind", "seeded", "--history", str(hist),
                         "--run-id", "run-2", "--baseline", "--json"))
    record = json.loads(res.stdout)
    assert res.returncode == 1
    assert record["baseline"] == {"run_id": "run-1", "newly_missed": [2], "newly_caught": [6]}
    assert "newly missed BLOCKER: SEED 2" in record["gate"]["reasons"]
    lines = hist.read_text().splitlines()
    assert [json.loads(line)["run_id"] for line in lines] == ["run-1", "run-2"]
    with hist.open("a") as fh:
        fh.write("{broken\n")
    res = cli_main(*base_args(second, mini_corpus, "--kind", "seeded", "--history", str(hist),
                         "--run-id", "run-3", "--baseline"))
    assert "h.jsonl:3: corrupt record skipped" in res.stderr
    assert hist.read_text().splitlines()[:3] == [*lines, "{broken"]  # never rewritten


def test_score_is_reproducible_from_the_saved_capture(tmp_path: Path, mini_corpus: Path) -> None:
    cap = write(tmp_path, good_capture())
    saved = tmp_path / "saved.json"
    one = cli_main(*base_args(cap, mini_corpus, "--kind", "seeded", "--json", "--save-capture", str(saved)))
    two = cli_main(*base_args(saved, mini_corpus, "--kind", "seeded", "--json"))
    strip = ("recorded_at", "run_id")
    a = {k: v for k, v in json.loads(one.stdout).items() if k not in strip}
    b = {k: v for k, v in json.loads(two.stdout).items() if k not in strip}
    assert a == b


def test_the_readme_example_capture_scores_as_documented() -> None:
    cap = ROOT / "tests" / "data" / "captures" / "python-bandit-seeded.json"
    res = cli_main("score", "--capture", str(cap))
    assert res.returncode == 1, res.stderr
    readme = (ROOT / "README.md").read_text()
    for line in res.stdout.splitlines()[:8]:  # the documented output is the output
        assert line in readme, line
    assert "core/insecure-randomness" in res.stdout.split("undercalled seeds", 1)[1]
    assert res.stderr == ""  # captured with the current corpus: no fingerprint warning
    assert res.stdout.splitlines()[0] in (ROOT / "README.md").read_text()
    clean = cli_main("score", "--capture", str(cap.with_name("python-bandit-clean.json")), "--json")
    assert clean.returncode == 0 and json.loads(clean.stdout)["clean_false_positives"] == 0
