"""Per-run variants (docs/corpus.md#variants): renames that never move a line, and the lint that holds them."""

from __future__ import annotations

from typing import Any

import pytest

from redline_canary.corpus.model import CorpusData, Rule, lint, publish
from redline_canary.corpus.severity import Severity
from redline_canary.corpus.variants import (
    CANONICAL,
    Variant,
    VariantBroken,
    _syntax_problem,
    choose_variant,
    lint_variants,
    parse_variants,
    publish_variant,
    rename_path,
)

SEEDED = (
    "# Invoice lookups.\n"
    "import sqlite3\n"
    "\n"
    "API_HOST = \"api.acme.test\"\n"
    "\n"
    "\n"
    "def find_invoice(db, invoice_id):\n"
    "    # SEED 1 [BLOCKER] (core/sql-injection) invoice_id is interpolated into the query, an SQL injection\n"
    "    return db.execute(f\"SELECT * FROM invoices WHERE id = {invoice_id}\")\n"
    "\n"
    "\n"
    "def total(rows):\n"
    "    return sum(r.amount for r in rows)\n"
)
CLEAN = (
    "# Invoice lookups.\n"
    "import sqlite3\n"
    "\n"
    "API_HOST = \"api.acme.test\"\n"
    "\n"
    "\n"
    "def find_invoice(db, invoice_id):\n"
    "    return db.execute(\"SELECT * FROM invoices WHERE id = ?\", (invoice_id,))\n"
    "\n"
    "\n"
    "def total(rows):\n"
    "    return sum(r.amount for r in rows)\n"
)
RULES = {"core/sql-injection": Rule("core/sql-injection", "SQL injection", Severity.BLOCKER, 89,
                                    ("sql injection", "interpolated"))}
GOOD = {"identifiers": {"invoice_id": "receipt_id", "find_invoice": "find_receipt"},
        "names": {"billing": "ledger"}, "strings": {"api.acme.test": "api.globex.test"}}


def corpus(variants: dict[str, Any] | None = None, seeded: str = SEEDED, clean: str = CLEAN) -> CorpusData:
    data = CorpusData(label="", rules=dict(RULES), files={"shop": {
        "seeded": {"app/billing/invoices.py": seeded.encode()},
        "clean": {"app/billing/invoices.py": clean.encode()},
    }})
    if variants is not None:
        data.manifests["shop"] = {"variants": variants}
    return data


def test_a_variant_renames_both_twins_and_keeps_every_line_and_marker() -> None:
    c = corpus({"ledger": GOOD})
    variant = parse_variants(c, "shop")[0]["ledger"]
    files, markers = publish_variant(c, "shop", "seeded", "blind", "canary", variant)
    base_files, base_markers = publish(c, "shop", "seeded", "blind", "canary")
    assert [f.path for f in files] == ["canary/app/ledger/invoices.py"]
    text = files[0].text
    assert "def find_receipt(db, receipt_id):" in text and "{receipt_id}" in text
    assert "api.globex.test" in text and "invoice_id" not in text and "acme" not in text
    assert "FROM invoices" in text  # a whole word only: "invoices" is not "invoice_id"
    assert text.count("\n") == base_files[0].text.count("\n")
    assert files[0].line_map == base_files[0].line_map
    assert [(m.marker.n, m.line, m.end_line) for m in markers] == [
        (m.marker.n, m.line, m.end_line) for m in base_markers]
    assert markers[0].path == "canary/app/ledger/invoices.py"
    assert "receipt_id is interpolated" in markers[0].marker.description
    clean_files, _ = publish_variant(c, "shop", "clean", "blind", "", variant)
    assert "(receipt_id,)" in clean_files[0].text and clean_files[0].path == "app/ledger/invoices.py"


def test_a_good_variant_lints_clean_and_so_does_the_whole_corpus() -> None:
    c = corpus({"ledger": GOOD})
    assert lint_variants(c, "shop") == []
    assert lint(c) == []


@pytest.mark.parametrize(("renames", "says"), [
    ({"identifiers": {"invoice_id": "class"}}, "reserved word"),
    ({"identifiers": {"invoice_id": "rows"}}, "already a name in the stack"),
    ({"identifiers": {"invoice_id": "amount", "total": "amount"}}, "already a name"),
    ({"identifiers": {"invoice_id": "a1", "total": "a1"}}, "would both become"),
    ({"identifiers": {"order_id": "receipt_id"}}, "does not occur as a whole word"),
    ({"identifiers": {"invoice": "receipt"}}, "does not occur as a whole word"),  # only inside invoice_id
    ({"identifiers": {"sql": "query_text"}}, "marker"),  # reaches the rule id core/sql-injection
    ({"identifiers": {"invoice_id": "receipt-id"}}, "is not a rename of identifiers"),
    ({"strings": {"api.acme.test": "api\"x.test"}}, "is not a rename of strings"),
    ({"names": {"billing": "ledger.py"}}, "is not a rename of names"),
    ({"colours": {"red": "blue"}}, "expected a mapping with identifiers, names, strings"),
    ({"strings": {"sqlite3": "import"}}, "reserved word"),
    ({"strings": {"Invoice lookups": "Redline lookups"}}, "blind publication would drop other lines"),
])
def test_lint_refuses_a_bad_variant(renames: dict[str, Any], says: str) -> None:
    problems = lint_variants(corpus({"broken": renames}), "shop")
    assert problems, renames
    assert any(says in p.message for p in problems), [p.message for p in problems]
    assert all(p.path == "stacks/shop.yml" for p in problems)


def test_lint_refuses_a_description_that_still_names_the_old_identifier() -> None:
    seeded = SEEDED.replace("an SQL injection", "an SQL injection in Invoice_Id handling")
    problems = lint_variants(corpus({"v": {"identifiers": {"invoice_id": "receipt_id"}}}, seeded), "shop")
    assert [p.message for p in problems] == [
        "variants.v: SEED 1: the description still says 'Invoice_Id' after the rename of 'invoice_id' to "
        "'receipt_id' (rename that spelling too, or reword the description)"]


def test_a_lower_case_word_in_a_description_is_prose_not_the_identifier() -> None:
    seeded = SEEDED.replace("an SQL injection", "an SQL injection (total is fine)")
    assert lint_variants(corpus({"v": {"identifiers": {"total": "grand_total"}}}, seeded), "shop") == []


def test_the_renamed_stack_is_linted_as_a_stack() -> None:
    # A string rename onto a provider's key shape would be blocked by push protection.
    key = "AKIA" + "Z" * 16
    problems = lint_variants(corpus({"v": {"strings": {"api.acme.test": key}}}), "shop")
    assert any("real AWS access key id" in p.message for p in problems), [p.message for p in problems]


def test_a_new_name_that_already_differs_between_the_twins_is_a_collision() -> None:
    # Renaming a word of the seeded side onto the clean side's word would hide the fix.
    seeded = SEEDED.replace("{invoice_id}\")", "{invoice_id}\", unsafe)")
    clean = CLEAN.replace("(invoice_id,))", "(invoice_id,), safe)")
    problems = lint_variants(corpus({"v": {"identifiers": {"unsafe": "safe"}}}, seeded, clean), "shop")
    assert any("'safe' is already a name in the stack" in p.message for p in problems)


def test_the_python_checker_sees_a_file_that_no_longer_parses() -> None:
    assert _syntax_problem("a.py", "x = 1\n", "x = = 1\n") == "no longer parses (SyntaxError)"
    assert _syntax_problem("a.py", "x = 1\n", "y = 1\n") is None
    assert _syntax_problem("a.json", "{\"a\": 1}", "{\"a\": }") is not None
    assert _syntax_problem("a.go", "x", "y(") is None  # other languages: parsed by the test suite


def test_publication_refuses_a_variant_that_would_move_a_line() -> None:
    c = corpus()
    broken = Variant("broken", strings=(("api.acme.test", "api.acme.test\nX = 1"),))  # never from a manifest
    with pytest.raises(VariantBroken, match="does not keep its lines"):
        publish_variant(c, "shop", "seeded", "blind", "", broken)


def test_choose_variant_none_auto_and_an_id() -> None:
    variants = parse_variants(corpus({"ledger": GOOD, "vault": {"identifiers": {"total": "sum_all"}}}), "shop")[0]
    assert choose_variant("none", variants, "r1", "shop") == CANONICAL
    assert choose_variant("vault", variants, "r1", "shop") == "vault"
    picks = [choose_variant("auto", variants, f"run-{i}", "shop") for i in range(60)]
    assert set(picks) == {CANONICAL, "ledger", "vault"}  # every publication comes up
    assert picks == [choose_variant("auto", variants, f"run-{i}", "shop") for i in range(60)]  # deterministic
    assert choose_variant("auto", {}, "r1", "shop") == CANONICAL
    with pytest.raises(ValueError, match="no variant 'nope'"):
        choose_variant("nope", variants, "r1", "shop")


def test_rename_path_renames_folders_and_file_stems_but_keeps_the_suffix() -> None:
    v = Variant("v", names=(("billing", "ledger"), ("invoices", "receipts")))
    assert rename_path("app/billing/invoices.py", v) == "app/ledger/receipts.py"
    assert rename_path("app/billing2/invoices.test.ts", v) == "app/billing2/receipts.test.ts"


def test_manifest_shape_problems_name_the_file_and_key() -> None:
    c = corpus()
    c.manifests["shop"] = {"variants": {"Bad Id": {"identifiers": {"a": "b"}}}}
    _, problems = parse_variants(c, "shop")
    assert problems[0].path == "stacks/shop.yml" and "variants.Bad Id" in problems[0].message
    c.manifests["shop"] = {"variantz": {}}
    assert "the one key 'variants'" in parse_variants(c, "shop")[1][0].message
    c.manifests["ghost"] = {"variants": {}}
    assert any("stack that does not exist ('ghost')" in p.message for p in lint(c))
    c.manifests["shop"] = {"variants": {"a\nb": {}}}
    assert "variants.a\\nb:" in parse_variants(c, "shop")[1][0].message  # one line, whatever the key holds
