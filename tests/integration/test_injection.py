"""Reviewer text and history fields are hostile: every sink shows them inert.

A history file can be forged by anyone who can push to the metrics repository, and a
reviewer's comment (quoted as a notice) is whatever the reviewer wrote. Each sink gets a
corpus of payloads, fed through the real commands (``redline-canary ...`` in a
subprocess) on a forged history or capture, and the assertions are on what a user or
the runner would see:

* Markdown (``actions-report`` job summary, ``report --markdown``/stdout): rendered with
  cmark-gfm — GitHub's own Markdown library — with raw HTML *allowed*, the result may
  hold only the tags the tool itself writes, with no attributes but table alignment, no
  link and no image; and every payload is still visible as text.
* HTML (``report --html``): the page and every SVG parse, hold no script, no event
  handler, no foreign link; payload text is visible literally; ``$`` is never mathtext.
* Terminal (``score``, ``report``, ``gate``): no ESC, C0 (but newline), DEL, C1 or
  bidi control reaches stdout or stderr.
* Workflow commands (``gate``, ``actions-report`` under Actions): parsed the way the
  runner does (leading blanks trimmed, legacy ``##[`` anywhere, ``stop-commands``
  honoured, stdout *and* stderr), the only commands are the tool's own annotations.
* GitHub references (the regression issue and its follow-up comments, opened by
  ``issue`` on the sandbox; the job summary; ``report``): once rendered, no text outside a
  code span is a mention, a team mention, an issue or commit reference GitHub would link
  or notify from (``tests/helpers/references.py``), and every payload is still visible.
"""

from __future__ import annotations

import copy
import html.parser
import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import cmarkgfm
import pytest
from cmarkgfm.cmark import Options

from redline_canary.report.regression_issue import DEFAULT_LABEL
from redline_canary.report.text import terminal_safe
from redline_canary.sandbox import Sandbox
from tests.helpers.actionrunner import runner_commands
from tests.helpers.clirun import cli_main
from tests.helpers.factories import capture, review
from tests.helpers.records import record
from tests.helpers.references import live_references
from tests.helpers.sandboxing import TOKEN

# --------------------------------------------------------------------------- payloads

MARKDOWN_PAYLOADS = [
    "![x](https://evil.example/p.png)",
    "[click](javascript:alert(1))",
    "[click](https://evil.example/phish)",
    "https://evil.example/autolink",
    "www.evil.example/autolink",
    "_www.evil.example/after-underscore",
    "mail evil@evil.example now",
    "<https://evil.example/angle>",
    "<img src=x onerror=alert(1)>",
    '<a href="https://evil.example">a</a>',
    "<script>alert(1)</script>",
    "[ref]: https://evil.example/def",
    "see [ref] and [ref][]",
    "a | b | c",
    "line one\n| injected | row |\n",
    "&lt;img src=x&gt; and &#60;b&#62;",
    "`code` **bold** ~~strike~~ $math$",
    "\\[escaped](https://evil.example/backslash)",
]
# A tag assembled from two fields printed side by side (the seeded and clean notices).
SPLIT_TAG = ("cut here <im", "g src=x onerror=alert(1)>")

HTML_PAYLOADS = [
    "<script>alert(1)</script>",
    '"><svg onload=alert(1)>',
    "' onmouseover='alert(1)",
    "</title><script>alert(2)</script>",
    "]]><!-- --><x:script/>",
    "<img src=x onerror=alert(1)>",
    "$\\foo$ and $x^2$",          # mathtext: would fail or render as maths in a chart
    "bell\x07 esc\x1b[2J nul\x00 c1\x9b31m",  # invalid in XML: would break the SVG
    "javascript:alert(1)",
]

TERMINAL_PAYLOADS = [
    "\x1b[2J\x1b[H",                                   # clear screen, cursor home
    "\x1b]8;;http://evil.example\x07click\x1b]8;;\x07",  # OSC 8 hyperlink
    "\x1b]52;c;ZXZpbA==\x07",                          # OSC 52 clipboard write
    "\x1b]0;title\x1b\\",                              # window title, ST-terminated
    "good\roverwritten",                               # CR overwrite
    "\x9b31mred",                                       # 8-bit CSI
    "\x1bPdcs-string\x1b\\",                           # DCS
    "back\x08\x08\x08space",
    "\u202eevil-reversed",                             # bidi override
    "nul\x00del\x7f",
    "unterminated \x1b]8;;http://evil.example",
    "lone surrogate \ud800 cannot be UTF-8",         # "\ud800" in JSON: printing it would crash
]

WORKFLOW_PAYLOADS = [
    "::add-mask::hunter2",
    "x\n::error::pwned by a newline",
    "x\r\n::set-output name=outcome::pass",
    "x%0A::error::pwned by an escape",
    "   ::warning::indented",
    "##[error]legacy anywhere",
    "::stop-commands::fake\n::error::after a fake stop",
    "::set-env name=X::y",
    "::add-path::/evil",
    "a,title=forged::message",
]

# Every form GitHub links or notifies from (docs: "Autolinked references and URLs"), alone,
# after a backtick (escaped as "\\`", it once kept the mention live), and in company.
REFERENCE_PAYLOADS = [
    "@octocat",
    "`@octocat",
    "@acme/security-team",
    "`@acme/security-team",
    "#12",
    "`#12",
    "GH-12",
    "see gh-7",
    "acme/widgets#12",
    "`acme/widgets#12",
    "acme/widgets@a5c3785",
    "octocat@a5c3785ed8d6a35868bc169f07e40e889087fd2e",
    "a5c3785ed8d6a35868bc169f07e40e889087fd2e",
    "fixed in a5c3785.",
    "cc (@octocat), [#12] {acme/my_repo#3} *@acme/admins* _GH-4_ ~deadbeef1~",
    "&#64;octocat &#35;12",
    "https://github.com/acme/widgets/issues/12",  # a URL: shown as code, as before
]

# --------------------------------------------------------------------------- forged data


def seed(description: str, path: str = "app/api.py", rule: str = "core/sql-injection",
         n: int = 1, severity: str = "BLOCKER") -> dict[str, Any]:
    return {"n": n, "path": path, "line": 12, "pushed_path": path, "pushed_line": 11,
            "severity": severity, "rule": rule, "symbol": None, "description": description}


def forged(payload: str, run_id: str = "r1") -> list[dict[str, Any]]:
    """A scored seeded run that missed a BLOCKER and an errored clean run, with the payload
    in every free-text field the schema allows it in (repo needs owner/name, no blank)."""
    seeded = record(run_id=run_id, kind="seeded", stack=payload, passed=False)
    seeded.update(reviewer=payload, markers=2, caught=0, missed=2,
                  missed_seeds=[seed(payload), seed("plain", path=payload, rule=payload, n=2, severity="MINOR")],
                  recall=0.0, recall_ci95=[0.0, 0.66], blocker_recall_ci95=[0.0, 0.79])
    seeded["by_severity"]["BLOCKER"].update(markers=1, missed=1)
    seeded["by_severity"]["MINOR"].update(markers=1, missed=1)
    seeded["gate"]["reasons"] = [payload]
    clean = record(run_id=run_id, kind="clean", stack=payload, outcome="error", passed=False)
    clean.update(reviewer=payload, notice=payload, clean_false_positives=None)
    clean["gate"]["reasons"] = [f"reviewer error: {payload}"]
    slug = re.sub(r"\s", "_", payload) or "x"
    for r in (seeded, clean):
        r["repo"] = "acme/" + slug.replace("/", "_")
    return [seeded, clean]


def write_jsonl(path: Path, records: Iterable[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def split_tag_history() -> list[dict[str, Any]]:
    seeded, clean = forged("plain")
    seeded.update(outcome="error", notice=SPLIT_TAG[0])
    clean.update(notice=SPLIT_TAG[1])
    return [seeded, clean]


# --------------------------------------------------------------------------- Markdown

ALLOWED_TAGS = {"h1", "h2", "h3", "p", "table", "thead", "tbody", "tr", "th", "td", "ul", "li", "code",
                "strong", "em", "blockquote", "br", "hr"}


class _Tags(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.text: list[str] = []
        self.comments: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def handle_comment(self, data: str) -> None:
        self.comments.append(data)


def rendered(markdown: str) -> _Tags:
    """GitHub's Markdown (cmark-gfm with its extensions), raw HTML let through: what a
    summary would show if GitHub's sanitiser were not there."""
    page = cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)
    parser = _Tags()
    parser.feed(page)
    return parser


def squash(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def assert_inert_markdown(markdown: str, visible: Iterable[str]) -> None:
    doc = rendered(markdown)
    for tag, attrs in doc.tags:
        assert tag in ALLOWED_TAGS, f"live <{tag} {attrs}> in the Markdown"
        assert all(name == "align" for name, _ in attrs), f"<{tag}> carries {attrs}"
    assert not doc.comments
    text = squash("".join(doc.text))
    for v in visible:
        assert squash(terminal_safe(v)).strip() in text, f"{v!r} is not shown as text"


@pytest.mark.parametrize("payload", MARKDOWN_PAYLOADS)
def test_job_summary_shows_every_markdown_payload_as_text(tmp_path: Path, payload: str) -> None:
    recs = write_jsonl(tmp_path / "records.jsonl", forged(payload))
    out = tmp_path / "summary.md"
    res = cli_main("actions-report", str(recs), "--exit-code", "1", "--summary", str(out),
              env={"GITHUB_ACTIONS": "", "GITHUB_OUTPUT": "", "GITHUB_STEP_SUMMARY": ""})
    assert res.returncode == 0, res.stderr
    assert_inert_markdown(out.read_text(encoding="utf-8"), [payload])


@pytest.mark.parametrize("payload", MARKDOWN_PAYLOADS)
def test_report_markdown_shows_every_markdown_payload_as_text(tmp_path: Path, payload: str) -> None:
    hist = write_jsonl(tmp_path / "h.jsonl", forged(payload))
    out = tmp_path / "board.md"
    res = cli_main("report", str(hist), "--markdown", str(out))
    assert res.returncode == 0, res.stderr
    assert_inert_markdown(out.read_text(encoding="utf-8"), [payload])


def test_no_tag_forms_across_two_notices(tmp_path: Path) -> None:
    hist = write_jsonl(tmp_path / "h.jsonl", split_tag_history())
    res = cli_main("report", str(hist))  # Markdown on stdout: the two notices share a table cell
    assert res.returncode == 0, res.stderr
    assert "<im" not in res.stdout and "cut here &lt;im" in res.stdout
    assert_inert_markdown(res.stdout, SPLIT_TAG)
    summary = tmp_path / "s.md"
    cli_main("actions-report", str(hist), "--exit-code", "4", "--summary", str(summary),
        env={"GITHUB_ACTIONS": "", "GITHUB_OUTPUT": "", "GITHUB_STEP_SUMMARY": ""})
    assert_inert_markdown(summary.read_text(encoding="utf-8"), SPLIT_TAG)


def test_a_pipe_or_newline_in_a_field_keeps_the_table_shape(tmp_path: Path) -> None:
    hist = write_jsonl(tmp_path / "h.jsonl", forged("a | b\n| injected | row |"))
    res = cli_main("report", str(hist))
    page = cmarkgfm.github_flavored_markdown_to_html(res.stdout)
    latest = page.split("<table>")[1]
    assert latest.count("<tr>") == 2  # header + the one target: no injected row
    assert "<td>injected</td>" not in page


# --------------------------------------------------------------------------- GitHub references

METRICS = "acme/metrics"
RUN_URL = "https://github.com/acme/metrics/actions/runs/100"


def assert_no_live_reference(markdown: str, payload: str, links: tuple[str, ...] = ()) -> None:
    """No reference GitHub would link or notify from; nothing live but ``links`` (ours);
    the payload still readable."""
    assert live_references(markdown) == [], markdown
    doc = rendered(markdown)
    for tag, attrs in doc.tags:
        if tag == "a":
            assert dict(attrs).get("href") in links, f"live <a {attrs}>"
            continue
        assert tag in ALLOWED_TAGS, f"live <{tag} {attrs}> in the Markdown"
        assert all(name == "align" for name, _ in attrs), f"<{tag}> carries {attrs}"
    assert squash(terminal_safe(payload)).strip() in squash("".join(doc.text)), f"{payload!r} is not shown"


@pytest.mark.parametrize("payload", REFERENCE_PAYLOADS)
def test_the_regression_issue_and_its_follow_up_ping_nobody_and_link_nothing(tmp_path: Path, payload: str) -> None:
    hist = write_jsonl(tmp_path / "h.jsonl", [*forged(payload, "r1"), *forged(payload, "r2")])
    env = {"GITHUB_TOKEN": TOKEN, "REDLINE_CANARY_TOKEN": "", "REDLINE_CANARY_TIME_SCALE": "0.01",
           "GITHUB_ACTIONS": ""}
    with Sandbox(token=TOKEN) as sb:
        sb.create_repo(METRICS, files={"README.md": "metrics\n"})
        for run_id in ("r1", "r2"):  # the first opens the issue, the second comments on it
            res = cli_main("issue", "--repo", METRICS, "--history", str(hist), "--run-id", run_id,
                           "--api-url", sb.url, "--run-url", RUN_URL, env=env)
            assert res.returncode == 0, res.stderr
        [issue] = [i for i in sb.issues(METRICS) if DEFAULT_LABEL in i.labels]
    assert len(issue.comments) == 1 and "Still failing" in issue.comments[0]
    for text in (issue.body or "", issue.comments[0]):
        assert_no_live_reference(text, payload, links=(RUN_URL,))


@pytest.mark.parametrize("payload", REFERENCE_PAYLOADS)
def test_job_summary_and_report_ping_nobody_and_link_nothing(tmp_path: Path, payload: str) -> None:
    rows = forged(payload)
    for r in rows:
        r["pr"] = None  # the tool's own "PR #1" is no outside text
    recs = write_jsonl(tmp_path / "records.jsonl", rows)
    summary, board = tmp_path / "summary.md", tmp_path / "board.md"
    res = cli_main("actions-report", str(recs), "--exit-code", "1", "--summary", str(summary),
                   env={"GITHUB_ACTIONS": "", "GITHUB_OUTPUT": "", "GITHUB_STEP_SUMMARY": ""})
    assert res.returncode == 0, res.stderr
    res = cli_main("report", str(recs), "--markdown", str(board))
    assert res.returncode == 0, res.stderr
    for path in (summary, board):
        assert_no_live_reference(path.read_text(encoding="utf-8"), payload)


# --------------------------------------------------------------------------- HTML


def forged_for_html(payload: str) -> list[dict[str, Any]]:
    """Two scored runs (so a trend line is drawn) and a second reviewer (so the
    comparison chart is drawn), payloads everywhere."""
    out = []
    for i, rid in enumerate(("r1", "r2")):
        seeded, clean = forged(payload, run_id=rid)
        for r in (seeded, clean):
            r["recorded_at"] = f"2026-11-{10 + i}T10:00:00Z"
        clean.update(outcome="scored", clean_false_positives=1, notice=None)
        out += [seeded, clean]
        other = copy.deepcopy(seeded)
        other["reviewer"] = "copilot"
        out.append(other)
    return out


@pytest.mark.parametrize("payload", HTML_PAYLOADS)
def test_html_report_escapes_every_field_in_text_attributes_and_charts(tmp_path: Path, payload: str) -> None:
    hist = write_jsonl(tmp_path / "h.jsonl", forged_for_html(payload))
    site = tmp_path / "site"
    res = cli_main("report", str(hist), "--html", str(site))
    assert res.returncode == 0, res.stderr
    page = (site / "index.html").read_text(encoding="utf-8")
    doc = _Tags()
    doc.feed(page)
    tags = [t for t, _ in doc.tags]
    assert "script" not in tags and "svg" not in tags and "x:script" not in tags
    for tag, attrs in doc.tags:
        for name, value in attrs:
            assert not name.startswith("on"), f"<{tag} {name}=...>"
            if name == "href":
                assert value is not None and value.startswith("#"), value
            if name == "src":
                assert value is not None and value.startswith("charts/"), value
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", page)
    text = squash("".join(doc.text))
    assert squash(terminal_safe(payload)) in text
    charts = sorted((site / "charts").glob("*.svg"))
    assert {c.name.split("-")[-1] for c in charts} >= {"trend.svg", "seeds.svg"}
    assert any(c.name.startswith("c0") for c in charts)  # the comparison chart too
    for chart in charts:
        tree = ET.parse(chart)  # must be well-formed XML
        for el in tree.iter():
            local = el.tag.rsplit("}", 1)[-1]
            assert local not in ("script", "foreignObject"), chart.name
            assert not any(a.rsplit("}", 1)[-1].startswith("on") for a in el.attrib), chart.name
    # Chart labels are the record's text, literally: never parsed as mathtext ("$\\foo$"
    # would stop the render, "$x^2$" would draw maths), never cut off by a control character.
    trend = next(c for c in charts if c.name.endswith("trend.svg"))
    assert squash(terminal_safe(payload)) in squash("".join(ET.parse(trend).getroot().itertext()))


# --------------------------------------------------------------------------- terminal

_TERMINAL_BAD = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def assert_terminal_safe(*streams: str) -> None:
    for s in streams:
        found = _TERMINAL_BAD.findall(s)
        assert not found, f"control characters reach the terminal: {found!r}"


@pytest.mark.parametrize("payload", TERMINAL_PAYLOADS)
def test_score_prints_a_quoted_notice_without_control_characters(tmp_path: Path, mini_corpus: Path,
                                                                  payload: str) -> None:
    copilot = {"login": "copilot-pull-request-reviewer[bot]", "id": 175728472, "type": "Bot"}
    body = f"Copilot was unable to review this pull request {payload} because of a quota limit."
    cap = tmp_path / "cap.json"
    cap.write_text(json.dumps(capture(reviews=[review(body, who=copilot)])))
    res = cli_main("score", "--capture", str(cap), "--corpus", str(mini_corpus), "--stack", "mini", "--prefix", "p",
              "--kind", "seeded", "--reviewer", "copilot")
    assert res.returncode in (3, 4), res.stdout + res.stderr  # silent or error: the notice is quoted
    assert re.search(r"^outcome: (silent|error) — Copilot was unable to review this pull request", res.stdout, re.M)
    assert_terminal_safe(res.stdout, res.stderr)


@pytest.mark.parametrize("payload", TERMINAL_PAYLOADS)
def test_gate_and_report_print_forged_fields_without_control_characters(tmp_path: Path, payload: str) -> None:
    hist = write_jsonl(tmp_path / "h.jsonl", forged(payload))
    gate = cli_main("gate", str(hist), "--run-id", "r1", env={"GITHUB_ACTIONS": ""})
    assert gate.returncode == 4, gate.stderr  # the clean PR errored: 4 beats the gate's 1
    assert "exit 4" in gate.stdout
    report = cli_main("report", str(hist))
    assert report.returncode == 0
    as_json = cli_main("report", str(hist), "--json")
    assert json.loads(as_json.stdout)["targets"][0]["reviewer"] == payload  # data kept exactly
    assert_terminal_safe(gate.stdout, gate.stderr, report.stdout, report.stderr, as_json.stdout)


# --------------------------------------------------------------------------- workflow commands




@pytest.mark.parametrize("payload", WORKFLOW_PAYLOADS)
def test_gate_output_under_actions_issues_no_command(tmp_path: Path, payload: str) -> None:
    rows = forged(payload)
    # Another run's malformed line is skipped and named on stderr with its key.
    other = copy.deepcopy(rows[0])
    other["run_id"] = "older"
    other["by_severity"][payload] = {}
    hist = write_jsonl(tmp_path / "h.jsonl", [*rows, other])
    res = cli_main("gate", str(hist), "--run-id", "r1", env={"GITHUB_ACTIONS": "true"})
    assert res.returncode == 4, res.stderr
    assert "h.jsonl:3: corrupt record skipped (by_severity." in res.stderr
    commands = runner_commands(res.stdout, res.stderr)
    names = [n for n, _ in commands]
    assert names == ["stop-commands"], commands  # only the tool's own pause
    resumed = res.stdout.splitlines()[-1]
    assert resumed == commands[0][1].replace("stop-commands::", "", 1) + "::"
    assert len(res.stdout.splitlines()) == 5  # pause, two PR lines, the verdict, resume


@pytest.mark.parametrize("payload", WORKFLOW_PAYLOADS)
def test_actions_report_annotations_carry_the_payload_as_data_only(tmp_path: Path, payload: str) -> None:
    recs = write_jsonl(tmp_path / "records.jsonl", forged(payload))
    outputs = tmp_path / "out"
    outputs.touch()
    env = {"GITHUB_ACTIONS": "true", "GITHUB_OUTPUT": str(outputs), "GITHUB_STEP_SUMMARY": ""}
    res = cli_main("actions-report", str(recs), "--exit-code", "1", env=env)
    assert res.returncode == 0, res.stderr
    commands = runner_commands(res.stdout, res.stderr)
    names = [n for n, _ in commands]
    # The summary went to stdout (no GITHUB_STEP_SUMMARY) inside a pause; then our
    # annotations: the BLOCKER miss and the errored clean PR as errors, the MINOR miss
    # as a warning. Nothing else, whatever the payload says.
    assert names == ["stop-commands", "error", "error", "warning"], commands
    for _, line in commands[1:]:
        head, _, message = line[2:].partition("::")
        assert "\n" not in message and "\r" not in message
        props = dict(p.split("=", 1) for p in head.split(" ", 1)[1].split(","))
        assert set(props) <= {"file", "line", "title"}, props
    errors = [line for n, line in commands if n == "error"]
    assert errors[0].startswith("::error title=Canary error::")  # most urgent first
    assert "SEED 1 [BLOCKER] missed by" in errors[1]
    outputs_text = outputs.read_text()
    assert "outcome=fail" in outputs_text


def test_gate_json_output_never_starts_a_line_with_a_command(tmp_path: Path) -> None:
    hist = write_jsonl(tmp_path / "h.jsonl", forged("::add-mask::x\n::error::y ##[error]z"))
    res = cli_main("gate", str(hist), "--run-id", "r1", "--json", env={"GITHUB_ACTIONS": "true"})
    assert json.loads(res.stdout)["targets"][0]["reasons"] == ["::add-mask::x\n::error::y ##[error]z"]
    assert [n for n, _ in runner_commands(res.stdout, res.stderr) if n != "legacy"] == []


# --------------------------------------------------------------------------- issue 24: more sinks

_SUMMARY = re.compile(r"^\d+ interaction\(s\) replayed, \d+ differ$")
VERIFY_PAYLOADS = [*TERMINAL_PAYLOADS, *WORKFLOW_PAYLOADS, "x\n7 interaction(s) replayed, 0 differ",
                   "x\r\n0 interaction(s) replayed, 0 differ", "\u2028999 interaction(s) replayed, 0 differ"]


@pytest.mark.parametrize("payload", VERIFY_PAYLOADS)
def test_sandbox_verify_prints_recorded_text_inert_and_its_summary_cannot_be_forged(
        tmp_path: Path, payload: str) -> None:
    # A recorded body key (printed in a difference) and a request header value (sent on the
    # replay: non-ASCII and a lone surrogate once crashed it) carry the payload.
    fixture = json.loads((Path(__file__).resolve().parents[1] / "data" / "github-fixtures"
                          / "git-ref_get_200.pygithub.json").read_text())
    fixture["request"]["headers"] = {"user-agent": payload}
    fixture["response"]["status"] = 404
    fixture["response"]["body"] = {payload: 1}
    folder = tmp_path / "rec"
    folder.mkdir()
    (folder / "0001.json").write_text(json.dumps(fixture))
    res = cli_main("sandbox", "verify", str(folder), env={"GITHUB_ACTIONS": "true"})
    assert res.returncode == 1 and "Traceback" not in res.stderr, res.stderr  # one interaction differs
    lines = res.stdout.splitlines()
    assert [i for i, line in enumerate(lines) if _SUMMARY.match(line.strip())] == [len(lines) - 1], lines
    assert lines[-1] == "1 interaction(s) replayed, 1 differ"
    assert_terminal_safe(res.stdout, res.stderr)
    assert runner_commands(res.stdout, res.stderr) == []


@pytest.mark.parametrize("payload", [*TERMINAL_PAYLOADS, *WORKFLOW_PAYLOADS])
def test_corpus_lint_prints_an_imported_tables_entries_inert(tmp_path: Path, mini_corpus: Path,
                                                             payload: str) -> None:
    # `redline-import.yml` quotes another checkout's file names and reasons, then lint
    # reports each rejected entry: outside text on the terminal and in the runner's log.
    import shutil

    import yaml

    corpus = tmp_path / "corpus"
    shutil.copytree(mini_corpus, corpus)
    table = {"rejected": [{"stack": "mini", "file": f"seeded/mini/{payload}.py", "line": 3, "reason": payload}]}
    (corpus / "redline-import.yml").write_text(yaml.safe_dump(table, allow_unicode=True))
    res = cli_main("corpus", "lint", "--corpus", str(corpus), env={"GITHUB_ACTIONS": "true"})
    assert res.returncode == 2 and "rejected[0]: Redline's seeded/mini/" in res.stdout, res.stdout + res.stderr
    assert len([line for line in res.stdout.splitlines() if "rejected[0]" in line]) == 1
    assert_terminal_safe(res.stdout, res.stderr)
    assert runner_commands(res.stdout, res.stderr) == []
