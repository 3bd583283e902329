"""Folding 1-minute bars: Spine against numpy reduceat, polars group_by_dynamic and pandas
resample, side by side, on the same gap-free bars (checked equal before timing).

- single request: one resident 5,000-bar series folded to 1h (what a /v2/bars page does);
- batch: 1,000 instruments x 5,000 bars folded to all six derived resolutions.

Each rival holds its data in its own resident form (Series, DataFrame, arrays), as a service
would; only the fold is timed. Smoke mode (CI): --benchmark-disable.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from pytest_benchmark.fixture import BenchmarkFixture

from benches.fold_rivals import (
    STEP_NS,
    as_tuple_pandas,
    as_tuple_polars,
    make_bars,
    numpy_fold,
    pandas_fold,
    pandas_frame,
    polars_fold,
    polars_frame,
    spine_fold,
    spine_fold_columns,
    spine_series,
)
from benches.sizes import BARS, INSTRUMENTS

RIVAL_NAMES = ["spine", "numpy.reduceat", "polars.group_by_dynamic", "pandas.resample"]


def _resident(rival: str, bars: dict[str, Any]) -> Any:
    return {
        "spine": spine_series,
        "numpy.reduceat": lambda b: b,
        "polars.group_by_dynamic": polars_frame,
        "pandas.resample": pandas_frame,
    }[rival](bars)


def _fold(rival: str, resident: Any, resolution: str) -> Any:
    """Each rival's fold, returning its native result (Spine: a FoldResult)."""
    return {
        "spine": lambda series, r: series.fold(r),
        "numpy.reduceat": numpy_fold,
        "polars.group_by_dynamic": polars_fold,
        "pandas.resample": pandas_fold,
    }[rival](resident, resolution)


def _as_tuple(rival: str, folded: Any, resolution: str) -> tuple[Any, ...]:
    if rival == "polars.group_by_dynamic":
        return as_tuple_polars(folded, resolution)
    if rival == "pandas.resample":
        return as_tuple_pandas(folded, resolution)
    if rival == "spine":
        return spine_fold_columns(folded)
    return tuple(folded)


def _whole_buckets(folded: tuple[Any, ...], bars: dict[str, Any], resolution: str) -> tuple[Any, ...]:
    """Only buckets lying wholly inside the bars: Spine withholds the partial first and last
    ones (unobserved, not closed); the rivals aggregate whatever falls in them."""
    step = STEP_NS[resolution] * 60_000_000_000
    first_open = int(bars["ts_event"][0]) - 60_000_000_000
    ends = np.asarray(folded[0]).astype(np.uint64)
    keep = (ends - step >= first_open) & (ends <= bars["ts_event"][-1])
    return tuple(np.asarray(column)[keep] for column in folded)


def test_fold_many_agrees_with_single_folds() -> None:
    series = spine_series(make_bars(BARS, seed=3))
    many = series.fold_many(list(STEP_NS))
    for result, resolution in zip(many, STEP_NS, strict=True):
        assert result.columns() == series.fold(resolution).columns()


@pytest.mark.parametrize("resolution", list(STEP_NS))
def test_rivals_agree(resolution: str) -> None:
    bars = make_bars(BARS, seed=7)
    expected = spine_fold(spine_series(bars), resolution)
    for rival in RIVAL_NAMES[1:]:
        got = _as_tuple(rival, _fold(rival, _resident(rival, bars), resolution), resolution)
        got = _whole_buckets(got, bars, resolution)
        assert len(expected[0]) > 0
        for column, (a, b) in enumerate(zip(expected, got, strict=True)):
            np.testing.assert_array_equal(
                a.astype(np.int64), np.asarray(b).astype(np.int64), err_msg=f"{rival} {column}"
            )


@pytest.mark.parametrize("rival", RIVAL_NAMES)
def test_single_request_fold_5000_to_1h(benchmark: BenchmarkFixture, rival: str) -> None:
    resident = _resident(rival, make_bars(BARS, seed=1))
    benchmark.group = "fold one 5,000-bar series to 1h"
    benchmark(_fold, rival, resident, "1h")


@pytest.mark.parametrize("rival", RIVAL_NAMES)
def test_batch_fold_universe_to_six_resolutions(benchmark: BenchmarkFixture, rival: str) -> None:
    residents = [_resident(rival, make_bars(BARS, seed=i)) for i in range(INSTRUMENTS)]
    benchmark.group = f"fold {INSTRUMENTS} x 5,000 bars to 6 resolutions"

    resolutions = list(STEP_NS)

    def fold_all() -> None:
        for resident in residents:
            if rival == "spine":
                resident.fold_many(resolutions)  # one call; each level folded from the previous
            else:
                for resolution in resolutions:
                    _fold(rival, resident, resolution)

    benchmark.pedantic(fold_all, rounds=3, iterations=1)
