"""The wall clock, at the edge. The pure core receives timestamps; it never reads a clock."""

from __future__ import annotations

import datetime as _dt


def utc_now_iso() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
