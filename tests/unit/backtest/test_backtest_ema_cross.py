"""The declarative EMA cross (features ``spine_core.features.ema``, CROSSES_ABOVE /
CROSSES_BELOW rules) run by the one runtime strategy equals the same strategy written by hand
as a plain framework Strategy on the same bars: identical orders, fills and final balance.

The hand-written one (``tests/reference/ema_cross_nautilus.py``) mirrors the definition of
Spine's EMA kernel in plain Python floats rather than using the framework's
``ExponentialMovingAverage``, whose input (the 1e16 raw value divided down) can differ in the
last bit from the kernel's ``mantissa / 10^precision``; crosses then compare the values at the
price precision exactly, as the kernel's rules do."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import msgspec
import pytest
from backtest_support import ema_plan, hand_run, node_catalog, run_spec, template_plan

from spine.backtest import run_backtest


def _declarative(catalog: Path, fast: int, slow: int, direction: str) -> dict[str, object]:
    outputs = run_backtest(
        ema_plan(fast, slow, direction),
        run_spec(ema_plan(fast, slow, direction)),
        [catalog],
        cancelled=lambda: False,
        log=lambda level, message: None,
    )
    orders = [msgspec.json.decode(o) for o in outputs.orders]
    fills = [msgspec.json.decode(f) for f in outputs.fills]
    report = msgspec.json.decode(outputs.report)
    return {
        "orders": [(o["side"], o["ts_init"], o["quantity"], o["status"]) for o in orders],
        "fills": [(f["side"], f["last_px"], f["last_qty"], f["commission"], f["ts_event"]) for f in fills],
        "balance": Decimal(report["ending_balance"]),
    }


@pytest.mark.parametrize(
    ("fast", "slow", "direction"), [(10, 30, "LONG_SHORT"), (5, 20, "LONG_ONLY"), (8, 21, "SHORT_ONLY")]
)
def test_declarative_equals_hand_written(tmp_path: Path, fast: int, slow: int, direction: str) -> None:
    catalog = node_catalog(tmp_path, bars=4000)
    ours = _declarative(catalog, fast, slow, direction)
    hand = hand_run(catalog, fast, slow, direction)
    hand["fills"] = [(("BUY" if side == 1 else "SELL"), *rest) for side, *rest in hand["fills"]]  # type: ignore[attr-defined]
    assert len(ours["orders"]) > 20, "the walk should make the EMAs cross many times"  # type: ignore[arg-type]
    assert ours["orders"] == hand["orders"]
    assert ours["fills"] == hand["fills"]
    assert ours["balance"] == hand["balance"]


def test_the_ema_cross_template_equals_hand_written(tmp_path: Path) -> None:
    catalog = node_catalog(tmp_path, bars=4000)
    plan = template_plan()
    outputs = run_backtest(plan, run_spec(plan), [catalog], cancelled=lambda: False, log=lambda level, message: None)
    fills = [msgspec.json.decode(f) for f in outputs.fills]
    hand = hand_run(catalog, 10, 30, "LONG_ONLY", quantity="0.1")
    assert [(f["side"], f["last_px"], f["last_qty"], f["commission"], f["ts_event"]) for f in fills] == [
        ("BUY" if side == 1 else "SELL", *rest) for side, *rest in hand["fills"]
    ]
    assert len(fills) > 20 and {f["last_qty"] for f in fills} == {"0.100"}
    assert Decimal(msgspec.json.decode(outputs.report)["ending_balance"]) == hand["balance"]


def test_reading_the_bars_themselves_gives_the_same_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The runtime reads the fed mantissa rows by position; without them it converts each
    bar's prices: the same run either way."""
    from spine.backtest.runtime import DeclarativeStrategy

    catalog = node_catalog(tmp_path, bars=3000, skip=(700, 701))
    plan = ema_plan(5, 20, "LONG_SHORT", resolution="5m", stop_loss="0.004")
    fed = run_backtest(plan, run_spec(plan), [catalog], cancelled=lambda: False, log=lambda level, message: None)
    monkeypatch.setattr(DeclarativeStrategy, "feed", lambda self, bar_type, rows: None)
    unfed = run_backtest(plan, run_spec(plan), [catalog], cancelled=lambda: False, log=lambda level, message: None)
    assert len(fed.orders) > 10 and fed.result_hash == unfed.result_hash
