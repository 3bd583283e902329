"""Arguments the kernels cannot take are refused with the package's own exceptions, naming the
value and what is allowed, before anything changes: ints out of range or bools (never a bare
OverflowError, never True read as 1), buffers in a foreign byte order (never read as native),
times past 2^63-1 ns (never folded into a wrapped bucket, never cast to a negative Arrow time),
and malformed bars in a universe's minute (never dropped silently)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from spine._core import FeatureState, FeatureUniverse, Series, bar_row, fold_columns, fold_columns_many
from spine.errors import BarsError, DecimalError, FeatureError, SpineError

M = 60_000_000_000
BASE = 19_700 * 1_440 * M  # a whole UTC day
TS = BASE + np.arange(1, 11, dtype=np.uint64) * np.uint64(M)
PX = np.full(10, 100, np.int64)
ONE = np.ones(1, np.int64)
TOP = np.iinfo(np.int64).max // M * M  # the last whole minute a bar may close on


def fold(ts: Any, *columns: Any, **kwargs: Any) -> Any:
    return fold_columns(
        ts,
        *(columns or (PX,) * 5),
        resolution=kwargs.pop("resolution", "5m"),
        channel=kwargs.pop("channel", "EXTERNAL"),
        **kwargs,
    )


def test_a_fold_without_sequences_pages_with_sequence_zero() -> None:
    result = fold(TS)
    rows, more = result.page(price_precision=2, size_precision=0, limit=10)
    assert not more and rows.startswith(b'[{"sequence":0,') and rows.count(b'"sequence":0') == 2
    assert result.page(price_precision=2, size_precision=0, limit=10, after_sequence=0) == (b"[]", False)


@pytest.mark.parametrize(
    "call",
    [
        lambda big: Series(channel="INTERNAL", price_precision=2, size_precision=0).extend(TS, big, big, big, big, big),
        lambda big: fold(TS, big, big, big, big, big),
        lambda big: fold_columns_many(TS, big, big, big, big, big, resolutions=["5m"], channel="EXTERNAL"),
        lambda big: FeatureState(price_scale=2, size_scale=0).warm(TS, big, big, big, big, big),
        lambda big: FeatureUniverse(feature_ids=["sma_20"]).warm(0, TS, big, big, big, big, big),
    ],
)
def test_a_foreign_byte_order_is_refused_never_read_as_native(call: Callable[[Any], Any]) -> None:
    big = PX.astype(">i8")
    with pytest.raises((TypeError, FeatureError), match=r"native byte order|INVALID_COLUMN: open"):
        call(big)


def test_big_endian_timestamps_are_refused_too() -> None:
    with pytest.raises(TypeError, match="ts_event .*native byte order"):
        fold(TS.astype(">u8"))


@pytest.mark.parametrize("ts", [TOP + M, 2**64 // M * M, 2**64 - 1])
def test_bar_times_past_2_63_are_refused_everywhere(ts: int) -> None:
    series = Series(channel="EXTERNAL", price_precision=2, size_precision=0)
    with pytest.raises(BarsError, match="INVALID_TIMESTAMP: bar 0 has ts_event .* at most 9223372036854775807"):
        series.push(ts, 1, 1, 1, 1, 1)
    column = np.array([ts], np.uint64)
    with pytest.raises(BarsError, match="INVALID_TIMESTAMP"):
        fold(column, ONE, ONE, ONE, ONE, ONE)
    with pytest.raises(BarsError, match="INVALID_TIMESTAMP"):
        series.extend(column, ONE, ONE, ONE, ONE, ONE)
    universe = FeatureUniverse(feature_ids=["sma_20"])
    universe.add(channel="EXTERNAL", price_precision=2, size_precision=0)
    with pytest.raises(FeatureError, match="INVALID_TIMESTAMP"):
        universe.warm(0, column, ONE, ONE, ONE, ONE, ONE)
    with pytest.raises(BarsError, match="INVALID_COVERAGE"):
        series.observe(ts - 10 * M, ts)
    assert len(series) == 0 and series.coverage() == []


def test_the_last_whole_minute_folds_to_every_resolution_without_wrapping() -> None:
    column = np.array([TOP - M, TOP], np.uint64)
    for resolution in ("5m", "1h", "1d"):
        result = fold(
            column,
            ONE[[0, 0]],
            ONE[[0, 0]],
            ONE[[0, 0]],
            ONE[[0, 0]],
            ONE[[0, 0]],
            resolution=resolution,
            channel="INTERNAL",
        )
        ends = np.frombuffer(result.columns()["ts_event"], "<u8")
        assert all(end >= TOP for end in ends)  # the bucket closes at or after its last bar
    series = Series(channel="EXTERNAL", price_precision=2, size_precision=0)
    series.observe(TOP - 10 * M, TOP)
    assert series.push(TOP, 1, 1, 1, 1, 1)[0] == "APPENDED"


def test_a_malformed_bar_in_a_minute_is_refused_and_nothing_is_taken() -> None:
    universe = FeatureUniverse(feature_ids=["sma_20"])
    for _ in range(2):
        universe.add(channel="INTERNAL", price_precision=2, size_precision=0)
    ids = np.array([0, 1], np.uint32)
    ts = np.array([BASE + M, BASE + M + 1], np.uint64)
    with pytest.raises(FeatureError, match="NOT_MINUTE_ALIGNED: bar 1 "):
        universe.close_minute(ids, ts, ONE[[0, 0]], ONE[[0, 0]], ONE[[0, 0]], ONE[[0, 0]], ONE[[0, 0]])
    high = np.array([1, 0], np.int64)  # high below open
    with pytest.raises(FeatureError, match="INCONSISTENT_BAR: bar 1 "):
        universe.close_minute(
            ids, np.array([BASE + M] * 2, np.uint64), ONE[[0, 0]], high, ONE[[0, 0]], ONE[[0, 0]], ONE[[0, 0]]
        )
    assert universe.last_ts_event(0, "1m") is None and universe.last_ts_event(1, "1m") is None


SERIES = Series(channel="INTERNAL", price_precision=2, size_precision=0)
UNIVERSE = FeatureUniverse(feature_ids=["sma_20"])


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda bad: fold(TS).page(price_precision=2, size_precision=0, limit=bad), BarsError),
        (lambda bad: fold(TS).page(price_precision=bad, size_precision=0, limit=1), SpineError),
        (lambda bad: fold(TS).page(price_precision=2, size_precision=0, limit=1, start=bad), BarsError),
        (lambda bad: fold(TS, coverage=[(bad, BASE + M)]), BarsError),
        (
            lambda bad: fold_columns_many(
                TS, *(PX,) * 5, resolutions=["5m"], channel="EXTERNAL", coverage=[(BASE, bad)]
            ),
            BarsError,
        ),
        (lambda bad: Series(channel="INTERNAL", price_precision=bad, size_precision=0), BarsError),
        (lambda bad: SERIES.push(BASE + M, 1, 1, 1, 1, -(2**64) if bad == -1 else bad), BarsError),
        (lambda bad: UNIVERSE.add(channel="INTERNAL", price_precision=bad, size_precision=0), BarsError),
        (lambda bad: UNIVERSE.add(channel="INTERNAL", price_precision=2, size_precision=0, capacity=bad), BarsError),
        (lambda bad: UNIVERSE.observe(bad, BASE, BASE + M), FeatureError),
        (lambda bad: UNIVERSE.advance(bad), FeatureError),
    ],
)
@pytest.mark.parametrize("bad", [-1, 2**64, 2**70, True])
def test_ints_out_of_range_and_bools_are_the_packages_refusals(
    call: Callable[[Any], Any], error: type, bad: int
) -> None:
    # A precision of -1 fits its type: the core refuses it by its own rule.
    with pytest.raises(
        error, match="INVALID_INTEGER: .*(out of range|is a bool); allowed: |INVALID_PRECISION|INVALID_SCALE"
    ):
        call(bad)


@pytest.mark.parametrize("field", range(6))
def test_a_feature_state_takes_no_bool_for_a_bar_field(field: int) -> None:
    bar: list[Any] = [BASE + M, 1, 1, 1, 1, 1]
    bar[field] = True
    with pytest.raises(FeatureError):
        FeatureState(price_scale=2, size_scale=0).update(*bar)
    with pytest.raises(FeatureError):
        FeatureState(price_scale=True, size_scale=0)


# fold_bars: arguments of the wrong shape are BarsErrors naming the argument


def _bars() -> dict[str, Any]:
    return {"ts_event": TS.astype(np.int64), "open": PX, "high": PX, "low": PX, "close": PX, "volume": PX}


@pytest.mark.parametrize(
    ("kwargs", "says"),
    [
        ({"resolutions": None}, "resolutions None"),
        ({"resolutions": 5}, "resolutions 5"),
        ({"resolutions": b"5m"}, "resolutions b'5m'"),
        ({"resolutions": [None]}, "resolutions [None]"),
        ({"resolutions": ["5m", 5]}, "resolutions ['5m', 5]"),
        ({"channel": None}, "channel None"),
        ({"channel": 1}, "channel 1"),
        ({"coverage": 5}, "coverage 5"),
        ({"coverage": "ab"}, "coverage 'ab'"),
    ],
)
def test_fold_bars_names_an_argument_of_the_wrong_shape(kwargs: dict[str, Any], says: str) -> None:
    from spine import fold_bars

    with pytest.raises(BarsError) as caught:
        fold_bars(_bars(), **{"price_precision": 2, "size_precision": 0, **kwargs})
    assert isinstance(caught.value, ValueError) and str(caught.value).startswith("INVALID_BARS: ")
    assert says in str(caught.value) and "allowed" in str(caught.value), str(caught.value)


def test_a_sequence_column_of_the_wrong_length_is_named() -> None:
    with pytest.raises(BarsError, match="LENGTH_MISMATCH: .*sequence has 2"):
        fold(TS[:1], *(ONE,) * 5, sequence=np.array([1, 2], np.uint64))


@pytest.mark.parametrize(
    ("args", "precision", "refusal"),
    [
        ((-1, 0, 1, 1, 1, 1, 1), 2, r"INVALID_INTEGER: -1 is out of range; allowed: a sequence number"),
        ((1, True, 1, 1, 1, 1, 1), 2, r"INVALID_INTEGER: True is a bool; allowed: a nanosecond timestamp"),
        ((1, 0, 2**63, 1, 1, 1, 1), 2, r"INVALID_INTEGER: 9223372036854775808 is out of range; allowed: a mantissa"),
        ((1, 0, 1, 1, 1, 1, 1), 19, r"INVALID_SCALE: scale 19 is out of range; allowed 0..=18"),
    ],
)
def test_a_stream_row_refuses_what_it_cannot_write(args: tuple[Any, ...], precision: int, refusal: str) -> None:
    with pytest.raises((BarsError, DecimalError), match=refusal):
        bar_row(*args, price_precision=precision, size_precision=0)
