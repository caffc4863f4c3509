"""The answer-key tools a vendor or platform team audits its corpus with (issue: blind export,
findings import, corpus audit, extents, rubric and adjudication log)."""

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


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines()


# --- corpus export --------------------------------------------------------------------
def test_export_writes_exactly_what_the_reviewer_sees_and_the_key_beside_it(corpus: Path, tmp_path: Path) -> None:
    out, key = tmp_path / "kit", tmp_path / "key.json"
    res = cli_main("corpus", "export", "--corpus", str(corpus), "--stack", "mini", "--kind", "seeded",
              "--out", str(out), "--key", str(key))
    assert res.returncode == 0, res.stderr
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert files == ["app.py", "web/Profile.tsx"]
    text = "\n".join(p.read_text() for p in out.rglob("*") if p.is_file())
    assert "SEED" not in text and "BORDERLINE" not in text
    doc = json.loads(key.read_text())
    assert doc["stack"] == "mini" and doc["kind"] == "seeded" and len(doc["corpus_fingerprint"]) == 16
    sql = next(m for m in doc["markers"] if m["kind"] == "seed" and m["n"] == 2)
    pushed = _lines(out / "app.py")
    assert "SELECT * FROM orders" in pushed[sql["line"] - 1]  # the key points at the pushed line
    assert sql["end_line"] == sql["line"]


def test_export_refuses_a_folder_that_holds_anything_and_writes_nothing(corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "kit"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    res = cli_main("corpus", "export", "--corpus", str(corpus), "--stack", "mini", "--kind", "clean", "--out", str(out))
    assert res.returncode == 2 and "--out" in res.stderr
    assert [p.name for p in out.iterdir()] == ["notes.txt"]


def test_export_refuses_a_key_inside_the_kit(corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "kit"
    res = cli_main("corpus", "export", "--corpus", str(corpus), "--stack", "mini", "--kind", "seeded",
              "--out", str(out), "--key", str(out / "key.json"))
    assert res.returncode == 2 and "--key" in res.stderr
    assert not out.exists()


# --- extents -------------------------------------------------------------------------
def test_an_extent_is_mapped_in_blind_mode_and_matches_a_comment_on_its_last_line(corpus: Path, tmp_path: Path) -> None:
    app = corpus / "seeded/mini/app.py"
    app.write_text(app.read_text().replace(
        "# SEED 3 [MAJOR] (core/off-by-one) drops", "# SEED 3 [MAJOR] (core/off-by-one) {lines: 2} drops"))
    app.write_text(app.read_text().replace(
        "    return items[start : start + size - 1]\n",
        "    return items[start : start + size - 1]\n    # the page ends one early\n"))
    key = tmp_path / "key.json"
    res = cli_main("corpus", "export", "--corpus", str(corpus), "--stack", "mini", "--kind", "seeded",
              "--out", str(tmp_path / "kit"), "--key", str(key))
    assert res.returncode == 0, res.stderr
    off = next(m for m in json.loads(key.read_text())["markers"] if m["n"] == 3)
    assert off["end_line"] == off["line"] + 1
    findings = tmp_path / "f.json"
    findings.write_text(json.dumps([{"path": "app.py", "line": off["end_line"], "severity": "MAJOR",
                                     "body": "page drops its last item"}]))
    res = cli_main("score", "--findings", str(findings), "--corpus", str(corpus), "--stack", "mini",
              "--kind", "seeded", "--window", "0", "--json")
    record = json.loads(res.stdout)
    # With no window at all, only the extent can take a comment one line below the anchor.
    assert [s["n"] for s in record["caught_seeds"]] == [3]
    assert record["caught_seeds"][0]["evidence"]["distance"] == 0


def test_lint_refuses_an_extent_past_the_end_or_over_another_marker(corpus: Path) -> None:
    app = corpus / "seeded/mini/app.py"
    text = app.read_text()
    text = text.replace("(core/sql-injection) order id", "(core/sql-injection) {lines: 9} order id")
    text = text.replace("# BORDERLINE 1 float", "# BORDERLINE 1 float")
    text = text.replace("(core/missing-case) {symbol: REFUNDED}", "(core/missing-case) {symbol: REFUNDED} {lines: 99}")
    app.write_text(text)
    res = cli_main("corpus", "lint", "--corpus", str(corpus))
    assert res.returncode == 2
    assert "runs into the marker comment on line 16" in res.stdout
    assert "{lines: 99}" in res.stdout


# --- score --findings ----------------------------------------------------------------
def _export_key(corpus: Path, tmp_path: Path, kind: str) -> dict[str, dict[str, object]]:
    key = tmp_path / f"key-{kind}.json"
    cli_main("corpus", "export", "--corpus", str(corpus), "--stack", "mini", "--kind", kind,
        "--out", str(tmp_path / f"kit-{kind}"), "--key", str(key))
    return {f"{m['kind']}{m['n']}": m for m in json.loads(key.read_text())["markers"]}


def test_findings_json_scores_like_a_capture_with_evidence_and_blocker_found(corpus: Path, tmp_path: Path) -> None:
    key = _export_key(corpus, tmp_path, "seeded")
    findings = tmp_path / "f.json"
    findings.write_text(json.dumps([
        {"path": "app.py", "line": key["seed1"]["line"], "severity": "critical", "title": "Token in source",
         "body": "a live API token is committed"},
        {"path": "app.py", "line": key["seed2"]["line"], "end_line": key["seed2"]["line"], "severity": "high",
         "body": "SQL built with an f-string", "rule": "core/sql-injection"},
    ]))
    res = cli_main("score", "--findings", str(findings), "--corpus", str(corpus), "--stack", "mini", "--kind",
              "seeded", "--reviewer-name", "alice", "--json")
    assert res.returncode == 1, res.stderr  # SQL injection found but rated high (CRITICAL): gate fails
    record = json.loads(res.stdout)
    assert record["schema"] == 3 and record["reviewer"] == "alice"
    assert record["blocker_recall"] == 0.3333 and record["blocker_found"] == 0.6667  # of 3 BLOCKERs
    under = record["undercalled_seeds"][0]
    assert under["n"] == 2
    assert under["evidence"]["severity"] == "CRITICAL" and under["evidence"]["word"] == "high"
    assert under["evidence"]["excerpt"] == "SQL built with an f-string"
    caught = record["caught_seeds"][0]["evidence"]
    assert caught["word"] == "critical" and caught["excerpt"].startswith("Token in source")


def test_sarif_maps_security_severity_and_level(corpus: Path, tmp_path: Path) -> None:
    key = _export_key(corpus, tmp_path, "seeded")
    sarif = {"version": "2.1.0", "runs": [{
        "tool": {"driver": {"name": "x", "rules": [
            {"id": "py/sql", "properties": {"security-severity": "9.8"}},
            {"id": "py/page", "defaultConfiguration": {"level": "warning"}}]}},
        "results": [
            {"ruleId": "py/sql", "message": {"text": "query built from input"},
             "locations": [{"physicalLocation": {"artifactLocation": {"uri": "app.py"},
                                                 "region": {"startLine": key["seed2"]["line"]}}}]},
            {"ruleId": "py/page", "message": {"text": "slice drops an item"},
             "locations": [{"physicalLocation": {"artifactLocation": {"uri": "./app.py"},
                                                 "region": {"startLine": key["seed3"]["line"]}}}]},
            {"ruleId": "py/nowhere", "message": {"text": "file level"}, "locations": []},
        ]}]}
    path = tmp_path / "r.sarif"
    path.write_text(json.dumps(sarif))
    res = cli_main("score", "--findings", str(path), "--corpus", str(corpus), "--stack", "mini", "--kind", "seeded",
              "--json")
    record = json.loads(res.stdout)
    caught = {s["n"]: s["evidence"] for s in record["caught_seeds"]}
    assert set(caught) == {2, 3}
    assert caught[2]["severity"] == "BLOCKER" and caught[2]["word"] == "security-severity 9.8"
    assert caught[3]["severity"] == "MAJOR" and caught[3]["word"] == "warning"
    assert record["findings"] == 2


@pytest.mark.parametrize(("doc", "says"), [
    ({"nope": 1}, "top level"),
    ([{"path": "app.py", "line": 3, "severity": "urgent", "body": "x"}], "[0].severity: unknown severity"),
    ([{"path": "../etc/passwd", "line": 3, "severity": "MAJOR", "body": "x"}], "[0].path"),
    ([{"path": "app.py", "line": 0, "severity": "MAJOR", "body": "x"}], "[0].line"),
    ([{"path": "app.py", "line": 2, "severity": "MAJOR"}], "[0]: needs a body or a title"),
    ({"version": "2.1.0", "runs": [{"results": [{"message": {}}]}]}, "runs[0].results[0].message.text"),
])
def test_a_bad_findings_file_is_one_line_naming_the_key(corpus: Path, tmp_path: Path, doc: object, says: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    history = tmp_path / "h.jsonl"
    res = cli_main("score", "--findings", str(path), "--corpus", str(corpus), "--stack", "mini", "--kind", "seeded",
              "--history", str(history))
    assert res.returncode == 2
    assert says in res.stderr and str(path) in res.stderr and len(res.stderr.strip().splitlines()) == 1
    assert not history.exists()


def test_an_empty_findings_list_is_a_clean_pass_not_silence(corpus: Path, tmp_path: Path) -> None:
    path = tmp_path / "none.json"
    path.write_text("[]")
    res = cli_main("score", "--findings", str(path), "--corpus", str(corpus), "--stack", "mini", "--kind", "clean",
              "--json")
    record = json.loads(res.stdout)
    assert res.returncode == 0 and record["outcome"] == "scored" and record["clean_false_positives"] == 0


# --- corpus audit --------------------------------------------------------------------
def test_audit_lists_clean_flags_noise_and_undercalls_grouped_by_place(corpus: Path, tmp_path: Path) -> None:
    seeded, clean = _export_key(corpus, tmp_path, "seeded"), _export_key(corpus, tmp_path, "clean")
    history = tmp_path / "reviews.jsonl"
    line2 = int(str(seeded["seed2"]["line"]))
    seeded_findings = [
        {"path": "app.py", "line": line2, "severity": "high", "body": "SQL injection"},  # undercall at the line
        {"path": "web/Profile.tsx", "line": 1, "severity": "medium", "body": "unrelated but real?"},
    ]
    clean_findings = [{"path": "app.py", "line": 11, "severity": "MAJOR", "body": "still injectable"}]
    for who, kind, items in (("ann", "seeded", seeded_findings), ("bob", "clean", clean_findings),
                             ("cy", "clean", clean_findings)):
        path = tmp_path / f"{who}.json"
        path.write_text(json.dumps(items))
        res = cli_main("score", "--findings", str(path), "--corpus", str(corpus), "--stack", "mini", "--kind", kind,
                  "--reviewer-name", who, "--history", str(history))
        assert res.returncode in (0, 1), res.stderr
    md = tmp_path / "work.md"
    res = cli_main("corpus", "audit", str(history), "--corpus", str(corpus), "--json", "--markdown", str(md))
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    entries = doc["entries"]
    assert doc["reviews"] == 3
    cats = sorted((e["kind"], e["category"], e["reviewer"]) for e in entries)
    assert ("seeded", "undercall", "ann") in cats
    assert ("clean", "clean", "bob") in cats and ("clean", "clean", "cy") in cats
    clean_entries = [e for e in entries if e["category"] == "clean"]
    assert len({e["group"] for e in clean_entries}) == 1  # two reviews of one place: one decision
    assert clean_entries[0]["corpus_path"] == "app.py"
    assert "still injectable" in md.read_text()
    assert clean is not None


CAPTURE = Path(__file__).resolve().parents[1] / "data" / "captures" / "python-bandit-seeded.json"


def test_audit_reads_the_record_score_json_prints_and_a_json_array_of_records(tmp_path: Path) -> None:
    """``score --json > record.json`` writes one pretty-printed record: ``corpus audit``
    reads it (and a JSON array of records) instead of skipping each of its lines."""
    scored = cli_main("score", "--capture", str(CAPTURE), "--run-id", "r1", "--json")
    assert scored.returncode == 1, scored.stderr  # bandit misses the BLOCKERs
    one = tmp_path / "record.json"
    one.write_text(scored.stdout)
    assert len(scored.stdout.splitlines()) > 100
    res = cli_main("corpus", "audit", str(one), "--json")
    assert res.returncode == 0 and res.stderr == "", res.stderr
    assert json.loads(res.stdout)["reviews"] == 1
    record = json.loads(scored.stdout)
    array = tmp_path / "records.json"
    array.write_text(json.dumps([record, {**record, "run_id": "r2"}], indent=2))
    res = cli_main("corpus", "audit", str(array), str(one))
    assert res.returncode == 0 and res.stderr == "", res.stderr
    assert res.stdout.splitlines()[-1].endswith("from 3 scored review(s)")


def test_audit_says_in_one_line_per_file_what_it_could_not_read(tmp_path: Path) -> None:
    scored = cli_main("score", "--capture", str(CAPTURE), "--run-id", "r1", "--json")
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text(json.dumps(json.loads(scored.stdout)) + "\n" + "oops\n" * 40)
    res = cli_main("corpus", "audit", str(mixed))
    assert res.returncode == 0 and "from 1 scored review(s)" in res.stdout
    assert res.stderr.splitlines() == [f"{mixed}: skipped 40 line(s) that are not records (line 2: not valid JSON "
                                       "(Expecting value))"]
    notes = tmp_path / "notes.md"
    notes.write_text("# Review notes\n\n" + "- a finding\n" * 500)
    res = cli_main("corpus", "audit", str(notes), str(mixed))
    assert res.returncode == 2 and res.stdout == ""
    assert len(res.stderr.splitlines()) == 1 and res.stderr.startswith(f"redline-canary: {notes}: no record "), \
        res.stderr


# --- rubric and adjudication log -----------------------------------------------------
def _with_log(corpus: Path, log: str, rubric: str = "# Rubric\n\nVersion: 1.2.0\n") -> tuple[int, str]:
    (corpus / "RUBRIC.md").write_text(rubric)
    (corpus / "adjudications.yml").write_text(log)
    res = cli_main("corpus", "lint", "--corpus", str(corpus))
    return res.returncode, res.stdout


GOOD_ENTRY = """\
  - id: mini-001
    stack: mini
    kind: clean
    place: "app.py:3"
    raised_by: [ann]
    finding: import is unused
    outcome: rejected
    rationale: the import is used by find_order below
    rubric: 1.1.0
"""


def test_a_good_log_lints_clean(corpus: Path) -> None:
    code, out = _with_log(corpus, "rubric: 1.2.0\ndecisions:\n" + GOOD_ENTRY)
    assert code == 0, out


@pytest.mark.parametrize(("log", "rubric", "says"), [
    ("rubric: 1.1.0\ndecisions:\n" + GOOD_ENTRY, None, "does not agree"),
    ("rubric: 1.2.0\ndecisions:\n" + GOOD_ENTRY.replace("app.py:3", "app.py:900"), None, "past the end"),
    ("rubric: 1.2.0\ndecisions:\n" + GOOD_ENTRY.replace("app.py:3", "gone.py:3"), None, "no longer exists"),
    ("rubric: 1.2.0\ndecisions:\n" + GOOD_ENTRY.replace("the import is used by find_order below", "ok"), None,
     "rationale"),
    ("rubric: 1.2.0\ndecisions:\n" + GOOD_ENTRY.replace("rejected", "shrugged"), None, "outcome"),
    ("rubric: 1.2.0\ndecisions:\n" + GOOD_ENTRY.replace("rubric: 1.1.0", "rubric: 0.9.0"), None, "major change"),
    ("rubric: 1.2.0\ndecisions:\n" + GOOD_ENTRY + GOOD_ENTRY, None, "duplicate"),
    ("rubric: 1.2.0\ndecisions:\n" + GOOD_ENTRY, "# Rubric without a version\n", "Version"),
])
def test_the_log_is_checked_against_the_rubric_and_the_corpus(corpus: Path, log: str, rubric: str | None,
                                                              says: str) -> None:
    code, out = _with_log(corpus, log, rubric or "# Rubric\n\nVersion: 1.2.0\n")
    assert code == 2 and says in out, out


def test_the_shipped_rubric_and_log_agree() -> None:
    root = Path(__file__).resolve().parents[2] / "seeds"
    assert "Version: " in (root / "RUBRIC.md").read_text()
    res = cli_main("corpus", "lint")
    assert res.returncode == 0, res.stdout


def test_the_exported_key_lists_a_markers_sites_where_the_reviewer_sees_them(tmp_path: Path) -> None:
    """vue SEED 17 (stored XSS rendered with v-html) has a SITE where the HTML is built."""
    key = tmp_path / "key.json"
    res = cli_main("corpus", "export", "--stack", "vue", "--kind", "seeded", "--out", str(tmp_path / "kit"),
                   "--key", str(key))
    assert res.returncode == 0, res.stderr
    seed = next(m for m in json.loads(key.read_text())["markers"] if m["kind"] == "seed" and m["n"] == 17)
    (site,) = seed["sites"]
    kit_file = (tmp_path / "kit" / site["path"]).read_text().splitlines()
    assert "memo.replace" in kit_file[site["line"] - 1]  # the line the reviewer sees builds the HTML
    assert "SITE" not in (tmp_path / "kit" / site["path"]).read_text()
