"""Times where the wire asks for nanoseconds: a request may give nanoseconds since the Unix
epoch (ASCII digits) or an ISO-8601 UTC time, converted exactly (docs/contract.md, Wire
conventions). Answers always carry nanoseconds."""

from __future__ import annotations

import re
from datetime import UTC, datetime

__all__ = ["TIME_WORDS", "U64", "iso_utc", "time_nanos"]

U64 = 2**64 - 1
#: What a time parameter takes, said in words for refusals.
TIME_WORDS = (
    "nanoseconds since the Unix epoch (ASCII digits, no sign, no leading zero, at most 2^64-1) or an "
    "ISO-8601 UTC time: a date (2024-01-01, its midnight) or a date and time ending in Z "
    "(2024-01-01T09:30:00Z, up to 9 fractional digits)"
)
_NANOS = re.compile(r"(0|[1-9][0-9]{0,19})")
_ISO = re.compile(r"(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(?:Z|\+00:00))?")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def time_nanos(text: str) -> int | None:
    """``text`` as u64 nanoseconds, exactly; None when it is neither form (see TIME_WORDS)."""
    if _NANOS.fullmatch(text):
        value = int(text)
        return value if value <= U64 else None
    match = _ISO.fullmatch(text)
    if match is None:
        return None
    year, month, day, hour, minute, second = (int(part or 0) for part in match.groups()[:6])
    try:
        moment = datetime(year, month, day, hour, minute, second, tzinfo=UTC)
    except ValueError:  # a 13th month, a 30th of February, a 25th hour
        return None
    seconds = (moment - _EPOCH).days * 86_400 + (moment - _EPOCH).seconds
    value = seconds * 10**9 + int((match.group(7) or "").ljust(9, "0"))
    return value if 0 <= value <= U64 else None


def iso_utc(nanos: int) -> str:
    """``nanos`` as an ISO-8601 UTC time to the second (``2024-01-03T00:00:00Z``), for words."""
    return datetime.fromtimestamp(nanos // 10**9, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
