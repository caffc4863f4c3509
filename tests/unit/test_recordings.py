"""Scrubbing and comparing recorded interactions (pure)."""

from __future__ import annotations

import json

from redline_canary.github.recordings import SCRUBBED, compare, interaction, learn, substitute, substitute_path

TOKEN = "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB"


def test_the_token_cookies_and_secret_fields_never_reach_the_file() -> None:
    body = {"token": TOKEN, "private_key": "-----BEGIN", "client_secret": "s3", "note": f"used {TOKEN} here",
            "url": "https://x/cb?code=abc&state=1&access_token=zzz", "nested": [{"password": "p"}],
            "signature": None, "title": "ok"}
    data = interaction(
        source={"interaction_index": 0}, method="post", host="api.github.com", path=f"/x?access_token={TOKEN}",
        req_headers=[("Authorization", f"Bearer {TOKEN}"), ("Cookie", "s=1"), ("Accept", "application/json"),
                     ("X-Api-Key", "k")],
        req_body=json.dumps(body).encode(), status=201,
        resp_headers=[("Set-Cookie", "s=2"), ("Vary", "Authorization, Cookie"), ("ETag", '"e"'),
                      ("X-RateLimit-Remaining", "4999")],
        resp_body=json.dumps({"secret": "y", "id": 3}).encode(), secrets=[TOKEN])
    text = json.dumps(data)
    for leak in (TOKEN, "Authorization", "authorization", "Cookie", "s=1", "s=2", "-----BEGIN", "s3", "zzz",
                 "abc", '"p"', '"k"'):
        assert leak not in text, leak
    assert data["request"]["method"] == "POST" and data["request"]["headers"] == {"accept": "application/json"}
    assert data["request"]["body"]["title"] == "ok" and data["request"]["body"]["signature"] is None
    assert data["request"]["body"]["note"] == f"used {SCRUBBED} here"
    assert data["response"]["headers"] == [["etag", '"e"'], ["x-ratelimit-remaining", "4999"]]
    assert data["response"]["body"] == {"secret": SCRUBBED, "id": 3}


def _resp(status: int, body: object = None, **headers: str) -> dict[str, object]:
    return {"status": status, "headers": [[k.replace("_", "-"), v] for k, v in headers.items()], "body": body}


def test_values_are_not_differences_but_keys_types_status_and_read_headers_are() -> None:
    rec = _resp(200, {"id": 1, "sha": "a" * 40, "user": {"login": "x"}, "closed_at": None, "items": [{"a": 1}]},
                etag='"1"', x_accepted_github_permissions="contents=read; pulls=read")
    same = _resp(200, {"id": 9, "sha": "b" * 40, "user": {"login": "y"}, "closed_at": "2020", "items": []},
                 etag='"2"', x_accepted_github_permissions="pulls=read; contents=read")
    assert compare(rec, same) == []
    assert compare(rec, _resp(404, {"message": "Not Found"})) == ["status: 200 recorded, 404 replayed (Not Found)"]
    assert compare(_resp(304), _resp(200, []), conditional=True) == []
    assert compare(_resp(304), _resp(200, [])) == ["status: 304 recorded, 200 replayed"]
    other = _resp(200, {"id": "1", "sha": "b", "user": {}, "closed_at": None, "items": [{"a": 1}], "extra": 1},
                  x_accepted_github_permissions="contents=write")
    assert compare(rec, other) == [
        "header etag: recorded, not replayed",
        "header x-accepted-github-permissions: 'contents=read; pulls=read' recorded, 'contents=write' replayed",
        "body: key(s) not recorded: extra", "body.id: number recorded, string replayed",
        "body.user: key(s) not replayed: login"]


def test_link_rels_compare_as_sets() -> None:
    rec = _resp(200, [], link='<u?page=2>; rel="next", <u?page=5>; rel="last"')
    assert compare(rec, _resp(200, [], link='<v?page=5>; rel="last", <v?page=2>; rel="next"')) == []
    assert compare(rec, _resp(200, [])) == ["header link: rels ['last', 'next'] recorded, [] replayed"]


def test_learned_shas_ids_and_etags_rewrite_later_requests() -> None:
    mapping: dict[str, str] = {}
    learn(_resp(200, {"object": {"sha": "a" * 40}, "id": 5, "name": "n"}, etag='"r"'),
          _resp(200, {"object": {"sha": "b" * 40}, "id": 7, "name": "m"}, etag='"p"'), mapping)
    assert mapping == {'"r"': '"p"', "a" * 40: "b" * 40, "5": "7"}
    path = substitute_path(f"/repos/o/r/git/commits/{'a' * 40}?x=5", mapping)
    assert path == f"/repos/o/r/git/commits/{'b' * 40}?x=5"
    assert substitute({"base_tree": "a" * 40, "n": ["a" * 40, "keep"]}, mapping) == {
        "base_tree": "b" * 40, "n": ["b" * 40, "keep"]}
