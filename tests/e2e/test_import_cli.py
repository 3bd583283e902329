"""``spine import`` as a user runs it: the real console entry in a subprocess, a long file
with its progress line, the default catalog directory, a refusal that exits 2 and writes
nothing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from nautilus_trader.persistence.catalog import ParquetDataCatalog

M = 60 * 10**9
T0 = 1_704_067_200 * 10**9
ENV = dict(os.environ)  # the installed package


def spine_import(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The command's outcome, its output decoded verbatim (``\r`` kept)."""
    done = subprocess.run(
        [sys.executable, "-m", "spine.cli", "import", *args], cwd=cwd, env=ENV, capture_output=True, timeout=120
    )
    return subprocess.CompletedProcess(done.args, done.returncode, done.stdout.decode(), done.stderr.decode())


def test_long_file_default_catalog_and_progress(tmp_path: Path) -> None:
    n = 100_001
    lines = ["timestamp,open,high,low,close,volume"]
    lines += [
        f"{T0 + (k + 1) * M},{100 + k % 7}.25,{101 + k % 7},{99 + k % 7}.5,{100 + k % 7}.75,{k % 11}.125"
        for k in range(n)
    ]
    (tmp_path / "ethusdt.csv").write_text("\n".join(lines) + "\n")
    done = spine_import("--venue", "MYDATA", "--currency", "USDT", "ethusdt.csv", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    root = tmp_path / "var" / "spine-up" / "imports" / "external"
    [line] = done.stdout.splitlines()
    assert line.startswith(
        "imported 100,001 bars of ETHUSDT.MYDATA (CurrencyPair ETH/USDT) as "
        "ETHUSDT.MYDATA-1-MINUTE-LAST-EXTERNAL: first close 2024-01-01T00:01:00Z"
    )
    assert f"price precision 2, size precision 3; catalog {root.resolve()}" in line
    # More than 100,000 rows: one progress line rewritten in place on stderr, ended once.
    assert done.stderr.startswith("\rspine import: read ") and done.stderr.endswith("\n")
    assert done.stderr.count("\n") == 1 and "wrote 100,001/100,001 rows" in done.stderr
    bars = ParquetDataCatalog(str(root)).bars(bar_types=["ETHUSDT.MYDATA-1-MINUTE-LAST-EXTERNAL"])
    assert len(bars) == n and str(bars[-1].volume) == "10.125" and bars[-1].ts_event == T0 + n * M


def test_refusal_exits_2_and_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "spy.csv").write_text(
        "date,open,high,low,close,volume\n2024-01-02,470.5,472,469.25,471,100\n2024-01-02,471,473,470,472.5,90\n"
    )
    done = spine_import("--venue", "XNYS", "--step", "1d", "--catalog", "cat", "spy.csv", cwd=tmp_path)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith(
        "spine import: row 2 (line 3): close 2024-01-03T00:00:00Z is a duplicate of "
        "2024-01-03T00:00:00Z in row 1 (line 2)"
    )
    assert done.stderr.rstrip().endswith("nothing was written")
    assert not (tmp_path / "cat").exists()
    usage = spine_import("--step", "1d", "spy.csv", cwd=tmp_path)
    assert usage.returncode == 2 and "--venue" in usage.stderr


def test_daily_import_then_summary(tmp_path: Path) -> None:
    (tmp_path / "spy.csv").write_text(
        "date,open,high,low,close,volume\n2024-01-02,470.5,472,469.25,471,100\n2024-01-03,471,473,470,472.5,90\n"
    )
    done = spine_import("--venue", "XNYS", "--step", "1d", "--open-time", "--catalog", "cat", "spy.csv", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(
        "imported 2 bars of SPY.XNYS (Equity in USD) as SPY.XNYS-1-DAY-LAST-EXTERNAL: "
        "first close 2024-01-03T00:00:00Z, last close 2024-01-04T00:00:00Z; "
        "price precision 2, size precision 0"
    )
    assert done.stderr == ""


# a backtest reads what was imported

from nautilus_trader.config import StrategyConfig  # noqa: E402
from nautilus_trader.trading.strategy import Strategy  # noqa: E402


class BuyOnceConfig(StrategyConfig, frozen=True):
    instrument_id: str
    bar_type: str
    quantity: str


class BuyOnce(Strategy):
    """Buys on the third bar, closes on the sixth."""

    def __init__(self, config: BuyOnceConfig) -> None:
        super().__init__(config)
        self.seen = 0

    def on_start(self) -> None:
        from nautilus_trader.model.data import BarType

        self.subscribe_bars(BarType.from_str(self.config.bar_type))

    def on_bar(self, bar: object) -> None:
        from nautilus_trader.model.enums import OrderSide
        from nautilus_trader.model.identifiers import InstrumentId

        self.seen += 1
        iid = InstrumentId.from_str(self.config.instrument_id)
        if self.seen == 3:
            quantity = self.cache.instrument(iid).make_qty(float(self.config.quantity))
            self.submit_order(self.order_factory.market(iid, OrderSide.BUY, quantity))
        elif self.seen == 6:
            self.close_all_positions(iid)


def test_backtest_node_reads_imported_minute_and_daily_bars(tmp_path: Path) -> None:
    """A BacktestNode over the EXTERNAL root (as the workers run it): 1-MINUTE-LAST for the
    CurrencyPair, 1-DAY-LAST for the daily Equity."""
    from nautilus_trader.backtest.node import BacktestNode
    from nautilus_trader.config import (
        BacktestDataConfig,
        BacktestEngineConfig,
        BacktestRunConfig,
        BacktestVenueConfig,
        ImportableStrategyConfig,
        LoggingConfig,
    )

    day = 86_400 * 10**9
    (tmp_path / "ethusdt.csv").write_text(
        "ts_event,open,high,low,close,volume\n"
        + "".join(f"{T0 + (k + 1) * M},{100 + k}.25,{101 + k},{99 + k}.5,{100 + k}.75,1.5\n" for k in range(20))
    )
    (tmp_path / "spy.csv").write_text(
        "date,open,high,low,close,volume\n"
        + "".join(f"{T0 + (k + 1) * day},{400 + k}.5,{402 + k},{399 + k},{401 + k}.25,1000\n" for k in range(20))
    )
    for args in (
        ("--venue", "MYDATA", "--currency", "USDT", "ethusdt.csv"),
        ("--venue", "XNYS", "--step", "1d", "spy.csv"),
    ):
        assert spine_import("--catalog", "cat", *args, cwd=tmp_path).returncode == 0
    root = str(tmp_path / "cat" / "external")
    configs = [
        BacktestRunConfig(
            engine=BacktestEngineConfig(
                trader_id="BT-001",
                logging=LoggingConfig(log_level="ERROR"),
                strategies=[
                    ImportableStrategyConfig(
                        strategy_path=f"{__name__}:BuyOnce",
                        config_path=f"{__name__}:BuyOnceConfig",
                        config={"instrument_id": iid, "bar_type": f"{iid}-{spec}-EXTERNAL", "quantity": quantity},
                    )
                ],
            ),
            venues=[
                BacktestVenueConfig(
                    name=iid.split(".")[1], oms_type="NETTING", account_type=account, starting_balances=[balance]
                )
            ],
            data=[
                BacktestDataConfig(
                    catalog_path=root, data_cls="nautilus_trader.model.data:Bar", instrument_id=iid, bar_spec=spec
                )
            ],
        )
        for iid, spec, account, balance, quantity in (
            ("ETHUSDT.MYDATA", "1-MINUTE-LAST", "MARGIN", "1000000 USDT", "0.5"),
            ("SPY.XNYS", "1-DAY-LAST", "CASH", "1000000 USD", "10"),
        )
    ]
    eth, spy = BacktestNode(configs).run()
    assert (eth.iterations, eth.total_orders) == (20, 2) and eth.stats_pnls["USDT"]["PnL (total)"] > 0
    assert (spy.iterations, spy.total_orders) == (20, 2) and spy.stats_pnls["USD"]["PnL (total)"] > 0
