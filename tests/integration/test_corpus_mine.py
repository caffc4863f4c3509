"""``corpus mine`` on real git histories (docs/mining.md), and the layers it is used in
(docs/corpus.md#layers).

Each test builds a small repository with the real ``git`` and commits that fix real-looking
defects: a Python module whose queries are string-formatted (two hunks, one file that also
holds a provider-shaped key), a Go handler that lacks an authorisation check (a hunk that
only adds lines), beside a vendored file, a binary, a test and a changelog the same fix
touched. The CLI runs in this process (``cli_main``); its output folder is read back from
disk and linted by the CLI.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from redline_canary.corpus.markers import parse_file
from redline_canary.corpus.model import view
from redline_canary.corpus.secrets import find_provider_secrets
from redline_canary.run.corpus_files import load_corpus
from tests.helpers.clirun import ROOT, cli_main

GIT = ["git", "-c", "user.name=Dev", "-c", "user.email=dev@example.invalid", "-c", "commit.gpgsign=false",
       "-c", "init.defaultBranch=main"]
PAYMENT_KEY = "sk_live_" + "51HxQ2eKzT9vLp3RwYb7NcA0"  # Stripe-shaped: push protection would block it

ORDERS = f'''\
"""Order lookups for the shop's back office."""

import sqlite3

PAYMENT_KEY = "{PAYMENT_KEY}"


def search_orders(conn: sqlite3.Connection, customer: str) -> list[tuple]:
    cursor = conn.cursor()
    cursor.execute("SELECT id, total FROM orders WHERE customer = '%s'" % customer)
    return cursor.fetchall()


def count_orders(conn: sqlite3.Connection, status: str) -> int:
    cursor = conn.cursor()
    cursor.execute(f"SELECT COUNT(*) FROM orders WHERE status = '{{status}}'")
    return cursor.fetchone()[0]
'''
ORDERS_FIXED = ORDERS.replace(
    '''"SELECT id, total FROM orders WHERE customer = '%s'" % customer)''',
    '''"SELECT id, total FROM orders WHERE customer = ?", (customer,))''').replace(
    '''f"SELECT COUNT(*) FROM orders WHERE status = '{status}'")''',
    '''"SELECT COUNT(*) FROM orders WHERE status = ?", (status,))''')

HANDLERS = '''\
package server

import "net/http"

// DeleteProject removes a project and everything in it.
func (s *Server) DeleteProject(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if err := s.store.Delete(r.Context(), id); err != nil {
		http.Error(w, "could not delete", http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
'''
HANDLERS_FIXED = HANDLERS.replace('''	id := r.PathValue("id")
''', '''	id := r.PathValue("id")
	if !s.auth.CanAdminister(r.Context(), id) {
		http.Error(w, "forbidden", http.StatusForbidden)
		return
	}
''')


def git(repo: Path, *args: str) -> str:
    return subprocess.run([*GIT, *args], cwd=repo, check=True, capture_output=True, text=True).stdout.strip()


def commit(repo: Path, files: dict[str, str | bytes], message: str) -> str:
    for rel, content in files.items():
        path = repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


@pytest.fixture()
def shop(tmp_path: Path) -> tuple[Path, str, str]:
    """A repository with two fix commits: (path, the SQL fix, the authorisation fix)."""
    repo = tmp_path / "shop"
    repo.mkdir()
    git(repo, "init", "-q")
    commit(repo, {
        "app/orders.py": ORDERS, "server/handlers.go": HANDLERS,
        "vendor/github.com/acme/textutil/trim.go": "package textutil\n\nfunc Trim(s string) string { return s }\n",
        "static/logo.png": b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\1",
        "tests/test_orders.py": "def test_search():\n    assert True\n",
        "CHANGELOG.md": "# Changes\n",
    }, "Order search, project deletion")
    sql_fix = commit(repo, {
        "app/orders.py": ORDERS_FIXED,
        "vendor/github.com/acme/textutil/trim.go": "package textutil\n\nimport \"strings\"\n\n"
                                                   "func Trim(s string) string { return strings.TrimSpace(s) }\n",
        "static/logo.png": b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\2",
        "tests/test_orders.py": "def test_search():\n    assert True\n\n\ndef test_quote():\n    assert True\n",
        "CHANGELOG.md": "# Changes\n\n- order search no longer builds SQL from the customer name\n",
    }, "Bind the customer and status values in order queries\n\nReported by the pentest in March.")
    auth_fix = commit(repo, {"server/handlers.go": HANDLERS_FIXED},
                      "Check the caller may administer a project before deleting it")
    return repo, sql_fix, auth_fix


def mine(*args: str) -> subprocess.CompletedProcess[str]:
    return cli_main("corpus", "mine", *args)


def test_two_fix_commits_in_two_languages_become_a_stack_that_lints(shop: tuple[Path, str, str],
                                                                      tmp_path: Path) -> None:
    repo, sql_fix, auth_fix = shop
    out = tmp_path / "private"
    res = mine("--repo", str(repo), "--fix", sql_fix, "--fix", auth_fix[:10], "--stack", "shop", "--out", str(out),
               "--rule", "core/sql-injection", "--rule", "core/missing-authorization",
               "--severity", "BLOCKER")
    assert res.returncode == 0, res.stdout + res.stderr
    # Every refused file is named with its reason; only the changed source files are kept.
    for path, why in (("vendor/github.com/acme/textutil/trim.go", "vendored"), ("static/logo.png", "binary"),
                      ("tests/test_orders.py", "a test"), ("CHANGELOG.md", "changelog")):
        assert any(path in line and why in line for line in res.stdout.splitlines()), (path, res.stdout)
    for kind in ("seeded", "clean"):
        files = sorted(p.relative_to(out / kind / "shop").as_posix() for p in (out / kind / "shop").rglob("*")
                       if p.is_file())
        assert files == ["app/orders.py", "server/handlers.go"]
    # The markers sit on the lines each fix changed; the twin is the code after the fix.
    orders = (out / "seeded" / "shop" / "app" / "orders.py").read_text()
    parsed = parse_file("app/orders.py", orders)
    lines = orders.splitlines()
    assert [(m.n, m.rule) for m in parsed.seeds_only()] == [(1, "core/sql-injection"), (2, "core/sql-injection")]
    assert "% customer)" in lines[parsed.seeds_only()[0].anchor_line - 1]
    assert "'{status}'" in lines[parsed.seeds_only()[1].anchor_line - 1]
    assert "Bind the customer and status values in order queries" in parsed.seeds_only()[0].description
    handlers = (out / "seeded" / "shop" / "server" / "handlers.go").read_text()
    (seed,) = parse_file("server/handlers.go", handlers).seeds_only()
    assert (seed.n, seed.rule, seed.severity.name) == (3, "core/missing-authorization", "BLOCKER")
    assert handlers.splitlines()[seed.marker_line - 1].startswith("\t// SEED 3 [BLOCKER]")
    assert handlers.splitlines()[seed.anchor_line - 1] == '\tid := r.PathValue("id")'  # before the insertion
    assert (out / "clean" / "shop" / "server" / "handlers.go").read_text() == HANDLERS_FIXED
    # The provider-shaped key is replaced, the same way on both sides, and said so.
    for kind in ("seeded", "clean"):
        text = (out / kind / "shop" / "app" / "orders.py").read_text()
        assert PAYMENT_KEY not in text and list(find_provider_secrets(text)) == []
        assert 'PAYMENT_KEY = "live_' in text
    assert "secret: app/orders.py:5: a Stripe key shape" in res.stdout
    lint = cli_main("corpus", "lint", "--corpus", str(out))
    assert lint.returncode == 0, lint.stdout
    show = json.loads(cli_main("corpus", "show", "--corpus", str(out), "--stack", "shop", "--json").stdout)
    assert show["stacks"]["shop"]["markers"] == 3 and show["stacks"]["shop"]["by_severity"]["BLOCKER"] == 3


def test_a_dry_run_shows_the_markers_and_writes_nothing(shop: tuple[Path, str, str], tmp_path: Path) -> None:
    repo, sql_fix, auth_fix = shop
    out = tmp_path / "private"
    res = mine("--repo", str(repo), "--fix", sql_fix, "--fix", auth_fix, "--stack", "shop", "--out", str(out),
               "--rule", "core/sql-injection", "--rule", "core/missing-authorization", "--dry-run")
    assert res.returncode == 0, res.stdout + res.stderr
    assert not out.exists()
    assert "SEED 3: seeded/shop/server/handlers.go:8 from " in res.stdout
    assert f"{auth_fix[:12]}: [MAJOR] (core/missing-authorization) Check the caller may administer" in res.stdout
    assert "dry run: shop would have 2 file(s) and 3 marker(s) from 2 fix(es) and lints" in res.stdout


def test_one_marker_per_fix_marks_the_other_hunks_as_sites(shop: tuple[Path, str, str], tmp_path: Path) -> None:
    repo, sql_fix, _ = shop
    out = tmp_path / "private"
    res = mine("--repo", str(repo), "--fix", sql_fix, "--stack", "shop", "--out", str(out), "--per", "fix",
               "--rule", "core/sql-injection", "--severity", "BLOCKER")
    assert res.returncode == 0, res.stdout + res.stderr
    parsed = parse_file("app/orders.py", (out / "seeded" / "shop" / "app" / "orders.py").read_text())
    assert [m.n for m in parsed.seeds_only()] == [1] and [m.n for m in parsed.sites()] == [1]
    assert cli_main("corpus", "lint", "--corpus", str(out)).returncode == 0


def test_at_leaves_the_other_hunks_of_a_file_unmarked(shop: tuple[Path, str, str], tmp_path: Path) -> None:
    repo, sql_fix, _ = shop
    out = tmp_path / "private"
    res = mine("--repo", str(repo), "--fix", sql_fix, "--stack", "shop", "--out", str(out),
               "--rule", "core/sql-injection", "--at", "app/orders.py:16")
    assert res.returncode == 0, res.stdout + res.stderr
    assert "1 hunk(s) outside --at" in res.stdout
    (seed,) = parse_file("app/orders.py", (out / "seeded" / "shop" / "app" / "orders.py").read_text()).seeds_only()
    assert seed.severity.name == "MAJOR"  # the default when --severity is not given
    bad = mine("--repo", str(repo), "--fix", sql_fix, "--stack", "shop2", "--out", str(out),
               "--rule", "core/sql-injection", "--at", "app/orders.py:3")
    assert bad.returncode == 2 and "no hunk" in bad.stderr
    assert not (out / "seeded" / "shop2").exists()


@pytest.mark.parametrize(("change", "message"), [
    ({"--repo": "NOT_A_REPO"}, "not a git repository"),
    ({"--fix": "0123456789abcdef0123"}, "no such commit"),
    ({"--fix": "--all"}, "not a commit id"),
    ({"--rule": "core/no-such-rule"}, "not in the rules catalog"),
    ({"--severity": "SEVERE"}, "--severity"),
    ({"--stack": "Bad Name"}, "--stack"),
    ({"--stack": "python"}, "already has a stack of that name"),
])
def test_bad_input_exits_2_with_one_line_and_writes_nothing(shop: tuple[Path, str, str], tmp_path: Path,
                                                            change: dict[str, str], message: str) -> None:
    repo, sql_fix, _ = shop
    (tmp_path / "NOT_A_REPO").mkdir()
    flags = {"--repo": str(repo), "--fix": sql_fix, "--stack": "shop", "--out": str(tmp_path / "private"),
             "--rule": "core/sql-injection"}
    flags.update({k: str(tmp_path / v) if k == "--repo" else v for k, v in change.items()})
    res = mine(*(f"{k}={v}" for k, v in flags.items()))
    assert res.returncode == 2, res.stdout + res.stderr
    assert message in res.stderr and len(res.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "private" / "seeded").exists()


def test_an_existing_stack_is_never_overwritten(shop: tuple[Path, str, str], tmp_path: Path) -> None:
    repo, sql_fix, auth_fix = shop
    out = tmp_path / "private"
    assert mine("--repo", str(repo), "--fix", sql_fix, "--stack", "shop", "--out", str(out),
                "--rule", "core/sql-injection").returncode == 0
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    again = mine("--repo", str(repo), "--fix", auth_fix, "--stack", "shop", "--out", str(out),
                 "--rule", "core/missing-authorization")
    assert again.returncode == 2 and "refusing to overwrite" in again.stderr
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    # Another stack goes beside it in the same folder.
    assert mine("--repo", str(repo), "--fix", auth_fix, "--stack", "projects", "--out", str(out),
                "--rule", "core/missing-authorization").returncode == 0
    assert sorted(p.name for p in (out / "seeded").iterdir()) == ["projects", "shop"]


def test_a_stack_that_would_not_lint_is_not_written(tmp_path: Path) -> None:
    """A fix that only appends at the end of a file leaves the seeded lines around the
    marked one in the twin unchanged: lint would call the defect unfixed, so nothing is
    written and the problem is printed."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    body = "import requests\n\n\ndef fetch(url):\n    return requests.get(url)\n"
    commit(repo, {"net.py": body}, "fetch")
    fix = commit(repo, {"net.py": body + "\n\nTIMEOUT = 10\n"}, "Add a timeout constant")
    out = tmp_path / "private"
    res = mine("--repo", str(repo), "--fix", fix, "--stack", "net", "--out", str(out), "--rule", "core/missing-timeout")
    assert res.returncode == 2
    assert "clean twin identical" in res.stdout and "nothing written" in res.stderr
    assert not out.exists() or not any(out.rglob("*.py"))


def test_a_fix_with_nothing_a_reviewer_reads_is_refused(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    commit(repo, {"package-lock.json": "{}\n", "docs/setup.md": "# Setup\n"}, "start")
    fix = commit(repo, {"package-lock.json": '{"lockfileVersion": 3}\n', "docs/setup.md": "# Setup\n\nRun it.\n"},
                 "Bump lockfile")
    res = mine("--repo", str(repo), "--fix", fix, "--stack", "deps", "--out", str(tmp_path / "out"))
    assert res.returncode == 2 and "no changed file" in res.stderr
    assert "package-lock.json: a lockfile" in res.stdout and "docs/setup.md: documentation" in res.stdout


# --------------------------------------------------------------------------- layers

def _mined(shop: tuple[Path, str, str], out: Path, stack: str = "shop") -> Path:
    repo, sql_fix, _ = shop
    res = mine("--repo", str(repo), "--fix", sql_fix, "--stack", stack, "--out", str(out),
               "--rule", "core/sql-injection", "--severity", "BLOCKER")
    assert res.returncode == 0, res.stdout + res.stderr
    return out


def test_a_private_folder_adds_its_stacks_on_top_of_the_packaged_corpus(shop: tuple[Path, str, str],
                                                                         tmp_path: Path) -> None:
    private = _mined(shop, tmp_path / "private")
    packaged = json.loads(cli_main("corpus", "show", "--json").stdout)["stacks"]
    layered = json.loads(cli_main("corpus", "show", "--json", "--corpus", str(private)).stdout)["stacks"]
    assert set(layered) == set(packaged) | {"shop"}
    # Fingerprints stay per stack: adding a layer changes no packaged stack's.
    assert {s: layered[s]["fingerprint"] for s in packaged} == {s: t["fingerprint"] for s, t in packaged.items()}
    corpus = load_corpus([str(private)])
    assert corpus.layer_of("shop") == "private" and corpus.layer_of("python") == "packaged"
    assert view(corpus, "shop", "seeded").layer == "private"
    assert view(corpus, "go", "clean").layer == "packaged"


def test_a_stack_defined_in_two_folders_is_an_error_naming_both(shop: tuple[Path, str, str], tmp_path: Path) -> None:
    one = _mined(shop, tmp_path / "team-a")
    two = _mined(shop, tmp_path / "team-b")
    res = cli_main("corpus", "lint", "--corpus", str(one), "--corpus", str(two))
    assert res.returncode == 2
    assert "'shop'" in res.stderr and str(one) in res.stderr and str(two) in res.stderr


def test_a_rule_defined_twice_differently_is_an_error_and_an_equal_copy_is_not(
        shop: tuple[Path, str, str], tmp_path: Path) -> None:
    private = _mined(shop, tmp_path / "private")
    extra = tmp_path / "extra"
    (extra / "seeded" / "tiny").mkdir(parents=True)
    (extra / "clean" / "tiny").mkdir(parents=True)
    (extra / "seeded" / "tiny" / "a.py").write_text("x = 1\n")
    (extra / "clean" / "tiny" / "a.py").write_text("x = 1\n")
    catalog = (ROOT / "seeds" / "rules.yml").read_text()
    (extra / "rules.yml").write_text(catalog)
    assert cli_main("corpus", "lint", "--corpus", str(private), "--corpus", str(extra)).returncode == 0
    (extra / "rules.yml").write_text(catalog.replace('title: "SQL injection"', 'title: "SQL injection!"'))
    res = cli_main("corpus", "lint", "--corpus", str(private), "--corpus", str(extra))
    assert res.returncode == 2 and "core/sql-injection" in res.stderr and "differently" in res.stderr


def test_a_complete_corpus_named_first_still_replaces_the_packaged_one(tmp_path: Path) -> None:
    mini = ROOT / "tests" / "data" / "corpus"
    alone = json.loads(cli_main("corpus", "show", "--json", "--corpus", str(mini)).stdout)["stacks"]
    assert sorted(alone) == ["mini"]
    both = json.loads(cli_main("corpus", "show", "--json", "--corpus", "packaged", "--corpus", str(mini)).stdout)
    assert "mini" in both["stacks"] and "python" in both["stacks"]


def test_a_targets_corpus_key_adds_its_folder_for_the_run(shop: tuple[Path, str, str], tmp_path: Path) -> None:
    private = _mined(shop, tmp_path / "private")
    targets = json.dumps([{"repo": "acme/canary-shop", "stack": "shop", "corpus": str(private)},
                          {"repo": "acme/canary-python", "stack": "python"}])
    res = cli_main("targets", "--targets", targets, "--matrix", "--corpus", f"{private}/")
    assert res.returncode == 0, res.stderr  # the same folder twice, spelled two ways, is one layer
    matrix = json.loads(res.stdout.splitlines()[0])
    assert json.loads(matrix["include"][0]["target"])["corpus"] == [str(private)]
    without = cli_main("targets", "--targets", json.dumps([{"repo": "acme/canary-shop", "stack": "shop"}]))
    assert without.returncode == 2 and "unknown stack 'shop'" in without.stderr
    bad = cli_main("targets", "--targets", json.dumps([{"repo": "acme/c", "stack": "shop", "corpus": [3]}]))
    assert bad.returncode == 2 and "[0].corpus" in bad.stderr


def test_a_private_layer_logs_its_own_adjudications_under_the_packaged_rubric(
        shop: tuple[Path, str, str], tmp_path: Path) -> None:
    """The audit of a mined stack ends in decisions; the private folder keeps its own log,
    judged by the rubric of the corpus it layers on, and a decision about a stack that is
    not in that folder is a problem of that log."""
    private = _mined(shop, tmp_path / "private")
    decision = {"id": "shop-001", "stack": "shop", "kind": "clean", "place": "app/orders.py:10",
                "raised_by": ["audit-1-B"], "finding": "the customer name is still trusted",
                "outcome": "rejected", "rationale": "The twin binds the value: no injection is reachable.",
                "rubric": "1.0.0"}
    log = private / "adjudications.yml"
    log.write_text(json.dumps({"rubric": "1.0.0", "decisions": [decision]}))
    res = cli_main("corpus", "lint", "--corpus", str(private))
    assert res.returncode == 0, res.stdout
    log.write_text(json.dumps({"rubric": "1.0.0", "decisions": [{**decision, "stack": "python"}]}))
    res = cli_main("corpus", "lint", "--corpus", str(private))
    assert res.returncode == 2
    assert f"{private}/adjudications.yml:1: decisions[0] (shop-001): stack: 'python' is not a stack" in res.stdout
