"""A record with every key but a value of the wrong type: one place decides, each command
says so by file, line and key.

``gate`` and ``actions-report`` refuse it (exit 2: bad input — never 1, which would read
as "the reviewer regressed", never a traceback). ``report`` and ``history merge`` skip
it and name it, exactly as they treat a torn line. The type table in ``score/record_schema.py`` is
checked against ``history/schema.json`` so the two cannot drift apart.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from redline_canary.report.text import md_text
from redline_canary.run.history import read_history
from redline_canary.score.record_schema import FIELDS, Kind
from tests.helpers.clirun import ROOT, cli_main
from tests.helpers.records import record

SCHEMA = json.loads((ROOT / "history" / "schema.json").read_text())

# (key as named in the message, the line as written: a valid record's JSON with one
# value replaced textually, so huge integers and NaN stay exactly as a forger wrote them)
MALFORMED = [
    ("caught", '"caught": 0', '"caught": "x"', "expected an integer >= 0"),
    ("gate", '"gate": {"passed": true, "reasons": []}', '"gate": null', "expected an object"),
    ("by_severity", None, '"by_severity": []', "expected an object"),
    ("missed_seeds[0]", '"missed_seeds": []', '"missed_seeds": [1]', "expected an object"),
    ("attempt", '"attempt": 1', '"attempt": "2"', "expected an integer >= 1"),
    ("recall", '"recall": null', '"recall": "high"', "expected a number or null from 0 to 1"),
    ("recall", '"recall": null', '"recall": NaN', "got NaN"),
    ("blocker_recall", '"blocker_recall": null', '"blocker_recall": Infinity', "got Infinity"),
    ("markers", '"markers": 0', '"markers": 1' + "0" * 400, "at most 9007199254740992"),
    ("noise", '"noise": 0', '"noise": ' + "9" * 5000, "an integer of 5000 digits"),
    ("markers", '"markers": 0', '"markers": true', "got true"),
    ("kind", '"kind": "seeded"', '"kind": "weird"', "expected one of seeded, clean"),
    ("by_severity.BLOCKER.caught", '"BLOCKER": {"markers": 0, "caught": 0', '"BLOCKER": {"markers": 0, "caught": -1',
     ">= 0, got -1"),
    ("gate.reasons[0]", '"reasons": []', '"reasons": [7]', "expected a string"),
    ("recall_ci95", '"recall_ci95": null', '"recall_ci95": [0.1]', "of 2 items"),
    ("repo", '"repo": "acme/canary"', '"repo": "acme/canary\\n"', "expected a string matching"),
]


def malformed_line(old: str | None, new: str) -> str:
    line = json.dumps(record("r1"))
    if old is None:
        key = new.split(":", 1)[0]
        start = line.index(key + ":")
        depth, i = 0, line.index("{", start)
        while True:  # the whole by_severity object
            depth += {"{": 1, "}": -1}.get(line[i], 0)
            i += 1
            if depth == 0:
                break
        return line[:start] + new + line[i:]
    assert old in line, old
    return line.replace(old, new, 1)


def history_with(tmp_path: Path, bad: str) -> Path:
    hist = tmp_path / "h.jsonl"
    good = json.dumps(record("r1", kind="clean"))
    hist.write_text(good + "\n" + bad + "\n", encoding="utf-8")
    return hist


@pytest.mark.parametrize(("key", "old", "new", "says"), MALFORMED)
def test_gate_and_actions_report_refuse_a_malformed_record_naming_file_line_and_key(
        tmp_path: Path, key: str, old: str | None, new: str, says: str) -> None:
    hist = history_with(tmp_path, malformed_line(old, new))
    outputs = tmp_path / "outputs"
    outputs.touch()
    for args in (["gate", str(hist), "--run-id", "r1"],
                 ["actions-report", str(hist), "--exit-code", "0", "--summary", str(tmp_path / "s.md")]):
        res = cli_main(*args, env={"GITHUB_ACTIONS": "", "GITHUB_OUTPUT": str(outputs)})
        assert res.returncode == 2, (args[0], res.stdout, res.stderr)
        assert res.stderr.count("\n") == 1 and "Traceback" not in res.stderr
        assert res.stderr.startswith(f"redline-canary: {hist}:2: {key}: expected"), res.stderr
        assert says in res.stderr
    # The action's report step still tells its story: bad input, not "nothing ran", and
    # none of the refused file's numbers.
    summary = (tmp_path / "s.md").read_text(encoding="utf-8")
    assert summary.startswith("## redline-canary: BAD-INPUT (exit 2")
    assert md_text(f"h.jsonl:2: {key}: expected") in summary
    assert "outcome=bad-input\nexit-code=2\nblocker-recall=\nrecall=\n" in outputs.read_text()


@pytest.mark.parametrize(("key", "old", "new", "says"), MALFORMED)
def test_report_skips_a_malformed_record_and_names_it_like_a_torn_line(
        tmp_path: Path, key: str, old: str | None, new: str, says: str) -> None:
    hist = history_with(tmp_path, malformed_line(old, new))
    res = cli_main("report", str(hist))
    assert res.returncode == 0, res.stderr
    assert f"{hist}:2: corrupt record skipped ({key}: expected" in res.stderr
    assert "1 records" in res.stdout and "1 history line(s)/record(s) skipped" in res.stdout


def test_merge_leaves_a_malformed_fragment_line_out_and_says_so(tmp_path: Path) -> None:
    frag = history_with(tmp_path, malformed_line('"caught": 0', '"caught": "x"'))
    out = tmp_path / "history.jsonl"
    res = cli_main("history", "merge", str(out), str(frag))
    assert res.returncode == 2
    assert f"{frag}:2: corrupt record skipped (caught: expected an integer >= 0, got \"x\")" in res.stderr
    assert "appended 1" in res.stdout
    assert [r.kind for r in read_history(out).records] == ["clean"]


def test_gate_skips_another_runs_malformed_line_but_judges_its_own(tmp_path: Path) -> None:
    other = malformed_line('"run_id": "r1"', '"run_id": "old"').replace('"caught": 0', '"caught": "x"')
    hist = history_with(tmp_path, other)
    res = cli_main("gate", str(hist), "--run-id", "r1")
    assert res.returncode == 0, res.stderr
    assert f"{hist}:2: corrupt record skipped (caught: expected" in res.stderr
    # A malformed line that names no run cannot be ruled out: refused.
    hist = history_with(tmp_path, malformed_line('"run_id": "r1"', '"run_id": 5'))
    res = cli_main("gate", str(hist), "--run-id", "r1")
    assert res.returncode == 2 and res.stderr.startswith(f"redline-canary: {hist}:2: run_id: expected a string")


@pytest.mark.parametrize(("key", "old", "new", "says"), MALFORMED)
def test_the_schema_file_rejects_every_malformed_record_too(key: str, old: str | None, new: str, says: str) -> None:
    line = malformed_line(old, new)

    def strict(name: str) -> Any:
        raise ValueError(f"{name} is not JSON (RFC 8259)")

    try:
        doc = json.loads(line, parse_constant=strict)
    except ValueError:  # NaN/Infinity, 5000 digits: not JSON a schema validator is ever given
        assert "NaN" in new or "Infinity" in new or len(new) > 4300
        return
    if key == "repo":
        # JSON Schema patterns are ECMA-262, where "$" is the end of the string; the Python
        # jsonschema library uses re.search, whose "$" also matches before a final newline.
        # The reader follows the standard.
        assert doc["repo"].endswith("\n")
        return
    if "at most" in says:
        # The reader's own bound (2**53, past which a rate overflows a float and JSON
        # readers disagree); the schema states no maximum for counts.
        jsonschema.validate(doc, SCHEMA)
        return
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, SCHEMA)


def _as_schema(kind: Kind) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if kind.enum is not None:
        out["enum"] = list(kind.enum)
    elif len(kind.of) == 1:
        out["type"] = kind.of[0]
    else:
        out["type"] = list(kind.of)
    for attr, name in (("minimum", "minimum"), ("maximum", "maximum"), ("pattern", "pattern"),
                       ("min_length", "minLength"), ("min_items", "minItems"), ("max_items", "maxItems")):
        if getattr(kind, attr) is not None:
            out[name] = getattr(kind, attr)
    if kind.items is not None:
        out["items"] = _as_schema(kind.items)
    if kind.properties:
        out["properties"] = {k: _as_schema(v) for k, v in kind.properties.items()}
    if kind.required:
        out["required"] = list(kind.required)
    if kind.closed:
        out["additionalProperties"] = False
    if kind.values is not None:
        out["additionalProperties"] = _as_schema(kind.values)
    return out


def test_the_type_table_is_the_schema_files() -> None:
    props = SCHEMA["properties"]
    assert set(FIELDS) == set(props)
    for key, kind in FIELDS.items():
        expected = dict(props[key])
        if key == "schema":  # the file names the versions written so far; readers take any later one too
            assert expected == {"type": "integer", "minimum": 1, "maximum": 3}
            expected = {"type": "integer", "minimum": 1}
        assert _as_schema(kind) == expected, key


def test_a_key_name_quoted_in_the_message_is_one_inert_line(tmp_path: Path) -> None:
    doc = record("r1")
    doc["timings"] = {"poll\n::add-mask::hunter2 ##[error]x": "slow"}
    hist = tmp_path / "h.jsonl"
    hist.write_text(json.dumps(doc) + "\n", encoding="utf-8")
    res = cli_main("gate", str(hist), "--run-id", "r1")
    assert res.returncode == 2 and res.stderr.count("\n") == 1, res.stderr
    assert res.stderr == (f"redline-canary: {hist}:1: timings.poll\\n::add-mask::hunter2 ## [error]x: "
                          'expected a number, got "slow"\n')


def test_a_lone_surrogate_is_merged_exactly_and_printed_as_a_replacement_character(tmp_path: Path) -> None:
    doc = record("r1")
    doc["reviewer"] = "bot \ud800"
    frag = tmp_path / "f.jsonl"
    frag.write_text(json.dumps(doc) + "\n", encoding="ascii")  # json writes it as a \\ud800 escape
    out = tmp_path / "h.jsonl"
    res = cli_main("history", "merge", str(out), str(frag))
    assert res.returncode == 0, res.stderr
    assert read_history(out).records[0].reviewer == "bot \ud800"
    gate = cli_main("gate", str(out), "--run-id", "r1")
    assert gate.returncode == 0 and "Traceback" not in gate.stderr
    report = cli_main("report", str(out))
    assert report.returncode == 0 and "bot \ufffd" in report.stdout, report.stderr


def test_a_schema_1_record_reads_with_blocker_found_from_its_counts(tmp_path: Path) -> None:
    from redline_canary.run.history import read_history

    doc = record("old")
    doc["schema"] = 1
    doc.pop("blocker_found", None)
    doc["kind"], doc["outcome"] = "seeded", "scored"
    doc["by_severity"]["BLOCKER"] = {"markers": 4, "caught": 1, "undercalled": 2, "missed": 1}
    path = tmp_path / "h.jsonl"
    line = json.dumps(doc) + "\n"
    path.write_text(line)
    read = read_history(path)
    assert read.records[0].blocker_found == 0.75
    assert path.read_text() == line  # a view, never a rewrite
