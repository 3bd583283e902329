"""Regenerate ``tests/data/feature_vectors.json`` from the plain-Python indicator reference.

    python tests/reference/make_feature_vectors.py           # rewrite the vector file
    python tests/reference/make_feature_vectors.py --check   # exit 1 if the file is stale

For kernels outside the default registry, which the Python API does not reach: the Rust test
``rust/core/tests/feature_vectors.rs`` builds each case's spec and checks its rows bar by bar;
``tests/unit/test_feature_vectors.py`` checks that the committed file equals this script's
output. Deterministic (seeded), so the file is reproducible.

Layout: ``cases``, each with ``implementation``, ``parameters`` (exact strings),
``price_scale``, ``size_scale``, ``bars`` (``[ts_event, open, high, low, close, volume]``
mantissas) and ``outputs``: per output name, one entry per bar, the wire decimal string or
``null`` (warming up or undefined).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

if __package__ in (None, ""):  # run as a script: make ``reference`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from reference import indicators as ref  # noqa: E402

VECTOR_FILE = Path(__file__).resolve().parent.parent / "data" / "feature_vectors.json"
MINUTE = 60_000_000_000


def _bars(seed: int, n: int, base: int, step: int, flat_run: bool) -> list[list[int]]:
    """A random walk of mantissas with wicks; ``flat_run`` holds every price still for a stretch
    (windows with no range)."""
    rng = np.random.default_rng(seed)
    close = np.maximum(base + np.cumsum(rng.integers(-step, step + 1, n)), 1)
    if flat_run:
        close[n // 3 : n // 3 + 30] = close[n // 3]
    open_ = np.concatenate([[close[0]], close[:-1]])
    wick = rng.integers(0, step, (2, n))
    high = np.maximum(open_, close) + wick[0]
    low = np.maximum(np.minimum(open_, close) - wick[1], 0)
    if flat_run:
        for a in (open_, high, low):
            a[n // 3 : n // 3 + 30] = close[n // 3]
    volume = rng.integers(0, 50_000, n)
    return [
        [(i + 1) * MINUTE, *map(int, row)] for i, row in enumerate(zip(open_, high, low, close, volume, strict=True))
    ]


def _text(values: Any, scale: int) -> list[str | None]:
    return [None if np.isnan(v) else ref.quantize(float(v), scale) for v in values]


def stochastic_case(seed: int, n: int, period: int, smoothing: int, price_scale: int, flat_run: bool) -> dict[str, Any]:
    bars = _bars(seed, n, base=3_700_000 if price_scale else 500, step=900 if price_scale else 3, flat_run=flat_run)
    p = 10.0**price_scale
    high, low, close = (np.array([b[i] for b in bars], dtype=np.float64) / p for i in (2, 3, 4))
    k, d = ref.stochastic(high, low, close, period, smoothing)
    return {
        "implementation": "spine_core.features.stochastic",
        "parameters": {"period": str(period), "smoothing": str(smoothing)},
        "price_scale": price_scale,
        "size_scale": 3,
        "bars": bars,
        "outputs": {"k": _text(k, 4), "d": _text(d, 4)},
    }


def vectors() -> dict[str, Any]:
    return {
        "cases": [
            stochastic_case(seed=1, n=300, period=14, smoothing=3, price_scale=2, flat_run=True),
            stochastic_case(seed=2, n=200, period=5, smoothing=1, price_scale=0, flat_run=False),
            stochastic_case(seed=3, n=250, period=21, smoothing=5, price_scale=2, flat_run=True),
        ]
    }


def render() -> str:
    return json.dumps(vectors(), indent=1, sort_keys=True) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the file is stale")
    args = parser.parse_args()
    text = render()
    if args.check:
        current = VECTOR_FILE.read_text("utf-8") if VECTOR_FILE.exists() else ""
        if current != text:
            print(f"{VECTOR_FILE} is stale: run tests/reference/make_feature_vectors.py", file=sys.stderr)
            return 1
        return 0
    VECTOR_FILE.write_text(text, "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
