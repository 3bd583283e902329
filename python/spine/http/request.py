"""Query parameters, checked: every route names the parameters it takes, an unknown one is
UNKNOWN_PARAMETER, a repeated one or a value outside its grammar is INVALID_PARAMETER."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import TypeVar
from urllib.parse import parse_qsl

from spine.http.errors import HttpError
from spine.http.times import TIME_WORDS, time_nanos
from spine.wire.cursors import MAX_LIMIT, MIN_LIMIT, InvalidCursor, LimitOutOfRange, paginate

__all__ = ["Query", "I63", "INSTRUMENT_ID", "MEMO_RAW_MAX", "NANOS", "U64", "memoizable", "path_instrument_id"]

INSTRUMENT_ID = re.compile(r"^[!-~]+\.[A-Z][A-Z0-9_]*$")
NANOS = re.compile(r"^(0|[1-9][0-9]{0,19})$")
#: Raw query strings longer than this are parsed on every request and never memoized: the
#: memos hold a bounded count of entries, and this bounds each (a client padding valid
#: queries to tens of kilobytes could otherwise pin tens of megabytes).
MEMO_RAW_MAX = 1_024
#: ASCII digits only (``str.isdigit`` also takes "²" and other scripts' digits).
_LIMIT = re.compile(r"^[1-9][0-9]{0,8}$")
U64 = 2**64 - 1
#: The largest value a database's signed 64-bit integer column holds (job event sequences).
I63 = 2**63 - 1
T = TypeVar("T")


class Query:
    """The parsed query string of one request."""

    def __init__(self, raw: str, allowed: Iterable[str]) -> None:
        allowed = frozenset(allowed)
        self.raw = raw
        self._values: dict[str, str] = {}
        try:
            pairs = parse_qsl(raw, keep_blank_values=True, strict_parsing=False, errors="strict")
        except UnicodeDecodeError:
            # Never read a parameter as something the client did not send (U+FFFD for its bytes).
            raise HttpError(
                "INVALID_PARAMETER", "the query string's percent-encoding is not UTF-8; encode each parameter as UTF-8"
            ) from None
        for key, value in pairs:
            if key not in allowed:
                names = ", ".join(sorted(allowed)) or "none"
                raise HttpError("UNKNOWN_PARAMETER", f"{key!r} is not a parameter of this route; allowed: {names}")
            if key in self._values:
                raise HttpError("INVALID_PARAMETER", f"{key!r} is given more than once; give it once")
            self._values[key] = value

    def text(self, key: str) -> str | None:
        return self._values.get(key)

    def instrument_id(self, key: str = "instrument_id") -> str | None:
        value = self._values.get(key)
        if value is not None and (len(value) > 128 or not INSTRUMENT_ID.match(value)):
            raise HttpError(
                "INVALID_INSTRUMENT_ID", f"{key}={value!r} is not a canonical SYMBOL.VENUE id (e.g. BTCUSDT.SIM)"
            )
        return value

    def nanos(self, key: str) -> int | None:
        """A time: nanoseconds or an ISO-8601 UTC time, converted exactly (``spine.http.times``)."""
        value = self._values.get(key)
        if value is None:
            return None
        nanos = time_nanos(value)
        if nanos is None:
            raise HttpError("INVALID_PARAMETER", f"{key}={value!r} is not a time; give {TIME_WORDS}")
        return nanos

    def sequence(self, key: str, maximum: int = U64) -> int | None:
        """A sequence number up to ``maximum``: U64 for the node's arrival sequences, I63 for
        anything compared in a database (a signed 64-bit column)."""
        return self._u64(key, "a sequence number", maximum)

    def _u64(self, key: str, what: str, maximum: int = U64) -> int | None:
        value = self._values.get(key)
        if value is None:
            return None
        if not NANOS.match(value) or int(value) > maximum:
            bound = "2^64-1" if maximum == U64 else "2^63-1" if maximum == I63 else str(maximum)
            raise HttpError(
                "INVALID_PARAMETER",
                f"{key}={value!r} is not {what} (ASCII digits, no sign, no leading zero, at most {bound})",
            )
        return int(value)

    def span(self, start_key: str = "start", end_key: str = "end") -> tuple[int | None, int | None]:
        """An inclusive time range; one whose end precedes its start is refused, not served empty."""
        start, end = self.nanos(start_key), self.nanos(end_key)
        if start is not None and end is not None and end < start:
            raise HttpError(
                "INVALID_PARAMETER",
                f"{end_key}={end} precedes {start_key}={start}; give {start_key} <= {end_key} (both inclusive)",
            )
        return start, end

    def limit(self, default: int, maximum: int = MAX_LIMIT) -> int:
        value = self._values.get("limit")
        if value is None:
            return default
        if not _LIMIT.match(value) or not MIN_LIMIT <= int(value) <= maximum:
            raise HttpError("LIMIT_OUT_OF_RANGE", f"limit={value!r}; allowed: an integer {MIN_LIMIT}..{maximum}")
        return int(value)

    def page(self, route: str, items: Sequence[T], default: int = 100) -> tuple[list[T], str | None]:
        """One page of ``items`` at this query's ``cursor`` and ``limit`` (cursors bound to ``route``)."""
        limit = self.limit(default)
        try:
            return paginate(route, self.text("cursor"), limit, items)
        except InvalidCursor as error:
            raise HttpError("INVALID_CURSOR", str(error).split(": ", 1)[-1]) from None
        except LimitOutOfRange as error:
            raise HttpError("LIMIT_OUT_OF_RANGE", str(error).split(": ", 1)[-1]) from None

    def choice(self, key: str, allowed: Iterable[str], default: str | None = None) -> str | None:
        value = self._values.get(key, default)
        options = list(allowed)
        if value is not None and value not in options:
            raise HttpError("INVALID_PARAMETER", f"{key}={value!r}; allowed: {', '.join(options)}")
        return value


def memoizable(raw: str) -> bool:
    """Whether a raw query string is short enough to be kept by a memo (see MEMO_RAW_MAX)."""
    return len(raw) <= MEMO_RAW_MAX


def path_instrument_id(value: str) -> str:
    """An instrument id from a route's path (``/v2/coverage/{id}``), checked as the query's are."""
    if len(value) > 128 or not INSTRUMENT_ID.match(value):
        raise HttpError("INVALID_INSTRUMENT_ID", f"{value!r} is not a canonical SYMBOL.VENUE id (e.g. BTCUSDT.SIM)")
    return value
