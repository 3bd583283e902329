"""One backtest run: read the bars (:mod:`spine.backtest.bars`), build NautilusTrader's
``BacktestEngine`` with the :class:`~spine.backtest.runtime.DeclarativeStrategy`, run it, and
collect every output as canonical JSON documents (:class:`~spine.backtest.api.RunOutputs`).

The engine: one venue configuration per distinct venue of the run's instruments, each a
NETTING MARGIN account (shorts allowed on any instrument, leverage 1) starting with the
execution capital in the instruments' quote currency (one currency per run, else refused);
``FillModel(prob_fill_on_limit=1.0, prob_slippage=0.0, random_seed=seed)``,
``MakerTakerFeeModel`` (the instrument's fees), ``bar_execution=True``, logging at ERROR.
The run's starting balance is the capital times the venues.

Identities (``spine._core.identity`` over canonical JSON):

- ``bar_fingerprint = identity("bar_fingerprint", [per instrument, run order: {instrument_id,
  bar_type, price_precision, size_precision, bars, sha256 (of the derived columns), withheld}])``;
- ``run_id = identity("run_id", {"request": spec.request, "revision_id", "bar_fingerprint",
  "execution": the effective execution block})``;
- ``result_hash = identity("result_hash", {"report": the report without run_id, job_id,
  config_hash, revision_id, result_hash and ts_finished; "orders", "fills", "positions",
  "statistics", "equity"})``: business fields only (backtest-clock times, framework ids that
  the clock and counters derive, exact decimals), never a framework UUID or a wall-clock time.
  It names what the run did, not which revision asked: a revision whose defaults are another's
  values (a study's promote) reproduces that run's result_hash.

Engine status documents: STARTING (before the bars are read; run_id null), RUNNING (bars
loaded; ``bars_accepted`` the bars fed, ``bars_rejected`` the withheld buckets), then
COMPLETED or FAILED with the final counters (signals, orders submitted, fills, errors).
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import msgspec

from spine._core import canonical_json, identity
from spine.backtest.api import BacktestError, Execution, RunCancelled, RunFailed, RunOutputs, RunSpec
from spine.backtest.bars import FIXED_SCALE, STEP_NS, InstrumentBars, fingerprint, load_instrument, nautilus_bars
from spine.backtest.documents import fill_document, fills_of, order_document, position_document, text
from spine.backtest.equity import Cycle, Fill, Marks, Point, balance_curve, daily, marked_curve
from spine.backtest.signals import signal_documents
from spine.backtest.statistics import Trade, statistics, statistics_document
from spine.reasons import public_reason
from spine.strategies.plan import StrategyPlan
from spine.strategies.values import size_step_problem

__all__ = ["run_backtest"]

Log = Callable[[str, str], None]
COUNTERS = ("bars_accepted", "bars_rejected", "signals_emitted", "orders_submitted", "fills", "errors")


class _Status:
    """The run's engine status documents, emitted in lifecycle order."""

    def __init__(self, sink: Callable[[bytes], None] | None) -> None:
        self.documents: list[bytes] = []
        self.counters = dict.fromkeys(COUNTERS, 0)
        self.authorities: list[dict[str, Any]] = []
        self.run_id: str | None = None
        self.sink = sink

    def emit(self, lifecycle: str, error: str | None = None) -> None:
        document = canonical_json(
            {
                "version": "spine.v2",
                "schema_id": "svc.engine_status",
                "schema_version": 1,
                "run_id": self.run_id,
                "lifecycle": lifecycle,
                "ts_event": str(time.time_ns()),
                "counters": dict(self.counters),
                "authorities": self.authorities,
                "last_error": error,
            }
        )
        self.documents.append(document)
        if self.sink is not None:
            self.sink(document)


def run_backtest(
    plan: StrategyPlan,
    spec: RunSpec,
    catalogs: list[Path],
    *,
    cancelled: Callable[[], bool],
    log: Log,
    status: Callable[[bytes], None] | None = None,
    started: Callable[[dict[str, Any]], None] | None = None,
) -> RunOutputs:
    """Run ``plan`` as ``spec`` asks on the bars of ``catalogs`` (node catalog dirs).
    ``status`` takes each engine status document as it is emitted; ``started`` the effective
    execution block when the engine starts.

    Raises RunCancelled when ``cancelled()`` turned true during the run, RunFailed for any
    other failure (a refusal before the engine starts included: BacktestError is its cause);
    both carry the engine status documents."""
    state = _Status(status)
    state.emit("STARTING")
    try:
        return _run(plan, spec, catalogs, cancelled, log, state, started)
    except RunFailed:
        raise
    except Exception as error:
        state.counters["errors"] += 1
        message = public_reason(error)  # a refusal keeps its text; the rest is in the worker's log
        state.emit("FAILED", message)
        raise RunFailed(message, state.documents) from error


def _run(
    plan: StrategyPlan,
    spec: RunSpec,
    catalogs: list[Path],
    cancelled: Callable[[], bool],
    log: Log,
    state: _Status,
    started: Callable[[dict[str, Any]], None] | None,
) -> RunOutputs:
    from spine.backtest.runtime import Cancelled, DeclarativeStrategy

    instruments = [spec.instrument_id] if spec.instrument_id is not None else list(plan.instruments)
    loaded = [
        load_instrument(catalogs, iid, spec.resolution, spec.channel, spec.start, spec.end) for iid in instruments
    ]
    for bars in loaded:
        log(
            "INFO",
            f"{bars.instrument_id}: {bars.inputs_read} {bars.source} bars read, {len(bars)} {spec.resolution} "
            f"bars, {len(bars.withheld)} withheld spans",
        )
    if not any(len(b) for b in loaded):
        raise BacktestError(
            f"NO_BARS: no {spec.resolution} {spec.channel} bars of {', '.join(instruments)} in the requested span",
            "NO_BARS",
        )
    quotes = sorted({b.instrument.quote_currency.code for b in loaded})
    if len(quotes) != 1:
        raise BacktestError(
            f"MIXED_CURRENCIES: the instruments quote {', '.join(quotes)}; a run holds one quote currency",
            "MIXED_CURRENCIES",
        )
    if plan.quantity is not None:  # a fraction or notional is sized at each entry, in whole size steps
        for bars in loaded:
            if (problem := size_step_problem(plan.quantity, bars.instrument_id, bars.size_precision)) is not None:
                raise BacktestError(f"INVALID_QUANTITY: {problem}", "INVALID_QUANTITY")
    execution = msgspec.structs.replace(spec.execution, currency=quotes[0])
    bar_fingerprint = identity("bar_fingerprint", [fingerprint(b) for b in loaded])
    state.run_id = identity(
        "run_id",
        {
            "request": spec.request,
            "revision_id": spec.revision_id,
            "bar_fingerprint": bar_fingerprint,
            "execution": execution.document(),
        },
    )
    venues = sorted({iid.rpartition(".")[2] for iid in instruments})
    state.counters["bars_accepted"] = sum(len(b) for b in loaded)
    state.counters["bars_rejected"] = sum(b.withheld_buckets(spec.resolution) for b in loaded)
    state.authorities = [
        {
            "authority": f"{venue}.{spec.channel}",
            "out_of_order": 0,
            "duplicates": 0,
            "gaps": sum(
                1
                for b in loaded
                if b.instrument_id.rpartition(".")[2] == venue
                for w in b.withheld
                if w[2] == "GAP_IN_INPUT"
            ),
        }
        for venue in venues
    ]
    state.emit("RUNNING")
    if started is not None:
        started(execution.document())

    engine = _engine(execution, venues, loaded)
    try:
        strategy = DeclarativeStrategy(_config(plan, loaded))
        strategy.cancelled = cancelled
        for bars in loaded:
            strategy.feed(bars.bar_type, bars.rows())
        engine.add_strategy(strategy)
        began = time.perf_counter()
        try:
            engine.run()
        except Cancelled as stop:
            _end_quietly(engine)
            _count(state, strategy, engine)
            state.counters["errors"] += 1
            state.emit("FAILED", f"CANCELLED: {stop}")
            raise RunCancelled(f"CANCELLED: {stop}", state.documents) from stop
        except Exception:
            _end_quietly(engine)  # restores the framework's real-time log clock
            _count(state, strategy, engine)
            raise
        log("INFO", f"engine ran {state.counters['bars_accepted']} bars in {time.perf_counter() - began:.3f} s")
        _count(state, strategy, engine)
        outputs = _collect(plan, spec, execution, venues, loaded, engine, strategy, state)
    finally:
        engine.dispose()
    state.emit("COMPLETED")
    return msgspec.structs.replace(outputs, engine_status=state.documents)


def _end_quietly(engine: Any) -> None:
    try:
        engine.end()
    except Exception:  # noqa: BLE001 - the run's own error is the one reported
        pass


def _engine(execution: Execution, venues: list[str], loaded: list[InstrumentBars]) -> Any:
    from nautilus_trader.backtest.config import BacktestEngineConfig
    from nautilus_trader.backtest.engine import BacktestEngine
    from nautilus_trader.backtest.models import FillModel, MakerTakerFeeModel
    from nautilus_trader.config import LoggingConfig
    from nautilus_trader.model.enums import AccountType, OmsType
    from nautilus_trader.model.identifiers import TraderId, Venue
    from nautilus_trader.model.objects import Money

    # run_analysis=False: the framework's post-run analysis logs per venue (and keeps only the
    # last venue's statistics); the two ratios are computed once over every venue's positions.
    engine = BacktestEngine(
        config=BacktestEngineConfig(
            trader_id=TraderId("BACKTESTER-001"), logging=LoggingConfig(log_level="ERROR"), run_analysis=False
        )
    )
    currency = loaded[0].instrument.quote_currency
    for venue in venues:
        engine.add_venue(
            venue=Venue(venue),
            oms_type=OmsType.NETTING,
            account_type=AccountType.MARGIN,
            starting_balances=[Money(Decimal(execution.capital), currency)],
            base_currency=None,
            default_leverage=Decimal(1),
            fill_model=FillModel(prob_fill_on_limit=1.0, prob_slippage=0.0, random_seed=execution.seed),
            fee_model=MakerTakerFeeModel(),
            bar_execution=True,
        )
    for bars in loaded:
        engine.add_instrument(bars.instrument)
    # The columns are sorted per instrument: merge them by close (stable: run order on a tie).
    feeds = [nautilus_bars(bars) for bars in loaded if len(bars)]
    data = feeds[0] if len(feeds) == 1 else list(heapq.merge(*feeds, key=lambda bar: bar.ts_init))
    engine.add_data(data, validate=False, sort=False)
    return engine


def _config(plan: StrategyPlan, loaded: list[InstrumentBars]) -> Any:
    from spine.backtest.runtime import DeclarativeConfig

    return DeclarativeConfig(
        plan=msgspec.json.encode(plan).decode(),
        bar_types=[b.bar_type for b in loaded],
        gap_closes={b.instrument_id: b.gap_closes() for b in loaded},
    )


def _count(state: _Status, strategy: Any, engine: Any) -> None:
    orders = engine.cache.orders()
    state.counters["signals_emitted"] = len(strategy.signals)
    state.counters["orders_submitted"] = len(orders)
    state.counters["fills"] = sum(len(fills_of(o)) for o in orders)


def _cycle(position: Any, currency: str) -> Cycle:
    """A position cycle's commissions (its fills', in ``currency``) and realized PnL."""
    from nautilus_trader.model.enums import PositionSide

    commissions = [
        (fill.ts_event, fill.commission.as_decimal())
        for fill in position.events
        if fill.commission.currency.code == currency
    ]
    closed = position.side == PositionSide.FLAT
    realized = position.realized_pnl.as_decimal() if position.realized_pnl is not None else Decimal(0)
    return Cycle(commissions, position.ts_closed if closed else None, realized)


def _ending_balance(engine: Any, venues: list[str], currency: Any) -> Decimal:
    """The venues' account balances summed, at the end of the run."""
    from nautilus_trader.model.identifiers import Venue

    total = Decimal(0)
    for venue in venues:
        total += engine.cache.account_for_venue(Venue(venue)).balance_total(currency).as_decimal()
    return total


def _marks(bars: InstrumentBars, orders: list[Any]) -> Marks:
    """One instrument's closes and fills for the marked equity (mantissas at its scales)."""
    from nautilus_trader.model.enums import OrderSide

    price_unit = 10 ** (FIXED_SCALE - bars.price_precision)
    size_unit = 10 ** (FIXED_SCALE - bars.size_precision)
    # Fills in time order; on a tie, in order submission order (the engine fills them so).
    fills = [
        f
        for _, _, f in sorted(
            (
                (f.ts_event, k, f)
                for k, o in enumerate(orders)
                if o.instrument_id.value == bars.instrument_id
                for f in fills_of(o)
            ),
            key=lambda item: item[:2],
        )
    ]
    return Marks(
        ts=bars.columns["ts_event"].tolist(),
        closes=bars.columns["close"].tolist(),
        price_scale=bars.price_precision,
        size_scale=bars.size_precision,
        multiplier=bars.instrument.multiplier.as_decimal(),
        fills=[
            Fill(
                f.ts_event,
                (1 if f.order_side == OrderSide.BUY else -1) * (f.last_qty.raw // size_unit),
                f.last_px.raw // price_unit,
            )
            for f in fills
        ],
    )


def _trade(position: Any) -> Trade:
    """A closed position as a trade: its PnL, and the notional of the fills that opened it."""
    multiplier = position.multiplier.as_decimal()
    opening = [f for f in position.events if f.order_side == position.entry]
    notional = sum((f.last_qty.as_decimal() * f.last_px.as_decimal() for f in opening), Decimal(0)) * multiplier
    pnl = position.realized_pnl.as_decimal() if position.realized_pnl is not None else Decimal(0)
    return Trade(position.ts_opened, position.ts_closed, pnl, notional)


def _buy_and_hold(loaded: list[InstrumentBars]) -> Decimal | None:
    """The mean over the instruments of last close / first close - 1."""
    returns = [
        Decimal(int(b.columns["close"][-1])) / Decimal(int(b.columns["close"][0])) - 1
        for b in loaded
        if len(b) and int(b.columns["close"][0]) > 0
    ]
    return sum(returns, Decimal(0)) / len(returns) if returns else None


def _trading_days(loaded: list[InstrumentBars]) -> int:
    """252 when every instrument is an equity (traded on weekdays), else 365."""
    from nautilus_trader.model.instruments import Equity

    return 252 if all(isinstance(b.instrument, Equity) for b in loaded) else 365


def _point(point: Point, currency: str) -> dict[str, Any]:
    return {
        "version": "spine.v2",
        "schema_id": "svc.equity_point",
        "schema_version": 2,
        "ts_event": str(point.ts),
        "balance": text(point.balance),
        "equity": text(point.equity),
        "currency": currency,
    }


def _collect(
    plan: StrategyPlan,
    spec: RunSpec,
    execution: Execution,
    venues: list[str],
    loaded: list[InstrumentBars],
    engine: Any,
    strategy: Any,
    state: _Status,
) -> RunOutputs:
    from nautilus_trader.model.objects import Price

    run_id = state.run_id
    assert run_id is not None
    precisions = {b.instrument_id: b.price_precision for b in loaded}
    orders_raw = sorted(engine.cache.orders(), key=lambda o: (o.ts_init, o.client_order_id.value))
    orders = [order_document(o, spec.strategy_id, precisions[o.instrument_id.value]) for o in orders_raw]
    fills = sorted(
        (fill_document(f, spec.strategy_id) for o in orders_raw for f in fills_of(o)),
        key=lambda f: (int(f["ts_event"]), f["client_order_id"], f["trade_id"]),
    )
    last_close = {b.instrument_id: int(b.columns["ts_event"][-1]) for b in loaded if len(b)}
    last_price = {
        b.instrument_id: Price.from_raw(int(b.columns["close"][-1]) * 10 ** (16 - b.price_precision), b.price_precision)
        for b in loaded
        if len(b)
    }
    raw_positions = list(engine.cache.position_snapshots()) + list(engine.cache.positions())
    positions = sorted(
        (
            position_document(
                p, spec.strategy_id, precisions[p.instrument_id.value], last_price.get(p.instrument_id.value)
            )
            for p in raw_positions
        ),
        key=lambda p: (int(p["ts_opened"]), p["instrument_id"], p["ts_closed"] is None, int(p["ts_closed"] or 0)),
    )
    # NETTING reuses one framework position id per instrument and names each closed cycle's
    # snapshot with a random UUID: a position is named by its instrument, the strategy and its
    # cycle number instead (1, 2, ... by opening time), which equal runs reproduce.
    cycles: dict[str, int] = {}
    for p in positions:
        cycles[p["instrument_id"]] = cycles.get(p["instrument_id"], 0) + 1
        p["position_id"] = f"{p['instrument_id']}-{spec.strategy_id}-{cycles[p['instrument_id']]}"
    currency = execution.currency
    starting = Decimal(execution.capital) * len(venues)
    balances = balance_curve(starting, [_cycle(p, currency) for p in raw_positions])
    ending = _ending_balance(engine, venues, loaded[0].instrument.quote_currency)
    curve = marked_curve(starting, balances, [_marks(b, orders_raw) for b in loaded if len(b)])
    first_open = min(int(b.columns["ts_event"][0]) for b in loaded if len(b)) - STEP_NS[spec.resolution] * 10**9
    stats = statistics(
        currency=currency,
        capital=starting,
        start=first_open,
        curve=curve,
        trades=[_trade(p) for p in raw_positions if p.is_closed],
        buy_and_hold=_buy_and_hold(loaded),
        trading_days=_trading_days(loaded),
        bars_seen=strategy.bars_seen,
        bars_exposed=strategy.bars_exposed,
    )
    equity = [_point(point, currency) for point in curve]
    skipped = [
        {"instrument_id": b.instrument_id, "resolution": spec.resolution, "start": str(a), "end": str(z), "reason": r}
        for b in loaded
        for a, z, r in b.withheld
    ]
    stats["skipped"] = skipped
    signals, markers, retirements = signal_documents(
        strategy.signals,
        fills,
        run_id=run_id,
        strategy_id=spec.strategy_id,
        resolution=spec.resolution,
        precisions=precisions,
        last_close=last_close,
    )
    body = {
        "version": "spine.v2",
        "schema_id": "svc.backtest_run_result",
        "schema_version": 1,
        "strategy_id": spec.strategy_id,
        "revision_id": spec.revision_id,
        # The span the bars taken cover, within the span asked for.
        "start": str(first_open if spec.start is None else max(spec.start, first_open)),
        "end": str(max(last_close.values()) if spec.end is None else min(spec.end, max(last_close.values()))),
        "instruments": [b.instrument_id for b in loaded],
        "execution": execution.document(),
        "ending_balance": text(ending),
        "total_pnl": text(ending - starting),
        "orders": len(orders),
        "fills": len(fills),
        "positions": len(positions),
    }
    result_hash = identity(
        "result_hash",
        {
            "report": {key: value for key, value in body.items() if key != "revision_id"},
            "orders": orders,
            "fills": fills,
            "positions": positions,
            "statistics": stats,
            "equity": equity,
        },
    )
    report = {
        **body,
        "run_id": run_id,
        "job_id": spec.job_id,
        "config_hash": spec.config_hash or identity("config_hash", spec.request),
        "result_hash": result_hash,
        "ts_finished": str(time.time_ns()),
    }

    def docs(items: list[dict[str, Any]]) -> list[bytes]:
        return [canonical_json(item) for item in items]

    # The served documents: tagged, and named by the job and run (never hashed: a job id is
    # per submission, and the result hash is the same for every equal run).
    stats_document = statistics_document(stats, job_id=spec.job_id, run_id=run_id, bars=strategy.bars_seen)
    return RunOutputs(
        run_id=run_id,
        result_hash=result_hash,
        report=canonical_json(report),
        statistics=canonical_json(stats_document),
        equity=docs(equity),
        equity_daily=docs([_point(point, currency) for point in daily(curve)]),
        orders=docs(orders),
        fills=docs(fills),
        positions=docs(positions),
        signals=docs(signals),
        markers=docs(markers),
        retirements=docs(retirements),
        engine_status=[],
        skipped=docs(skipped),
    )
