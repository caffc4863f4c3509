"""A variant through ``redline-canary run`` against the sandbox (docs/corpus.md#variants).

The corpus is a private copy of the test corpus with a variants table: the pushed files must
carry the renames at the canonical lines, the reviewer's comments on those lines must be
matched to the right seeds, and the records must say which variant and which layer they
measured. Every test ends by asserting the sandbox holds no canary PR and no canary branch.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from redline_canary.github.client import CANARY_TOPIC
from redline_canary.sandbox import Batch, Sandbox, ScriptedReviewer
from tests.helpers.clirun import ROOT, cli_main
from tests.helpers.sandboxing import TOKEN, assert_no_canary_left, run_in_process

REPO = "acme/canary-mini"
SCHEMA = json.loads((ROOT / "history" / "schema.json").read_text())
FAST = ["--poll-interval", "0.05", "--stable-polls", "2", "--timeout-minutes", "0.5", "--confirm", "0"]
MANIFEST = """\
variants:
  shipments:
    identifiers: {find_order: find_shipment, order_id: shipment_id, REFUNDED: RETURNED, bio: about}
    names: {web: ui, app: svc}
    strings: {storefront: warehouse}
"""


@pytest.fixture()
def private(tmp_path: Path) -> Path:
    """The test corpus copied to a private folder, with a variants table for its stack."""
    corpus = tmp_path / "private-seeds"
    shutil.copytree(ROOT / "tests" / "data" / "corpus", corpus)
    (corpus / "stacks").mkdir()
    (corpus / "stacks" / "mini.yml").write_text(MANIFEST, encoding="utf-8")
    return corpus


@pytest.fixture()
def sb(in_process_sandbox: Sandbox) -> Iterator[Sandbox]:
    in_process_sandbox.create_repo(REPO, topics=[CANARY_TOPIC])
    yield in_process_sandbox
    assert_no_canary_left(in_process_sandbox, REPO)


def run(sb: Sandbox, tmp_path: Path, corpus: Path, *extra: str) -> tuple[int, list[dict[str, Any]], str]:
    hist = tmp_path / "history.jsonl"
    code, out, err = run_in_process(sb, "--repo", REPO, "--stack", "mini", "--corpus", str(corpus),
                                    "--history", str(hist), "--run-id", "v1", *FAST, *extra,
                                    env={"GITHUB_TOKEN": TOKEN})
    records = [json.loads(line) for line in hist.read_text().splitlines()] if hist.exists() else []
    for r in records:
        jsonschema.validate(r, SCHEMA)
    return code, records, out + err


def test_a_variant_is_published_renamed_and_scored_on_the_canonical_lines(
        sb: Sandbox, private: Path, tmp_path: Path) -> None:
    # Canonical blind lines: the SQL string is pushed line 10, the token line 5, the raw HTML line 7.
    sb.attach_reviewer(REPO, ScriptedReviewer([Batch(after=0.05, inline=[
        {"path": "svc.py", "line": 5, "body": "[BLOCKER] hard-coded API token committed in source"},
        {"path": "svc.py", "line": 10, "body": "[BLOCKER] SQL injection: shipment_id is interpolated into SQL"},
        {"path": "ui/Profile.tsx", "line": 7, "body": "[BLOCKER] XSS: about is rendered as raw HTML"},
    ])]))
    captures = tmp_path / "captures"
    _code, records, out = run(sb, tmp_path, private, "--variant", "shipments", "--save-captures", str(captures))
    seeded = next(r for r in records if r["kind"] == "seeded")
    clean = next(r for r in records if r["kind"] == "clean")
    assert all(r["variant"] == "shipments" and r["layer"] == "private-seeds" and r["schema"] == 3
               for r in records), records
    assert {s["n"] for s in seeded["caught_seeds"]} == {1, 2, 5}
    by_n = {s["n"]: s for s in seeded["caught_seeds"] + seeded["missed_seeds"]}
    assert (by_n[2]["pushed_path"], by_n[2]["pushed_line"]) == ("svc.py", 10)
    assert (by_n[5]["pushed_path"], by_n[5]["pushed_line"]) == ("ui/Profile.tsx", 7)
    assert by_n[4]["symbol"] == "RETURNED"  # the structural marker's symbol is renamed with the code
    assert clean["clean_false_positives"] == 3  # the script says the same on the clean twin
    assert "opened PR #1 (variant shipments)" in out
    # What was pushed: the renamed files at the canonical lines, on both PRs.
    for kind, sql in (("seeded", "'{shipment_id}'"), ("clean", "(shipment_id,)")):
        capture = json.loads(next(captures.glob(f"*-{kind}-1.json")).read_text())
        assert capture["manifest"]["variant"] == "shipments"
        files = sb.files(REPO, capture["pull"]["head"]["sha"])
        files.pop("README.md", None)  # the canary repository's own
        assert sorted(files) == ["svc.py", "ui/Profile.tsx"]
        svc = files["svc.py"].decode().splitlines()
        assert svc[0] == '"""Order lookups for the warehouse."""'
        line = 10 if kind == "seeded" else 11  # the clean twin has its own, longer header
        assert sql in svc[line - 1] and "def find_shipment(" in svc[line - 3]
        text = b"".join(files.values()).decode()
        assert "order_id" not in text and "find_order" not in text and "storefront" not in text
        assert "SEED" not in text and "about" in files["ui/Profile.tsx"].decode()
    # Offline re-scoring of the capture reads the variant from its manifest and agrees.
    saved = next(captures.glob("*-seeded-1.json"))
    again = json.loads(cli_main("score", "--capture", str(saved), "--corpus", str(private), "--json").stdout)
    assert again["variant"] == "shipments" and again["caught"] == seeded["caught"] == 3


def test_auto_picks_from_the_run_id_and_none_publishes_the_canonical_files(
        sb: Sandbox, private: Path, tmp_path: Path) -> None:
    sb.attach_reviewer(REPO, ScriptedReviewer([Batch(after=0.05, inline=[
        {"path": "app.py", "line": 10, "body": "[BLOCKER] SQL injection: order_id is interpolated into SQL"},
    ])]))
    _code, records, _ = run(sb, tmp_path, private)  # the default is none
    assert {r.get("variant", "canonical") for r in records} == {"canonical"}  # written only when used
    seeded = next(r for r in records if r["kind"] == "seeded")
    assert [s["n"] for s in seeded["caught_seeds"]] == [2]
    # auto: a hash of the run id picks the same publication every time for one run id.
    from redline_canary.corpus.variants import choose_variant, parse_variants
    from redline_canary.run.corpus_files import load_corpus

    variants = parse_variants(load_corpus(private), "mini")[0]
    picks = {rid: choose_variant("auto", variants, rid, "mini") for rid in ("v1", "v2", "v3", "v4", "v5", "v6")}
    assert set(picks.values()) == {"canonical", "shipments"}


def test_an_unknown_variant_is_bad_input_naming_the_key(private: Path, tmp_path: Path) -> None:
    target = json.dumps([{"repo": REPO, "stack": "mini", "variant": "nope"}])
    res = cli_main("run", "--targets", target, "--corpus", str(private), "--dry-run", env={"GITHUB_TOKEN": TOKEN})
    assert res.returncode == 2
    assert "--targets: [0].variant: stack mini has no variant 'nope' (known: auto, none, shipments)" in res.stderr
    res = cli_main("run", "--repo", REPO, "--stack", "mini", "--corpus", str(private), "--variant", "nope",
                   "--dry-run", env={"GITHUB_TOKEN": TOKEN})
    assert res.returncode == 2 and "--variant: stack mini has no variant 'nope'" in res.stderr


def test_a_variant_that_does_not_lint_stops_the_run_before_any_request(private: Path, tmp_path: Path) -> None:
    (private / "stacks" / "mini.yml").write_text("variants:\n  bad:\n    identifiers: {order_id: class}\n",
                                                 encoding="utf-8")
    res = cli_main("run", "--repo", REPO, "--stack", "mini", "--corpus", str(private), "--dry-run",
                   env={"GITHUB_TOKEN": TOKEN})
    assert res.returncode == 2 and "stacks/mini.yml:1: variants.bad: identifiers order_id -> class" in res.stderr
    lint = cli_main("corpus", "lint", "--corpus", str(private))
    assert lint.returncode == 2 and "reserved word" in lint.stdout + lint.stderr


def test_a_blind_audit_of_a_variant_exports_and_scores_with_the_same_renames(tmp_path: Path) -> None:
    kit, key = tmp_path / "kit", tmp_path / "key.json"
    res = cli_main("corpus", "export", "--stack", "go", "--kind", "seeded", "--out", str(kit), "--key", str(key),
                   "--variant", "papers")
    assert res.returncode == 0 and "variant papers" in res.stdout
    assert (kit / "internal" / "papers" / "store.go").is_file() and not (kit / "internal" / "docs").exists()
    answer = json.loads(key.read_text())
    assert answer["variant"] == "papers"
    sql = next(m for m in answer["markers"] if m["kind"] == "seed" and m["rule"] == "core/sql-injection")
    pushed = (kit / sql["path"]).read_text().splitlines()[sql["line"] - 1]
    assert "+" in pushed or "Sprintf" in pushed  # the concatenated query, where the key says
    review = tmp_path / "review.json"
    review.write_text(json.dumps([{"path": sql["path"], "line": sql["line"], "severity": "critical",
                                   "title": "SQL injection", "body": "search text concatenated into SQL"}]))
    scored = json.loads(cli_main("score", "--findings", str(review), "--stack", "go", "--kind", "seeded",
                                 "--variant", "papers", "--json").stdout)
    assert scored["variant"] == "papers" and "layer" not in scored  # the packaged layer is not written
    assert [s["n"] for s in scored["caught_seeds"]] == [sql["n"]]
    # Scored against the canonical files instead, the renamed path matches no marker.
    canonical = json.loads(cli_main("score", "--findings", str(review), "--stack", "go", "--kind", "seeded",
                                    "--json").stdout)
    assert "variant" not in canonical and canonical["caught"] == 0


def test_a_targets_variant_key_travels_into_the_workflow_matrix(private: Path) -> None:
    target = json.dumps([{"repo": REPO, "stack": "mini", "variant": "shipments"}])
    res = cli_main("targets", "--targets", target, "--corpus", str(private), "--json")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)[0]["variant"] == "shipments"
    res = cli_main("targets", "--targets", json.dumps([{"repo": REPO, "stack": "mini"}]), "--corpus", str(private),
                   "--json")
    assert "variant" not in json.loads(res.stdout)[0]  # unset: the run's --variant decides


def test_the_report_shows_recall_per_variant_and_the_canonical_variant_gap(
        sb: Sandbox, private: Path, tmp_path: Path) -> None:
    # A reviewer that knows the canonical file by heart: it comments on app.py, never on svc.py.
    sb.attach_reviewer(REPO, ScriptedReviewer([Batch(after=0.05, inline=[
        {"path": "app.py", "line": 5, "body": "[BLOCKER] hard-coded API token committed in source"},
        {"path": "app.py", "line": 10, "body": "[BLOCKER] SQL injection: order_id is interpolated into SQL"},
        {"path": "web/Profile.tsx", "line": 7, "body": "[BLOCKER] XSS: bio is rendered as raw HTML"},
    ])]))
    hist = tmp_path / "history.jsonl"
    for i in range(4):
        for variant in ("none", "shipments"):
            run_in_process(sb, "--repo", REPO, "--stack", "mini", "--corpus", str(private), "--history", str(hist),
                           "--run-id", f"r{i}-{variant}", *FAST, "--variant", variant, env={"GITHUB_TOKEN": TOKEN})
    md = cli_main("report", str(hist)).stdout
    assert "| redline | canonical | 4 | 1.00 (12/12, 95% CI 0.76–1.00)" in md
    assert "| redline | variant | 4 | 0.00 (0/12, 95% CI 0.00–0.24)" in md
    assert ("redline does better on the canonical files than on renamed variants (BLOCKERs found 1.00 (12/12"
            in md)
    assert "| redline | mini | shipments | 4 | 0.00 (0/24" in md
    assert "| redline | mini | canonical | 4 | 0.50 (12/24" in md
    site = tmp_path / "site"
    assert cli_main("report", str(hist), "--html", str(site)).returncode == 0
    page = (site / "index.html").read_text()
    assert "Public vs private, canonical vs variant" in page and "Recall per variant" in page
    assert "does better on the canonical files than on renamed variants" in page
