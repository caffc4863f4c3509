"""The pure sanitisers, for any text at all (hypothesis), against the real consumers:
cmark-gfm for Markdown, a runner-style parser for workflow commands, json for JSON."""

from __future__ import annotations

import html.parser
import json
import re

import cmarkgfm
import pytest
from cmarkgfm.cmark import Options
from hypothesis import given, settings
from hypothesis import strategies as st

from redline_canary.report.text import inert_line, json_text, md_code, md_text, terminal_safe
from tests.helpers.actionrunner import runner_commands
from tests.helpers.references import live_references

# Text biased towards what matters: Markdown and HTML punctuation, URL pieces, escapes
# and control characters, plus any other character now and then.
PIECES = st.sampled_from([
    "<", ">", "&", "[", "]", "(", ")", "!", "`", "*", "_", "~", "|", "\\", "#", "$", ":", "//", "@",
    "https://", "http://", "www.", "mailto:", "javascript:", "img", "a href=", "src=", "onerror=",
    "\n", "\r", "\t", "\x1b", "\x1b[", "\x1b]", "\x07", "\x9b", "\x9d", "\x00", "\u202e", "\u2028", " ",
    "::", "::add-mask::", "##[", "%0A", "&lt;", "&#60;", "evil.example", "x", "1",
    # GitHub's references: mentions, teams, issues, commits (tests/helpers/references.py)
    "@octocat", "@acme/team", "#12", "GH-3", "gh-", "acme/widgets", "/", "#", "-", "_", ".",
    "a5c3785", "deadbeef", "0123456789abcdef0123456789abcdef01234567", "&#64;", "&#35;",
])
TEXT = st.lists(st.one_of(PIECES, st.characters()), max_size=40).map("".join)
CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


class _Tags(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag if not attrs or tag in ("th", "td") else f"{tag} {attrs}")

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _render(markdown: str) -> _Tags:
    page = cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)
    doc = _Tags()
    doc.feed(page)
    return doc


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


@settings(max_examples=400, deadline=None)
@given(TEXT)
def test_terminal_safe_leaves_no_control_character_on_one_line(text: str) -> None:
    out = terminal_safe(text)
    assert not CONTROL.search(out)
    multi = terminal_safe(text, multiline=True)
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]", multi)
    assert terminal_safe(out) == out  # idempotent


@settings(max_examples=400, deadline=None)
@given(TEXT, TEXT)
def test_md_text_renders_as_exactly_its_text_with_no_tag_but_code(a: str, b: str) -> None:
    # Two fields side by side (the renderers always put at least one character between
    # two fields: two code spans touching would merge), in a paragraph and in a table cell.
    for markdown in (f"x {md_text(a)}:{md_text(b)} y\n",
                     f"| h | i |\n|---|---|\n| {md_text(a)} | {md_text(b)} |\n"):
        doc = _render(markdown)
        assert set(doc.tags) <= {"p", "code", "table", "thead", "tbody", "tr", "th", "td"}, doc.tags
        if "|" not in markdown.splitlines()[0]:
            assert _squash("".join(doc.text)) == _squash(f"x {terminal_safe(a)}:{terminal_safe(b)} y")
    table = _render(f"| h | i |\n|---|---|\n| {md_text(a)} | {md_text(b)} |\n")
    assert table.tags.count("td") == 2  # neither field broke the row


# Each form GitHub links or notifies from, and the neighbours that once kept one live: a
# backtick before it (escaped as "\\`", then skipped by a mention defuser), a bracket, an
# emphasis mark, an entity's "&".
REFERENCES = [
    "@octocat", "@acme/security-team", "#12", "GH-12", "gh-12", "acme/widgets#12", "acme/my_repo#3",
    "acme/widgets@a5c3785", "octocat@a5c3785ed8d6a35868bc169f07e40e889087fd2e",
    "a5c3785ed8d6a35868bc169f07e40e889087fd2e", "a5c3785", "deadbeef", "mail evil@evil.example",
]
AROUND = ["{}", "`{}", "`{}`", "\\{}", "({})", "[{}]", "*{}*", "_{}_", "~{}~", "x {}.", "&{}", "{}:", "é{}"]


@pytest.mark.parametrize("reference", REFERENCES)
def test_md_text_leaves_no_reference_github_would_link_or_notify_from(reference: str) -> None:
    for shape in AROUND:
        text = shape.format(reference)
        for markdown in (f"x {md_text(text)} y\n", f"| h |\n|---|\n| {md_text(text)} |\n",
                         f"x {md_code(text)} y\n"):
            assert live_references(markdown) == [], (text, markdown)
            doc = _render(markdown)
            assert "a" not in doc.tags and reference in "".join(doc.text)  # no link; still readable


def test_a_url_and_a_reference_that_touch_make_one_code_span() -> None:
    assert md_text("x@https://e.example/y") == "`x@https://e.example/y`"
    assert md_text("see #12, @octocat and a5c3785!") == "see `#12`, `@octocat` and `a5c3785`!"
    assert md_text("plain words #hashtag GH-x, beefy cafe") == "plain words #hashtag GH-x, beefy cafe"


@settings(max_examples=400, deadline=None)
@given(TEXT, TEXT)
def test_md_text_leaves_no_live_reference_in_any_text(a: str, b: str) -> None:
    for markdown in (f"x {md_text(a)}:{md_text(b)} y\n", f"| h | i |\n|---|---|\n| {md_text(a)} | {md_text(b)} |\n"):
        assert live_references(markdown) == [], markdown


@settings(max_examples=200, deadline=None)
@given(TEXT)
def test_md_code_is_a_code_span_or_falls_back_to_text(text: str) -> None:
    doc = _render(f"x {md_code(text)} y\n")
    assert set(doc.tags) <= {"p", "code"}
    assert _squash("".join(doc.text)) == _squash(f"x {terminal_safe(text)} y")


@settings(max_examples=400, deadline=None)
@given(TEXT)
def test_inert_line_is_never_a_workflow_command(text: str) -> None:
    line = inert_line(text)
    assert "\n" not in line and "\r" not in line
    assert runner_commands(line) == []
    assert runner_commands("::warning::" + line)[0][0] == "warning"  # still fine as command data


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(TEXT, TEXT, max_size=4))
def test_json_text_is_the_same_value_and_inert(data: dict[str, str]) -> None:
    for indent in (2, None):
        out = json_text(data, indent=indent)
        assert json.loads(out) == data
        assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u2028\u2029]", out)
        assert runner_commands(out) == []
