"""``corpus lint``: every docs/corpus.md rule, all problems at once as file:line, exit 2."""

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


def lint(corpus: Path) -> tuple[int, list[str]]:
    res = cli_main("corpus", "lint", "--corpus", str(corpus))
    return res.returncode, res.stdout.splitlines()


def test_mini_corpus_is_clean(corpus: Path) -> None:
    code, out = lint(corpus)
    assert code == 0 and out == ["ok: 1 stacks, 6 markers, no problems"]


def test_all_problems_are_reported_at_once(corpus: Path) -> None:
    app = corpus / "seeded/mini/app.py"
    text = app.read_text()
    text = text.replace("(core/off-by-one)", "(core/no-such-rule)")
    text = text.replace("SEED 4 [MAJOR] (core/missing-case)", "SEED 2 [BLOCKER] (core/missing-case)")
    text += "\n# SEED 9 [MAJOR] (core/dead-code) nothing below\n"
    text += "# SEED ten [MAJOR] (core/dead-code) bad number\n"
    app.write_text(text)
    (corpus / "clean/mini/web/Profile.tsx").unlink()
    clean_app = corpus / "clean/mini/app.py"
    clean_app.write_text(clean_app.read_text().replace(
        'cur.execute("SELECT * FROM orders WHERE id = ?", (order_id,))',
        "cur.execute(f\"SELECT * FROM orders WHERE id = '{order_id}'\")",
    ).replace("import os\n", "import os\n# SEED 7 [INFO] (core/naming) stray\n"))
    (corpus / "clean/mini/extra.py").write_text("x = 1\n")
    code, out = lint(corpus)
    assert code == 2
    shown = str(corpus)
    expected = [
        f"{shown}/seeded/mini/app.py:16: unknown rule 'core/no-such-rule'",
        f"{shown}/seeded/mini/app.py:21: duplicate SEED 2 (first at {shown}/seeded/mini/app.py:10)",
        f"{shown}/seeded/mini/app.py:21: severity BLOCKER above rule core/missing-case's MAJOR",
        f"{shown}/seeded/mini/app.py:30: marker has no code below it to anchor to",
        f"{shown}/seeded/mini/app.py:31: bad marker grammar",
        f"{shown}/seeded/mini/web/Profile.tsx:1: clean twin missing",
        f"{shown}/clean/mini/extra.py:1: clean file has no seeded counterpart",
        f"{shown}/clean/mini/app.py:4: clean file contains SEED 7",
        f"{shown}/seeded/mini/app.py:10: SEED 2: clean twin identical",
    ]
    for line in expected:
        assert any(o.startswith(line) for o in out), f"missing: {line}\n" + "\n".join(out)


def test_provider_shaped_secrets_are_rejected(corpus: Path) -> None:
    app = corpus / "seeded/mini/app.py"
    fake_aws = "AKIA" + "Z" * 16
    fake_gh = "ghp_" + "a1B2" * 9
    app.write_text(app.read_text().replace(
        '"live_4f9a2c71e8b34d0a9c6f1e2b7d5a8c30"', f'"{fake_aws}"  # also {fake_gh}'))
    code, out = lint(corpus)
    assert code == 2
    assert any("app.py:5: string shaped like a real AWS access key id" in o for o in out)
    assert any("app.py:5: string shaped like a real GitHub token" in o for o in out)


def test_bad_rules_catalog(corpus: Path) -> None:
    (corpus / "rules.yml").write_text("rules:\n  core/x-y: {title: X, severity: HUGE}\n")
    code, out = lint(corpus)
    assert code == 2 and any("rules.core/x-y.severity: unknown severity 'HUGE'" in o for o in out)
    (corpus / "rules.yml").write_text("rules: [unclosed\n")
    res = cli_main("corpus", "lint", "--corpus", str(corpus))
    assert res.returncode == 2 and "rules.yml:2: not valid YAML" in res.stderr


def test_missing_corpus_folder(tmp_path: Path) -> None:
    res = cli_main("corpus", "lint", "--corpus", str(tmp_path / "nope"))
    assert res.returncode == 2 and "corpus folder not found" in res.stderr


def test_show_json_shape_and_fingerprint_tracks_content(corpus: Path) -> None:
    res = cli_main("corpus", "show", "--corpus", str(corpus), "--json")
    data = json.loads(res.stdout)
    mini = data["stacks"]["mini"]
    assert data["total_markers"] == 6
    assert (mini["files"], mini["markers"], mini["structural"]) == (2, 6, 1)
    assert mini["by_severity"] == {"BLOCKER": 3, "CRITICAL": 0, "MAJOR": 2, "MINOR": 1, "INFO": 0}
    before = mini["fingerprint"]
    assert len(before) == 16 and int(before, 16) >= 0
    clean = corpus / "clean/mini/app.py"
    clean.write_text(clean.read_text() + "\n")
    after = json.loads(cli_main("corpus", "show", "--corpus", str(corpus), "--json").stdout)
    assert after["stacks"]["mini"]["fingerprint"] != before
    res = cli_main("corpus", "show", "--corpus", str(corpus), "--stack", "nope")
    assert res.returncode == 2 and "unknown stack 'nope'" in res.stderr


def test_score_refuses_a_stack_whose_answer_key_is_broken(corpus: Path, tmp_path: Path) -> None:
    app = corpus / "seeded/mini/app.py"
    app.write_text(app.read_text().replace("(core/off-by-one)", "(core/no-such-rule)"))
    cap = tmp_path / "cap.json"
    cap.write_text(json.dumps({"repo": "a/b", "review_comments": [], "reviews": [], "issue_comments": []}))
    hist = tmp_path / "h.jsonl"
    res = cli_main("score", "--capture", str(cap), "--corpus", str(corpus), "--stack", "mini", "--kind", "seeded",
              "--history", str(hist))
    assert res.returncode == 2 and "unknown rule 'core/no-such-rule'" in res.stderr
    assert "corpus lint" in res.stderr and not hist.exists()
    assert cli_main("corpus", "show", "--corpus", str(corpus), "--stack", "mini").returncode == 0


def test_byte_code_caches_of_an_installed_corpus_are_not_corpus(corpus: Path) -> None:
    # pip byte-compiles package data: an installed corpus has __pycache__ folders beside it.
    for kind in ("seeded", "clean"):
        cache = corpus / kind / "mini" / "__pycache__"
        cache.mkdir()
        (cache / "app.cpython-311.pyc").write_bytes(b"\xa7\r\r\n\x00\x00binary")
    code, out = lint(corpus)
    assert code == 0, out


ANGULAR = '''import { Component } from "@angular/core";

@Component({
  selector: "app-bio",
  template: `
    <!-- SEED 9 [BLOCKER] (core/xss) the bio is bound as raw HTML -->
    <div [innerHTML]="bio"></div>
  `,
})
export class BioComponent {
  bio = "";
}
'''


def test_marker_text_the_language_cannot_hold_is_a_lint_error_and_never_pushed(corpus: Path) -> None:
    # Redline's corpora put HTML-comment markers in Angular inline templates: in a .ts file
    # they are not comments, so they were silently not parsed and pushed verbatim (the key leaked).
    for kind in ("seeded", "clean"):
        (corpus / kind / "mini" / "web" / "bio.component.ts").write_text(
            ANGULAR if kind == "seeded" else ANGULAR.replace("    <!-- SEED 9 [BLOCKER] (core/xss) the bio is "
                                                             "bound as raw HTML -->\n", ""))
    code, lines = lint(corpus)
    assert code == 2
    assert any(line.endswith("seeded/mini/web/bio.component.ts:6: text shaped like a marker ('SEED 9') is not a "
                             "marker comment of this file's language (comments here open with // /*): blind mode "
                             "would push it to the reviewer") for line in lines), lines
    run = cli_main("run", "--dry-run", "--repo", "acme/canary", "--stack", "mini", "--corpus", str(corpus))
    assert run.returncode == 2 and "bio.component.ts:6" in run.stderr, run.stderr
