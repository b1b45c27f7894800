"""Dates and times for generators: the formats a world stores and seeded random moments."""

from __future__ import annotations

from datetime import datetime, timedelta
from random import Random

from .fill import FillContext

DAY_FMT = "%Y-%m-%d"
TS_FMT = "%Y-%m-%d %H:%M:%S"


def clock(ctx: FillContext) -> datetime:
    """The world's frozen "now"."""
    return datetime.strptime(ctx.now, TS_FMT)


def ts(moment: datetime) -> str:
    return moment.strftime(TS_FMT)


def between(rng: Random, start: datetime, end: datetime) -> datetime:
    """A moment in [start, end], to the second (start itself when the range is empty)."""
    if end <= start:
        return start
    seconds = int((end - start).total_seconds())
    return start + timedelta(seconds=rng.randrange(seconds + 1))


def recent(rng: Random, now: datetime, since: datetime, recent_days: int, recent_share: float) -> datetime:
    """A moment since `since`, biased towards the last `recent_days` days."""
    if rng.random() < recent_share:
        return between(rng, max(since, now - timedelta(days=recent_days)), now)
    return between(rng, since, now)
