"""Contract test: every recorded GitHub interaction, replayed against the sandbox.

For each recording in ``tests/data/github-fixtures`` (public GitHub traffic) a scene is set up in a fresh
sandbox (same owner/repo names as recorded; ids and SHAs that cannot be reproduced are
mapped to the sandbox's own), the recorded request is sent over a real socket, and the
answer must match the recording: status, the headers that matter (Location, ETag presence,
Link rels, x-ratelimit-*, content-type) and every key of the recorded body, with the same
JSON type, recursively (first element for arrays).

A recorded ``null`` accepts any value (the field is nullable). A sandbox ``null`` where the
recording has a value is accepted only for keys the OpenAPI excerpt marks nullable: those are
state GitHub had and the sandbox does not model (a merge, a milestone, a licence).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import httpx
import pytest

from redline_canary.sandbox import Sandbox

FIXTURES = Path(__file__).resolve().parents[1] / "data" / "github-fixtures"
OPENAPI = FIXTURES / "openapi-excerpt_pulls-git-issues.octokit-openapi.json"


def _recordings() -> list[str]:
    return sorted(p.name for p in FIXTURES.glob("*.json") if not p.name.startswith("openapi-excerpt"))


RECORDINGS = _recordings()

# Recordings genuinely out of the product's REST subset. Empty: every recording is replayed.
SKIPPED: dict[str, str] = {}

# Recordings replayed with a different request because the recorded endpoint is not part of
# the product's subset but the response shape is (reason given per file).
SUBSTITUTED: dict[str, str] = {
    "search_secondary-abuse-limit_403_retry-after.pygithub.json": (
        "GET /search/code is not used by the product; the secondary-limit 403 + Retry-After "
        "it records is compared against the sandbox's secondary-limit answer to a "
        "content-creating POST"
    ),
}


@dataclass
class Scene:
    """How the recorded request maps onto this sandbox."""

    segs: dict[str, str] = field(default_factory=dict)  # exact path segment / string swaps
    headers: dict[str, str] = field(default_factory=dict)
    body_patch: dict[str, Any] = field(default_factory=dict)
    request: tuple[str, str, Any] | None = None  # replaces (method, path, body)
    note: str = ""


Setup = Callable[[Sandbox, httpx.Client, dict[str, Any]], Scene]
SETUPS: dict[str, Setup] = {}


def setup(name: str) -> Callable[[Setup], Setup]:
    def deco(fn: Setup) -> Setup:
        SETUPS[name] = fn
        return fn

    return deco


# --- helpers --------------------------------------------------------------------------


def _repo_of(rec: dict[str, Any]) -> str:
    parts = rec["request"]["path"].split("/")
    return f"{parts[2]}/{parts[3]}"


def _sha(client: httpx.Client, repo: str, branch: str) -> str:
    r = client.get(f"/repos/{repo}/git/ref/heads/{branch}")
    assert r.status_code == 200, r.text
    sha: str = r.json()["object"]["sha"]
    return sha


def _tree_of(client: httpx.Client, repo: str, commit: str) -> str:
    r = client.get(f"/repos/{repo}/git/commits/{commit}")
    assert r.status_code == 200, r.text
    sha: str = r.json()["tree"]["sha"]
    return sha


def _git_repo(sb: Sandbox, rec: dict[str, Any], default: str = "main") -> str:
    repo = _repo_of(rec)
    sb.create_repo(
        repo,
        files={".github/workflows/ci.yml": "on: push\n", "README.md": "# PyGithub\n"},
        default_branch=default,
    )
    sb.commit_files(repo, default, {"src/lib.py": "VALUE = 1\n"}, "Second commit")
    return repo


def _child(sb: Sandbox, client: httpx.Client, repo: str) -> str:
    """A commit whose parent is main's tip, reachable from no branch but ``scratch``."""
    sb.commit_files(repo, "scratch", {"path/to/file_one.txt": "content of file one"})
    sha = _sha(client, repo, "scratch")
    return sha


def _pull(sb: Sandbox, repo: str, author: str = "jacquev6", branch: str = "feature") -> int:
    return sb.create_pull(
        repo,
        branch,
        title="Title edited by PyGithub",
        body="Body",
        author=author,
        files={"src/app.py": "import os\n\nprint(os.getcwd())\nprint('hi')\n"},
    )


def _review(client: httpx.Client, repo: str, number: int, event: str | None, **extra: Any) -> int:
    body: dict[str, Any] = {"body": extra.pop("body", ""), **extra}
    if event:
        body["event"] = event
    r = client.post(f"/repos/{repo}/pulls/{number}/reviews", json=body)
    assert r.status_code == 200, r.text
    rid: int = r.json()["id"]
    return rid


def _inline(path: str = "src/app.py", line: int = 3) -> dict[str, Any]:
    return {"path": path, "line": line, "side": "RIGHT", "body": "Review comment"}


# --- scenes ----------------------------------------------------------------------------


@setup("branch_get_404_after-delete.pygithub.json")
def _branch_404(sb: Sandbox, client: httpx.Client, rec: dict[str, Any]) -> Scene:
    repo = _git_repo(sb, rec, "master")
    branch = rec["request"]["path"].split("/branches/", 1)[1]
    sb.commit_files(repo, branch, {"x.txt": "x\n"})
    assert client.get(f"/repos/{repo}/branches/{branch}").status_code == 200
    assert client.delete(f"/repos/{repo}/git/refs/heads/{branch}").status_code == 204
    return Scene()


@setup("git-commit_create_201.pygithub.json")
def _commit_create(sb: Sandbox, client: httpx.Client, rec: dict[str, Any]) -> Scene:
    repo = _git_repo(sb, rec)
    main = _sha(client, repo, "main")
    tree = _tree_of(client, repo, _child(sb, client, repo))
    body = rec["request"]["body"]
    return Scene(segs={body["tree"]: tree, body["parents"][0]: main})


@setup("git-commit_get_200.pygithub.json")
def _commit_get(sb: Sandbox, client: httpx.Client, rec: dict[str, Any]) -> Scene:
    repo = _git_repo(sb, rec)
    recorded = rec["request"]["path"].rsplit("/", 1)[1]
    return Scene(segs={recorded: _sha(client, repo, "main")})


@setup("git-ref_create_201.pygithub.json")
@setup("git-refs_create_201.octokit.json")
def _ref_create(sb: Sandbox, client: httpx.Client, rec: dict[str, Any]) -> Scene:
    repo = _git_repo(sb, rec)
    return Scene(segs={rec["request"]["body"]["sha"]: _sha(client, repo, "main")})


@setup("git-ref_delete_204.pygithub.json")
@setup("git-refs_delete_204.octokit.json")
@setup("git-ref_get_200.pygithub.json")
def _ref_exists(sb: Sandbox, client: httpx.Client, rec: dict[str, Any]) -> Scene:
    repo = _git_repo(sb, rec)
    path = rec["request"]["path"]
    branch = path.split("/heads/", 1)[1]
    sb.commit_files(repo, branch, {"x.txt": "x\n"})
    return Scene()


@setup("git-ref_update_200.pygithub.json")
@setup("git-refs_update_200.octokit.json")
def _ref_update(sb: Sandbox, client: httpx.Client, rec: dict[str, Any]) -> Scene:
    repo = _git_repo(sb, rec)
    branch = rec["request"]["path"].split("/heads/", 1)[1]
    main = _sha(client, repo, "main")
    client.post(f"/repos/{repo}/git/refs", json={"ref": f"refs/heads/{branch}", "sha": main}).raise_for_status()
    return Scene(segs={rec["request"]["body"]["sha"]: _child(sb, client, repo)})


@setup("git-refs_list_200.octokit.json")
def _refs_list(sb: Sandbox, client: httpx.Client, rec: dict[str, Any]) -> Scene:
    repo = _git_repo(sb, rec)
    client.post(
        f"/repos/{repo}/git/refs",
        json={"ref": "refs/heads/test", "sha": _sha(client, repo, "main")},
    ).raise_for_status()
    return Scene()


@setup("git-tree_create_inline-content_base-tree_201.pygithub.json")
@setup("git-tree_get_200.pygithub.json")
def _tree_with_base(sb: Sandbox, client: httpx.Client, rec: dict[str, Any]) -> Scene:
    repo = _git_repo(sb, rec)
    main = _sha(client, repo, "main")
    body = rec["request"].get("body") or {}
    recorded = body.get("base_tree") or rec["request"]["path"].rsplit("/", 1)[1]
    return Scene(segs={recorded: main})


@setup("git-tree_create_null-sha-delete_201.pygithub.json")
def _tree_delete(sb: Sandbox, client: httpx.Client, rec: dict[str, Any]) -> Scene:
    repo = _repo_of(rec)
    sb.create_repo(repo, files={"Baz.bar": "bar\n", "README.md": "# PyGithub\n"})
    return Scene(
        body_patch={"base_tree": _sha(client, repo, "main")},
        note=(
            "the recorded request has no base_tree, yet the recorded tree keeps README.md, "
            "which can only come from a base tree: the ReplayData body lost it"
        ),
    )


@setup("issue-comment_get_200.pygithub.json")
def _issue_comment(sb: Sandbox, client: httpx.Client, rec: dict[str, Any]) -> Scene:
    repo = _repo_of(rec)
    sb.create_repo(repo)
    n = sb.create_issue(repo, "Issue created by PyGithub")
    cid = sb.add_issue_comment(repo, n, "Comment created by PyGithub\n", author="stuglaser")
    return Scene(segs={rec["request"]["path"].rsplit("/", 1)[1]: str(cid)})


@setup("issue-comments_list_page1_200.pygithub.json")
@setup("issue-comments_list_page2_200.pygithub.json")
@setup("issue-comments_list_page3_200.pygithub.json")
def _issue_comment_pages(sb: Sandbox, client: httpx.Client, rec: dict[str, Any]) -> Scene:
    handle = sb.create_repo("PyGithub/PyGithub")
    sb.add_user("stale[bot]", type="Bot")
    n = sb.create_issue("PyGithub/PyGithub", "Paginated")
    for i in range(7):
        sb.add_issue_comment("PyGithub/PyGithub", n, f"comment {i}", author="stale[bot]")
    return Scene(segs={"1136": str(n), "3544490": str(handle.id)})


@setup("issues_add-labels_200.octokit.json")
def _add_labels(sb: Sandbox, client: httpx.Client, rec: dict[str, Any]) -> Scene:
    repo = _repo_of(rec)
    sb.create_repo(repo)
    n = sb.create_issue(repo, "Issue")
    return Scene(segs={"1": str(n)})


@setup("issues_list_page1_link-next-last.octokit.json")
@setup("issues_list_page2_link-prev-next-last-first.octokit.json")
@setup("issues_list_page5_link-prev-first.octokit.json")
def _issue_pages(sb: Sandbox, client: httpx.Client, rec: dict[str, Any]) -> Scene:
    repo = "octokit-fixture-org/tmp-scenario-paginate-issues-20220719043836917-izyoe"
    handle = sb.create_repo(repo)
    for i in range(1, 14):
        sb.create_issue(repo, f"Test issue {i}", author="octokit-fixture-user-a")
    return Scene(segs={"515435940": str(handle.id)})


@setup("labels_create_422_validation-failed.octokit.json")
def _label_422(sb: Sandbox, client: httpx.Client, rec: dict[str, Any]) -> Scene:
    sb.create_repo(_repo_of(rec))
    return Scene()


@setup("pull-review-comment_get_200.pygithub.json")
def _review_comment_get(sb: Sandbox, client: httpx.Client, rec: dict[str, Any]) -> Scene:
    repo = _repo_of(rec)
    sb.create_repo(repo)
    n = _pull(sb, repo)
    _review(client, repo, n, "COMMENT", comments=[_inline()])
    cid = client.get(f"/repos/{repo}/pulls/{n}/comments").json()[0]["id"]
    return Scene(segs={rec["request"]["path"].rsplit("/", 1)[1]: str(cid)})


@setup("pull-review-comments_list_200.pygithub.json")
def _review_comments(sb: Sandbox, client: httpx.Client, rec: dict[str, Any]) -> Scene:
    repo = _repo_of(rec)
    sb.create_repo(repo)
    n = _pull(sb, repo)
    _review(client, repo, n, "COMMENT", comments=[_inline(line=1), _inline(line=3)])
    return Scene(segs={"31": str(n)})


@setup("pull-review_create_approve_200.pygithub.json")
def _review_approve(sb: Sandbox, client: httpx.Client, rec: dict[str, Any]) -> Scene:
    repo = _repo_of(rec)
    sb.create_repo(repo)
    n = _pull(sb, repo, author="kingcons")
    return Scene(segs={"173": str(n)})


@setup("pull-review_get_pending_200.pygithub.json")
def _review_pending(sb: Sandbox, client: httpx.Client, rec: dict[str, Any]) -> Scene:
    repo = _repo_of(rec)
    sb.create_repo(repo)
    n = _pull(sb, repo, author="someone-else")
    rid = _review(client, repo, n, None)
    return Scene(segs={"4": str(n), "631460061": str(rid)})


@setup("pull-reviews_list_200.pygithub.json")
def _reviews_list(sb: Sandbox, client: httpx.Client, rec: dict[str, Any]) -> Scene:
    repo = _repo_of(rec)
    sb.create_repo(repo)
    n = _pull(sb, repo, author="someone-else")
    _review(client, repo, n, "APPROVE")
    _review(client, repo, n, "COMMENT", body="Looks fine", comments=[_inline()])
    return Scene(segs={"538": str(n)})


@setup("pull_create_201_2012-old-shape.pygithub.json")
def _pull_create(sb: Sandbox, client: httpx.Client, rec: dict[str, Any]) -> Scene:
    sb.create_repo("PyGithub/PyGithub", default_branch="master")
    sb.commit_files("PyGithub/PyGithub", "topic/RewriteWithGeneratedCode", {"a.py": "a = 1\n"})
    sb.create_repo("BeaverSoftware/PyGithub", fork_of="PyGithub/PyGithub", default_branch="master")
    sb.commit_files("BeaverSoftware/PyGithub", "master", {"b.py": "b = 2\n"})
    return Scene()


@setup("pull_get_200.pygithub.json")
def _pull_get(sb: Sandbox, client: httpx.Client, rec: dict[str, Any]) -> Scene:
    repo = _repo_of(rec)
    sb.create_repo(repo, topics=["github", "python"])
    sb.add_user("sfdye")
    n = _pull(sb, repo)
    client.post(
        f"/repos/{repo}/pulls/{n}/requested_reviewers",
        json={"reviewers": ["sfdye"], "team_reviewers": ["maintainers"]},
    ).raise_for_status()
    with sb.state.lock:  # in-process: the product never assigns, so the sandbox serves no route for it
        sb.state.get_issue(sb.state.get_repo_by_name(repo), n).assignees.append(sb.state.ensure_user("jacquev6"))
    return Scene(segs={"31": str(n)})


@setup("pull_update_200.pygithub.json")
def _pull_update(sb: Sandbox, client: httpx.Client, rec: dict[str, Any]) -> Scene:
    repo = _repo_of(rec)
    sb.create_repo(repo, default_branch="master")
    n = _pull(sb, repo, branch="feature/pr-maintainer-can-modify")
    return Scene(segs={"2": str(n)})


@setup("rate-limit_get_200.pygithub.json")
def _rate(sb: Sandbox, client: httpx.Client, rec: dict[str, Any]) -> Scene:
    return Scene()


@setup("repo_conditional_304.pygithub.json")
def _conditional(sb: Sandbox, client: httpx.Client, rec: dict[str, Any]) -> Scene:
    repo = _repo_of(rec)
    sb.create_repo(repo)
    etag = client.get(f"/repos/{repo}").headers["etag"]
    return Scene(headers={"If-None-Match": etag})


@setup("search_secondary-abuse-limit_403_retry-after.pygithub.json")
def _secondary(sb: Sandbox, client: httpx.Client, rec: dict[str, Any]) -> Scene:
    sb.create_repo("acme/canary-python")
    n = sb.create_issue("acme/canary-python", "x")
    sb.secondary_limit(per_minute=0)
    path = f"/repos/acme/canary-python/issues/{n}/comments"
    return Scene(request=("POST", path, {"body": "too fast"}), note=SUBSTITUTED[rec["name"]])


@setup("user_primary-rate-limit_403.pygithub.json")
def _primary(sb: Sandbox, client: httpx.Client, rec: dict[str, Any]) -> Scene:
    sb.add_user("jacquev6")
    sb.primary_limit(remaining=0, reset_in=60)
    return Scene()


# --- comparison --------------------------------------------------------------------------


def _nullable_keys() -> frozenset[str]:
    """Property names the OpenAPI excerpt declares nullable anywhere."""
    if not OPENAPI.is_file():
        return frozenset()
    schemas = json.loads(OPENAPI.read_text())["components"]["schemas"]

    def isnull(spec: Any) -> bool:
        if not isinstance(spec, dict):
            return False
        if spec.get("nullable"):
            return True
        if "$ref" in spec:
            return bool(schemas.get(spec["$ref"].rsplit("/", 1)[1], {}).get("nullable"))
        return any(isnull(x) for k in ("anyOf", "oneOf") for x in spec.get(k, []))

    names: set[str] = set()

    def walk(spec: Any) -> None:
        if not isinstance(spec, dict):
            return
        for key, sub in spec.get("properties", {}).items():
            if isnull(sub):
                names.add(key)
            walk(sub)
        walk(spec.get("items"))
        for k in ("anyOf", "oneOf", "allOf"):
            for x in spec.get(k, []):
                walk(x)

    for s in schemas.values():
        walk(s)
    return frozenset(names)


NULLABLE = _nullable_keys()


def _jtype(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    return "object"


def shape_problems(recorded: Any, ours: Any, where: str = "$", key: str = "") -> list[str]:
    rt, ot = _jtype(recorded), _jtype(ours)
    if rt == "null":
        return []
    if ot == "null":
        return [] if key in NULLABLE else [f"{where}: recorded {rt}, sandbox null"]
    if rt != ot:
        return [f"{where}: recorded {rt}, sandbox {ot}"]
    out: list[str] = []
    if rt == "object":
        for k, v in recorded.items():
            if k not in ours:
                out.append(f"{where}.{k}: missing")
            else:
                out += shape_problems(v, ours[k], f"{where}.{k}", k)
    elif rt == "array" and recorded:
        if not ours:
            out.append(f"{where}: recorded a non-empty array, sandbox empty")
        else:
            out += shape_problems(recorded[0], ours[0], f"{where}[0]", key)
    return out


def _headers(pairs: list[list[str]]) -> dict[str, str]:
    return {k.lower(): v for k, v in pairs}


def _rels(link: str | None) -> list[tuple[str, str, str]]:
    """(rel, path-kind, page) for each link entry, in order."""
    out = []
    for part in (link or "").split(", "):
        if not part:
            continue
        url, rel = part.split("; ")
        u = urlsplit(url.strip("<>"))
        kind = "repositories" if u.path.startswith("/repositories/") else "repos"
        out.append((rel, kind, dict(parse_qsl(u.query)).get("page", "")))
    return out


def _swap_path(path: str, segs: dict[str, str]) -> str:
    u = urlsplit(path)
    parts = [segs.get(p, p) for p in u.path.split("/")]
    query = "&".join(
        f"{k}={segs.get(v, v)}" if sep else k for k, sep, v in (q.partition("=") for q in u.query.split("&") if q)
    )
    return "/".join(parts) + (f"?{query}" if query else "")


def _swap_body(body: Any, segs: dict[str, str]) -> Any:
    if isinstance(body, str):
        return segs.get(body, body)
    if isinstance(body, list):
        return [_swap_body(x, segs) for x in body]
    if isinstance(body, dict):
        return {k: _swap_body(v, segs) for k, v in body.items()}
    return body


@pytest.fixture
def sandbox() -> Iterator[tuple[Sandbox, httpx.Client]]:
    with Sandbox() as sb, httpx.Client(base_url=sb.url, headers={"Authorization": "token t"}, timeout=10) as client:
        yield sb, client


def test_every_recording_has_a_scene_or_a_named_skip() -> None:
    assert RECORDINGS, f"no recordings in {FIXTURES}"
    unaccounted = [n for n in RECORDINGS if n not in SETUPS and n not in SKIPPED]
    assert not unaccounted, f"recordings with no contract scene: {unaccounted}"


@pytest.mark.parametrize("name", RECORDINGS)
def test_recording_contract(name: str, sandbox: tuple[Sandbox, httpx.Client]) -> None:
    if name in SKIPPED:
        pytest.skip(SKIPPED[name])
    sb, client = sandbox
    rec = json.loads((FIXTURES / name).read_text())
    rec["name"] = name
    scene = SETUPS[name](sb, client, rec)
    req = rec["request"]
    if scene.request is not None:
        method, path, body = scene.request
    else:
        method = req["method"]
        path = _swap_path(req["path"], scene.segs)
        body = _swap_body(req.get("body"), scene.segs)
        if scene.body_patch:
            body = {**(body or {}), **scene.body_patch}
    headers = {
        k: v
        for k, v in (req.get("headers") or {}).items()
        if k.lower() in ("accept", "if-none-match", "if-modified-since")
    }
    headers.update(scene.headers)
    if scene.request is not None:
        headers.pop("If-None-Match", None)
    content = None if body is None else json.dumps(body).encode()
    if content is not None:
        headers["Content-Type"] = "application/json"
    resp = client.request(method, path, content=content, headers=headers)

    want = rec["response"]
    rh = _headers(want["headers"])
    problems: list[str] = []
    if resp.status_code != want["status"]:
        problems.append(f"status: recorded {want['status']}, sandbox {resp.status_code}")
    ours = {k.lower(): v for k, v in resp.headers.items()}
    if ("location" in rh) != ("location" in ours):
        problems.append(f"location: recorded {'location' in rh}, sandbox {'location' in ours}")
    recorded_url = want["body"].get("url") if isinstance(want["body"], dict) else None
    location_is_url = "location" in rh and recorded_url == rh["location"]
    if location_is_url and resp.json().get("url") != ours.get("location"):
        problems.append("location: recorded equals body url, sandbox does not")
    if ("etag" in rh) != ("etag" in ours):
        problems.append(f"etag: recorded {'etag' in rh}, sandbox {'etag' in ours}")
    for h in (k for k in rh if k.startswith("x-ratelimit-")):
        if h not in ours:
            problems.append(f"{h}: missing")
    if rh.get("x-ratelimit-remaining") == "0" and ours.get("x-ratelimit-remaining") != "0":
        problems.append("x-ratelimit-remaining: recorded 0")
    if rh.get("content-type") != ours.get("content-type"):
        problems.append(f"content-type: recorded {rh.get('content-type')!r}, sandbox {ours.get('content-type')!r}")
    if "retry-after" in rh and "retry-after" not in ours:
        problems.append("retry-after: missing")
    rec_rels, our_rels = _rels(rh.get("link")), _rels(ours.get("link"))
    if rec_rels != our_rels:
        problems.append(f"link: recorded {rec_rels}, sandbox {our_rels}")
    if want["body"] is None:
        if resp.content:
            problems.append(f"body: recorded empty, sandbox {resp.content[:80]!r}")
    else:
        problems += shape_problems(want["body"], resp.json())
    assert not problems, f"{name} ({scene.note or 'verbatim request'}):\n  " + "\n  ".join(problems)
