"""Recorded traffic in the fixtures format: scrubbing on the way out, comparison on the way back.

``run --record DIR`` writes each request/response of a run as one file in the format of
``tests/data/github-fixtures/README.md``; ``sandbox verify DIR`` replays them
against a fresh sandbox. Both halves are pure and live here:

* **scrubbing** keeps only the request headers the format keeps (no ``Authorization``, no
  cookies), only response headers that cannot carry a credential, and replaces body fields
  named like secrets, credential-carrying URL parameters and every known secret string;
* **comparing** reports what the product would notice: the status, the headers it reads
  (presence, or the value where the value is the point), and the body's key sets and JSON
  types. Values are never compared: ids, SHAs, dates and URLs differ on every replay;
* **mapping** learns, from each pair of answers, which recorded SHA, id or ETag became
  which replayed one, so later requests that quote them can be replayed at all.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

SCRUBBED = "[scrubbed]"
# The format keeps exactly these request headers (README: "request.headers keeps only ...").
REQUEST_HEADERS = ("accept", "content-type", "if-none-match", "if-modified-since", "user-agent")
# Response headers that describe the answer, never the caller: anything else (set-cookie,
# a proxy's auth header, vary's list of request headers) is left out.
RESPONSE_HEADERS = frozenset({
    "server", "date", "content-type", "content-length", "cache-control", "etag", "last-modified", "link",
    "location", "retry-after", "x-poll-interval", "x-github-media-type", "x-github-api-version-selected",
    "x-github-request-id", "x-accepted-github-permissions", "x-oauth-scopes", "x-accepted-oauth-scopes",
    "github-authentication-token-expiration", "x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset",
    "x-ratelimit-used", "x-ratelimit-resource", "x-content-type-options", "x-frame-options", "x-xss-protection",
    "referrer-policy", "content-security-policy", "strict-transport-security", "deprecation", "sunset",
})
_SECRET_KEY = re.compile(r"token|secret|passw|private.?key|authorization|cookie|credential|signature|^key$", re.I)
_SECRET_PARAM = re.compile(r"([?&](?:access_token|token|client_secret|code|sig|signature|jwt)=)[^&#\s\"']+", re.I)
# Headers the product reads; presence is what matters, the value where it is the point.
PRESENCE_HEADERS = ("etag", "location", "retry-after", "x-ratelimit-limit", "x-ratelimit-remaining",
                    "x-ratelimit-reset", "x-ratelimit-used", "x-ratelimit-resource", "x-oauth-scopes",
                    "github-authentication-token-expiration")
VALUE_HEADERS = ("x-accepted-github-permissions",)
MAX_DEPTH = 24
MAX_REPORTED = 20  # differences listed per interaction; the rest are counted
_SHA = re.compile(r"^[0-9a-f]{40}$|^[0-9a-f]{64}$")
_ID_KEYS = frozenset({"id", "number", "pull_request_review_id", "in_reply_to_id"})


# --- scrubbing ---------------------------------------------------------------------------

def scrub(value: Any, secrets: Sequence[str], depth: int = 0) -> Any:
    """``value`` with every field named like a secret, every credential URL parameter and
    every known secret string replaced by ``[scrubbed]``."""
    if depth > MAX_DEPTH:
        return SCRUBBED
    if isinstance(value, dict):
        return {str(k): (SCRUBBED if _SECRET_KEY.search(str(k)) and v is not None else scrub(v, secrets, depth + 1))
                for k, v in value.items()}
    if isinstance(value, list):
        return [scrub(v, secrets, depth + 1) for v in value]
    if isinstance(value, str):
        return scrub_text(value, secrets)
    return value


def scrub_text(text: str, secrets: Sequence[str]) -> str:
    for secret in sorted((s for s in secrets if len(s) >= 4), key=len, reverse=True):
        text = text.replace(secret, SCRUBBED)
    return _SECRET_PARAM.sub(lambda m: m.group(1) + SCRUBBED, text)


def request_headers(headers: Iterable[tuple[str, str]], secrets: Sequence[str]) -> dict[str, str]:
    return {k.lower(): scrub_text(v, secrets) for k, v in headers if k.lower() in REQUEST_HEADERS}


def response_headers(headers: Iterable[tuple[str, str]], secrets: Sequence[str]) -> list[list[str]]:
    return [[k.lower(), scrub_text(v, secrets)] for k, v in headers if k.lower() in RESPONSE_HEADERS]


def decode_body(raw: bytes) -> Any:
    """JSON when it parses, the text otherwise, None when empty (the format's 204/304)."""
    if not raw.strip():
        return None
    text = raw.decode("utf-8", errors="replace")
    try:
        return json.loads(text)
    except ValueError:
        return text


def interaction(*, source: Mapping[str, Any], method: str, host: str, path: str,
                req_headers: Iterable[tuple[str, str]], req_body: bytes, status: int,
                resp_headers: Iterable[tuple[str, str]], resp_body: bytes, secrets: Sequence[str]) -> dict[str, Any]:
    """One interaction in the fixtures format, scrubbed."""
    return {
        "source": dict(source),
        "request": {"method": method.upper(), "host": host, "path": scrub_text(path, secrets),
                    "headers": request_headers(req_headers, secrets),
                    "body": scrub(decode_body(req_body), secrets)},
        "response": {"status": status, "headers": response_headers(resp_headers, secrets),
                     "body": scrub(decode_body(resp_body), secrets)},
    }


def file_name(index: int, method: str, path: str, status: int) -> str:
    """``0007_post_repos-acme-x-git-trees_201.json``: sorted by index, readable at a glance."""
    route = re.sub(r"[^a-z0-9]+", "-", path.split("?")[0].lower()).strip("-")[:80] or "root"
    return f"{index:05d}_{method.lower()}_{route}_{status}.json"


# --- comparing ---------------------------------------------------------------------------

def headers_of(response: Mapping[str, Any]) -> dict[str, str]:
    """Lower-cased headers of a recorded response (a list of pairs, or a mapping)."""
    raw = response.get("headers")
    pairs: Iterable[Any] = raw.items() if isinstance(raw, dict) else raw if isinstance(raw, list) else []
    out: dict[str, str] = {}
    for pair in pairs:
        if isinstance(pair, (list, tuple)) and len(pair) == 2:
            out.setdefault(str(pair[0]).lower(), str(pair[1]))
    return out


def _rels(link: str | None) -> set[str]:
    return set(re.findall(r'rel="([^"]+)"', link or ""))


def _perms(value: str) -> set[str]:
    return {",".join(sorted(p.strip() for p in alt.split(",") if p.strip())) for alt in value.split(";")} - {""}


def compare(recorded: Mapping[str, Any], replayed: Mapping[str, Any], *, conditional: bool = False) -> list[str]:
    """What differs between a recorded and a replayed response, in the product's terms."""
    rs, ps = recorded.get("status"), replayed.get("status")
    if rs != ps:
        if conditional and {rs, ps} == {200, 304}:
            return []  # whether anything changed since the ETag depends on when the poll ran
        message = replayed.get("body", {}).get("message") if isinstance(replayed.get("body"), dict) else None
        return [f"status: {rs} recorded, {ps} replayed" + (f" ({str(message)[:120]})" if message else "")]
    rh, ph = headers_of(recorded), headers_of(replayed)
    diffs: list[str] = []
    for name in PRESENCE_HEADERS:
        if (name in rh) != (name in ph):
            diffs.append(f"header {name}: {'recorded, not replayed' if name in rh else 'replayed, not recorded'}")
    for name in VALUE_HEADERS:
        if name in rh and name in ph and _perms(rh[name]) != _perms(ph[name]):
            diffs.append(f"header {name}: {rh[name]!r} recorded, {ph[name]!r} replayed")
        elif (name in rh) != (name in ph):
            diffs.append(f"header {name}: {'recorded, not replayed' if name in rh else 'replayed, not recorded'}")
    if _rels(rh.get("link")) != _rels(ph.get("link")):
        diffs.append(f"header link: rels {sorted(_rels(rh.get('link')))} recorded, "
                     f"{sorted(_rels(ph.get('link')))} replayed")
    rt, pt = rh.get("content-type", "").split(";")[0].strip(), ph.get("content-type", "").split(";")[0].strip()
    if rt and pt and rt != pt:
        diffs.append(f"header content-type: {rt} recorded, {pt} replayed")
    diffs += shape_differences(recorded.get("body"), replayed.get("body"))
    if len(diffs) > MAX_REPORTED:
        diffs = [*diffs[:MAX_REPORTED], f"... and {len(diffs) - MAX_REPORTED} more"]
    return diffs


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object" if isinstance(value, dict) else type(value).__name__


def shape_differences(recorded: Any, replayed: Any, path: str = "body", depth: int = 0) -> list[str]:
    """Key sets and JSON types, recursively (first item of arrays). ``null`` on either side
    is accepted: a nullable field is null or not depending on state (closed_at, merged_at)."""
    if recorded is None or replayed is None or depth > MAX_DEPTH:
        return []
    rt, pt = json_type(recorded), json_type(replayed)
    if rt != pt:
        return [f"{path}: {rt} recorded, {pt} replayed"]
    out: list[str] = []
    if isinstance(recorded, dict) and isinstance(replayed, dict):
        missing = sorted(set(recorded) - set(replayed))
        extra = sorted(set(replayed) - set(recorded))
        if missing:
            out.append(f"{path}: key(s) not replayed: {_few(missing)}")
        if extra:
            out.append(f"{path}: key(s) not recorded: {_few(extra)}")
        for key in sorted(set(recorded) & set(replayed))[:500]:
            out += shape_differences(recorded[key], replayed[key], f"{path}.{key}", depth + 1)
    elif isinstance(recorded, list) and isinstance(replayed, list) and recorded and replayed:
        out += shape_differences(recorded[0], replayed[0], f"{path}[0]", depth + 1)
    return out


def _few(keys: list[str]) -> str:
    return ", ".join(keys[:12]) + (" ..." if len(keys) > 12 else "")


# --- mapping recorded values to replayed ones ----------------------------------------------

def learn(recorded: Mapping[str, Any], replayed: Mapping[str, Any], mapping: dict[str, str]) -> None:
    """Pair what the two answers say at the same places: SHAs, ids and the ETag."""
    re_tag, pe_tag = headers_of(recorded).get("etag"), headers_of(replayed).get("etag")
    if re_tag and pe_tag:
        mapping[re_tag] = pe_tag
    _pair(recorded.get("body"), replayed.get("body"), mapping, None, 0)


def _pair(rec: Any, rep: Any, mapping: dict[str, str], key: str | None, depth: int) -> None:
    if depth > MAX_DEPTH:
        return
    if isinstance(rec, dict) and isinstance(rep, dict):
        for k in list(rec)[:500]:
            if k in rep:
                _pair(rec[k], rep[k], mapping, k, depth + 1)
    elif isinstance(rec, list) and isinstance(rep, list):
        for a, b in list(zip(rec, rep, strict=False))[:200]:
            _pair(a, b, mapping, key, depth + 1)
    elif isinstance(rec, str) and isinstance(rep, str) and rec != rep and _SHA.match(rec):
        mapping.setdefault(rec, rep)
    elif (key in _ID_KEYS and isinstance(rec, int) and isinstance(rep, int) and not isinstance(rec, bool)
          and rec != rep):
        mapping.setdefault(str(rec), str(rep))


def substitute(value: Any, mapping: Mapping[str, str], depth: int = 0) -> Any:
    """A request body with recorded SHAs replaced by the replayed ones."""
    if depth > MAX_DEPTH:
        return value
    if isinstance(value, dict):
        return {k: substitute(v, mapping, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [substitute(v, mapping, depth + 1) for v in value]
    if isinstance(value, str) and _SHA.match(value):
        return mapping.get(value, value)
    return value


def substitute_path(path: str, mapping: Mapping[str, str]) -> str:
    """A request path with each recorded SHA or id segment replaced (the query is kept)."""
    route, sep, query = path.partition("?")
    return "/".join(mapping.get(seg, seg) for seg in route.split("/")) + sep + query
