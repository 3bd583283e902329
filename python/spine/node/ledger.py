"""The coverage ledger of one shard: for every discovered instrument and every ledger channel,
whether the channel is eligible, where its subscribe call stands and whether data flows.

Every discovered instrument is classified, and every (instrument, channel) pair is in exactly
one state, so the totals reconcile with discovery by construction: ``active + inactive =
discovered``, ``eligible + upstream_unsupported = discovered * 11``, ``planned + subscribed +
failed + unretained = eligible`` and ``with_flow + quiet = subscribed``. An eligible channel is
``planned`` from discovery on (the schema gives an eligible channel a subscription state at all
times), except on an instrument outside the retained-ingestion manifest: it is discovered and
classified like any other, but has zero ingestion demand, so its eligible channels are
``unretained`` and take no lifecycle call.

Subscription lifecycle (a repeated call is a no-op; a repeated ``failed`` updates the error):

    planned -> subscribed | failed      subscribed -> planned | failed      failed -> planned

``failed -> subscribed`` is refused (re-plan first), as is any call on an ineligible channel.
Flow is per subscription: quiet until an event is seen (quiet is not failure); an event seen
while the subscribe call is still planned counts once it is subscribed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from spine._core import WIRE_VERSION
from spine.errors import DiscoveryNotRegistered
from spine.node.hydration import IllegalTransition, check_nanos
from spine.wire.cursors import paginate

__all__ = ["LEDGER_CHANNELS", "ROUTES", "CoverageLedger", "DiscoveryNotRegistered", "View"]

LEDGER_CHANNELS: Final = (
    "quotes",
    "trades",
    "bars_external",
    "bars_internal",
    "bars_second",
    "mark_price",
    "index_price",
    "funding_rate",
    "option_greeks",
    "instrument_status",
    "liquidation",
)
View = Literal["all", "failures", "quiet"]
Subscription = Literal["planned", "subscribed", "failed", "unretained"]
ROUTES: Final[dict[str, str]] = {
    "all": "/v2/coverage",
    "failures": "/v2/coverage/failures",
    "quiet": "/v2/coverage/quiet",
}
_REFUSED: Final = {("failed", "subscribed")}
_INSTRUMENT_ID = re.compile(r"[!-~]+\.[A-Z][A-Z0-9_]*")
_LINE_BREAKS = re.compile("[\n\r\u2028\u2029]")


@dataclass
class _Channel:
    subscription: Subscription | None  # None exactly when upstream_unsupported
    seen: bool = False
    last_event_ts: int | None = None
    last_error: str | None = None

    @property
    def flow(self) -> Literal["with_flow", "quiet"] | None:
        if self.subscription != "subscribed":
            return None
        return "with_flow" if self.seen else "quiet"

    def wire(self, channel: str) -> dict[str, Any]:
        return {
            "channel": channel,
            "eligibility": "upstream_unsupported" if self.subscription is None else "eligible",
            "subscription": self.subscription,
            "flow": self.flow,
            "last_event_ts": None if self.last_event_ts is None else str(self.last_event_ts),
            "last_error": self.last_error,
        }


@dataclass
class _Instrument:
    status: str
    channels: dict[str, _Channel] = field(default_factory=dict)
    out_of_order: int = 0


class CoverageLedger:
    """See the module docs. ``classify(instrument_id)`` returns a venue-reported reason for an
    inactive instrument, or None; without the hook every instrument is ACTIVE."""

    def __init__(self, shard: str, classify: Callable[[str], str | None] | None = None) -> None:
        if not shard:
            raise ValueError("shard must be a non-empty name")
        self.shard = shard
        self._classify = classify
        self._instruments: dict[str, _Instrument] = {}
        self._order: list[str] = []
        self._registered = False

    @property
    def registered(self) -> bool:
        """False until :meth:`register_discovery` (coverage routes answer 404 until then)."""
        return self._registered

    def register_discovery(
        self, instruments: Sequence[tuple[str, frozenset[str]]], unretained: frozenset[str] = frozenset()
    ) -> None:
        """Record a discovery: ``(instrument_id, eligible channels)`` for every instrument;
        those in ``unretained`` get no ingestion (their eligible channels are ``unretained``).

        A later discovery replaces the set; a pair that stays eligible keeps its lifecycle.
        Raises ``ValueError`` for a bad id, a repeated id, an unknown channel or a bad reason.
        """
        fresh: dict[str, _Instrument] = {}
        for instrument_id, eligible in instruments:
            if (
                not isinstance(instrument_id, str)
                or len(instrument_id) > 128
                or not _INSTRUMENT_ID.fullmatch(instrument_id)
            ):
                raise ValueError(f"not a canonical SYMBOL.VENUE instrument id: {instrument_id!r}")
            if instrument_id in fresh:
                raise ValueError(f"{instrument_id} is discovered twice")
            unknown = set(eligible).difference(LEDGER_CHANNELS)
            if unknown:
                raise ValueError(f"{instrument_id}: not ledger channels: {sorted(unknown)}")
            old = self._instruments.get(instrument_id)
            entry = _Instrument(self._status(instrument_id), out_of_order=old.out_of_order if old else 0)
            for channel in LEDGER_CHANNELS:
                kept = old.channels[channel] if old else None
                if channel not in eligible:
                    entry.channels[channel] = _Channel(None)
                elif instrument_id in unretained:
                    entry.channels[channel] = _Channel("unretained")
                elif kept is not None and kept.subscription not in (None, "unretained"):
                    entry.channels[channel] = kept
                else:
                    entry.channels[channel] = _Channel("planned")
            fresh[instrument_id] = entry
        self._instruments, self._order, self._registered = fresh, sorted(fresh), True

    def _status(self, instrument_id: str) -> str:
        reason = None if self._classify is None else self._classify(instrument_id)
        if reason is None:
            return "ACTIVE"
        if not reason or _LINE_BREAKS.search(reason):
            raise ValueError(f"{instrument_id}: an inactive reason is one non-empty line, got {reason!r}")
        return f"INACTIVE:{reason}"

    def classify(self, instrument_id: str, reason: str | None) -> None:
        """The venue reported ``instrument_id`` inactive for ``reason`` (None: trading again).
        Instruments not discovered here are ignored."""
        entry = self._instruments.get(instrument_id)
        if entry is None:
            return
        if reason is not None and (not reason or _LINE_BREAKS.search(reason)):
            raise ValueError(f"{instrument_id}: an inactive reason is one non-empty line, got {reason!r}")
        entry.status = "ACTIVE" if reason is None else f"INACTIVE:{reason}"

    # lifecycle and flow

    def _channel(self, instrument_id: str, channel: str, to: str) -> _Channel:
        if channel not in LEDGER_CHANNELS:
            raise ValueError(f"not a ledger channel: {channel!r}")
        state = self._instruments[instrument_id].channels[channel]
        if state.subscription is None:
            raise IllegalTransition(f"{instrument_id} {channel}", "upstream_unsupported", to)
        if state.subscription == "unretained":
            raise IllegalTransition(f"{instrument_id} {channel}", "unretained", to)
        if (state.subscription, to) in _REFUSED:
            raise IllegalTransition(f"{instrument_id} {channel}", state.subscription, to)
        return state

    def planned(self, instrument_id: str, channel: str) -> None:
        """The subscribe call is (again) to be made: a retry after failure, or a resubscribe."""
        state = self._channel(instrument_id, channel, "planned")
        if state.subscription != "planned":
            state.subscription, state.seen = "planned", False

    def subscribed(self, instrument_id: str, channel: str) -> None:
        """The subscribe call succeeded; the channel is quiet until an event is seen."""
        state = self._channel(instrument_id, channel, "subscribed")
        state.subscription, state.last_error = "subscribed", None

    def failed(self, instrument_id: str, channel: str, error: str) -> None:
        """The subscribe call failed, or the venue dropped the subscription."""
        if not error:
            raise ValueError(f"{instrument_id} {channel}: a failure needs its error")
        state = self._channel(instrument_id, channel, "failed")
        state.subscription, state.seen, state.last_error = "failed", False, error

    def saw(self, instrument_id: str, channel: str, ts_event: int | None = None) -> None:
        """An event arrived on the channel; ``last_event_ts`` is the newest event time seen.
        Data on an ineligible channel is refused: the eligibility claim is wrong."""
        state = self._channel(instrument_id, channel, "with_flow")
        state.seen = True
        if ts_event is not None:
            check_nanos(ts_event)
            if state.last_event_ts is None or ts_event > state.last_event_ts:
                state.last_event_ts = ts_event

    def out_of_order(self, instrument_id: str, count: int = 1) -> None:
        """Count trades that arrived with a timestamp before one already seen."""
        if count < 0:
            raise ValueError(f"count must be >= 0, got {count}")
        self._instruments[instrument_id].out_of_order += count

    # documents

    def page(self, cursor: str | None, limit: int, view: View = "all") -> dict[str, Any]:
        """A ``svc.coverage_ledger`` page in instrument-id order. ``failures`` lists instruments
        with a failed channel, ``quiet`` those with a subscribed channel without flow; items
        always carry every channel, and the totals always cover the whole shard."""
        if view not in ROUTES:
            raise ValueError(f"view must be one of {', '.join(ROUTES)}, got {view!r}")
        if not self._registered:
            raise DiscoveryNotRegistered(f"DISCOVERY_NOT_REGISTERED: shard {self.shard}")
        ids = self._order if view == "all" else [iid for iid in self._order if self._listed(iid, view)]
        page, next_cursor = paginate(f"{ROUTES[view]}?shard={self.shard}", cursor, limit, ids)
        return self._document(view, page, next_cursor)

    def entry(self, instrument_id: str) -> dict[str, Any]:
        """One instrument's detail: the same document with one item and ``next_cursor`` null.
        ``KeyError`` for an instrument this shard did not discover."""
        if not self._registered:
            raise DiscoveryNotRegistered(f"DISCOVERY_NOT_REGISTERED: shard {self.shard}")
        if instrument_id not in self._instruments:
            raise KeyError(instrument_id)
        return self._document("instrument", [instrument_id], None)

    def eligible(self, instrument_id: str) -> list[str]:
        """The channels ``instrument_id`` is eligible for, in ledger order; empty for an
        instrument this shard did not discover (or before discovery)."""
        entry = self._instruments.get(instrument_id)
        if entry is None:
            return []
        return [channel for channel, state in entry.channels.items() if state.subscription is not None]

    def _listed(self, instrument_id: str, view: str) -> bool:
        channels = self._instruments[instrument_id].channels.values()
        if view == "failures":
            return any(c.subscription == "failed" for c in channels)
        return any(c.flow == "quiet" for c in channels)

    def totals(self) -> dict[str, Any]:
        """The shard's totals (``shard_totals``)."""
        channels = dict.fromkeys(
            ("eligible", "upstream_unsupported", "planned", "subscribed", "failed", "unretained", "with_flow", "quiet"),
            0,
        )
        active = out_of_order = 0
        for entry in self._instruments.values():
            active += entry.status == "ACTIVE"
            out_of_order += entry.out_of_order
            for state in entry.channels.values():
                channels["upstream_unsupported" if state.subscription is None else "eligible"] += 1
                for key in (state.subscription, state.flow):
                    if key is not None:
                        channels[key] += 1
        discovered = len(self._instruments)
        return {
            "shard": self.shard,
            "discovered": discovered,
            "active": active,
            "inactive": discovered - active,
            "channels": channels,
            "out_of_order": out_of_order,
        }

    def _document(self, view: str, ids: list[str], next_cursor: str | None) -> dict[str, Any]:
        items = []
        for iid in ids:
            entry = self._instruments[iid]
            items.append(
                {
                    "instrument_id": iid,
                    "shard": self.shard,
                    "status": entry.status,
                    "channels": [state.wire(ch) for ch, state in entry.channels.items()],
                    "out_of_order": entry.out_of_order,
                }
            )
        return {
            "version": WIRE_VERSION,
            "schema_id": "svc.coverage_ledger",
            "schema_version": 1,
            "view": view,
            "shards": [self.totals()],
            "items": items,
            "next_cursor": next_cursor,
        }
