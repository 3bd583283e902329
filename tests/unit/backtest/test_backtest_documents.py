"""Every document a run produces validates against its schema with the stock jsonschema
validator; the parts agree with each other (counts, retirements, equity, statistics); and a
withheld bucket is never filled: the derived bars skip it, the report lists it."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from backtest_support import IID, ema_plan, node_catalog, run_spec
from jsonschema import ValidationError

from reference.wire_validator import validate
from spine._core import fold_columns
from spine.backtest import RunFailed, RunOutputs, run_backtest
from spine.backtest.bars import load_instrument, minute_columns
from spine.backtest.statistics import SCALE

PARTS = {
    "equity": "svc.equity_point",
    "equity_daily": "svc.equity_point",
    "orders": "svc.order_summary",
    "fills": "svc.fill_summary",
    "positions": "svc.position_summary",
    "signals": "svc.signal_event",
    "markers": "svc.chart_marker",
    "retirements": "svc.signal_retirement",
    "engine_status": "svc.engine_status",
}
MINUTE = 60_000_000_000


def errors(schema: str, document: Any) -> list[str]:
    try:
        validate(document, schema)
    except ValidationError as error:
        return [error.message]
    return []


def run(catalog: Path, **plan_args: Any) -> RunOutputs:
    plan = ema_plan(**plan_args)
    return run_backtest(plan, run_spec(plan), [catalog], cancelled=lambda: False, log=lambda level, message: None)


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return node_catalog(tmp_path_factory.mktemp("node"), bars=3000, skip=(100, 101, 102))


@pytest.fixture(scope="module")
def outputs(catalog: Path) -> RunOutputs:
    return run(
        catalog, fast=5, slow=20, direction="LONG_SHORT", resolution="5m", stop_loss="0.004", take_profit="0.006"
    )


def test_every_document_validates(outputs: RunOutputs) -> None:
    assert errors("svc.backtest_run_result", json.loads(outputs.report)) == []
    assert errors("svc.backtest_statistics", json.loads(outputs.statistics)) == []
    for part, schema in PARTS.items():
        documents = getattr(outputs, part)
        assert documents, part
        for document in documents:
            assert errors(schema, json.loads(document)) == [], (part, document)


def test_the_parts_agree(outputs: RunOutputs) -> None:
    report = json.loads(outputs.report)
    assert report["run_id"] == outputs.run_id and report["result_hash"] == outputs.result_hash
    assert (report["orders"], report["fills"], report["positions"]) == (
        len(outputs.orders),
        len(outputs.fills),
        len(outputs.positions),
    )
    signals = [json.loads(s) for s in outputs.signals]
    entries = {s["signal_key"] for s in signals if s["direction"] != "FLAT"}
    retired = [json.loads(r) for r in outputs.retirements]
    assert {r["signal_key"] for r in retired} == entries  # every entry retired once
    assert {r["reason"] for r in retired} <= {"EXITED", "STOP_LOSS", "TAKE_PROFIT", "RUN_ENDED"}
    assert {"STOP_LOSS", "TAKE_PROFIT"} <= {r["reason"] for r in retired}
    markers = [json.loads(m) for m in outputs.markers]
    assert sum(m["kind"] == "SIGNAL" for m in markers) == len(signals)
    assert sum(m["kind"] == "FILL" for m in markers) == len(outputs.fills)
    statuses = [json.loads(s) for s in outputs.engine_status]
    assert [s["lifecycle"] for s in statuses] == ["STARTING", "RUNNING", "COMPLETED"]
    final = statuses[-1]["counters"]
    assert final["signals_emitted"] == len(signals)
    assert final["orders_submitted"] == len(outputs.orders) and final["fills"] == len(outputs.fills)
    equity = [json.loads(e) for e in outputs.equity]
    assert equity[0]["balance"] == "100000" and equity[-1]["balance"] == report["ending_balance"]
    positions = [json.loads(p) for p in outputs.positions]
    realized = sum((Decimal(p["realized_pnl"]) for p in positions if p["side"] == "FLAT"), Decimal(0))
    if positions[-1]["side"] == "FLAT":  # no open position: the balance moved by the realized PnL
        assert Decimal(report["total_pnl"]) == realized


def test_statistics_are_decimal_strings_at_the_scale(outputs: RunOutputs) -> None:
    stats = json.loads(outputs.statistics)
    assert all(len(stats[name].partition(".")[2]) <= SCALE for name in ("total_return", "max_drawdown", "exposure"))
    ratios = ("total_return", "cagr", "max_drawdown", "win_rate", "profit_factor", "exposure", "sharpe", "sortino")
    for name in ratios + ("calmar", "expectancy", "best_trade", "worst_trade", "avg_trade", "sqn"):
        value = stats[name]
        assert value is None or (isinstance(value, str) and len(value.partition(".")[2]) == SCALE), (name, value)
    assert int(stats["trade_count"]) == sum(json.loads(p)["side"] == "FLAT" for p in outputs.positions)
    assert Decimal(stats["total_pnl"]) == Decimal(stats["ending_equity"]) - Decimal(stats["starting_balance"])
    assert stats["ending_balance"] == json.loads(outputs.report)["ending_balance"]
    assert 0 < Decimal(stats["exposure"]) < 1


def test_the_equity_is_marked_to_every_bar_close(catalog: Path, outputs: RunOutputs) -> None:
    """One point per bar the run took, each the balance plus the open position at that bar's
    close, from the served fills (every entry here opens from flat and every exit closes all);
    the daily curve is the last point of each UTC day; the statistics end where the curve ends."""
    bars = load_instrument([catalog], IID, "5m", "EXTERNAL", None, None)
    closes = dict(zip(bars.columns["ts_event"].tolist(), bars.columns["close"].tolist(), strict=True))
    points = [json.loads(e) for e in outputs.equity]
    assert [int(p["ts_event"]) for p in points] == sorted(closes)
    fills = [json.loads(f) for f in outputs.fills]
    held = Decimal(0)
    cost = Decimal(0)
    k = 0
    opened = 0
    for point in points:
        while k < len(fills) and int(fills[k]["ts_event"]) <= int(point["ts_event"]):
            qty = Decimal(fills[k]["last_qty"]) * (1 if fills[k]["side"] == "BUY" else -1)
            held, cost = held + qty, (cost + qty * Decimal(fills[k]["last_px"])) if held + qty else Decimal(0)
            k += 1
        close = Decimal(closes[int(point["ts_event"])]).scaleb(-2)
        assert Decimal(point["equity"]) == Decimal(point["balance"]) + held * close - cost, point
        opened += held != 0
    assert 0 < opened < len(points)
    days = [json.loads(e) for e in outputs.equity_daily]
    by_day = {(int(p["ts_event"]) - 1) // 86_400_000_000_000: p for p in points}
    assert days == [by_day[d] for d in sorted(by_day)]
    stats = json.loads(outputs.statistics)
    assert stats["ending_equity"] == points[-1]["equity"] and stats["bars"] == len(points)


def test_withheld_buckets_are_never_filled(outputs: RunOutputs, tmp_path: Path) -> None:
    skipped = [json.loads(s) for s in outputs.skipped]
    gap = [s for s in skipped if s["reason"] == "GAP_IN_INPUT"]
    # minutes 100..102 (closes 101..103 from the start) are missing: the 5m bucket holding them
    assert len(gap) == 1 and int(gap[0]["end"]) - int(gap[0]["start"]) == 5 * MINUTE
    catalog = node_catalog(tmp_path, bars=3000, skip=(100, 101, 102))
    bars = load_instrument([catalog], IID, "5m", "EXTERNAL", None, None)
    closes = bars.columns["ts_event"].astype(np.int64)
    for start, end, _ in bars.withheld:
        assert not np.any((closes > start) & (closes <= end)), "a withheld bucket was filled"
    # the same fold as the API's (spine._core over the 1-minute columns)
    minutes = minute_columns(catalog / "external", f"{IID}-1-MINUTE-LAST-EXTERNAL", 2, 3, None, None)
    api = fold_columns(
        minutes["ts_event"],
        minutes["open"],
        minutes["high"],
        minutes["low"],
        minutes["close"],
        minutes["volume"],
        resolution="5m",
        channel="EXTERNAL",
    )
    assert api.withheld() == bars.withheld
    assert np.frombuffer(api.columns()["close"], dtype="<i8").tolist() == bars.columns["close"].tolist()
    running = json.loads(outputs.engine_status[1])["counters"]
    assert running["bars_accepted"] == len(bars) and running["bars_rejected"] == bars.withheld_buckets("5m") >= 1


def test_a_span_bounds_the_bars_read(tmp_path: Path) -> None:
    catalog = node_catalog(tmp_path, bars=600)
    bars = load_instrument([catalog], IID, "1m", "EXTERNAL", None, None)
    ts = bars.columns["ts_event"]
    part = load_instrument([catalog], IID, "1m", "EXTERNAL", int(ts[10]), int(ts[99]))
    assert part.columns["ts_event"].tolist() == ts[10:100].tolist()


def test_a_read_racing_a_rename_is_retried(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import spine.backtest.bars as module

    catalog = node_catalog(tmp_path, bars=100)
    real, calls = module.pq.read_table, []

    def flaky(path: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(path)
        if len(calls) == 1:
            raise FileNotFoundError(path)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(module.pq, "read_table", flaky)
    assert len(load_instrument([catalog], IID, "1m", "EXTERNAL", None, None)) == 100
    assert len(calls) == 2


def test_no_bars_fails_with_a_failed_status(tmp_path: Path) -> None:
    catalog = node_catalog(tmp_path, bars=100)
    plan = ema_plan()
    with pytest.raises(RunFailed) as failed:
        run_backtest(
            plan, run_spec(plan, start=10, end=20), [catalog], cancelled=lambda: False, log=lambda level, message: None
        )
    statuses = [json.loads(s) for s in failed.value.engine_status]
    assert [s["lifecycle"] for s in statuses] == ["STARTING", "FAILED"]
    assert statuses[-1]["last_error"].startswith("NO_BARS") and statuses[-1]["counters"]["errors"] == 1
    assert errors("svc.engine_status", statuses[-1]) == []
    with pytest.raises(RunFailed, match="NO_BARS: no catalog holds") as failed:
        run_backtest(
            plan, run_spec(plan), [tmp_path / "elsewhere"], cancelled=lambda: False, log=lambda level, message: None
        )
    assert str(tmp_path) not in str(failed.value)  # the worker's directories are not public


def test_an_unexpected_failure_is_internal_in_public_and_kept_as_the_cause(tmp_path: Path) -> None:
    catalog = node_catalog(tmp_path, bars=100)
    plan = ema_plan()

    def broken(level: str, message: str) -> None:
        raise KeyError(f"{tmp_path}/secret")

    with pytest.raises(RunFailed) as failed:
        run_backtest(plan, run_spec(plan), [catalog], cancelled=lambda: False, log=broken)
    status = json.loads(failed.value.engine_status[-1])
    assert str(failed.value) == status["last_error"] == "INTERNAL: the run failed; the worker's log has its error"
    assert isinstance(failed.value.__cause__, KeyError)  # the child sends it to the worker's log


def test_instruments_on_two_venues_run_in_one_engine(tmp_path: Path) -> None:
    instruments = ("C000USDT.SIM", "C001USDT.OTHER")
    catalog = node_catalog(tmp_path, bars=1500, instruments=instruments)
    outputs = run(catalog, fast=5, slow=20, direction="LONG_SHORT", instruments=instruments)
    report = json.loads(outputs.report)
    assert report["instruments"] == list(instruments)
    assert json.loads(outputs.equity[0])["balance"] == "200000"  # the capital, per venue
    traded = {json.loads(f)["instrument_id"] for f in outputs.fills}
    assert traded == set(instruments)
    statuses = [json.loads(s) for s in outputs.engine_status]
    assert [a["authority"] for a in statuses[-1]["authorities"]] == ["OTHER.EXTERNAL", "SIM.EXTERNAL"]
    assert errors("svc.backtest_run_result", report) == []
    one = run_backtest(
        ema_plan(5, 20, "LONG_SHORT", instruments=instruments),
        run_spec(ema_plan(5, 20, "LONG_SHORT", instruments=instruments), instrument_id="C001USDT.OTHER"),
        [catalog],
        cancelled=lambda: False,
        log=lambda level, message: None,
    )
    assert json.loads(one.report)["instruments"] == ["C001USDT.OTHER"]
    assert {json.loads(f)["instrument_id"] for f in one.fills} == {"C001USDT.OTHER"}


def test_a_quantity_finer_than_the_size_precision_is_refused(tmp_path: Path) -> None:
    import msgspec

    catalog = node_catalog(tmp_path, bars=100)
    plan = msgspec.structs.replace(ema_plan(), quantity="0.0001")  # the instrument's size precision is 3
    with pytest.raises(RunFailed, match="INVALID_QUANTITY: quantity 0.0001"):
        run_backtest(plan, run_spec(plan), [catalog], cancelled=lambda: False, log=lambda level, message: None)


@pytest.mark.parametrize("quantity", ["34028236692093.0000000000000001", "9" * 40])
def test_a_quantity_past_the_decimal_context_is_refused_in_words(tmp_path: Path, quantity: str) -> None:
    import msgspec

    catalog = node_catalog(tmp_path, bars=100)
    plan = msgspec.structs.replace(ema_plan(), quantity=quantity)
    with pytest.raises(RunFailed, match="INVALID_QUANTITY: quantity "):
        run_backtest(plan, run_spec(plan), [catalog], cancelled=lambda: False, log=lambda level, message: None)


@pytest.mark.parametrize("iid", ["../../x.SIM", "a/b.SIM", "..SIM.SIM"])
def test_an_instrument_id_that_is_a_path_is_refused_before_any_path_is_built(tmp_path: Path, iid: str) -> None:
    catalog = node_catalog(tmp_path / "inner", bars=100)
    plan = ema_plan()
    with pytest.raises(RunFailed, match="INVALID_INSTRUMENT_ID: .*names no catalog path"):
        run_backtest(
            plan, run_spec(plan, instrument_id=iid), [catalog], cancelled=lambda: False, log=lambda level, message: None
        )


def test_a_daily_run_takes_imported_daily_bars(tmp_path: Path) -> None:
    """An instrument with no minute bars but daily bars (``spine import --step 1d``) runs at 1d
    on those bars as they are; finer resolutions are refused naming why."""
    from reference.backtest_catalog import spot, walk_bars, write_catalog

    instrument = spot(IID)
    catalog = write_catalog(tmp_path, [instrument], {IID: walk_bars(instrument, "EXTERNAL", 400, step="1-DAY")})
    outputs = run(catalog, fast=5, slow=20, direction="LONG_SHORT", resolution="1d")
    report = json.loads(outputs.report)
    assert report["orders"] > 4 and errors("svc.backtest_run_result", report) == []
    assert json.loads(outputs.engine_status[1])["counters"]["bars_accepted"] == 400
    assert {json.loads(s)["resolution"] for s in outputs.signals} == {"1d"}
    with pytest.raises(RunFailed, match=r"daily bars serve 1d runs only"):
        run(catalog, resolution="1h")
