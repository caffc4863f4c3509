"""A time axis that fits its data: the domain, and ticks at a step a reader expects. Pure.

Why not a plotting library's locator: the scoreboard draws runs seconds apart (the demo),
ten weekly runs and five years of them, and each must get an axis of its own size — a
lone run or runs a few seconds apart must not sit in a two-day axis, five years must get
year ticks (docs/scoreboard.md#charts). Instants are UTC seconds since 1970 (the report
folder is pure, so the calendar arithmetic is done here, on integers).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

DAY = 86_400
# Fixed steps (seconds) up to a fortnight, then calendar steps in months.
_FIXED = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 2 * 3600, 3 * 3600, 6 * 3600, 12 * 3600,
          DAY, 2 * DAY, 7 * DAY, 14 * DAY)
_MONTHS = (1, 2, 3, 6, 12, 24, 60, 120, 240)
MAX_TICKS = 10
_MONTH_NAMES = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_STAMP = re.compile(r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})")


def _days_from_civil(y: int, m: int, d: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm)."""
    y -= m <= 2
    era = (y if y >= 0 else y - 399) // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146_097 + doe - 719_468


def _civil_from_days(z: int) -> tuple[int, int, int]:
    z += 719_468
    era = (z if z >= 0 else z - 146_096) // 146_097
    doe = z - era * 146_097
    yoe = (doe - doe // 1460 + doe // 36_524 - doe // 146_096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + (3 if mp < 10 else -9)
    return yoe + era * 400 + (m <= 2), m, d


def seconds(stamp: str) -> int:
    """A record's ``recorded_at`` (``YYYY-MM-DDTHH:MM:SS[.f]Z``, as the schema holds it) in
    seconds since 1970 UTC."""
    m = _STAMP.match(stamp)
    if m is None:
        raise ValueError(f"not a timestamp: {stamp[:40]!r}")
    y, mo, d, h, mi, s = (int(x) for x in m.groups())
    return _days_from_civil(y, mo, d) * DAY + h * 3600 + mi * 60 + s


def _fmt(t: int, what: str) -> str:
    y, m, d = _civil_from_days(t // DAY)
    rest = t % DAY
    hms = f"{rest // 3600:02d}:{rest % 3600 // 60:02d}:{rest % 60:02d}"
    return {"second": hms, "minute": hms[:5], "day": f"{_MONTH_NAMES[m - 1]} {d}",
            "month": f"{_MONTH_NAMES[m - 1]} {y}", "year": str(y), "date": f"{y:04d}-{m:02d}-{d:02d}"}[what]


@dataclass(frozen=True)
class TimeAxis:
    start: float
    end: float
    ticks: tuple[tuple[int, str], ...]
    caption: str  # what the tick labels leave out: the date of a one-day axis, the year(s) of a day axis

    def fraction(self, t: float) -> float:
        """Where ``t`` falls on the axis: 0 at the start, 1 at the end."""
        return (t - self.start) / (self.end - self.start)


def _fixed_ticks(start: float, end: float, step: int) -> list[int]:
    monday = 4 * DAY  # 1970-01-05: weekly ticks fall on Mondays
    tick = monday + -(-int(start - monday) // step) * step
    out: list[int] = []
    while tick <= end and len(out) <= MAX_TICKS:
        out.append(tick)
        tick += step
    return out


def _month_ticks(start: float, end: float, months: int) -> list[int]:
    y, m, _ = _civil_from_days(int(start) // DAY)
    index = y * 12 + m - 1
    index += -index % months
    out: list[int] = []
    while len(out) <= MAX_TICKS:
        tick = _days_from_civil(index // 12, index % 12 + 1, 1) * DAY
        if tick > end:
            break
        if tick >= start:
            out.append(tick)
        index += months
    return out


def time_axis(times: Sequence[int]) -> TimeAxis:
    """The axis for these instants: padded by 4 % of their span (a minute each side for one
    instant, or several in the same second), ticks at the smallest step that gives at most
    ten, labelled at that step's precision."""
    first, last = min(times), max(times)
    span = last - first
    pad = span * 0.04 if span else 60
    start, end = first - pad, last + pad
    for step in _FIXED:
        fixed = _fixed_ticks(start, end, step)
        if len(fixed) <= MAX_TICKS:
            unit = "second" if step < 60 else "minute" if step < DAY else "day"
            ticks = [(t, _fmt(t, unit)) for t in fixed]
            break
    else:
        for months in _MONTHS:
            monthly = _month_ticks(start, end, months)
            if len(monthly) <= MAX_TICKS:
                break
        unit = "year" if months >= 12 else "month"
        ticks = [(t, _fmt(t, unit)) for t in monthly]
    a, b = _fmt(first, "date"), _fmt(last, "date")
    if unit in ("second", "minute"):
        caption = a if a == b else f"{a} – {b}"
    elif unit == "day":
        caption = a[:4] if a[:4] == b[:4] else f"{a[:4]} – {b[:4]}"
    else:
        caption = ""
    return TimeAxis(start, end, tuple(ticks), caption)
