"""``--profiles FILE``: custom profiles and overrides, and one-line errors naming file and key."""

from __future__ import annotations

from pathlib import Path

import pytest

from redline_canary.commands._options import load_profile
from redline_canary.commands._profiles_file import load_profiles_file
from redline_canary.corpus.severity import Severity
from redline_canary.errors import BadInput
from redline_canary.review.comments import Comment
from redline_canary.review.profiles import PROFILES

CUSTOM = Path(__file__).resolve().parents[1] / "data" / "profiles" / "custom_profiles.yml"


def _inline(login: str, body: str) -> Comment:
    return Comment(channel="inline", id=1, login=login, user_id=None, user_type="Bot", body=body,
                   path="p/app.py", line=5)


def test_custom_profile_identities_trigger_severity_signals_and_policy() -> None:
    p = load_profile("house-bot", (), str(CUSTOM))
    assert p.name == "house-bot" and p.unrated == "location"
    assert p.trigger.kind == "comment" and p.trigger.value == "/house review"
    assert p.is_reviewer(_inline("house-bot", "x")) and not p.is_reviewer(_inline("other[bot]", "x"))
    assert p.severity("SEV-1: token in source") is Severity.BLOCKER
    assert p.severity("SEV-2 off by one") is Severity.MAJOR
    assert p.severity("[MINOR] still the generic tags") is Severity.MINOR  # extends generic
    [f] = p.extract([_inline("House-Bot[bot]", "looks odd")]).findings
    assert f.severity is None  # unrated: location
    skip = Comment(channel="issue", id=2, login="house-bot[bot]", user_id=None, user_type="Bot",
                   body="Sorry, out of credits this month.")
    assert p.classify(skip) == "skipped"
    trigger = Comment(channel="issue", id=3, login="house-bot[bot]", user_id=None, user_type="Bot",
                      body="/house review")
    assert p.extract([trigger]).activity == 0


def test_override_of_a_builtin_keeps_the_rest_of_its_dialect() -> None:
    codex = load_profile("codex", (), str(CUSTOM))
    assert codex.severity("**<sub><sub>![P2 Badge](x)</sub></sub> t**") is Severity.CRITICAL  # overridden
    assert codex.severity("**<sub><sub>![P0 Badge](x)</sub></sub> t**") is Severity.BLOCKER   # built-in
    assert codex.logins == PROFILES["codex"].logins
    assert PROFILES["codex"].severity("![P2 Badge](x)") is Severity.MAJOR  # registry untouched
    assert codex.labels[0] == (Severity.CRITICAL, "/!\\[P2 Badge\\]/")


def test_unknown_reviewer_lists_custom_names(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="house-bot"):
        load_profile("nope", (), str(CUSTOM))


def test_replace_severity_and_new_logins(tmp_path: Path) -> None:
    f = tmp_path / "p.yml"
    f.write_text("profiles:\n  coderabbit:\n    logins: [\"my-rabbit[bot]\"]\n    replace_severity: true\n"
                 "    severity: {'\\bBAD\\b': blocker}\n    unrated: location\n")
    p = load_profiles_file(str(f))["coderabbit"]
    assert p.is_reviewer(_inline("my-rabbit", "x")) and not p.is_reviewer(_inline("coderabbitai[bot]", "x"))
    assert p.severity("_🔴 Critical_") is None and p.severity("this is bad") is Severity.BLOCKER
    # the CodeRabbit summary parser still applies
    assert p.mine_summaries and p.trigger.value == "@coderabbitai review"


BAD = [
    ("profiles: [", "not valid YAML"),
    ("- a\n- b\n", "top level: expected a mapping"),
    ("profile: {}\n", "profile: unknown key"),
    ("profiles: {}\n", "profiles: expected a mapping"),
    ("profiles:\n  x:\n    logins: [a]\n    colour: red\n", "profiles.x.colour: unknown key"),
    ("profiles:\n  x:\n    extends: nope\n", "profiles.x.extends: unknown profile 'nope'"),
    ("profiles:\n  x:\n    unrated: sometimes\n", "profiles.x.unrated: expected one of info, location"),
    ("profiles:\n  x:\n    logins: 3\n", "profiles.x.logins: expected a list"),
    ("profiles:\n  x:\n    bot_ids: [one]\n", "profiles.x.bot_ids: expected a list of integer"),
    ("profiles:\n  x:\n    trigger: {kind: shout}\n", "profiles.x.trigger.kind: expected one of none"),
    ("profiles:\n  x:\n    trigger: {kind: comment}\n", "profiles.x.trigger.value: a comment trigger"),
    ("profiles:\n  x:\n    severity:\n      - {pattern: '([', level: MAJOR}\n",
     "profiles.x.severity[0].pattern: bad regular expression"),
    ("profiles:\n  x:\n    severity:\n      - {pattern: 'a'}\n", "profiles.x.severity[0].level: missing"),
    ("profiles:\n  x:\n    severity:\n      - {pattern: 'a', level: HUGE}\n",
     "profiles.x.severity[0].level: unknown severity 'HUGE'"),
    ("profiles:\n  x:\n    severity: {'\\[P0\\]': HUGE}\n", "profiles.x.severity.\\[P0\\]: unknown severity"),
    ("profiles:\n  x:\n    signals:\n      - {signal: finding, pattern: a}\n",
     "profiles.x.signals[0].signal: expected one of"),
    ("profiles:\n  x:\n    signals:\n      - {signal: skipped}\n", "profiles.x.signals[0].pattern: expected"),
    ("profiles:\n  x:\n    mine_summaries: yes please\n", "profiles.x.mine_summaries: expected true or false"),
    ("profiles:\n  'bad name!': {}\n", "profiles.bad name!: profile names"),
]


@pytest.mark.parametrize(("text", "message"), BAD)
def test_bad_file_is_bad_input_naming_file_and_key(tmp_path: Path, text: str, message: str) -> None:
    f = tmp_path / "profiles.yml"
    f.write_text(text)
    with pytest.raises(BadInput) as err:
        load_profiles_file(str(f))
    text_of = str(err.value)
    assert text_of.startswith(str(f)) and message in text_of and "\n" not in text_of


def test_missing_file_is_bad_input(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="profiles file not found"):
        load_profile("redline", (), str(tmp_path / "nope.yml"))


@pytest.mark.parametrize("name", sorted(n for n, p in PROFILES.items() if p.labels))
def test_a_profiles_labels_table_names_exactly_the_levels_its_patterns_give(name: str) -> None:
    # `profile list` shows the labels; they are written beside the patterns they describe,
    # so this keeps the two from drifting apart (a level a pattern gives but the table omits).
    profile = PROFILES[name]
    assert {s for s, _ in profile.labels if s is not None} == {s for _p, s in profile.severity_patterns}
