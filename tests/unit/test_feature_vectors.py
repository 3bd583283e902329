"""Vectors for the kernels outside the default registry (``tests/data/feature_vectors.json``).

The Python API computes only the default features, so the Rust test
``rust/core/tests/feature_vectors.rs`` checks the kernels' rows against these vectors; here the
file must be what the plain-Python reference produces now, and the reference agrees with a
second, pandas rolling-window formulation of the same definition.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given
from hypothesis import strategies as st

from reference import indicators as ref
from reference import make_feature_vectors


def test_vector_file_is_what_the_reference_produces_now() -> None:
    current = make_feature_vectors.VECTOR_FILE.read_text(encoding="utf-8")
    assert current == make_feature_vectors.render(), (
        "tests/data/feature_vectors.json is stale: run tests/reference/make_feature_vectors.py"
    )


def test_every_case_has_values_and_undefined_windows() -> None:
    cases = make_feature_vectors.vectors()["cases"]
    assert {case["implementation"] for case in cases} == {"spine_core.features.stochastic"}
    for case in cases:
        k, d = case["outputs"]["k"], case["outputs"]["d"]
        warmup = int(case["parameters"]["period"]) + int(case["parameters"]["smoothing"]) - 1
        assert all(v is None for v in k[: warmup - 1] + d[: warmup - 1])
        assert all(0 <= float(v) <= 100 for v in k + d if v is not None)
        assert sum(v is not None for v in d) > len(d) // 2


bars = st.lists(st.tuples(st.integers(0, 50), st.integers(0, 10), st.integers(0, 100)), min_size=1, max_size=60)


@given(bars, st.integers(1, 12), st.integers(1, 5))
def test_stochastic_reference_equals_rolling_windows(
    rows: list[tuple[int, int, int]], period: int, smoothing: int
) -> None:
    low = np.array([float(lo) for lo, _, _ in rows])
    high = low + np.array([float(spread) for _, spread, _ in rows])
    close = low + (high - low) * np.array([at / 100 for _, _, at in rows])
    k, d = ref.stochastic(high, low, close, period, smoothing)
    hh = pd.Series(high).rolling(period).max().to_numpy()
    ll = pd.Series(low).rolling(period).min().to_numpy()
    with np.errstate(invalid="ignore", divide="ignore"):
        want_k = np.where(hh > ll, 100.0 * (close - ll) / (hh - ll), np.nan)
    want_d = pd.Series(want_k).rolling(smoothing).mean().to_numpy()
    warm = period + smoothing - 2
    want_k[:warm] = np.nan
    np.testing.assert_array_equal(np.isnan(k), np.isnan(want_k))
    np.testing.assert_allclose(k[~np.isnan(k)], want_k[~np.isnan(want_k)], rtol=1e-12)
    np.testing.assert_array_equal(np.isnan(d), np.isnan(want_d))
    np.testing.assert_allclose(d[~np.isnan(d)], want_d[~np.isnan(want_d)], rtol=1e-12, atol=1e-9)
