"""Edge validation accepts every value real users pass, and refuses the dangerous ones.

The probe (``test_bad_input.py``) shows bad values exit 2; these show the good values a
real setup uses still work, so tightening validation never breaks a working canary.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from redline_canary.commands import _validate as validate
from redline_canary.errors import BadInput
from redline_canary.github.transport import validate_api_url
from redline_canary.run.runner import default_run_id
from redline_canary.sandbox import BanditReviewer
from tests.helpers.clirun import ROOT, cli_main
from tests.helpers.sandboxing import TOKEN, canary_sandbox

CORPUS = ROOT / "tests" / "data" / "corpus"


@pytest.mark.parametrize("value", ["acme/canary-python", "my-org/my.repo_1", "jdoe_acme/x", "a/b",
                                   "o" * 39 + "/" + "n" * 100, "acme/.github"])
def test_real_repository_names_are_accepted(value: str) -> None:
    assert validate.repo(value, "--repo") == value


@pytest.mark.parametrize("value", ["main", "release/2.4", "feature/foo-bar", "v1.2.3", "user/jdoe/wip",
                                   "trunk_2025", "a.b"])
def test_real_branch_names_are_accepted(value: str) -> None:
    assert validate.ref_name(value, "base") == value


@pytest.mark.parametrize("value", ["", "services/api", "services/api/", "a.b/c-d_e"])
def test_real_prefixes_are_accepted(value: str) -> None:
    assert validate.prefix(value, "prefix") == value


@pytest.mark.parametrize("value", ["copilot-pull-request-reviewer[bot]", "Copilot", "coderabbitai[bot]"])
def test_bot_logins_are_accepted(value: str) -> None:
    assert validate.login(value, "login") == value


@pytest.mark.parametrize("value", ["https://api.github.com", "https://ghe.example.com/api/v3",
                                   "http://127.0.0.1:8080", "http://[::1]:9000/"])
def test_real_api_urls_are_accepted(value: str) -> None:
    assert validate_api_url(value) == value


def test_github_run_ids_and_the_local_default_are_always_valid(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_RUN_ID", "12345678901")
    monkeypatch.setenv("GITHUB_RUN_ATTEMPT", "3")
    assert validate.run_id(default_run_id()) == "12345678901-3"
    monkeypatch.delenv("GITHUB_RUN_ID")
    assert validate.run_id(default_run_id()).startswith("local-")


def test_an_api_url_with_a_password_is_refused_without_echoing_it() -> None:
    with pytest.raises(BadInput) as exc:
        validate_api_url("https://user:hunter2@ghe.example.com/api/v3")
    assert "hunter2" not in str(exc.value)


def test_a_yaml_newline_in_a_repo_name_is_refused() -> None:
    """``re.match`` with ``$`` accepts ``"a/b\\n"``; the target must not."""
    with pytest.raises(BadInput, match=r"^targets\.repo: expected OWNER/NAME"):
        validate.repo("acme/x\n", "targets.repo")


def test_captures_land_directly_in_the_save_captures_folder(tmp_path: Path) -> None:
    """Capture names are built from the run id, repo and stack: with all three validated,
    a run id full of dots and dashes still writes inside the folder, nowhere else."""
    captures = tmp_path / "caps" / "new"  # parents are created
    for sb in canary_sandbox("acme/canary-mini"):
        sb.attach_reviewer("acme/canary-mini", BanditReviewer(latency=0.02))
        res = cli_main("run", "--repo", "acme/canary-mini", "--stack", "mini", "--corpus", str(CORPUS),
                  "--api-url", sb.url, "--history", str(tmp_path / "h.jsonl"), "--run-id", "r.1-x_y",
                  "--poll-interval", "0.05", "--timeout-minutes", "0.5", "--confirm", "0",
                  "--save-captures", str(captures), env={"GITHUB_TOKEN": TOKEN})
        assert res.returncode in (0, 1), res.stderr
    written = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file())
    assert written == ["caps/new/r.1-x_y-acme_canary-mini-mini-clean-1.json",
                       "caps/new/r.1-x_y-acme_canary-mini-mini-seeded-1.json", "h.jsonl"]
    assert json.loads((captures / "r.1-x_y-acme_canary-mini-mini-seeded-1.json").read_text())["manifest"][
        "run_id"] == "r.1-x_y"
