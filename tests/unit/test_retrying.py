"""The retry policy and the reading of GitHub answers: pure, with an injected clock."""

from __future__ import annotations

import pytest

from redline_canary.errors import BadInput, register_secret
from redline_canary.github.clock import FakeClock
from redline_canary.github.decipher import ApiFailure, clean, decipher, decode_json
from redline_canary.github.retry import SECONDARY_DEFAULT_WAIT, RetryPolicy, parse_retry_after
from redline_canary.github.transport import validate_api_url
from redline_canary.review.extraction import quote
from redline_canary.run.crash import crash_line

NOW = 1_800_000_000.0
SECONDARY = "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."


@pytest.mark.parametrize(("value", "seconds"), [
    ("0.5", 0.5), ("1.5", 1.5), ("2", 2.0), (" 7 ", 7.0), ("-5", 0.0), ("1e9", 3600.0),
    ("soon", None), ("", None), ("nan", None), ("inf", None), ("-inf", None), ("0x10", None),
    ("Wed, 21 Oct 2015 07:28:00 GMT", 0.0),  # a date in the past: go now
])
def test_retry_after_is_parsed_defensively(value: str, seconds: float | None) -> None:
    assert parse_retry_after(value, NOW) == seconds


def test_retry_after_as_a_future_http_date_is_the_seconds_until_then() -> None:
    import email.utils

    date = email.utils.formatdate(NOW + 30, usegmt=True)
    assert parse_retry_after(date, NOW) == pytest.approx(30.0)


def _policy(clock: FakeClock, **kwargs: object) -> RetryPolicy:
    return RetryPolicy(clock=clock, wall_time=lambda: NOW, jitter=lambda: 0.0, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(("status", "headers", "wait"), [
    (403, {"retry-after": "soon"}, SECONDARY_DEFAULT_WAIT),  # unparseable: GitHub's documented minute
    (403, {"retry-after": "-5"}, 0.0),
    (429, {}, SECONDARY_DEFAULT_WAIT),
    (403, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(NOW) + 9)}, 10.0),
    (403, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": "99999999999999999999"}, SECONDARY_DEFAULT_WAIT),
])
def test_rate_limit_waits(status: int, headers: dict[str, str], wait: float) -> None:
    failure = ApiFailure(status, SECONDARY, headers)
    assert failure.rate_limited
    assert _policy(FakeClock()).delay_for(failure, 1) == wait


def test_a_permission_403_is_neither_retried_nor_a_rate_limit() -> None:
    failure = ApiFailure(403, "Resource not accessible by personal access token",
                         {"x-accepted-github-permissions": "pull_requests=write\x1b[31m"})
    assert failure.permission_denied and not failure.rate_limited and not failure.transient
    assert failure.missing_permission == "pull_requests=write31m"  # printable only
    clock = FakeClock()
    calls = []

    def once() -> None:
        calls.append(1)
        raise failure

    with pytest.raises(ApiFailure):
        _policy(clock).call(once)
    assert calls == [1] and clock.slept == []


def test_head_not_ready_backs_off_briefly_and_too_quickly_is_a_limit() -> None:
    body = {"message": "Validation Failed", "errors": [{"resource": "PullRequest", "field": "head", "code": "invalid"}]}
    head = ApiFailure(422, "Validation Failed", body=body)
    policy = _policy(FakeClock())
    assert head.head_not_ready and [policy.delay_for(head, a) for a in (1, 2, 3, 4, 5)] == [0.5, 1.0, 2.0, 4.0, 4.0]
    quick = ApiFailure(422, "Validation Failed",
                       body={"errors": [{"code": "custom", "message": "was submitted too quickly"}]})
    assert quick.rate_limited and policy.delay_for(quick, 1) == SECONDARY_DEFAULT_WAIT


def test_a_deadline_stops_waiting_that_would_overrun_it() -> None:
    clock = FakeClock()
    policy = _policy(clock, deadline=3.0)
    attempts = []

    def once() -> None:
        attempts.append(clock.now())
        raise ApiFailure(403, SECONDARY, {"retry-after": "2"})

    with pytest.raises(ApiFailure):
        policy.call(once)
    assert attempts == [0.0, 2.0]  # waits 2 s once; a second wait would end at 4 > 3


def test_scale_shortens_real_sleeps_but_not_the_bookkeeping() -> None:
    clock = FakeClock()
    policy = _policy(clock, scale=0.01)
    outcomes = iter([ApiFailure(502, "Bad Gateway"), ApiFailure(502, "Bad Gateway")])

    def once() -> str:
        failure = next(outcomes, None)
        if failure:
            raise failure
        return "ok"

    assert policy.call(once) == "ok"
    assert clock.slept == [pytest.approx(0.005), pytest.approx(0.01)]


def test_decipher_keeps_githubs_words_without_control_characters() -> None:
    decipher(200, "OK", {}, b"{}", "GET /x")
    decipher(304, "Not Modified", {}, b"", "GET /x")
    body = b'{"message": "Validation Failed\\u001b]8;;http://evil\\u0007", "errors": [{"code": "invalid"}]}'
    with pytest.raises(ApiFailure) as err:
        decipher(422, "Unprocessable", {"X-A": "b"}, body, "POST /x")
    assert err.value.status == 422 and "\x1b" not in err.value.message and "\x07" not in err.value.message
    assert err.value.message.endswith("(invalid)") and err.value.headers == {"x-a": "b"}
    with pytest.raises(ApiFailure) as garbled:
        decipher(502, "Bad Gateway", {}, b"<html>", "GET /x")
    assert garbled.value.message == "Bad Gateway" and garbled.value.transient


def test_a_garbled_success_body_is_a_transient_failure() -> None:
    with pytest.raises(ApiFailure) as err:
        decode_json(200, b"{not json", "GET /x")
    assert err.value.malformed and err.value.transient
    assert decode_json(204, b"", "DELETE /x") is None


def test_clean_bounds_length() -> None:
    assert len(clean("x" * 1000)) == 200 and clean("a\r\nb") == "a b"


def test_clean_masks_a_secret_before_it_cuts_the_text() -> None:
    # A JWT quoted by a 401: cut first, its header and claims would outlive the mask.
    signed = "eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiI0MjQyIiwiaWF0IjoxfQ." + "s" * 340
    register_secret(signed)
    assert clean(f"Bad credentials: {signed}") == "Bad credentials: ***"
    with pytest.raises(ApiFailure) as err:
        decipher(401, "Unauthorized", {}, f'{{"message": "{"x" * 150} {signed}"}}'.encode(), "GET /x")
    assert "eyJ" not in err.value.message and err.value.message.endswith("***")


def test_every_other_cut_text_is_masked_before_it_is_cut() -> None:
    secret = "ghs_" + "t" * 400
    register_secret(secret)
    notice = quote(f"Review failed: {secret} (retry later)", limit=100)  # a reviewer's notice
    assert notice.startswith("Review failed: ") and "ghs_t" not in notice and "retry later" in notice
    line = crash_line(RuntimeError(f"boom\n{secret}"), None)  # one-lined only after the mask
    assert secret[:20] not in line and "boom ***" in line
    with pytest.raises(BadInput) as err:
        validate_api_url(f"ftp://{secret}/x")
    assert secret[:20] not in str(err.value) and "***" in str(err.value)


def test_the_unit_tier_refuses_real_sleeps_and_sockets() -> None:
    import socket
    import time

    with pytest.raises(AssertionError, match="inject a clock"):
        time.sleep(0.01)
    with pytest.raises(AssertionError, match="network"), socket.socket() as s:
        s.connect(("127.0.0.1", 9))
