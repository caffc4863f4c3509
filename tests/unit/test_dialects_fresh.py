"""Every notice of the fresh and held-out dialect sets (``tests/data/dialects-fresh/``,
``tests/data/dialects-heldout/``) reads as a notice of its class; none reads as a pass.

A skip, quota or failure notice read as "clean" or "done" would make a reviewer that did not
review look like one that found nothing (docs/matching.md#the-fail-safe-notice-rule); a
completion with nothing to say read as anything but clean makes the run wait out its timeout.
The bodies are real comments from repositories no profile fixture came from, with readings
written from the vendors' conventions before the tool read them. ``KNOWN_MISREADS`` lists
today's misreads (strict xfail): fixing the profile flips them, and the entry must then go.
``benchmarks/bench_dialects.py`` prints the figures for the whole set.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.helpers.dialects import HELDOUT, NOTICE_SIGNALS, PASSING, judge, load_items, looks_like_notice

ITEMS = load_items() + load_items(data=HELDOUT)
NOTICES = [i for i in ITEMS if i["expect"]["kind"] == "notice"]

# id -> how it is misread today (the code fix removes the entry).
KNOWN_MISREADS: dict[str, str] = {
}
# The subset of those read as a pass today: a fail-safe breach.
KNOWN_PASSES = frozenset(k for k, why in KNOWN_MISREADS.items() if why.startswith(("read as clean", "read as done",
                                                                                   "read as finding")))


def _params(items: list[dict[str, Any]]) -> list[Any]:
    return [pytest.param(i, id=i["id"], marks=pytest.mark.xfail(strict=True, reason=KNOWN_MISREADS[i["id"]]))
            if i["id"] in KNOWN_MISREADS else pytest.param(i, id=i["id"]) for i in items]


def test_the_set_is_well_formed() -> None:
    """Each item names where it was seen, how it was posted and what it should read as."""
    assert len(ITEMS) >= 10
    ids = [i["id"] for i in ITEMS]
    assert len(ids) == len(set(ids))
    for item in ITEMS:
        # A GitHub page, or the index reference of a public file that quotes the body.
        assert "https://github.com/" in item["source"] or "index ref " in item["source"], item["id"]
        assert item["channel"] in ("inline", "review", "issue"), item["id"]
        assert item["body"].strip(), item["id"]
        expect = item["expect"]
        assert expect["kind"] in ("finding", "summary", "notice", "progress", "nothing"), item["id"]
        if expect["kind"] == "notice":
            assert expect["class"] in NOTICE_SIGNALS, item["id"]
        if item["channel"] == "inline":  # a repost may have lost the line, never the file
            assert item.get("path"), item["id"]
    assert not set(KNOWN_MISREADS) - set(ids), "a known misread names no item"
    assert not [k for k in KNOWN_MISREADS if next(i for i in ITEMS if i["id"] == k)["expect"]["kind"] != "notice"]


@pytest.mark.parametrize("item", _params(NOTICES))
def test_every_notice_reads_as_a_notice_of_its_class(item: dict[str, Any]) -> None:
    verdict = judge(item)
    assert verdict.right, f"{item['_where']}: {verdict.why}"


@pytest.mark.parametrize("item", [
    pytest.param(i, id=i["id"], marks=pytest.mark.xfail(strict=True, reason=KNOWN_MISREADS[i["id"]]))
    if i["id"] in KNOWN_PASSES else pytest.param(i, id=i["id"]) for i in NOTICES if looks_like_notice(i)])
def test_no_notice_reads_as_a_pass(item: dict[str, Any]) -> None:
    """The fail-safe half, on every notice whether or not a rule knows its wording."""
    reading = judge(item).reading
    assert reading.signal not in PASSING, f"{item['_where']}: read as {reading.signal}"


# Two cubic violations at one line and severity read as one finding: a place is scored once
# either way, and a summary's repeated place is dropped on purpose (profiles/citations.py).
SAME_PLACE_TWICE = {"cubic-aireview-sample-4-19-issues": "two violations at one line and severity read as one"}


@pytest.mark.parametrize("item", [
    pytest.param(i, id=i["id"], marks=pytest.mark.xfail(strict=True, reason=SAME_PLACE_TWICE[i["id"]]))
    if i["id"] in SAME_PLACE_TWICE else pytest.param(i, id=i["id"])
    for i in ITEMS if i["expect"]["kind"] != "notice"])
def test_every_finding_and_summary_reads_right(item: dict[str, Any]) -> None:
    """Findings, summaries (Gemini's review-body fallback listing nine), placeholders and
    replies of the fresh set: the findings read are exactly the expected ones."""
    verdict = judge(item)
    assert verdict.right, f"{item['_where']}: {verdict.why}"
