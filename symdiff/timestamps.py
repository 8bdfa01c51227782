"""The time codec: records store microseconds since the epoch and show RFC 3339 UTC text; and
the wall clock's seam.

`Clock` has one meaning across the package: the current wall time as an aware UTC datetime.
Intervals are measured on `time.monotonic` (passed as `monotonic`), never on a Clock.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

Clock = Callable[[], datetime]


def utcnow() -> datetime:
    """The real Clock."""
    return datetime.now(UTC)


@functools.lru_cache(maxsize=4096)
def _day(days: int) -> str:
    return (_EPOCH + timedelta(days=days)).strftime("%Y-%m-%dT")


def format_us(us: int) -> str:
    """RFC 3339 UTC with microseconds and `Z` (`2026-11-22T01:38:13.123456Z`)."""
    # The read path formats thousands of these: the date part is cached, the rest is arithmetic.
    days, rest = divmod(us, 86_400_000_000)
    secs, frac = divmod(rest, 1_000_000)
    hours, secs = divmod(secs, 3600)
    minutes, secs = divmod(secs, 60)
    return f"{_day(days)}{hours:02d}:{minutes:02d}:{secs:02d}.{frac:06d}Z"


def to_us(ts: datetime) -> int:
    """Microseconds since the epoch, UTC."""
    delta = ts.astimezone(UTC) - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def from_us(us: int) -> datetime:
    """The UTC datetime of microseconds since the epoch."""
    return _EPOCH + timedelta(microseconds=us)
