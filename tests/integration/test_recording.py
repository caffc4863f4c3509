"""``run --record DIR`` and ``sandbox verify DIR``: a real run's traffic, scrubbed, replayed.

The run goes through the sandbox in-process (its request log is the ground truth of what
was sent); ``sandbox verify`` is the real CLI in a subprocess, as a user attaching a
recording to a bug report would run it.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from redline_canary.github.client import CANARY_TOPIC
from redline_canary.github.recordings import REQUEST_HEADERS
from redline_canary.sandbox import BanditReviewer, Sandbox
from tests.helpers.clirun import ROOT, cli
from tests.helpers.sandboxing import TOKEN, assert_no_canary_left, run_in_process

REPO = "acme/canary-mini"
CORPUS = ROOT / "tests" / "data" / "corpus"
FAST = ["--poll-interval", "0.05", "--stable-polls", "2", "--timeout-minutes", "0.5", "--confirm", "0"]
FIXTURES = ROOT / "tests" / "data" / "github-fixtures"


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, int]]:
    """One recorded sandbox run (bandit reviewing): the folder and how many requests the sandbox served."""
    folder = tmp_path_factory.mktemp("rec") / "run"
    history = folder.parent / "history.jsonl"
    with Sandbox(token=TOKEN, listen=False) as sb:
        sb.create_repo(REPO, topics=[CANARY_TOPIC])
        sb.attach_reviewer(REPO, BanditReviewer(latency=0.02))
        code, out, err = run_in_process(sb, "--repo", REPO, "--stack", "mini", "--corpus", str(CORPUS),
                                        "--history", str(history), "--run-id", "rec1", *FAST,
                                        "--record", str(folder), env={"GITHUB_TOKEN": TOKEN})
        assert code == 1, out + err  # bandit undercalls the seeds: the gate fails, the run worked
        served = len(sb.requests)
        assert f"recorded: {served} interaction(s) in {folder}" in out
        assert_no_canary_left(sb, REPO)
    yield folder, served


def _files(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.json"))


def test_every_request_of_the_run_is_one_file_in_the_fixtures_format(recording: tuple[Path, int]) -> None:
    folder, served = recording
    files = _files(folder)
    assert len(files) == served > 20
    assert not list(folder.glob("*.part"))
    methods = set()
    for i, path in enumerate(files):
        data = json.loads(path.read_text())
        assert set(data) == {"source", "request", "response"}
        assert data["source"]["interaction_index"] == i and set(data["source"]) == {
            "repo", "commit", "path", "interaction_index", "license"}
        req, resp = data["request"], data["response"]
        assert set(req) == {"method", "host", "path", "headers", "body"} and req["path"].startswith("/")
        assert set(req["headers"]) <= set(REQUEST_HEADERS)
        assert set(resp) == {"status", "headers", "body"}
        assert all(isinstance(p, list) and len(p) == 2 for p in resp["headers"])
        assert (resp["body"] is None) == (resp["status"] in (204, 304))
        methods.add(req["method"])
    assert methods == {"GET", "POST", "DELETE"}  # deleting the branch closes the PR


def test_no_written_byte_carries_the_token_or_an_authorization(recording: tuple[Path, int]) -> None:
    folder, _ = recording
    everything = b"".join(p.read_bytes() for p in folder.iterdir())
    assert TOKEN.encode() not in everything
    assert b"authorization" not in everything.lower()
    assert b"cookie" not in everything.lower()


def test_a_recorded_run_replays_against_the_sandbox_without_difference(recording: tuple[Path, int]) -> None:
    folder, served = recording
    res = cli("sandbox", "verify", str(folder))
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr
    lines = res.stdout.splitlines()
    assert lines[-1] == f"{served} interaction(s) replayed, 0 differ"
    assert sum(line.startswith("same  ") for line in lines) == served


def _edit(path: Path, change: Any) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def test_an_altered_recording_is_caught_interaction_by_interaction(recording: tuple[Path, int],
                                                                   tmp_path: Path) -> None:
    folder = tmp_path / "altered"
    shutil.copytree(recording[0], folder)
    pull = next(p for p in _files(folder) if "_post_repos-acme-canary-mini-pulls_201" in p.name)
    _edit(pull, lambda d: d["response"]["body"].update(num=d["response"]["body"].pop("number")))
    label = next(p for p in _files(folder) if "_post_repos-acme-canary-mini-labels_" in p.name)
    _edit(label, lambda d: d["response"].update(status=200))
    tree = next(p for p in _files(folder) if "git-trees_201" in p.name)
    _edit(tree, lambda d: d["response"]["body"].update(truncated="no"))
    ref = next(p for p in _files(folder) if "git-ref-heads-main_200" in p.name)
    _edit(ref, lambda d: d["response"].update(headers=[h for h in d["response"]["headers"] if h[0] != "etag"]))

    res = cli("sandbox", "verify", "--json", str(folder))
    assert res.returncode == 1, res.stdout[-2000:]
    rows = [json.loads(line) for line in res.stdout.splitlines()]
    summary, by_file = rows[-1], {r["file"]: r["differences"] for r in rows[:-1]}
    assert summary == {"interactions": recording[1], "differ": 4}
    assert by_file[pull.name] == ["body: key(s) not replayed: num", "body: key(s) not recorded: number"]
    assert by_file[label.name] == ["status: 200 recorded, 201 replayed"]
    assert by_file[tree.name] == ["body.truncated: string recorded, boolean replayed"]
    assert by_file[ref.name] == ["header etag: replayed, not recorded"]


def test_the_shipped_github_recordings_are_replayed_and_what_differs_is_said() -> None:
    res = cli("sandbox", "verify", "--json", "--reviewer-kind", "none", str(FIXTURES))
    rows = [json.loads(line) for line in res.stdout.splitlines()]
    summary, outcomes = rows[-1], rows[:-1]
    shipped = sorted(p.name for p in FIXTURES.glob("*.json") if not p.name.startswith("openapi-excerpt"))
    assert sorted(o["file"] for o in outcomes) == shipped
    assert summary["interactions"] == len(shipped)
    assert summary["differ"] == sum(bool(o["differences"]) for o in outcomes)
    assert res.returncode == (1 if summary["differ"] else 0)
    # Recordings that need no earlier state replay alike; the rest mostly need objects the
    # recording's other requests made on GitHub, and say so (a status difference).
    same = {o["file"] for o in outcomes if not o["differences"]}
    assert {"git-refs_list_200.octokit.json", "repo_conditional_304.pygithub.json"} <= same
    for o in outcomes:
        assert all(isinstance(d, str) and d for d in o["differences"])


def test_bad_recordings_and_folders_are_one_line_exit_2(tmp_path: Path) -> None:
    res = cli("sandbox", "verify", str(tmp_path / "absent"))
    assert res.returncode == 2 and res.stderr.count("\n") == 1 and "not a folder" in res.stderr
    (tmp_path / "empty").mkdir()
    res = cli("sandbox", "verify", str(tmp_path / "empty"))
    assert res.returncode == 2 and "no recorded interaction" in res.stderr
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "0001.json").write_text('{"request": {"method": "GET", "path": "/user"}, "response": {"status": "200"}}')
    res = cli("sandbox", "verify", str(bad))
    assert res.returncode == 2 and f"{bad / '0001.json'}: response.status: must be an integer" in res.stderr


def test_record_refuses_a_folder_that_already_holds_a_recording(recording: tuple[Path, int]) -> None:
    with Sandbox(token=TOKEN, listen=False) as sb:
        sb.create_repo(REPO, topics=[CANARY_TOPIC])
        code, _out, err = run_in_process(sb, "--repo", REPO, "--stack", "mini", "--corpus", str(CORPUS),
                                         "--history", "", *FAST, "--record", str(recording[0]),
                                         env={"GITHUB_TOKEN": TOKEN})
        assert code == 2 and "--record:" in err and "already holds a recording" in err
        assert sb.requests == []


def test_the_recording_of_a_second_run_verifies_clean(tmp_path: Path) -> None:
    """The second run against a repository finds the label the first one made (GET 200,
    no POST); the replay's fresh sandbox seeds that label, so nothing differs that did not."""
    folders = [tmp_path / "first", tmp_path / "second"]
    with Sandbox(token=TOKEN, listen=False) as sb:
        sb.create_repo(REPO, topics=[CANARY_TOPIC])
        sb.attach_reviewer(REPO, BanditReviewer(latency=0.02))
        for n, folder in enumerate(folders, 1):
            code, out, err = run_in_process(sb, "--repo", REPO, "--stack", "mini", "--corpus", str(CORPUS),
                                            "--history", str(tmp_path / "history.jsonl"), "--run-id", f"two{n}",
                                            *FAST, "--record", str(folder), env={"GITHUB_TOKEN": TOKEN})
            assert code == 1, out + err
            assert_no_canary_left(sb, REPO)
    second = [p.name for p in _files(folders[1])]
    assert any("_get_repos-acme-canary-mini-labels-redline-exempt_200" in n for n in second)
    assert not any("_post_repos-acme-canary-mini-labels_" in n for n in second)  # it existed: not created
    for folder in folders:
        res = cli("sandbox", "verify", str(folder))
        assert res.returncode == 0, res.stdout[-3000:] + res.stderr
        assert res.stdout.splitlines()[-1].endswith(" interaction(s) replayed, 0 differ")
