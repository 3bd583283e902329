"""Stop loss and take profit are checked exactly at each bar close against the entry's
quantity-weighted fill price: hit when the close reaches the level (inclusive), never by a
float rounding either way."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from spine.backtest.runtime import DeclarativeStrategy, _fraction

RAW = 10**14  # a price mantissa at precision 2 as a framework raw value


def stopped(side: int, close: int, entry: int, sl: str | None, tp: str | None) -> str | None:
    strategy = SimpleNamespace(_sl=_fraction(sl), _tp=_fraction(tp))
    book = SimpleNamespace(qty=3 * 10**13, px_qty=entry * RAW * 3 * 10**13)  # 0.3 filled at `entry`
    return DeclarativeStrategy._stopped_out(strategy, side, close * RAW, book)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("side", "close", "expected"),
    [
        (1, 9800, "STOP_LOSS"),
        (1, 9801, None),
        (1, 10499, None),
        (1, 10500, "TAKE_PROFIT"),
        (-1, 10200, "STOP_LOSS"),
        (-1, 10199, None),
        (-1, 9501, None),
        (-1, 9500, "TAKE_PROFIT"),
    ],
)
def test_levels_are_inclusive_and_exact(side: int, close: int, expected: str | None) -> None:
    # entry 100.00, stop 2% (98.00 long / 102.00 short), take profit 5% (105.00 / 95.00)
    assert stopped(side, close, 10000, "0.02", "0.05") == expected


def test_no_levels_no_stop() -> None:
    assert stopped(1, 1, 10000, None, None) is None
    assert _fraction("0.125") == (125, 1000) and _fraction(None) is None
