"""``DeltaWriter``: documents as the served rows give them, and every refusal it adds. The
documents against consecutive row snapshots are held by tests/property/test_delta_properties.py."""

from __future__ import annotations

import json

import numpy as np
import pytest
from refusals import raises

from spine._core import canonical_json
from spine.errors import FeatureError
from spine.features import DeltaWriter, FeatureUniverse, row_delta

M = 60 * 10**9
RESOLUTIONS = ("1m", "5m", "15m", "30m", "1h", "4h", "1d")
T0 = 20_000 * 1440 * M


def setup(n: int = 2, ids: bool = True) -> tuple[FeatureUniverse, DeltaWriter]:
    u, w = FeatureUniverse(), DeltaWriter()
    for i in range(n):
        u.add(channel="EXTERNAL", price_precision=2, size_precision=0)
        if ids:
            w.register(i, f"I{i}.SIM")
    return u, w


def minute(n: int, k: int) -> list[np.ndarray]:
    c = 10_000 + (k * 37) % 101
    return [np.arange(n, dtype=np.uint32), np.full(n, T0 + k * M, dtype=np.uint64)] + [
        np.full(n, v, dtype=np.int64) for v in (c, c + 20, c - 20, c + 3, 100 + k)
    ]


def test_documents_equal_row_delta_over_row_snapshots() -> None:
    u, w = setup()
    w.refresh(u)
    for k in range(1, 30):
        before = {(i, r): u.row(i, r) for i in range(2) for r in RESOLUTIONS}
        rows, docs = w.deltas(u, u.close_minute(*minute(2, k)))
        pairs = np.frombuffer(rows, dtype="<u4").reshape(-1, 2).tolist()
        assert len(docs) == len(pairs) > 0
        for (i, r), raw in zip(pairs, docs, strict=True):
            res = RESOLUTIONS[r]
            expected = row_delta(
                before[(i, res)], u.row(i, res), instrument_id=f"I{i}.SIM", resolution=res, ts_event=T0 + k * M
            )
            assert json.loads(raw) == expected and canonical_json(expected) == raw


def test_an_id_needing_escapes_is_served_as_given() -> None:
    u, w = setup(1, ids=False)
    w.register(0, 'A"B\\C.SIM')
    _, docs = w.refresh(u)
    assert {json.loads(d)["instrument_id"] for d in docs} == {'A"B\\C.SIM'}


def test_a_second_refresh_publishes_nothing() -> None:
    u, w = setup()
    rows, docs = w.refresh(u)
    assert len(docs) == 14 and len(rows) == 14 * 8
    assert w.refresh(u) == (b"", [])


def test_refusals() -> None:
    u, w = setup(2, ids=False)
    for bad in ("", "BTC", "btc.sim", ".SIM", "B C.SIM", "X" * 125 + ".SIM", "BTC.1X"):
        error = raises("INVALID_FEATURE_INPUT", lambda bad=bad: w.register(0, bad))
        assert "instrument_id" in str(error)
    for index in (-1, 2**32, True):
        with pytest.raises((FeatureError, TypeError, OverflowError)):
            w.register(index, "A.SIM")  # type: ignore[arg-type]
    error = raises("UNKNOWN_INSTRUMENT", lambda: w.register(2**32 - 1, "A.SIM"))
    assert "skips index 0" in str(error)
    w.register(0, "A.SIM")
    changed = u.close_minute(*minute(2, 1))
    error = raises("UNKNOWN_INSTRUMENT", lambda: w.deltas(u, changed))
    assert "index 1" in str(error)
    raises("UNKNOWN_INSTRUMENT", lambda: w.refresh(u))
    w.register(1, "B.SIM")
    assert len(w.deltas(u, changed)[1]) == len(changed) // 8  # a refused call publishes nothing; this one all
    outside = np.array([7, 0], dtype="<u4").tobytes()
    raises("UNKNOWN_INSTRUMENT", lambda: w.deltas(u, outside))
    raises("INVALID_COLUMN", lambda: w.deltas(u, changed[:5]))
    raises("INVALID_COLUMN", lambda: w.deltas(u, np.array([0, 7], dtype="<u4").tobytes()))
    with pytest.raises(TypeError):
        w.deltas(object(), changed)  # type: ignore[arg-type]
