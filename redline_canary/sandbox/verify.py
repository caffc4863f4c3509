"""``sandbox verify DIR``: replay a recording against a fresh sandbox and say what differs.

A recording of a real run is the best evidence of what GitHub does; replayed against the
sandbox it becomes a fidelity check. The fresh sandbox gets every repository the recording
names (opted in, the recorded default branch) and a simulated reviewer; then each
interaction's request is sent in order, with the SHAs, ids and ETags GitHub gave earlier
replaced by the ones the sandbox gave (``recordings.learn``), and each answer is compared
with the recorded one (``recordings.compare``). Before each GET the reviewers are let to
finish, so a poll sees what a poll after the reviewer's work sees; a conditional GET that
answers 200 where 304 was recorded (or the reverse) is no difference, since it depends on
when the poll ran. A label the recording found already there (a second run's) is made
before the replay (``labels_found``). The token kind the sandbox answers as follows each recorded answer's
headers (``x-oauth-scopes``: classic; the permissions or expiry header: fine-grained).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import httpx

from redline_canary.errors import BadInput
from redline_canary.github.recordings import (
    REQUEST_HEADERS,
    compare,
    decode_body,
    headers_of,
    learn,
    substitute,
    substitute_path,
)

MAX_FILES = 20_000
CANARY_TOPIC = "redline-canary"


@dataclass(frozen=True)
class Outcome:
    name: str
    method: str
    path: str
    status: int
    differences: tuple[str, ...]


def load_recording(folder: str | Path) -> list[tuple[str, dict[str, Any]]]:
    """Every interaction file of ``folder`` in replay order; BadInput naming the file and key."""
    base = Path(folder)
    if not base.is_dir():
        raise BadInput(f"{folder}: not a folder")
    files = sorted(p for p in base.glob("*.json") if not p.name.startswith("openapi-excerpt"))
    if not files:
        raise BadInput(f"{folder}: no recorded interaction (*.json) in it")
    if len(files) > MAX_FILES:
        raise BadInput(f"{folder}: {len(files)} files; at most {MAX_FILES} interactions are replayed")
    out: list[tuple[str, dict[str, Any]]] = []
    for path in files:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise BadInput(f"{path}: not a JSON interaction: {' '.join(str(exc).split())[:200]}") from None
        for key, kind in (("request", dict), ("response", dict)):
            if not isinstance(data, dict) or not isinstance(data.get(key), kind):
                raise BadInput(f"{path}: {key}: must be an object")
        req, resp = data["request"], data["response"]
        if not isinstance(req.get("method"), str) or not isinstance(req.get("path"), str) \
                or not req["path"].startswith("/"):
            raise BadInput(f"{path}: request.method/request.path: must be a method and an absolute path")
        if isinstance(resp.get("status"), bool) or not isinstance(resp.get("status"), int):
            raise BadInput(f"{path}: response.status: must be an integer")
        out.append((path.name, data))

    def order(item: tuple[str, dict[str, Any]]) -> tuple[str, str, int, str]:
        raw = item[1].get("source")
        source: dict[str, Any] = raw if isinstance(raw, dict) else {}
        index = source.get("interaction_index")
        return (str(source.get("repo", "")), str(source.get("path", "")),
                index if isinstance(index, int) and not isinstance(index, bool) else 0, item[0])

    return sorted(out, key=order)


def _repos(interactions: list[tuple[str, dict[str, Any]]]) -> dict[str, str]:
    """OWNER/NAME -> default branch, for every repository a recorded path names."""
    repos: dict[str, str] = {}
    for _name, data in interactions:
        parts = data["request"]["path"].split("?")[0].split("/")
        if len(parts) >= 4 and parts[1] == "repos" and parts[2] and parts[3]:
            full = f"{parts[2]}/{parts[3]}"
            body = data["response"].get("body")
            default = body.get("default_branch") if isinstance(body, dict) and len(parts) == 4 else None
            if isinstance(default, str) and default:
                repos[full] = default
            else:
                repos.setdefault(full, "main")
    return repos


def labels_found(interactions: list[tuple[str, dict[str, Any]]]) -> dict[str, dict[str, str]]:
    """OWNER/NAME -> {label: color} for the labels the recording *found*: a ``GET
    /repos/{o}/{r}/labels/{name}`` answered 200 before any request of the recording could
    have made that label (a ``POST .../labels``, or labels added to an issue, which GitHub
    creates on the fly). A second run against a repository finds the label its first run
    made and never creates it; a fresh sandbox lacks it, so without this the replay answers
    404 where 200 was recorded, a difference that is not one."""
    found: dict[str, dict[str, str]] = {}
    made: set[tuple[str, str]] = set()
    for _name, data in interactions:
        req, resp = data["request"], data["response"]
        parts = req["path"].split("?")[0].split("/")
        if len(parts) < 5 or parts[1] != "repos":
            continue
        full, tail, method = f"{parts[2]}/{parts[3]}".lower(), parts[4:], req["method"].upper()
        adds = len(tail) == 3 and tail[0] == "issues" and tail[2] == "labels"
        if method == "POST" and (tail == ["labels"] or adds):
            body = req.get("body")
            names = body.get("labels", [body.get("name")]) if isinstance(body, dict) else body
            made.update((full, str(n).lower()) for n in (names if isinstance(names, list) else []) if n)
        elif method == "GET" and len(tail) == 2 and tail[0] == "labels" and resp.get("status") == 200:
            label = unquote(tail[1])
            body = resp.get("body")
            color = body.get("color") if isinstance(body, dict) else None
            if (full, label.lower()) not in made:
                found.setdefault(f"{parts[2]}/{parts[3]}", {})[label] = color if isinstance(color, str) else "ededed"
    return found


@contextmanager
def fresh_sandbox(interactions: list[tuple[str, dict[str, Any]]], reviewer: str,
                  latency: float) -> Iterator[Any]:
    from redline_canary.sandbox import BanditReviewer, Reviewer, Sandbox, SilentReviewer

    with Sandbox(listen=False) as sb:
        for full, default in _repos(interactions).items():
            try:
                sb.create_repo(full, default_branch=default, topics=[CANARY_TOPIC])
            except Exception:  # a recorded name the sandbox cannot hold: its requests answer 404
                continue
            kind: Reviewer | None = (BanditReviewer(latency=latency) if reviewer == "bandit"
                                     else SilentReviewer(latency=latency) if reviewer == "silent" else None)
            if kind is not None:
                sb.attach_reviewer(full, kind)
        for full, labels in labels_found(interactions).items():  # the state the recording found
            for label, color in labels.items():
                try:
                    sb.add_label(full, label, color)
                except Exception:  # a repository the sandbox could not hold, a label it refuses
                    continue
        yield sb


def _dialect(sb: Any, recorded: dict[str, str]) -> None:
    """Answer as the token this interaction was recorded with."""
    expiry = 30.0 if "github-authentication-token-expiration" in recorded else None
    if "x-oauth-scopes" in recorded:
        scopes = [s.strip() for s in recorded["x-oauth-scopes"].split(",") if s.strip()]
        sb.token_kind("classic", expires_in_days=expiry, scopes=scopes)
    elif expiry is not None or "x-accepted-github-permissions" in recorded:
        sb.token_kind("fine_grained", expires_in_days=expiry)
    else:
        sb.clear_credential()


def verify(interactions: list[tuple[str, dict[str, Any]]], *, reviewer: str = "bandit",
           latency: float = 0.0, settle: float = 10.0) -> list[Outcome]:
    outcomes: list[Outcome] = []
    mapping: dict[str, str] = {}
    with fresh_sandbox(interactions, reviewer, latency) as sb, httpx.Client(
            transport=sb.transport(), base_url=sb.url, headers={"Authorization": "token sandbox-verify"}) as client:
        for name, data in interactions:
            req, recorded = data["request"], data["response"]
            method = req["method"].upper()
            path = substitute_path(req["path"], mapping)
            raw = req.get("headers") if isinstance(req.get("headers"), dict) else {}
            headers = {k.lower(): mapping.get(str(v), str(v)) for k, v in raw.items() if k.lower() in REQUEST_HEADERS}
            body = substitute(req.get("body"), mapping)
            content = None if body is None else (body.encode() if isinstance(body, str) else json.dumps(body).encode())
            if content is not None:
                headers.setdefault("content-type", "application/json")
            _dialect(sb, headers_of(recorded))
            if method == "GET":
                sb.wait_for_reviewers(settle)
            try:
                resp = client.request(method, path, content=content, headers=headers)
                replayed = {"status": resp.status_code, "headers": list(resp.headers.multi_items()),
                            "body": decode_body(resp.content)}
            except httpx.HTTPError as exc:
                replayed = {"status": 0, "headers": [], "body": {"message": exc.__class__.__name__}}
            diffs = compare(recorded, replayed, conditional="if-none-match" in headers)
            learn(recorded, replayed, mapping)
            outcomes.append(Outcome(name, method, req["path"], int(recorded["status"]), tuple(diffs)))
    return outcomes


def render(outcomes: list[Outcome]) -> str:
    lines = []
    for o in outcomes:
        lines.append(f"{'DIFF' if o.differences else 'same'}  {o.name}  ({o.method} {o.path.split('?')[0][:100]} "
                     f"-> {o.status})")
        lines += [f"        {d}" for d in o.differences]
    differ = sum(bool(o.differences) for o in outcomes)
    lines.append(f"{len(outcomes)} interaction(s) replayed, {differ} differ")
    return "\n".join(lines)
