"""The simulated venue (``SIM`` unless configured) as a real nautilus data client: a ``LiveMarketDataClient`` with its
factory and instrument provider, streaming the seeded market of :mod:`.market` on a clock that
runs in real time or accelerated, and answering history requests.

The stream wakes every ``tick_secs`` of wall time, advances the venue clock and emits every
event whose timestamp has passed, in time order per instrument: quotes, trades, the EXTERNAL
1-minute candle at each minute's close, mark and index prices and funding (perpetuals),
greeks (options), and now and then an instrument status change or a liquidation.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from nautilus_trader.common.providers import InstrumentProvider
from nautilus_trader.config import InstrumentProviderConfig, LiveDataClientConfig
from nautilus_trader.model.data import (
    Bar,
    BarType,
    CustomData,
    DataType,
    FundingRateUpdate,
    IndexPriceUpdate,
    InstrumentStatus,
    MarkPriceUpdate,
    QuoteTick,
    TradeTick,
)
from nautilus_trader.model.enums import AggressorSide, MarketStatusAction
from nautilus_trader.model.identifiers import InstrumentId, TradeId
from nautilus_trader.model.instruments import CryptoOption, CryptoPerpetual, Instrument
from nautilus_trader.model.objects import Price, Quantity

from spine.node.sim.history import HistoryAnswer, HistoryPlan
from spine.node.sim.kinds import Liquidation, OptionGreeks
from spine.node.sim.market import MINUTE_NS, Candle, Profile, SimMarket
from spine.node.sim.universe import SimUniverseConfig, make_instruments, reference_price
from spine.node.venue_client import VenueClientFactory, VenueDataClient

__all__ = ["SimDataClient", "SimDataClientConfig", "SimDataClientFactory", "SimInstrumentProvider", "sim_market"]

FIXED = 16  # nautilus' raw scale in this build (FIXED_PRECISION=16)
FUNDING_PERIOD_NS = 8 * 3600 * 10**9
#: Events handed to the framework per loop step (see ``SimDataClient._stream``).
BURST = 128


class SimDataClientConfig(LiveDataClientConfig, frozen=True):  # type: ignore[call-arg]
    """The simulated venue's settings (a msgspec struct, like every nautilus config)."""

    #: The venue (and client id) every instrument id names; the node validates it
    #: (``sim.venue_name``).
    venue_name: str = "SIM"
    seed: int = 7
    #: Venue seconds per wall second (1.0: real time).
    speed: float = 1.0
    #: Venue time at start, ns; ``None`` starts at the wall clock's current minute.
    start_ns: int | None = None
    tick_secs: float = 0.05
    spot: int = 12
    perpetuals: int = 12
    option_expiries: int = 2
    option_strikes: int = 6
    candle_skip: float = 0.002
    #: Per instrument id, how the history endpoint answers: ``history`` (default),
    #: ``no_history``, ``transient:<n>`` (n failures, then history) or ``failed``.
    history: dict[str, str] | None = None


def _universe(config: SimDataClientConfig, start_ns: int) -> SimUniverseConfig:
    return SimUniverseConfig(
        venue=config.venue_name,
        spot=config.spot,
        perpetuals=config.perpetuals,
        option_expiries=config.option_expiries,
        option_strikes=config.option_strikes,
        start_ns=start_ns,
    )


def sim_market(config: SimDataClientConfig, instruments: list[Instrument]) -> SimMarket:
    """The market of a configured universe: liquidity falls from majors to options."""
    profiles = []
    for k, instrument in enumerate(instruments):
        rate = 0.25 if isinstance(instrument, CryptoOption) else max(0.6, 9.0 / (1 + k % 12))
        profiles.append(
            Profile(float(reference_price(instrument)), instrument.price_precision, instrument.size_precision, rate)
        )
    return SimMarket(profiles, seed=config.seed, candle_skip=config.candle_skip)


class SimInstrumentProvider(InstrumentProvider):
    """Lists the configured universe."""

    def __init__(self, universe: SimUniverseConfig, config: InstrumentProviderConfig | None = None) -> None:
        super().__init__(config=config)
        self._universe = universe

    async def load_all_async(self, filters: dict[str, Any] | None = None) -> None:
        for instrument in make_instruments(self._universe):
            self.add(instrument)

    async def load_ids_async(self, instrument_ids: list[InstrumentId], filters: dict[str, Any] | None = None) -> None:
        await self.load_all_async()

    async def load_async(self, instrument_id: InstrumentId, filters: dict[str, Any] | None = None) -> None:
        await self.load_all_async()


@dataclass
class _Subscriptions:
    quotes: set[InstrumentId]
    trades: set[InstrumentId]
    candles: set[InstrumentId]
    marks: set[InstrumentId]
    indexes: set[InstrumentId]
    funding: set[InstrumentId]
    status: set[InstrumentId]
    custom: set[str]


class SimDataClient(VenueDataClient):
    """The venue (see the module docs)."""

    def __init__(
        self, loop: asyncio.AbstractEventLoop, msgbus: Any, cache: Any, clock: Any, config: SimDataClientConfig
    ) -> None:
        self._wall0 = time.time_ns()
        start = config.start_ns if config.start_ns is not None else self._wall0 // MINUTE_NS * MINUTE_NS
        universe = _universe(config, start)
        provider_config = config.instrument_provider or InstrumentProviderConfig(load_all=True)
        if not provider_config.load_all:
            provider_config = InstrumentProviderConfig(load_all=True)
        super().__init__(loop, msgbus, cache, clock, config, SimInstrumentProvider(universe, provider_config))
        self._sim = config
        self._instruments = make_instruments(universe)
        self.market = sim_market(config, self._instruments)
        self.history = HistoryPlan(self.market, self._instruments, config.history or {}, config.venue_name)
        self._index = {instrument.id: k for k, instrument in enumerate(self._instruments)}
        self._subs = _Subscriptions(set(), set(), set(), set(), set(), set(), set(), set())
        self._venue0 = start
        self._emitted_to = start
        self._task: asyncio.Task[None] | None = None
        self._trade_ids = 0

    # the venue clock

    def venue_now(self) -> int:
        """The venue's current time, ns."""
        return self._venue0 + int((time.time_ns() - self._wall0) * self._sim.speed)

    # lifecycle

    async def _connect(self) -> None:
        await self._instrument_provider.initialize()
        for instrument in self._instrument_provider.list_all():
            self._handle_data(instrument)
        self._task = self.create_task(self._stream(), log_msg="sim-stream")

    async def _disconnect(self) -> None:
        if self._task is not None:
            self._task.cancel()
            self._task = None

    async def _stream(self) -> None:
        while True:
            await asyncio.sleep(self._sim.tick_secs)
            for _ in self.emit_until(self.venue_now()):
                # A venue's socket hands its messages over a few at a time; so does this one.
                # The framework's data queue drains whatever is queued in one loop step, so a
                # burst handed over at once (a fast clock, or a loop that fell behind) would
                # hold the loop, and every HTTP request on it, for its whole length.
                await asyncio.sleep(0)

    def emit_until(self, until: int) -> Iterator[int]:
        """Emit every subscribed event with a timestamp in ``(emitted_to, until]``, at most
        :data:`BURST` events at a time: the generator pauses after each burst (yielding how
        many it handed over) and after generating each instrument's minute (yielding 0), so
        the caller can let the loop turn between them."""
        start, self._emitted_to = self._emitted_to, max(self._emitted_to, until)
        if until <= start:
            return
        first_end = (start // MINUTE_NS + 1) * MINUTE_NS
        for end in range(first_end, (until // MINUTE_NS + 1) * MINUTE_NS + 1, MINUTE_NS):
            # One stream in time order across instruments, as a venue's feed is: a consumer's
            # event clock never passes a minute's close before every trade of that minute.
            due: list[tuple[int, Any]] = []
            for instrument in self._instruments:
                due += self._minute_events(instrument, end, start, until)
                yield 0  # generating a busy minute is work too: a pause after each instrument
            due.sort(key=lambda event: event[0])
            for first in range(0, len(due), BURST):
                for _, data in due[first : first + BURST]:
                    self._handle_data(data)
                yield min(BURST, len(due) - first)

    # events

    def _price(self, instrument: Instrument, mantissa: int) -> Price:
        return Price.from_raw(mantissa * 10 ** (FIXED - instrument.price_precision), instrument.price_precision)

    def _qty(self, instrument: Instrument, mantissa: int) -> Quantity:
        return Quantity.from_raw(mantissa * 10 ** (FIXED - instrument.size_precision), instrument.size_precision)

    def _minute_events(self, instrument: Instrument, end: int, after: int, until: int) -> list[tuple[int, Any]]:
        """The events of the minute closing at ``end`` with a timestamp in ``(after, until]``,
        as ``(ts, data)``."""
        iid, k = instrument.id, self._index[instrument.id]
        minute = self.market.minute(k, end)
        due = lambda ts: after < ts <= until  # noqa: E731
        events: list[tuple[int, Any]] = []
        if iid in self._subs.quotes:
            for ts, bid, ask, bid_size, ask_size in minute.quotes:
                if due(ts):
                    events.append(
                        (
                            ts,
                            QuoteTick(
                                iid,
                                self._price(instrument, bid),
                                self._price(instrument, ask),
                                self._qty(instrument, bid_size),
                                self._qty(instrument, ask_size),
                                ts,
                                ts,
                            ),
                        )
                    )
        if iid in self._subs.trades:
            for n, (ts, price, size, buyer) in enumerate(minute.trades):
                if due(ts):
                    side = AggressorSide.BUYER if buyer else AggressorSide.SELLER
                    events.append(
                        (
                            ts,
                            TradeTick(
                                iid,
                                self._price(instrument, price),
                                self._qty(instrument, size),
                                side,
                                TradeId(f"{end // MINUTE_NS}-{n}"),
                                ts,
                                ts,
                            ),
                        )
                    )
        if due(end):
            events.extend((end, d) for d in self._minute_close(instrument, k, end, minute.candle))
        return events

    def _minute_close(self, instrument: Instrument, k: int, end: int, candle: Candle | None) -> Iterator[Any]:
        iid = instrument.id
        if iid in self._subs.candles and candle is not None:
            yield self.candle_bar(instrument, candle)
        level = self.market.price_at(k, end // MINUTE_NS)
        if isinstance(instrument, CryptoPerpetual):
            if iid in self._subs.marks:
                yield MarkPriceUpdate(iid, self._price(instrument, level + max(1, level // 20_000)), end, end)
            if iid in self._subs.indexes:
                yield IndexPriceUpdate(iid, self._price(instrument, level), end, end)
            if iid in self._subs.funding:
                rate = Decimal(round(10_000 * math.sin(end / 3.6e12 + k))).scaleb(-8)
                yield FundingRateUpdate(
                    iid, rate, end, end, next_funding_ns=(end // FUNDING_PERIOD_NS + 1) * FUNDING_PERIOD_NS
                )
            if "Liquidation" in self._subs.custom and (end // MINUTE_NS + k) % 37 == 0:
                side = "SELL" if (end // MINUTE_NS) % 2 else "BUY"
                liq = Liquidation(
                    instrument_id=iid,
                    side=side,
                    price=str(self._price(instrument, level)),
                    quantity=str(self._qty(instrument, 10**instrument.size_precision)),
                    ts_event=end,
                    ts_init=end,
                )
                yield CustomData(DataType(Liquidation), liq)
        if isinstance(instrument, CryptoOption) and "OptionGreeks" in self._subs.custom:
            yield CustomData(DataType(OptionGreeks), self._greeks(instrument, end))
        if iid in self._subs.status and (end // MINUTE_NS + 7 * k) % 720 == 0:
            halted = (end // MINUTE_NS // 720) % 2 == 0
            action = MarketStatusAction.HALT if halted else MarketStatusAction.TRADING
            yield InstrumentStatus(
                iid, action, end, end, reason="SIM_CIRCUIT_BREAKER" if halted else None, is_trading=not halted
            )

    def _greeks(self, option: CryptoOption, end: int) -> OptionGreeks:
        """Black-Scholes greeks of the option at the underlying's level (the venue computes them;
        the node only carries them)."""
        spot = float(reference_price(option)) / 0.05 * math.exp(0.02 * math.sin(end / 8.64e13))
        strike = float(option.strike_price)
        years = max((option.expiration_ns - end) / (365 * 86_400 * 10**9), 1e-6)
        iv = 0.5 + 0.2 * abs(math.log(strike / spot))
        d1 = (math.log(spot / strike) + 0.5 * iv * iv * years) / (iv * math.sqrt(years))
        d2 = d1 - iv * math.sqrt(years)
        cdf = lambda x: 0.5 * (1 + math.erf(x / math.sqrt(2)))  # noqa: E731
        pdf = math.exp(-0.5 * d1 * d1) / math.sqrt(2 * math.pi)
        call = option.option_kind.name == "CALL"
        delta = cdf(d1) if call else cdf(d1) - 1
        rho = strike * years * (cdf(d2) if call else -cdf(-d2)) / 100
        text = lambda x, s=6: format(Decimal(repr(x)).quantize(Decimal(1).scaleb(-s)) + 0, "f")  # noqa: E731
        return OptionGreeks(
            instrument_id=option.id,
            delta=text(delta),
            gamma=text(pdf / (spot * iv * math.sqrt(years)), 10),
            vega=text(spot * pdf * math.sqrt(years) / 100),
            theta=text(-spot * pdf * iv / (2 * math.sqrt(years)) / 365),
            rho=text(rho),
            iv=text(iv),
            underlying_price=text(spot, 2),
            ts_event=end,
            ts_init=end,
        )

    def candle_bar(self, instrument: Instrument, candle: Candle) -> Bar:
        """A venue candle as a framework EXTERNAL 1-minute bar."""
        bar_type = BarType.from_str(f"{instrument.id}-1-MINUTE-LAST-EXTERNAL")
        p = lambda m: self._price(instrument, m)  # noqa: E731
        return Bar(
            bar_type,
            p(candle.open),
            p(candle.high),
            p(candle.low),
            p(candle.close),
            self._qty(instrument, candle.volume),
            candle.ts_event,
            candle.ts_event,
        )

    # subscriptions

    async def _subscribe_quote_ticks(self, command: Any) -> None:
        self._subs.quotes.add(command.instrument_id)

    async def _subscribe_trade_ticks(self, command: Any) -> None:
        self._subs.trades.add(command.instrument_id)

    async def _subscribe_bars(self, command: Any) -> None:
        self._subs.candles.add(command.bar_type.instrument_id)

    async def _subscribe_mark_prices(self, command: Any) -> None:
        self._subs.marks.add(command.instrument_id)

    async def _subscribe_index_prices(self, command: Any) -> None:
        self._subs.indexes.add(command.instrument_id)

    async def _subscribe_funding_rates(self, command: Any) -> None:
        self._subs.funding.add(command.instrument_id)

    async def _subscribe_instrument_status(self, command: Any) -> None:
        self._subs.status.add(command.instrument_id)

    async def _subscribe(self, command: Any) -> None:
        self._subs.custom.add(command.data_type.type.__name__)

    async def _subscribe_instruments(self, command: Any) -> None:
        pass  # the universe is fixed: every instrument was sent on connect

    async def _subscribe_instrument(self, command: Any) -> None:
        pass

    async def _unsubscribe_quote_ticks(self, command: Any) -> None:
        self._subs.quotes.discard(command.instrument_id)

    async def _unsubscribe_trade_ticks(self, command: Any) -> None:
        self._subs.trades.discard(command.instrument_id)

    async def _unsubscribe_bars(self, command: Any) -> None:
        self._subs.candles.discard(command.bar_type.instrument_id)

    # history

    async def _request_bars(self, request: Any) -> None:
        """History through the framework: answered from the same plan as direct fetches; a
        failing instrument gets no answer (the framework has no failure response)."""
        iid = request.bar_type.instrument_id
        start = int(request.start.value) if request.start is not None else self.venue_now() - 5_000 * MINUTE_NS
        end = int(request.end.value) if request.end is not None else self.venue_now()
        answer: HistoryAnswer = self.history.fetch(str(iid), start, end)
        if answer.outcome in ("history", "no_history"):
            instrument = self._instruments[self._index[iid]]
            bars = [self.candle_bar(instrument, c) for c in answer.candles]
            self._handle_bars(request.bar_type, bars, request.id, request.start, request.end, request.params)


class SimDataClientFactory(VenueClientFactory):
    """Builds the simulated venue's client for a node."""

    CLIENT = SimDataClient
    CONFIG = SimDataClientConfig
    VENUE = "simulated"
