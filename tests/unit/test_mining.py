"""``corpus mine``'s pure core (docs/mining.md): hunks, refusals, where markers go, what they say."""

from __future__ import annotations

import pytest

from redline_canary.corpus.markers import parse_file
from redline_canary.corpus.mining import (
    FileChange,
    Fix,
    Hunk,
    clean_description,
    content_refusal,
    mine,
    parse_at,
    parse_hunks,
    refusal,
    select_hunks,
    sites,
    with_term,
)
from redline_canary.corpus.secrets import find_provider_secrets
from redline_canary.corpus.severity import Severity

FIX = Fix("a" * 40, "the user name is formatted into the SQL string", Severity.BLOCKER, "core/sql-injection")

BEFORE = """\
import sqlite3


def find_user(conn, name):
    cursor = conn.cursor()
    cursor.execute("SELECT id FROM users WHERE name = '%s'" % name)
    return cursor.fetchone()


def delete_user(conn, user_id, actor):
    cursor = conn.cursor()
    cursor.execute("DELETE FROM users WHERE id = ?", (user_id,))
    return True
"""


def test_hunk_headers_give_both_sides_ranges() -> None:
    diff = "diff --git a/x b/x\n@@ -6 +6 @@ def f():\n-a\n+b\n@@ -10,0 +11,2 @@\n+c\n+d\n@@ -20,3 +22 @@\n"
    assert parse_hunks(diff) == (Hunk(6, 1, 6, 1), Hunk(10, 0, 11, 2), Hunk(20, 3, 22, 1))


def test_the_clean_twin_carries_a_fixed_line_where_the_fix_changed_it() -> None:
    """A mined twin is real code: it is claimed clean where the fix changed it, and only
    there (docs/corpus.md#fixed-places)."""
    after = BEFORE.replace("""'%s'" % name)""", """?", (name,))""").replace(
        "    cursor = conn.cursor()\n    cursor.execute(\"DELETE",
        "    if not actor.is_admin:\n        raise PermissionError(actor)\n    cursor = conn.cursor()\n"
        "    cursor.execute(\"DELETE")
    mined = mine([_change("app/users.py", BEFORE, after, (Hunk(6, 1, 6, 1), Hunk(10, 0, 11, 2)))])
    clean = parse_file("app/users.py", mined.clean["app/users.py"])
    assert clean.problems == []
    fixed = [m for m in clean.markers if m.kind == "fixed"]
    lines = mined.clean["app/users.py"].splitlines()
    assert [(m.n, m.lines) for m in fixed] == [(1, 1), (2, 2)]
    assert "(name,))" in lines[fixed[0].anchor_line - 1]  # the bound query
    assert lines[fixed[1].anchor_line - 1].strip() == "if not actor.is_admin:"  # the added check
    assert "\n".join(ln for ln in lines if "FIXED" not in ln) + "\n" == after  # nothing else changed
    assert [(p.kind, p.n) for p in mined.placed if p.kind == "fixed"] == [("fixed", 1), ("fixed", 2)]


def test_a_changed_block_is_marked_from_its_first_to_its_last_code_line() -> None:
    text = "a = 1\n\n# note\nb = 2\nc = 3\n\nd = 4\n"
    ranges, notes = sites(text, "m.py", [Hunk(2, 4)])  # blank, comment, b, c
    assert ranges == [(4, 5)] and notes == []


def test_an_insertion_marks_the_code_line_before_it() -> None:
    ranges, _ = sites(BEFORE, "u.py", [Hunk(10, 0)])  # lines inserted after `def delete_user`
    assert ranges == [(10, 10)]
    ranges, _ = sites(BEFORE, "u.py", [Hunk(9, 0)])  # after a blank line: the code line above it
    assert ranges == [(7, 7)]


def test_overlapping_places_merge_and_a_long_block_is_cut_to_sixty_lines() -> None:
    text = "".join(f"x{i} = {i}\n" for i in range(1, 101))
    ranges, notes = sites(text, "m.py", [Hunk(5, 3), Hunk(7, 0), Hunk(20, 70)])
    assert ranges == [(5, 7), (20, 79)]
    assert len(notes) == 1 and "cut to 60" in notes[0]


@pytest.mark.parametrize(("path", "status", "why"), [
    ("vendor/github.com/x/y.go", "M", "vendored"),
    ("web/node_modules/lodash/index.js", "M", "vendored"),
    ("third_party/lib.c", "M", "vendored"),
    ("package-lock.json", "M", "lockfile"),
    ("go.sum", "M", "lockfile"),
    ("static/app.min.js", "M", "generated"),
    ("api/v1/service_pb2.py", "M", "generated"),
    ("tqdm.egg-info/PKG-INFO", "M", "metadata"),
    ("tests/test_users.py", "M", "test"),
    ("pkg/users_test.go", "M", "test"),
    ("src/app.spec.ts", "M", "test"),
    ("CHANGES.rst", "M", "changelog"),
    ("docs/guide.md", "M", "documentation"),
    (".github/workflows/ci.yml", "M", "hidden"),
    ("app/new_module.py", "A", "added by the fix"),
    ("app/old_module.py", "D", "deleted by the fix"),
])
def test_files_that_are_not_the_teams_defects_are_refused_with_a_reason(path: str, status: str, why: str) -> None:
    reason = refusal(path, status)
    assert reason is not None and why in reason


@pytest.mark.parametrize("path", ["../outside.py", "app/../../x.py", "/etc/passwd.py", "app//x.py", "a\\b.py",
                                  "app/\udcffname.py", "app/new\nline.py"])
def test_a_path_that_could_escape_the_stack_is_refused(path: str) -> None:
    assert "unsafe" in (refusal(path, "M") or "")


def test_ordinary_source_files_are_kept() -> None:
    for path in ("app/views.py", "cmd/server/main.go", "src/components/Login.tsx", "config/settings.yml"):
        assert refusal(path, "M") is None, path
    assert refusal("app/link.py", "M", "120000") == "a symbolic link"


def test_binary_undecodable_and_generated_contents_are_refused() -> None:
    assert content_refusal(b"GIF89a\0\0\1") == "a binary file"
    assert "UTF-8" in (content_refusal(b"caf\xe9 = 1\n") or "")
    assert "generated" in (content_refusal(b"// Code generated by protoc-gen-go. DO NOT EDIT.\npackage x\n") or "")
    assert content_refusal(b"package main\n\nfunc main() {}\n") is None


def test_a_description_is_one_line_without_comment_closers() -> None:
    assert clean_description("Fix */ XSS\n\nin the --> template", "x") == "Fix XSS in the template"
    assert clean_description("   ", "fixed in abc") == "fixed in abc"
    assert clean_description("Fix \x1b[31mred\x1b[0m \u202eevil", "x") == "Fix [31mred [0m evil"
    assert clean_description("{symbol: Cart} total is wrong", "x") == "(symbol: Cart} total is wrong"
    assert len(clean_description("word " * 100, "x")) <= 200


def test_a_description_without_a_term_of_its_rule_names_the_rule() -> None:
    assert with_term("cli: eval safety", ["code injection"], 94, False) == "cli: eval safety (CWE-94)"
    assert with_term("Fix the cart", ["logic error"], None, False) == "Fix the cart (logic error)"
    assert with_term("an SQL injection", ["sql injection"], 89, True) == "an SQL injection"


def test_at_selects_the_hunks_touching_the_given_lines() -> None:
    assert parse_at("tqdm/cli.py:35") == ("tqdm/cli.py", (35, 35))
    assert parse_at("a:b.py:3-9") == ("a:b.py", (3, 9))
    for bad in ("cli.py", "cli.py:0", "cli.py:9-3", ":4"):
        with pytest.raises(ValueError):
            parse_at(bad)
    hunks = (Hunk(24, 1), Hunk(30, 1), Hunk(32, 9), Hunk(50, 0))
    assert select_hunks(hunks, [(35, 35)]) == (Hunk(32, 9),)
    assert select_hunks(hunks, [(51, 51)]) == (Hunk(50, 0),)


def _change(path: str, before: str, after: str, hunks: tuple[Hunk, ...], fix: Fix = FIX) -> FileChange:
    return FileChange(fix, path, before.encode(), after.encode(), hunks)


def test_one_seed_per_hunk_with_its_extent_at_the_lines_the_fix_changed() -> None:
    after = BEFORE.replace("""'%s'" % name)""", """?", (name,))""").replace(
        "    cursor = conn.cursor()\n    cursor.execute(\"DELETE",
        "    if not actor.is_admin:\n        raise PermissionError(actor)\n    cursor = conn.cursor()\n"
        "    cursor.execute(\"DELETE")
    mined = mine([_change("app/users.py", BEFORE, after, (Hunk(6, 1), Hunk(10, 0)))])
    assert mined.clean == {"app/users.py": after}
    parsed = parse_file("app/users.py", mined.seeded["app/users.py"])
    assert parsed.problems == []
    seeds = parsed.seeds_only()
    assert [(m.n, m.severity, m.rule, m.lines) for m in seeds] == [
        (1, Severity.BLOCKER, "core/sql-injection", 1), (2, Severity.BLOCKER, "core/sql-injection", 1)]
    lines = mined.seeded["app/users.py"].splitlines()
    assert "% name)" in lines[seeds[0].anchor_line - 1]  # the injected line itself
    assert lines[seeds[1].anchor_line - 1].startswith("def delete_user")  # the line before the insertion
    assert lines[seeds[0].marker_line - 1] == "    # SEED 1 [BLOCKER] (core/sql-injection) " + FIX.description
    assert [(p.n, p.line) for p in mined.placed] == [(1, seeds[0].anchor_line), (2, seeds[1].anchor_line)]
    # Removing the markers gives back the file before the fix, byte for byte.
    assert "\n".join(ln for ln in lines if "SEED" not in ln) + "\n" == BEFORE


def test_a_multi_line_block_gets_a_lines_extent_and_the_comment_syntax_of_its_language() -> None:
    head = "package users\n\nfunc Find(db *sql.DB, name string) {\n"
    before = head + "\tq := \"SELECT id FROM users WHERE name = '\" +\n\t\tname + \"'\"\n\tdb.Query(q)\n}\n"
    after = head + "\tdb.Query(\"SELECT id FROM users WHERE name = $1\", name)\n}\n"
    mined = mine([_change("users/find.go", before, after, (Hunk(4, 3),))])
    seeded = mined.seeded["users/find.go"]
    assert "\t// SEED 1 [BLOCKER] (core/sql-injection) {lines: 3} " in seeded
    (seed,) = parse_file("users/find.go", seeded).seeds_only()
    assert (seed.anchor_line, seed.last_line) == (5, 7)
    css = mine([_change("site/app.css", "a {\n  color: red;\n}\n", "a {\n  color: blue;\n}\n", (Hunk(2, 1),))])
    assert "  /* SEED 1 [BLOCKER] (core/sql-injection) " in css.seeded["site/app.css"]
    assert css.seeded["site/app.css"].splitlines()[1].endswith(" */")


def test_per_fix_puts_one_seed_on_the_largest_block_and_sites_on_the_others() -> None:
    before = "".join(f"v{i} = {i}\n" for i in range(1, 31))
    after = before.replace("v3 = 3\n", "v3 = 33\n").replace("v10 = 10\nv11 = 11\n", "v10 = 0\nv11 = 0\n")
    mined = mine([_change("m.py", before, after, (Hunk(3, 1), Hunk(10, 2)))], per="fix")
    parsed = parse_file("m.py", mined.seeded["m.py"])
    (seed,) = parsed.seeds_only()
    (site,) = parsed.sites()
    assert seed.lines == 2 and mined.seeded["m.py"].splitlines()[seed.anchor_line - 1] == "v10 = 10"
    assert site.n == seed.n and mined.seeded["m.py"].splitlines()[site.anchor_line - 1] == "v3 = 3"


def test_provider_shaped_secrets_are_replaced_the_same_way_on_both_sides() -> None:
    key = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
    before = f'STRIPE_KEY = "{key}"\nTIMEOUT = 5\n'
    after = f'STRIPE_KEY = "{key}"\nTIMEOUT = 30\n'
    fix = Fix("b" * 40, "the payment call waits forever with no timeout", Severity.MAJOR, "core/missing-timeout")
    mined = mine([_change("billing/config.py", before, after, (Hunk(2, 1),), fix)])
    for text in (mined.seeded["billing/config.py"], mined.clean["billing/config.py"]):
        assert key not in text and list(find_provider_secrets(text)) == []
    stand_in = mined.clean["billing/config.py"].splitlines()[0]
    assert stand_in in mined.seeded["billing/config.py"]
    assert [(h.line, h.provider) for h in mined.secrets] == [(1, "Stripe key"), (1, "Stripe key")]
