"""Every gate option reachable from the command line and from a target."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.helpers.clirun import cli_main


@pytest.fixture()
def corpus(tmp_path: Path, mini_corpus: Path) -> Path:
    dest = tmp_path / "seeds"
    shutil.copytree(mini_corpus, dest)
    return dest


def _key(corpus: Path, tmp_path: Path) -> dict[str, dict[str, object]]:
    key = tmp_path / "key.json"
    cli_main("corpus", "export", "--corpus", str(corpus), "--stack", "mini", "--kind", "seeded",
        "--out", str(tmp_path / "kit"), "--key", str(key))
    return {f"{m['kind']}{m['n']}": m for m in json.loads(key.read_text())["markers"]}


def _findings(tmp_path: Path, key: dict[str, dict[str, object]], rated: str) -> Path:
    """Every seed of the mini corpus found at its own line: each BLOCKER rated ``rated``, the
    others at their marked severity (so no BLOCKER comment is better spent on a neighbour)."""
    items = [{"path": m["path"], "line": m["line"], "body": "problem",
              "severity": rated if m["severity"] == "BLOCKER" else m["severity"]}
             for m in key.values() if m["kind"] == "seed"]
    path = tmp_path / f"found-{rated}.json"
    path.write_text(json.dumps(items))
    return path


def test_blocker_gate_found_passes_a_reviewer_that_rates_one_level_lower(corpus: Path, tmp_path: Path) -> None:
    findings = _findings(tmp_path, _key(corpus, tmp_path), "CRITICAL")
    base = ("score", "--findings", str(findings), "--corpus", str(corpus), "--stack", "mini", "--kind", "seeded",
            "--json")
    caught = cli_main(*base, "--blocker-gate", "caught")  # the strict rule fails it
    assert caught.returncode == 1 and json.loads(caught.stdout)["blocker_found"] == 1.0
    found = cli_main(*base)  # found is the default
    record = json.loads(found.stdout)
    assert found.returncode == 0, record["gate"]
    assert record["gate"]["blocker_gate"] == "found" and record["gate"]["failing_seeds"] == []


def test_an_acknowledgements_file_is_applied_and_an_expired_one_is_exit_2(corpus: Path, tmp_path: Path) -> None:
    key = _key(corpus, tmp_path)
    findings = tmp_path / "f.json"
    blockers = [m for m in key.values() if m["kind"] == "seed" and m["severity"] == "BLOCKER"]
    findings.write_text(json.dumps([{"path": m["path"], "line": m["line"], "severity": "BLOCKER", "body": "x"}
                                    for m in blockers[1:]]))
    acks = tmp_path / "acks.yml"
    acks.write_text(f"acknowledgements:\n  - {{reviewer: alice, stack: mini, seed: {blockers[0]['n']}, "
                    "reason: known gap, until: 2099-01-01, by: bob}\n")
    base = ("score", "--findings", str(findings), "--corpus", str(corpus), "--stack", "mini", "--kind", "seeded",
            "--reviewer-name", "alice", "--json")
    assert cli_main(*base).returncode == 1
    res = cli_main(*base, "--acknowledgements", str(acks))
    assert res.returncode == 0 and json.loads(res.stdout)["gate"]["acknowledged"] == [blockers[0]["n"]]
    acks.write_text(acks.read_text().replace("2099-01-01", "2020-01-01"))
    res = cli_main(*base, "--acknowledgements", str(acks))
    assert res.returncode == 2
    assert "acknowledgements[0] (alice mini SEED" in res.stderr and "expired on 2020-01-01" in res.stderr


def test_targets_take_gate_keys_and_refuse_bad_ones(corpus: Path, tmp_path: Path) -> None:
    good = json.dumps([{"repo": "acme/c", "stack": "mini", "blocker-gate": "found", "floor": "INFO",
                        "baseline": "window:4", "min-recall": 0.5, "require-citation": True}])
    res = cli_main("targets", "--corpus", str(corpus), "--targets", good, "--json")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)[0]["blocker-gate"] == "found"
    for bad, says in ((("blocker-gate", "rated"), "[0].blocker-gate"), (("baseline", "window:0"), "[0].baseline"),
                      (("floor", "LOUD"), "[0].floor"), (("require-citation", "yes"), "[0].require-citation")):
        doc = json.dumps([{"repo": "acme/c", "stack": "mini", bad[0]: bad[1]}])
        res = cli_main("targets", "--corpus", str(corpus), "--targets", doc)
        assert res.returncode == 2 and says in res.stderr, (bad, res.stderr)


def test_gate_refuses_an_expired_acknowledgement(tmp_path: Path) -> None:
    hist = tmp_path / "h.jsonl"
    hist.write_text("")
    acks = tmp_path / "a.yml"
    acks.write_text("acknowledgements:\n"
                    "  - {reviewer: x, stack: go, rule: core/ssrf, reason: r, until: 2001-01-01, by: y}\n")
    res = cli_main("gate", str(hist), "--run-id", "r1", "--acknowledgements", str(acks))
    assert res.returncode == 2 and "expired on 2001-01-01" in res.stderr


def test_the_report_shows_how_a_reviewers_levels_met_the_markers(corpus: Path, tmp_path: Path) -> None:
    findings = _findings(tmp_path, _key(corpus, tmp_path), "CRITICAL")
    hist = tmp_path / "h.jsonl"
    for run in ("w1", "w2"):
        cli_main("score", "--findings", str(findings), "--corpus", str(corpus), "--stack", "mini", "--kind", "seeded",
            "--reviewer-name", "vendor-x", "--run-id", run, "--history", str(hist))
    md = cli_main("report", str(hist)).stdout
    section = md.split("## Calibration", 1)[1]
    table = section.split("### vendor-x", 1)[1]
    # 3 BLOCKERs per run, each given CRITICAL: 6 found one level lower; the rest on the diagonal.
    assert "| marked \\ given | CRITICAL | MAJOR | MINOR | n |" in table, table
    assert "| BLOCKER | 6 | · | · | 6 |" in table and "| MAJOR | · | 4 | · | 4 |" in table
