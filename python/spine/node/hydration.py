"""The hydration state machine: per instrument, where fetching its history stands.

Internal states are the spec's six; the wire (``GET /v2/hydration``) speaks four, with
NO_HISTORY served as READY (nothing more to fetch: the series is as complete as the venue
allows) and RETRY_WAIT as HYDRATING (the work is not finished) — docs/contract.md, Hydration.
Both are served side by side, so the wire never loses what the node knows.

Transient failures are retried with exponential backoff (no jitter: every time is exact and
testable) until ``max_attempts`` history requests have been made; the last transient failure
then becomes FAILED. The book never reads a clock: every call takes ``now_ns``, so a test
(or a replay) drives time.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final, Literal

from spine._core import WIRE_VERSION
from spine.errors import SpineError
from spine.wire.cursors import paginate

__all__ = ["WIRE_STATE", "HydrationBook", "IllegalTransition", "InternalState", "Outcome", "WireState"]

InternalState = Literal["EMPTY", "HYDRATING", "READY", "NO_HISTORY", "RETRY_WAIT", "FAILED"]
WireState = Literal["EMPTY", "HYDRATING", "READY", "FAILED"]
Outcome = Literal["history", "no_history", "transient", "failed"]

WIRE_STATE: Final[dict[InternalState, WireState]] = {
    "EMPTY": "EMPTY",
    "HYDRATING": "HYDRATING",
    "READY": "READY",
    "NO_HISTORY": "READY",
    "RETRY_WAIT": "HYDRATING",
    "FAILED": "FAILED",
}
_TARGET: Final[dict[Outcome, InternalState]] = {
    "history": "READY",
    "no_history": "NO_HISTORY",
    "transient": "RETRY_WAIT",
    "failed": "FAILED",
}
ROUTE: Final = "/v2/hydration"
_U64_MAX: Final = 2**64 - 1
_INSTRUMENT_ID = re.compile(r"[!-~]+\.[A-Z][A-Z0-9_]*")


class IllegalTransition(SpineError, ValueError):
    """A state change the lifecycle table does not allow; names the subject, from and to.

    Shared by the coverage ledger and the engine status producer: a refused transition is a
    caller bug in each, and one exception type lets the node log them alike.
    """

    symbol = "ILLEGAL_TRANSITION"

    def __init__(self, subject: str, from_state: str, to_state: str) -> None:
        super().__init__(f"ILLEGAL_TRANSITION: {subject}: {from_state} -> {to_state} is not allowed")
        self.from_state = from_state
        self.to_state = to_state


def check_nanos(now_ns: int) -> int:
    """``now_ns`` unchanged when it is a u64 nanosecond time (the wire's nanos)."""
    if isinstance(now_ns, bool) or not isinstance(now_ns, int) or not 0 <= now_ns <= _U64_MAX:
        raise ValueError(f"a time must be integer nanoseconds in 0..2**64-1, got {now_ns!r}")
    return now_ns


@dataclass
class _Entry:
    state: InternalState
    updated_ts: int
    attempts: int = 0
    next_retry_ts: int | None = None
    last_error: str | None = None
    bars: int = 0

    def wire(self, instrument_id: str) -> dict[str, Any]:
        return {
            "instrument_id": instrument_id,
            "state": WIRE_STATE[self.state],
            "internal_state": self.state,
            "attempts": self.attempts,
            "next_retry_ts": None if self.next_retry_ts is None else str(self.next_retry_ts),
            "last_error": self.last_error,
            "updated_ts": str(self.updated_ts),
        }


class HydrationBook:
    """Every instrument's hydration state. Delays: ``base_ns * factor**(k-1)`` after the k-th
    attempt fails, capped at ``cap_ns``; attempt ``max_attempts`` failing is FAILED."""

    def __init__(
        self, *, base_ns: int = 1_000_000_000, factor: int = 2, cap_ns: int = 60_000_000_000, max_attempts: int = 6
    ) -> None:
        if base_ns < 1 or factor < 1 or cap_ns < base_ns or max_attempts < 1:
            raise ValueError("backoff needs base_ns >= 1, factor >= 1, cap_ns >= base_ns, max_attempts >= 1")
        self.base_ns, self.factor, self.cap_ns, self.max_attempts = base_ns, factor, cap_ns, max_attempts
        self._entries: dict[str, _Entry] = {}

    def delay_ns(self, attempt: int) -> int:
        """The wait after the ``attempt``-th request (1-based) failed transiently."""
        delay = self.base_ns
        for _ in range(attempt - 1):
            if delay >= self.cap_ns:
                break
            delay *= self.factor
        return min(delay, self.cap_ns)

    # transitions

    def register(self, instrument_ids: Iterable[str], now_ns: int) -> None:
        """Track instruments as EMPTY (so counts and pages show them before hydration starts);
        an instrument already tracked keeps its state."""
        check_nanos(now_ns)
        for instrument_id in instrument_ids:
            if instrument_id not in self._entries:
                self._entries[_check_id(instrument_id)] = _Entry("EMPTY", now_ns)

    def start(self, instrument_id: str, now_ns: int) -> None:
        """EMPTY -> HYDRATING: the first history request goes out (registers the instrument
        when it is not tracked yet)."""
        check_nanos(now_ns)
        entry = self._entries.get(instrument_id)
        if entry is None:
            entry = self._entries[_check_id(instrument_id)] = _Entry("EMPTY", now_ns)
        if entry.state != "EMPTY":
            raise IllegalTransition(instrument_id, entry.state, "HYDRATING")
        self._hydrate(entry, now_ns)

    def outcome(
        self, instrument_id: str, outcome: Outcome, now_ns: int, *, bars: int = 0, error: str | None = None
    ) -> InternalState:
        """HYDRATING -> READY | NO_HISTORY | RETRY_WAIT | FAILED; returns the new state.

        ``failed`` needs ``error`` (FAILED always says why); ``transient`` takes one. ``bars``
        is how many bars the history answer held. Raises ``KeyError`` for an untracked
        instrument and :class:`IllegalTransition` unless the instrument is HYDRATING.
        """
        check_nanos(now_ns)
        entry = self._entries[instrument_id]
        if outcome not in _TARGET:
            raise ValueError(f"outcome must be one of {', '.join(_TARGET)}, got {outcome!r}")
        target = _TARGET[outcome]
        if entry.state != "HYDRATING":
            raise IllegalTransition(instrument_id, entry.state, target)
        if bars < 0 or (bars and outcome != "history"):
            raise ValueError(f"{instrument_id}: bars must be >= 0 and only come with history, got {bars}")
        if error is not None and (not error or outcome not in ("transient", "failed")):
            raise ValueError(f"{instrument_id}: an error is a non-empty text, only with transient or failed")
        if outcome == "failed" and error is None:
            raise ValueError(f"{instrument_id}: a failed outcome needs its error (FAILED carries last_error)")
        entry.updated_ts = now_ns
        if outcome in ("history", "no_history"):
            entry.state, entry.bars, entry.last_error = target, bars, None
        elif outcome == "failed":
            entry.state, entry.last_error = "FAILED", error
        elif entry.attempts >= self.max_attempts:
            entry.state = "FAILED"
            entry.last_error = f"gave up after {entry.attempts} attempts: {error or 'transient failure'}"
        else:
            entry.state, entry.last_error = "RETRY_WAIT", error or "transient failure"
            entry.next_retry_ts = min(now_ns + self.delay_ns(entry.attempts), _U64_MAX)
        return entry.state

    def due(self, now_ns: int) -> list[str]:
        """RETRY_WAIT -> HYDRATING for every instrument whose retry time has come (sorted); the
        caller sends their next history request."""
        check_nanos(now_ns)
        ready = sorted(
            iid
            for iid, e in self._entries.items()
            if e.state == "RETRY_WAIT" and e.next_retry_ts is not None and e.next_retry_ts <= now_ns
        )
        for instrument_id in ready:
            self._hydrate(self._entries[instrument_id], now_ns)
        return ready

    def next_due_ns(self) -> int | None:
        """The earliest pending retry time (for the caller's timer), or None."""
        return min((e.next_retry_ts for e in self._entries.values() if e.next_retry_ts is not None), default=None)

    def _hydrate(self, entry: _Entry, now_ns: int) -> None:
        entry.state, entry.attempts, entry.next_retry_ts, entry.updated_ts = (
            "HYDRATING",
            entry.attempts + 1,
            None,
            now_ns,
        )

    # reads

    def __contains__(self, instrument_id: object) -> bool:
        return instrument_id in self._entries

    def state(self, instrument_id: str) -> InternalState:
        """The internal state; ``KeyError`` for an untracked instrument."""
        return self._entries[instrument_id].state

    def bars(self, instrument_id: str) -> int:
        """Bars the READY/NO_HISTORY answer held (0 otherwise)."""
        return self._entries[instrument_id].bars

    def counts(self) -> dict[str, int]:
        """Instruments per wire state, for ``svc.node_status`` ``hydration``."""
        out = {"empty": 0, "hydrating": 0, "ready": 0, "failed": 0}
        for entry in self._entries.values():
            out[WIRE_STATE[entry.state].lower()] += 1
        return out

    def page(self, cursor: str | None, limit: int) -> dict[str, Any]:
        """A ``svc.hydration_state`` page in instrument-id order."""
        ids, next_cursor = paginate(ROUTE, cursor, limit, sorted(self._entries))
        return _document([self._entries[iid].wire(iid) for iid in ids], next_cursor)

    def entry(self, instrument_id: str) -> dict[str, Any]:
        """The detail document: one item, ``next_cursor`` null; ``KeyError`` if untracked."""
        return _document([self._entries[instrument_id].wire(instrument_id)], None)


def _document(items: list[dict[str, Any]], next_cursor: str | None) -> dict[str, Any]:
    return {
        "version": WIRE_VERSION,
        "schema_id": "svc.hydration_state",
        "schema_version": 1,
        "items": items,
        "next_cursor": next_cursor,
    }


def _check_id(instrument_id: str) -> str:
    if not isinstance(instrument_id, str) or len(instrument_id) > 128 or not _INSTRUMENT_ID.fullmatch(instrument_id):
        raise ValueError(f"not a canonical SYMBOL.VENUE instrument id: {instrument_id!r}")
    return instrument_id
