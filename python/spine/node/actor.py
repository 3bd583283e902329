"""The ingestion actor: subscribes every discovered instrument's channels, projects framework
objects to wire documents (computing nothing), feeds the durable series and fans every event
out through the hub, encoded once.

INTERNAL 1-minute bars (and the non-durable 1-second tier for a prefix of the universe) are
built by the framework's own ``TimeBarAggregator`` from the trade stream, configured for the
spec: no bar for a minute with no trades (``build_with_no_updates=False``) and no partial first
bar (``skip_first_non_full_bar=True``). The aggregators run on event time (a ``TestClock``
advanced by the venue's timestamps), so a venue clock running in real time or accelerated
closes bars identically. The same event clock marks the time the node observed: each minute
boundary it passes while connected extends both channels' coverage, so a quiet INTERNAL minute
reads as quiet, and an EXTERNAL minute without a candle reads as a gap. EXTERNAL coverage
trails the clock by ``external_grace_ns``: a venue sends a minute's candle at or after its
close, after other events of that instant, so a minute only counts as missed once the grace
has passed without its candle (a candle that comes proves its own minute at once, and closes
the buckets it completes).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import msgspec
from nautilus_trader.common.actor import Actor
from nautilus_trader.common.component import TestClock
from nautilus_trader.common.config import ActorConfig
from nautilus_trader.data.aggregation import TimeBarAggregator
from nautilus_trader.model.data import BarType, DataType
from nautilus_trader.model.identifiers import ClientId
from nautilus_trader.model.instruments import CryptoOption, CryptoPerpetual

from spine._core import bar_row
from spine.fanout import FanOut
from spine.node.ledger import CoverageLedger
from spine.node.persist.series_book import SeriesBook, mantissas
from spine.node.sim.kinds import Liquidation, OptionGreeks
from spine.node.status import EngineStatusProducer
from spine.wire.bar_types import bar_kind, bar_type_of
from spine.wire.projection import (
    coverage_doc,
    envelope,
    frame,
    projection_frame,
    quote_doc,
    trade_doc,
)

__all__ = ["IngestionActor", "IngestionCounters"]

log = logging.getLogger("spine.node.actor")


def _guarded(handler: Callable[..., None]) -> Callable[..., None]:
    """An exception escaping an actor handler makes the framework terminate the process; a
    bad event must cost one counted error, never the node."""

    @functools.wraps(handler)
    def guarded(self: IngestionActor, *args: Any) -> None:
        try:
            handler(self, *args)
        except Exception as error:  # noqa: BLE001 - counted and logged, the node goes on
            self.counters.errors += 1
            self.status.record_error(f"{handler.__name__}: {error}")
            log.exception("ingestion handler %s failed", handler.__name__)

    return guarded


MINUTE_NS = 60 * 10**9


#: Market actions that stop trading when the venue does not say ``is_trading`` itself.
_STOPPED_ACTIONS = frozenset({"HALT", "PAUSE", "SUSPEND", "CLOSE", "POST_CLOSE", "NOT_AVAILABLE_FOR_TRADING"})


def inactive_reason(status: Any) -> str | None:
    """Why an instrument status stops trading (the venue's reason, else its action), or None
    when it trades: ``is_trading`` when the venue states it, else the action."""
    action = status.action.name
    trading = status.is_trading if status.is_trading is not None else action not in _STOPPED_ACTIONS
    if trading:
        return None
    reason = (status.reason or "").strip()
    return " ".join(reason.split()) if reason else action


@dataclass
class IngestionCounters:
    """Real counts since start (engine status and readiness read them)."""

    quotes: int = 0
    trades: int = 0
    trades_out_of_order: int = 0
    bars_accepted: dict[str, int] = field(default_factory=lambda: {"EXTERNAL": 0, "INTERNAL": 0})
    bars_rejected: dict[str, int] = field(default_factory=lambda: {"EXTERNAL": 0, "INTERNAL": 0})
    duplicates: dict[str, int] = field(default_factory=lambda: {"EXTERNAL": 0, "INTERNAL": 0})
    out_of_order: dict[str, int] = field(default_factory=lambda: {"EXTERNAL": 0, "INTERNAL": 0})
    facts: int = 0
    errors: int = 0


class IngestionActor(Actor):
    """See the module docs. ``on_discovery(instrument_ids)`` is called once every instrument
    is subscribed; ``retention(instrument_id)`` is the manifest's word on an instrument
    (``retained``, ``unretained``: no demand at all, or ``unmanaged``: no manifest)."""

    def __init__(
        self,
        *,
        hub: FanOut,
        book: SeriesBook,
        seconds_prefix: int = 25,
        external_grace_ns: int = 5 * 10**9,
        retention: Callable[[str], str] = lambda _: "unmanaged",
        on_discovery: Callable[[list[str]], None] | None = None,
        on_bar: Callable[[str, str, Any], None] | None = None,
        exhausted: Callable[[str], bool] = lambda _: False,
        ledger: CoverageLedger | None = None,
        status: EngineStatusProducer | None = None,
    ) -> None:
        super().__init__(ActorConfig(component_id="SPINE-INGEST"))
        self.hub = hub
        self.book = book
        self.seconds_prefix = seconds_prefix
        self.external_grace_ns = external_grace_ns
        self.counters = IngestionCounters()
        self.facts: dict[str, dict[str, dict[str, Any]]] = {}
        self._retention = retention
        self._on_discovery = on_discovery
        self._on_bar = on_bar
        self._exhausted = exhausted
        self.ledger = ledger or CoverageLedger("standalone")  # a shard name (the node passes its id)
        self.status = status or EngineStatusProducer(None, ("EXTERNAL", "INTERNAL"))
        self._event_clock = TestClock()
        self._aggregators: dict[str, list[TimeBarAggregator]] = {}
        # Built at the first event, once the event clock holds the venue's time (an aggregator
        # schedules its first close from the clock's time when it is built).
        self._pending_aggregators: list[tuple[Any, bool]] = []
        self._last_trade_ts: dict[str, int] = {}
        #: Per channel: the end of the time observed (None before the first event).
        self._observed_to: dict[str, int] = {}
        #: Every instrument the venue reported, and those of them ingested here (all but the
        #: ones outside a retained-ingestion manifest).
        self.discovered: list[str] = []
        self.ingested: list[str] = []
        self.unretained: frozenset[str] = frozenset()
        #: Every ledger channel some discovered instrument is eligible for.
        self.kinds: frozenset[str] = frozenset()
        self._coverage: dict[tuple[str, str], tuple[tuple[int, bool], dict[str, Any]]] = {}
        #: Bar type -> the history bars collected for a pending request_bars.
        self._history: dict[str, list[Any]] = {}

    # start

    def on_start(self) -> None:
        venue = list(self.cache.instruments())
        instruments = [i for i in venue if self._retention(str(i.id)) != "unretained"]
        eligible = []
        for k, instrument in enumerate(instruments):
            iid = instrument.id
            channels = _eligible(instrument, seconds=k < self.seconds_prefix)
            eligible.append((str(iid), channels))
            self.book.register(str(iid), instrument.price_precision, instrument.size_precision)
            self.subscribe_quote_ticks(iid)
            self.subscribe_trade_ticks(iid)
            self.subscribe_bars(BarType.from_str(bar_type_of(str(iid), "1m", "EXTERNAL")))
            self.subscribe_instrument_status(iid)
            if isinstance(instrument, CryptoPerpetual):
                self.subscribe_mark_prices(iid)
                self.subscribe_index_prices(iid)
                self.subscribe_funding_rates(iid)
            self._pending_aggregators.append((instrument, k < self.seconds_prefix))
        if any(isinstance(i, CryptoOption) for i in instruments):
            self.subscribe_data(DataType(OptionGreeks), client_id=ClientId(instruments[0].id.venue.value))
        if any(isinstance(i, CryptoPerpetual) for i in instruments):
            self.subscribe_data(DataType(Liquidation), client_id=ClientId(instruments[0].id.venue.value))
        # Discovery is registered once every subscribe call has been made (coverage routes
        # answer 404 before this).
        # Instruments outside the manifest are discovered and classified too (totals
        # reconcile with discovery), with zero ingestion demand.
        unretained = [i for i in venue if self._retention(str(i.id)) == "unretained"]
        self.unretained = frozenset(str(i.id) for i in unretained)
        self.ledger.register_discovery(
            eligible + [(str(i.id), _eligible(i, seconds=False)) for i in unretained], unretained=self.unretained
        )
        for iid, channels in eligible:
            for channel in channels:
                self.ledger.subscribed(iid, channel)
        self.ingested = [iid for iid, _ in eligible]
        self.discovered = [str(i.id) for i in venue]
        self.kinds = frozenset().union(*(channels for _, channels in eligible))
        self.status.begin()
        if self._on_discovery is not None:
            self._on_discovery(self.ingested)

    def on_stop(self) -> None:
        if self.status.lifecycle in ("RUNNING", "CHECKPOINTED"):
            if self.status.lifecycle == "CHECKPOINTED":
                self.status.resume()
            self.status.finish()

    def _make_aggregators(self, instrument: Any, *, seconds: bool) -> list[TimeBarAggregator]:
        resolutions = ("1m", "1s") if seconds else ("1m",)
        out = []
        for resolution in resolutions:
            bar_type = BarType.from_str(bar_type_of(str(instrument.id), resolution, "INTERNAL"))
            handler = self._internal_minute if resolution == "1m" else self._internal_second
            out.append(
                TimeBarAggregator(
                    instrument,
                    bar_type,
                    handler,
                    self._event_clock,
                    build_with_no_updates=False,
                    skip_first_non_full_bar=True,
                )
            )
        return out

    # the event clock

    def _advance(self, ts: int) -> None:
        """Move the event clock to ``ts``: fire due aggregator timers, extend coverage over the
        whole minutes passed, and let time close quiet derived buckets."""
        if ts <= self._event_clock.timestamp_ns():
            return
        if not self._observed_to:
            self._event_clock.set_time(ts)
            first = (ts // MINUTE_NS + 1) * MINUTE_NS
            self._observed_to = {"INTERNAL": first, "EXTERNAL": first}
            for instrument, seconds in self._pending_aggregators:
                self._aggregators[str(instrument.id)] = self._make_aggregators(instrument, seconds=seconds)
            self._pending_aggregators.clear()
            return
        for event in self._event_clock.advance_time(ts):
            event.handle()
        self._observe("INTERNAL", ts // MINUTE_NS * MINUTE_NS)
        self._observe("EXTERNAL", (ts - self.external_grace_ns) // MINUTE_NS * MINUTE_NS)

    def _observe(self, channel: str, end: int) -> None:
        """Extend ``channel``'s coverage to ``end`` (a minute boundary) on every series."""
        start = self._observed_to[channel]
        if end <= start:
            return
        self._observed_to[channel] = end
        for instrument_id in self.ingested:
            series = self.book.series(instrument_id, channel)
            series.observe(start, end)
            for closed in series.advance(end):
                self._publish_derived(instrument_id, channel, closed)

    # quotes and trades

    @_guarded
    def on_quote_tick(self, tick: Any) -> None:
        self._advance(tick.ts_event)
        self.counters.quotes += 1
        self.ledger.saw(str(tick.instrument_id), "quotes", tick.ts_event)
        self.hub.publish("quote", str(tick.instrument_id), frame("quote", quote_doc(tick)))

    @_guarded
    def on_trade_tick(self, tick: Any) -> None:
        iid = str(tick.instrument_id)
        if tick.ts_event < self._last_trade_ts.get(iid, 0):
            self.counters.trades_out_of_order += 1
            self.ledger.out_of_order(iid)
        self._last_trade_ts[iid] = max(tick.ts_event, self._last_trade_ts.get(iid, 0))
        self._advance(tick.ts_event)
        self.counters.trades += 1
        self.ledger.saw(iid, "trades", tick.ts_event)
        for aggregator in self._aggregators.get(iid, ()):
            aggregator.handle_trade_tick(tick)
        self.hub.publish("trade", iid, frame("trade", trade_doc(tick)))

    # bars

    @_guarded
    def on_bar(self, bar: Any) -> None:
        """EXTERNAL venue candles (INTERNAL bars come from the aggregators, never from here)."""
        self._advance(bar.ts_event)
        self._take(str(bar.bar_type.instrument_id), "EXTERNAL", bar)

    @_guarded
    def _internal_minute(self, bar: Any) -> None:
        self._take(str(bar.bar_type.instrument_id), "INTERNAL", bar)

    @_guarded
    def _internal_second(self, bar: Any) -> None:
        iid = str(bar.bar_type.instrument_id)
        self.ledger.saw(iid, "bars_second", bar.ts_event)
        p = self.book.precision(iid)
        ts, o, h, lo, c, v = mantissas(bar, p.price, p.size)
        row = bar_row(0, ts, o, h, lo, c, v, price_precision=p.price, size_precision=p.size)
        self._publish_bar(iid, "INTERNAL", "1s", row, [])

    def _take(self, instrument_id: str, channel: str, bar: Any) -> None:
        if instrument_id not in self.book:
            return
        self.ledger.saw(instrument_id, "bars_" + channel.lower(), bar.ts_event)
        try:
            outcome, closed = self.book.push(instrument_id, channel, bar)
        except ValueError as error:
            self._count(channel, "bars_rejected", error=str(error))
            return
        if outcome == "DUPLICATE":
            self._count(channel, "duplicates")
            return
        if outcome == "TOO_OLD":
            self._count(channel, "bars_rejected")
            return
        if outcome == "INSERTED":
            self._count(channel, "out_of_order")
        self._count(channel, "bars_accepted")
        series = self.book.series(instrument_id, channel)
        p = self.book.precision(instrument_id)
        ts, o, h, lo, c, v = mantissas(bar, p.price, p.size)
        row = bar_row(series.last_sequence, ts, o, h, lo, c, v, price_precision=p.price, size_precision=p.size)
        self._publish_bar(instrument_id, channel, "1m", row, [])
        if self._on_bar is not None:
            self._on_bar(instrument_id, channel, bar)
        for event in closed:
            self._publish_derived(instrument_id, channel, event)

    def _count(self, channel: str, what: str, *, error: str | None = None) -> None:
        """One count, kept in the actor's counters and the engine status (per authority)."""
        getattr(self.counters, what)[channel] += 1
        if self.status.lifecycle == "CHECKPOINTED":
            self.status.resume()
        if what in ("bars_accepted", "bars_rejected"):
            self.status.add(what)  # type: ignore[arg-type]
        else:
            self.status.add_authority(channel, what)  # type: ignore[arg-type]
        if error is not None:
            self.status.record_error(error)

    def _publish_derived(self, instrument_id: str, channel: str, event: tuple[Any, ...]) -> None:
        resolution, kind, start, end, values = event
        if kind in ("GAP_IN_INPUT", "UNOBSERVED"):
            self.status.add_authority(channel, "gaps")
        p = self.book.precision(instrument_id)
        if kind == "bar":
            o, h, lo, c, v, sequence = values
            row = bar_row(sequence, end, o, h, lo, c, v, price_precision=p.price, size_precision=p.size)
            self._publish_bar(instrument_id, channel, resolution, row, [])
        else:
            self._publish_bar(instrument_id, channel, resolution, b"[]", [(start, end, kind)])

    def _publish_bar(
        self, instrument_id: str, channel: str, resolution: str, rows: bytes, withheld: list[tuple[int, int, str]]
    ) -> None:
        """``rows``: the JSON array of the event's bar rows, as ``spine._core.bar_row`` writes it."""
        document = envelope(
            instrument_id=instrument_id,
            bar_type=bar_type_of(instrument_id, resolution, channel),
            resolution=resolution,
            channel=channel,
            bars=msgspec.Raw(rows),
            coverage=self.coverage(instrument_id, channel),
            withheld=withheld,
            next_cursor=None,
        )
        self.hub.publish(bar_kind(resolution, channel), instrument_id, frame("bar", document))

    def coverage(self, instrument_id: str, channel: str) -> dict[str, Any]:
        """The series' coverage document, rebuilt only when the series or the observed time
        changed (a bar event per second must not rebuild it each time)."""
        series = self.book.series(instrument_id, channel)
        # INTERNAL bars come from live trades only: no backfill can ever add older ones, so
        # its history is exhausted from the start (a client paging back stops on it).
        exhausted = channel == "INTERNAL" or self._exhausted(instrument_id)
        # The revision moves with bars, observed time and confirmed-empty minutes alike.
        key = (series.revision, exhausted)
        cached = self._coverage.get((instrument_id, channel))
        if cached is None or cached[0] != key:
            document = coverage_doc(
                series, instrument_id=instrument_id, retention_state=self.retention(instrument_id), exhausted=exhausted
            )
            cached = self._coverage[(instrument_id, channel)] = (key, document)
        return cached[1]

    def retention(self, instrument_id: str) -> str:
        return self._retention(instrument_id)

    def confirm_empty(self, instrument_id: str, start: int, end: int) -> None:
        """The venue's history answered for ``[start, end)`` without a candle for the minutes
        the EXTERNAL series holds no bar for: confirm them empty, and publish the derived
        buckets that completes (repairs, as a late bar's)."""
        for closed in self.book.series(instrument_id, "EXTERNAL").confirm_empty(start, end):
            self._publish_derived(instrument_id, "EXTERNAL", closed)

    # facts

    def _fact(self, kind: str, data: Any) -> None:
        if str(data.instrument_id) not in self.book:
            return  # custom data is subscribed by type: drop instruments not ingested here
        self._advance(data.ts_event)
        document = projection_frame(kind, data)
        self.ledger.saw(document["instrument_id"], kind, data.ts_event)
        self.facts.setdefault(kind, {})[document["instrument_id"]] = document
        self.counters.facts += 1
        self.hub.publish(kind, document["instrument_id"], frame(kind, document))

    # history answers (request_bars)

    def collect_history(self, bar_type: str) -> list[Any]:
        """Collect the history bars of ``bar_type`` until :meth:`stop_collecting` (the list
        fills as the framework hands the answer over)."""
        return self._history.setdefault(bar_type, [])

    def stop_collecting(self, bar_type: str) -> None:
        self._history.pop(bar_type, None)

    @_guarded
    def on_historical_data(self, data: Any) -> None:
        collecting = self._history.get(str(getattr(data, "bar_type", "")))
        if collecting is not None:
            collecting.append(data)

    @_guarded
    def on_mark_price(self, update: Any) -> None:
        self._fact("mark_price", update)

    @_guarded
    def on_index_price(self, update: Any) -> None:
        self._fact("index_price", update)

    @_guarded
    def on_funding_rate(self, update: Any) -> None:
        self._fact("funding_rate", update)

    @_guarded
    def on_instrument_status(self, status: Any) -> None:
        self._fact("instrument_status", status)
        # The venue's classification hook: a status that stops trading makes the instrument
        # INACTIVE in the coverage ledger, with the venue's reason (or its action); trading
        # again makes it ACTIVE.
        self.ledger.classify(str(status.instrument_id), inactive_reason(status))

    @_guarded
    def on_data(self, data: Any) -> None:
        kind = {"OptionGreeks": "option_greeks", "Liquidation": "liquidation"}.get(type(data).__name__)
        if kind is not None:
            self._fact(kind, data)


def _eligible(instrument: Any, *, seconds: bool) -> frozenset[str]:
    """The ledger channels an instrument's product family claims."""
    channels = {"quotes", "trades", "bars_external", "bars_internal", "instrument_status"}
    if seconds:
        channels.add("bars_second")
    if isinstance(instrument, CryptoPerpetual):
        channels |= {"mark_price", "index_price", "funding_rate", "liquidation"}
    if isinstance(instrument, CryptoOption):
        channels.add("option_greeks")
    return frozenset(channels)
