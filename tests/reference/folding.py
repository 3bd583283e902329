"""Reference folding of 1-minute bars (pinned decision 6, DESIGN.md "Gaps and sparse series").

Three oracles, written from the rules alone and never importing ``spine``:

* :func:`pandas_fold` — the OHLCV aggregates of every non-empty bucket with
  ``DataFrame.resample`` on the bars' CLOSE times, ``closed="right"``, ``label="right"``,
  ``origin="epoch"``: a bucket holds the bars closing in ``(k*S, (k+1)*S]`` and is labelled by
  its end, which is the same as "the bars opening in ``[k*S, (k+1)*S)``".
* :func:`polars_fold` — the same aggregates with ``group_by_dynamic`` on the bars' OPEN times,
  ``every=S``, ``closed="left"``, ``label="left"``, ``start_by="window"`` (windows truncated on
  the epoch grid), relabelled by their end. The two use opposite conventions on purpose.
* :func:`withholding` — plain Python: which buckets are served, and the withheld spans with
  their reasons, by the precedence NOT_CLOSED > UNOBSERVED > GAP_IN_INPUT, adjacent withheld
  buckets with one reason merged into one span.

and :class:`SeriesModel`, a plain-Python model of the durable series' arrival rule (first
close wins, out-of-order fills an empty minute, too old in a full series, oldest evicted
first, coverage before an evicted close forgotten).

Prices and volumes are int64 mantissas; pandas works on nullable ``Int64`` (so empty buckets
never turn mantissas into floats) and polars on ``Int64``: both are exact. Callers keep
summed volumes inside int64.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import polars as pl

__all__ = [
    "MINUTE_NS",
    "STEP_MINUTES",
    "PANDAS_FREQ",
    "Verdict",
    "SeriesModel",
    "bucket_end",
    "default_coverage",
    "merge_minutes",
    "normalise_coverage",
    "pandas_fold",
    "polars_fold",
    "withholding",
]

MINUTE_NS = 60_000_000_000
STEP_MINUTES = {"5m": 5, "15m": 15, "30m": 30, "1h": 60, "4h": 240, "1d": 1440}
PANDAS_FREQ = {"5m": "5min", "15m": "15min", "30m": "30min", "1h": "1h", "4h": "4h", "1d": "1D"}
POLARS_EVERY = {"5m": "5m", "15m": "15m", "30m": "30m", "1h": "1h", "4h": "4h", "1d": "1d"}

# A derived bar: (open, high, low, close, volume) or, with sequences, (..., max sequence).
Agg = tuple[int, ...]


def step_ns(resolution: str) -> int:
    return STEP_MINUTES[resolution] * MINUTE_NS


def bucket_end(ts_event: int, resolution: str) -> int:
    """The end of the bucket holding the 1-minute bar that closes at ``ts_event``: the bar
    opens at ``ts_event - 1 minute``, and the bucket is the grid cell containing that open."""
    step = step_ns(resolution)
    opened = ts_event - MINUTE_NS
    return (opened // step + 1) * step


# Aggregates: pandas and polars.


def _frame_columns(
    ts_event: Sequence[int],
    columns: Sequence[Sequence[int]],
    sequence: Sequence[int] | None,
) -> dict[str, np.ndarray]:
    names = ("open", "high", "low", "close", "volume")
    out = {name: np.asarray(col, dtype=np.int64) for name, col in zip(names, columns, strict=True)}
    if sequence is not None:
        out["sequence"] = np.asarray(sequence, dtype=np.int64)
    out["ts_event"] = np.asarray(ts_event, dtype=np.int64)
    return out


def pandas_fold(
    ts_event: Sequence[int], ohlcv: Sequence[Sequence[int]], resolution: str, sequence: Sequence[int] | None = None
) -> dict[int, Agg]:
    """``{bucket end ns: (o, h, l, c, v[, max seq])}`` for every bucket holding a bar."""
    cols = _frame_columns(ts_event, ohlcv, sequence)
    if len(cols["ts_event"]) == 0:
        return {}
    index = pd.DatetimeIndex(pd.to_datetime(cols.pop("ts_event"), unit="ns", utc=True))
    frame = pd.DataFrame({k: pd.array(v, dtype="Int64") for k, v in cols.items()}, index=index)
    spec = {"open": "first", "high": "max", "low": "min", "close": "last", "volume": "sum"}
    if sequence is not None:
        spec["sequence"] = "max"
    resampled = frame.resample(PANDAS_FREQ[resolution], closed="right", label="right", origin="epoch")
    agg = resampled.agg(spec)
    counts = resampled["open"].count()
    agg = agg[counts > 0]
    ends = agg.index.as_unit("ns").asi8
    fields = list(spec)
    values = [agg[name].to_numpy(dtype=np.int64) for name in fields]
    return {int(end): tuple(int(column[i]) for column in values) for i, end in enumerate(ends)}


def polars_fold(
    ts_event: Sequence[int], ohlcv: Sequence[Sequence[int]], resolution: str, sequence: Sequence[int] | None = None
) -> dict[int, Agg]:
    """The same as :func:`pandas_fold`, from ``group_by_dynamic`` on the open times."""
    cols = _frame_columns(ts_event, ohlcv, sequence)
    if len(cols["ts_event"]) == 0:
        return {}
    opened = cols.pop("ts_event") - MINUTE_NS
    frame = pl.DataFrame({"opened": pl.Series(opened).cast(pl.Datetime("ns", "UTC")), **cols}).sort("opened")
    aggs = [
        pl.col("open").first(),
        pl.col("high").max(),
        pl.col("low").min(),
        pl.col("close").last(),
        pl.col("volume").sum(),
    ]
    if sequence is not None:
        aggs.append(pl.col("sequence").max())
    every = POLARS_EVERY[resolution]
    grouped = frame.group_by_dynamic(
        "opened", every=every, period=every, closed="left", label="left", start_by="window"
    ).agg(aggs)
    step = step_ns(resolution)
    starts = grouped["opened"].cast(pl.Int64).to_list()
    fields = ["open", "high", "low", "close", "volume"]
    if sequence is not None:
        fields.append("sequence")
    values = [grouped[name].to_list() for name in fields]
    return {int(start) + step: tuple(int(column[i]) for column in values) for i, start in enumerate(starts)}


# Withholding.


def normalise_coverage(spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """Spans rounded inward to whole minutes, empty ones dropped, overlapping or touching
    ones merged, sorted. (Callers check ``end > start`` before: that is a refusal.)"""
    rounded = []
    for start, end in spans:
        s = -(-start // MINUTE_NS) * MINUTE_NS
        e = end // MINUTE_NS * MINUTE_NS
        if s < e:
            rounded.append((s, e))
    merged: list[tuple[int, int]] = []
    for s, e in sorted(rounded):
        if merged and s <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], e))
        else:
            merged.append((s, e))
    return merged


def default_coverage(ts_event: Sequence[int]) -> list[tuple[int, int]]:
    """Offline default: one observation from the first bar's open to the last bar's close."""
    if len(ts_event) == 0:
        return []
    return [(int(ts_event[0]) - MINUTE_NS, int(ts_event[-1]))]


def merge_minutes(minute_starts: Iterable[int]) -> list[tuple[int, int]]:
    """Spans of a set of observed minutes (given by their starts)."""
    return normalise_coverage((m, m + MINUTE_NS) for m in minute_starts)


@dataclass
class Verdict:
    """Which buckets a fold serves (their ends) and the withheld spans."""

    served: list[int] = field(default_factory=list)
    withheld: list[tuple[int, int, str]] = field(default_factory=list)
    # Every considered bucket end -> "bar", "none" (INTERNAL, no bar) or a reason.
    buckets: dict[int, str] = field(default_factory=dict)


def withholding(
    ts_event: Sequence[int],
    coverage: Iterable[tuple[int, int]],
    channel: str,
    resolution: str,
) -> Verdict:
    """The withholding rules, bucket by bucket.

    Buckets considered: from the one holding ``min(first bar open, first coverage start)`` to
    the one holding the last instant before ``max(last bar close, watermark)``. For each:
    end > watermark -> NOT_CLOSED; not inside one observed span -> UNOBSERVED; EXTERNAL with
    fewer bars than minutes -> GAP_IN_INPUT; else a bar if it holds one (INTERNAL: nothing if
    it holds none).
    """
    ts = [int(t) for t in ts_event]
    spans = normalise_coverage(coverage)
    verdict = Verdict()
    lows = ([ts[0] - MINUTE_NS] if ts else []) + ([spans[0][0]] if spans else [])
    if not lows:
        return verdict
    watermark = spans[-1][1] if spans else 0
    lo = min(lows)
    hi = max(([ts[-1]] if ts else []) + ([watermark] if spans else []))
    step = step_ns(resolution)
    minutes = STEP_MINUTES[resolution]
    start = lo // step * step
    while start < hi:
        end = start + step
        # Bars of the bucket open in [start, end), i.e. close in (start, end].
        count = bisect.bisect_right(ts, end) - bisect.bisect_right(ts, start)
        inside = any(s <= start and end <= e for s, e in spans)
        if end > watermark:
            outcome = "NOT_CLOSED"
        elif not inside:
            outcome = "UNOBSERVED"
        elif channel == "EXTERNAL" and count < minutes:
            outcome = "GAP_IN_INPUT"
        elif count > 0:
            outcome = "bar"
        else:
            outcome = "none"
        verdict.buckets[end] = outcome
        if outcome == "bar":
            verdict.served.append(end)
        elif outcome != "none":
            last = verdict.withheld[-1] if verdict.withheld else None
            if last is not None and last[2] == outcome and last[1] == start:
                verdict.withheld[-1] = (last[0], end, outcome)
            else:
                verdict.withheld.append((start, end, outcome))
        start = end
    return verdict


# The arrival rule of the durable series.


@dataclass
class SeriesModel:
    """The durable 1-minute series by the documented arrival rule, on sorted lists.

    A bar whose ``ts_event`` is held is a duplicate (dropped, first close wins). A bar older
    than the newest held is out of order: it is dropped as too old when the series is full and
    it is older than everything held, else inserted. Accepted bars take the next sequence and
    mark their own minute observed. Past ``capacity`` the oldest bar is evicted, and every
    observed minute that starts before the evicted bar's close is forgotten.
    """

    capacity: int
    held: list[int] = field(default_factory=list)  # sorted close times
    bars: dict[int, tuple[int, int, int, int, int, int]] = field(default_factory=dict)
    minutes: list[int] = field(default_factory=list)  # sorted starts of observed minutes
    last_sequence: int = 0
    last_evicted: int = 0
    counters: dict[str, int] = field(
        default_factory=lambda: dict.fromkeys(
            ("accepted", "duplicates", "out_of_order", "evicted", "too_old", "rejected"), 0
        )
    )

    def _observe_minute(self, minute: int) -> None:
        i = bisect.bisect_left(self.minutes, minute)
        if i == len(self.minutes) or self.minutes[i] != minute:
            self.minutes.insert(i, minute)

    def observe(self, start: int, end: int) -> None:
        """An observed span (whole minutes only in this model)."""
        assert start % MINUTE_NS == 0 and end % MINUTE_NS == 0 and start < end
        for minute in range(start, end, MINUTE_NS):
            self._observe_minute(minute)

    def push(self, ts: int, values: tuple[int, int, int, int, int]) -> str:
        if ts in self.bars:
            self.counters["duplicates"] += 1
            return "DUPLICATE"
        if self.held and ts < self.held[-1]:
            self.counters["out_of_order"] += 1
            if len(self.held) >= self.capacity and ts < self.held[0]:
                self.counters["too_old"] += 1
                return "TOO_OLD"
            outcome = "INSERTED"
        else:
            outcome = "APPENDED"
        self.last_sequence += 1
        self.counters["accepted"] += 1
        bisect.insort(self.held, ts)
        self.bars[ts] = (*values, self.last_sequence)
        self._observe_minute(ts - MINUTE_NS)
        while len(self.held) > self.capacity:
            oldest = self.held.pop(0)
            del self.bars[oldest]
            self.counters["evicted"] += 1
            self.last_evicted = max(self.last_evicted, oldest)
            del self.minutes[: bisect.bisect_left(self.minutes, oldest)]
        return outcome

    def coverage(self) -> list[tuple[int, int]]:
        return merge_minutes(self.minutes)

    def columns(self) -> dict[str, list[int]]:
        names = ("open", "high", "low", "close", "volume", "sequence")
        out = {"ts_event": list(self.held)}
        for i, name in enumerate(names):
            out[name] = [self.bars[k][i] for k in self.held]
        return out
