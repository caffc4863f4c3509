"""``corpus import --from redline``: a Redline-shaped checkout becomes a corpus lint accepts,
except for the skeleton twins it reports as not fixed yet (issue 15).

``tests/data/redline`` is a synthetic checkout written for these tests in the shapes a Redline
corpus takes: markers in ``#``, ``//``, ``--``, ``/* */``, ``<!-- -->`` and ``{/* */}``
comments, at the end of a code line, in an Angular inline template, in the middle and
across the lines of a block comment, in upper, lower and mixed case with odd spacing, rule
ids with capitals, underscores or no stack, no rule id at all, two markers on one line, an
unknown level, a header that says what the file is, a hidden file, standards Markdown with a
manifest, a fenced example and a "What NOT to flag" section, and the shared clean folder.
A provider-shaped key is added at run time (never stored in this repository).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from redline_canary.corpus.model import lint, publish, view
from redline_canary.run.corpus_files import load_corpus
from tests.helpers.clirun import ROOT, cli_main

CHECKOUT = ROOT / "tests" / "data" / "redline"
AWS_SHAPED = "AKIA" + "7QX2M9RB4TZK6WHP"  # assembled here so no file of this repo holds the shape


@pytest.fixture()
def checkout(tmp_path: Path) -> Path:
    src = tmp_path / "redline"
    shutil.copytree(CHECKOUT, src)
    (src / "seeded" / "python" / "settings.py").write_text(
        "# SEED 1 [BLOCKER] (core/hardcoded-secret) a cloud key committed in settings\n"
        f'AWS_ACCESS_KEY_ID = "{AWS_SHAPED}"\n', encoding="utf-8")
    return src


def run_import(src: Path, out: Path, *extra: str) -> dict[str, Any]:
    done = cli_main("corpus", "import", "--from", "redline", str(src), "--out", str(out), "--json", *extra)
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report


@pytest.fixture()
def imported(checkout: Path, tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    out = tmp_path / "corpus"
    return out, run_import(checkout, out)


def test_report_counts_markers_read_converted_and_rejected_per_stack(imported: tuple[Path, dict[str, Any]]) -> None:
    _out, report = imported
    assert report["markers"] == {"read": 34, "converted": 33, "rejected": 1}
    rows = {name: (s["files"], s["read"], s["converted"], len(s["rejected"])) for name, s in report["stacks"].items()}
    assert rows == {"ops": (7, 11, 11, 0), "python": (3, 13, 12, 1), "web": (3, 10, 10, 0),
                    "shared-clean": (2, 0, 0, 0)}
    assert report["stacks"]["python"]["rejected"] == [
        {"file": "seeded/python/jobs.py", "line": 13,
         "reason": "unknown severity 'MEDIUM' (Redline: BLOCKER, HIGH, SUGGESTION)"}]


def test_human_report_names_every_rejection_with_file_and_line(checkout: Path, tmp_path: Path) -> None:
    done = cli_main("corpus", "import", "--from", "redline", str(checkout), "--out", str(tmp_path / "c"))
    assert done.returncode == 0, done.stderr
    assert "34 markers read, 33 converted (97.1%), 1 rejected" in done.stdout
    assert "rejected: seeded/python/jobs.py:13: unknown severity 'MEDIUM'" in done.stdout
    assert "python                  3    13         12         1               3" in done.stdout


def test_output_lints_except_skeleton_twins_and_the_rejected_marker(imported: tuple[Path, dict[str, Any]]) -> None:
    out, _report = imported
    corpus = load_corpus(out)
    problems = [str(p) for p in lint(corpus)]
    skeleton = [p for p in problems if "(a skeleton from the Redline import: write the fix)" in p]
    rejected = [p for p in problems if "redline-import.yml:1: rejected[0]: Redline's seeded/python/jobs.py:13" in p]
    assert len(rejected) == 1 and "mark it by hand in seeded/python/jobs.py" in rejected[0]
    # Redline's standards carry no reviewer vocabulary: each rule's terms are for the team to
    # write (run and score still measure: topics then come from ids, titles and CWEs).
    terms = [p for p in problems if ".terms: missing: list the words reviewers use for it" in p]
    assert len(terms) == len(corpus.rules)
    assert sorted(problems) == sorted(skeleton + rejected + terms)
    # every converted seed is reported until its twin is written: nothing passes silently
    seeds = sum(len(view(corpus, s, "seeded").seeds) for s in corpus.stacks)
    assert seeds == 33 == len(skeleton)
    cli_lint = cli_main("corpus", "lint", "--corpus", str(out))
    assert cli_lint.returncode == 2 and cli_lint.stdout.count("\n") == len(problems)


def test_numbers_are_unique_per_stack_and_the_side_table_keeps_the_redline_ids(
        imported: tuple[Path, dict[str, Any]]) -> None:
    out, _report = imported
    side = yaml.safe_load((out / "redline-import.yml").read_text(encoding="utf-8"))
    corpus = load_corpus(out)
    for stack in corpus.stacks:
        numbers = [m.n for m in view(corpus, stack, "seeded").seeds]
        assert sorted(numbers) == list(range(1, len(numbers) + 1)), stack
    rows = {(e["stack"], e["n"]): e for e in side["markers"]}
    assert rows[("python", 5)]["from"] == "seeded/python/orders.py#1"
    assert rows[("python", 5)]["line"] == 6
    assert rows[("python", 8)] | {} == {
        "stack": "python", "n": 8, "from": "seeded/python/orders.py#4", "line": 19,
        "redline_severity": "HIGH", "severity": "MAJOR", "rule": "python/mutable-default"}
    assert side["severity_map"] == {"BLOCKER": "BLOCKER", "HIGH": "MAJOR", "SUGGESTION": "MINOR"}
    assert "clean/web/banner.component.ts" in side["skeletons"]


def _seed(out: Path, stack: str, rel: str, n: int) -> tuple[int, str, str, str]:
    corpus = load_corpus(out)
    parsed = view(corpus, stack, "seeded").parsed[rel]
    m = next(m for m in parsed.markers if m.n == n)
    return m.anchor_line, parsed.lines[m.anchor_line - 1].strip(), m.severity.name, m.rule


def test_every_comment_syntax_keeps_its_anchor(imported: tuple[Path, dict[str, Any]]) -> None:
    out, _ = imported
    # an HTML comment inside an Angular template string, rewritten in the file's own syntax
    assert _seed(out, "web", "banner.component.ts", 7)[1] == '<p [innerHTML]="message"></p>'
    # mixed-case trailing marker after template markup: anchored on its own line
    assert _seed(out, "web", "banner.component.ts", 8)[1:] == ("<span>{{ ticks }}</span> // SEED 8 [MAJOR] "
                                                               "(web/effect-derived-state) ticks recomputed by hand",
                                                               "MAJOR", "web/effect-derived-state")
    # the middle line of a block comment, and a marker whose text runs over two lines
    assert _seed(out, "web", "banner.component.ts", 9)[1] == "ngOnInit(): void {"
    assert _seed(out, "web", "banner.component.ts", 10)[1] == "load(): void {"
    # JSX comment with code after it on the same line: the code keeps the anchor
    assert _seed(out, "web", "Checkout.tsx", 6)[1] == "{items.map((item, i) => <li key={i}>{item}</li>)}"
    assert _seed(out, "web", "Checkout.tsx", 5)[1] == "<div dangerouslySetInnerHTML={{ __html: html }} />"
    # lower case, capitals and underscores in the rule id, trailing a code line
    assert _seed(out, "python", "orders.py", 7)[2:] == ("BLOCKER", "python/shell-true")
    # odd spacing, backticks around the rule id, a dash before the text
    assert _seed(out, "python", "orders.py", 9)[1:] == ("try:", "MAJOR", "python/bare-except")
    # a rule id with no stack, and no rule id at all
    assert _seed(out, "python", "orders.py", 10)[3] == "python/print-debugging"
    assert _seed(out, "python", "orders.py", 11)[3] == "core/uncatalogued"
    # two markers on one line: both kept, anchored to that line
    assert _seed(out, "python", "jobs.py", 2)[0] == _seed(out, "python", "jobs.py", 3)[0]
    # SQL, Dockerfile, YAML, HCL (# and //), shell, Markdown, a hidden file renamed
    assert _seed(out, "ops", "schema.sql", 11)[1].startswith("INSERT INTO users")
    assert _seed(out, "ops", "Dockerfile", 2)[1] == "FROM python:latest"
    assert _seed(out, "ops", "ci.yml", 5)[1] == "- uses: actions/checkout@main"
    assert _seed(out, "ops", "main.tf", 10)[1].startswith('variable "region" {}')
    assert _seed(out, "ops", "deploy.sh", 6)[1].startswith("rm -rf $TARGET_DIR/*")
    assert _seed(out, "ops", "RUNBOOK.md", 4)[1] == "ssh $HOST sudo systemctl restart worker-$NAME"
    assert _seed(out, "ops", "dot.env.example", 1)[1] == "PAYMENTS_KEY=pay-live-0c4e9a7d2b6f4183"


def test_blind_publication_of_an_imported_stack_gives_nothing_away(imported: tuple[Path, dict[str, Any]]) -> None:
    out, _ = imported
    corpus = load_corpus(out)
    for stack in corpus.stacks:
        files, markers = publish(corpus, stack, "seeded", "blind")
        text = "\n".join(f.text for f in files)
        for tell in ("SEED", "Seed", "seed ", "DO NOT MERGE", "is shown as an empty banner"):
            assert tell not in text, (stack, tell)
        assert len([m for m in markers if m.marker.kind == "seed"]) == len(view(corpus, stack, "seeded").seeds)


def test_rules_come_from_the_standards_through_the_one_table(imported: tuple[Path, dict[str, Any]]) -> None:
    out, _ = imported
    rules = yaml.safe_load((out / "rules.yml").read_text(encoding="utf-8"))["rules"]
    assert rules["core/hardcoded-secret"] == {"title": "A credential committed to source", "severity": "BLOCKER"}
    assert rules["core/sql-concatenation"]["cwe"] == 89
    assert rules["python/mutable-default"]["severity"] == "MAJOR"  # HIGH
    assert rules["web/key-is-index"]["severity"] == "MINOR"  # SUGGESTION
    assert rules["core/missing-timeout"]["severity"] == "MAJOR"  # a core topic heading defaults to HIGH
    assert rules["ops/unquoted-variable"]["severity"] == "BLOCKER"  # raised: a BLOCKER marker cites it
    assert rules["ops/curl-pipe-shell"]["severity"] == "MAJOR"  # cited, not in the standards: added
    assert "core/not-a-rule" not in rules and "core/style-nit" not in rules  # a fence; "What NOT to flag"
    assert len(rules) == 20


def test_provider_shaped_secrets_are_replaced_and_reported(imported: tuple[Path, dict[str, Any]]) -> None:
    out, report = imported
    [hit] = report["secrets"]
    assert (hit["file"], hit["line"], hit["provider"], hit["replaced"]) == (
        "seeded/python/settings.py", 2, "AWS access key id", True)
    for kind in ("seeded", "clean"):
        text = (out / kind / "python" / "settings.py").read_text(encoding="utf-8")
        assert AWS_SHAPED not in text and hit["replacement"] in text


def test_keep_secrets_only_suggests_and_lint_then_names_the_secret(checkout: Path, tmp_path: Path) -> None:
    out = tmp_path / "kept"
    report = run_import(checkout, out, "--keep-secrets")
    [hit] = report["secrets"]
    assert hit["replaced"] is False and hit["replacement"].startswith("live_")
    problems = [str(p) for p in lint(load_corpus(out))]
    assert any("seeded/python/settings.py:2: string shaped like a real AWS access key id" in p for p in problems)


def test_writing_a_twins_fix_clears_exactly_its_problems(imported: tuple[Path, dict[str, Any]]) -> None:
    out, _ = imported
    twin = out / "clean" / "ops" / "Dockerfile"
    before = [str(p) for p in lint(load_corpus(out))]
    assert len([p for p in before if "/ops/Dockerfile:" in p]) == 2
    fixed = twin.read_text(encoding="utf-8").replace("python:latest", "python:3.12.4-slim")
    twin.write_text(fixed.replace('CMD ["python"', 'USER app\nCMD ["python"'), encoding="utf-8")
    after = [str(p) for p in lint(load_corpus(out))]
    assert sorted(after) == sorted(p for p in before if "/ops/Dockerfile:" not in p)


def test_the_shared_clean_folder_is_a_precision_only_stack(imported: tuple[Path, dict[str, Any]]) -> None:
    out, _ = imported
    corpus = load_corpus(out)
    assert not [p for p in lint(corpus) if "shared-clean" in str(p)]
    assert view(corpus, "shared-clean", "seeded").seeds == []
    assert (out / "clean" / "shared-clean" / "clean_service.py").read_bytes() == (
        CHECKOUT / "seeded" / "clean" / "clean_service.py").read_bytes()
    assert not (out / "seeded" / "README.md").exists()


def test_bad_input_is_one_line_exit_2_and_nothing_written(checkout: Path, tmp_path: Path) -> None:
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "keep.txt").write_text("x", encoding="utf-8")
    done = cli_main("corpus", "import", "--from", "redline", str(checkout), "--out", str(busy))
    assert done.returncode == 2 and "exists and is not an empty folder (nothing was written)" in done.stderr
    assert sorted(p.name for p in busy.iterdir()) == ["keep.txt"]
    empty = tmp_path / "not-redline"
    empty.mkdir()
    done = cli_main("corpus", "import", "--from", "redline", str(empty), "--out", str(tmp_path / "o"))
    assert done.returncode == 2 and done.stderr.strip().endswith("not a Redline checkout (no seeded/ folder)")
    assert not (tmp_path / "o").exists()
