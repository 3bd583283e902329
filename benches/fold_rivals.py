"""The ways to fold 1-minute bars that the fold benchmarks compare, on the same bars.

The rivals aggregate only; none of them withholds buckets across gaps, so they are given a
gap-free series (where every way must agree) and are timed doing strictly less work.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
import polars as pl

import spine

MINUTE_NS = 60_000_000_000
STEP_NS = {"5m": 5, "15m": 15, "30m": 30, "1h": 60, "4h": 240, "1d": 1440}
Folded = tuple[npt.NDArray[Any], ...]  # (ts_event, open, high, low, close, volume)


def make_bars(n: int, seed: int) -> dict[str, npt.NDArray[Any]]:
    """A gap-free random walk of n closed 1-minute bars ending on a day boundary."""
    rng = np.random.default_rng(seed)
    day = 19_700 * 86_400 * 10**9
    ts = (day - (np.arange(n, 0, -1, dtype=np.int64) - 1) * MINUTE_NS).astype(np.uint64)
    close = 2_700_000 + np.cumsum(rng.integers(-50, 51, n))
    open_ = np.concatenate([[close[0]], close[:-1]])
    spread = rng.integers(0, 30, (2, n))
    high = np.maximum(open_, close) + spread[0]
    low = np.minimum(open_, close) - spread[1]
    volume = rng.integers(0, 10_000_000, n)
    return {
        "ts_event": ts,
        "open": open_.astype(np.int64),
        "high": high.astype(np.int64),
        "low": low.astype(np.int64),
        "close": close.astype(np.int64),
        "volume": volume.astype(np.int64),
    }


def spine_series(bars: dict[str, npt.NDArray[Any]]) -> spine.Series:
    series = spine.Series(channel="EXTERNAL", price_precision=2, size_precision=6, capacity=len(bars["ts_event"]))
    series.extend(*(bars[k] for k in ("ts_event", "open", "high", "low", "close", "volume")))
    return series


def spine_fold(series: spine.Series, resolution: str) -> Folded:
    return spine_fold_columns(series.fold(resolution))


def spine_fold_columns(result: spine.FoldResult) -> Folded:
    columns = result.columns()
    return tuple(
        np.frombuffer(columns[k], dtype="<u8" if k == "ts_event" else "<i8")
        for k in ("ts_event", "open", "high", "low", "close", "volume")
    )


def polars_frame(bars: dict[str, npt.NDArray[Any]]) -> pl.DataFrame:
    # Rivals key buckets by the bar's open minute, as their grids are left-closed.
    return pl.DataFrame({**bars, "open_time": (bars["ts_event"] - MINUTE_NS).astype(np.int64)}).with_columns(
        pl.col("open_time").cast(pl.Datetime("ns"))
    )


def polars_fold(frame: pl.DataFrame, resolution: str) -> pl.DataFrame:
    return frame.group_by_dynamic("open_time", every=f"{STEP_NS[resolution]}m", closed="left", label="left").agg(
        pl.col("open").first(),
        pl.col("high").max(),
        pl.col("low").min(),
        pl.col("close").last(),
        pl.col("volume").sum(),
    )


def pandas_frame(bars: dict[str, npt.NDArray[Any]]) -> pd.DataFrame:
    index = pd.to_datetime((bars["ts_event"] - MINUTE_NS).astype(np.int64), unit="ns")
    return pd.DataFrame({k: v for k, v in bars.items() if k != "ts_event"}, index=index)


def pandas_fold(frame: pd.DataFrame, resolution: str) -> pd.DataFrame:
    return frame.resample(f"{STEP_NS[resolution]}min", closed="left", label="left", origin="epoch").agg(
        {"open": "first", "high": "max", "low": "min", "close": "last", "volume": "sum"}
    )


def numpy_fold(bars: dict[str, npt.NDArray[Any]], resolution: str) -> Folded:
    """The fastest simple rival: ufunc.reduceat over bucket boundaries."""
    step = STEP_NS[resolution] * MINUTE_NS
    ts = bars["ts_event"]
    bucket = (ts - 1) // step
    starts = np.flatnonzero(np.concatenate([[True], bucket[1:] != bucket[:-1]]))
    ends = np.concatenate([starts[1:], [len(ts)]]) - 1
    return (
        (bucket[starts] + 1) * step,
        bars["open"][starts],
        np.maximum.reduceat(bars["high"], starts),
        np.minimum.reduceat(bars["low"], starts),
        bars["close"][ends],
        np.add.reduceat(bars["volume"], starts),
    )


def as_tuple_polars(frame: pl.DataFrame, resolution: str) -> Folded:
    step = STEP_NS[resolution] * MINUTE_NS
    ends = frame["open_time"].cast(pl.Int64).to_numpy().astype(np.uint64) + step
    return (ends, *(frame[k].to_numpy() for k in ("open", "high", "low", "close", "volume")))


def as_tuple_pandas(frame: pd.DataFrame, resolution: str) -> Folded:
    step = STEP_NS[resolution] * MINUTE_NS
    ends = frame.index.asi8.astype(np.uint64) + step
    return (ends, *(frame[k].to_numpy() for k in ("open", "high", "low", "close", "volume")))


RIVALS: dict[str, Callable[..., Any]] = {
    "spine": spine_fold,
    "numpy.reduceat": numpy_fold,
    "polars.group_by_dynamic": polars_fold,
    "pandas.resample": pandas_fold,
}
