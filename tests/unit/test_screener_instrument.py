"""``GET /v2/screener/instrument/{id}``'s document, unit by unit: the ``svc.feature_state``
summary (bars folded per resolution against a plain count of closed UTC buckets, warm and
absent against the row's own values) and the confluence vote against a plain-Python reading
of the rule in docs/contract.md, over random rows (hypothesis) and the edge cases by name."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from reference.wire_validator import validate
from spine.screener.instrument import confluence, feature_state, instrument_document
from spine.screener.rows import RESOLUTIONS, Rows

M = 60 * 10**9
T0 = 20_000 * 1440 * M  # a UTC midnight
MINUTES = {"1m": 1, "5m": 5, "15m": 15, "30m": 30, "1h": 60, "4h": 240, "1d": 1440}
IID = "BTCUSDT.SIM"


def bars(n: int) -> dict[str, np.ndarray]:
    close = 10_000 + (np.arange(n) * 37) % 101
    return {
        "ts_event": T0 + (np.arange(n, dtype=np.uint64) + 1) * M,
        "open": close,
        "high": close + 20,
        "low": close - 20,
        "close": close + 3,
        "volume": np.full(n, 100, dtype=np.int64),
        "sequence": np.arange(1, n + 1, dtype=np.uint64),
    }


def test_bars_folded_counts_the_closed_buckets_of_each_resolution() -> None:
    rows = Rows()
    rows.add({"instrument_id": IID, "price_precision": 2, "size_precision": 0}, "EXTERNAL", "http://node:1")
    n = 1500  # a day and an hour: the 1d bucket is closed, the next is open
    rows.warm(
        IID,
        {k: np.ascontiguousarray(v) for k, v in bars(n).items()},
        {"observed": [{"start": str(T0), "end": str(T0 + n * M)}]},
    )
    for resolution in RESOLUTIONS:
        state = rows.state(IID, resolution)
        validate(state)
        assert state["bars_folded"] == n // MINUTES[resolution], resolution
        assert (state["channel"], state["source_node"]) == ("EXTERNAL", "http://node:1")
        values = rows.row(IID, resolution)["values"]
        assert state["absent"] == sum(v["kind"] == "ABSENT" for v in values.values())
        assert state["warm"] == all(v.get("reason") not in ("WARMING_UP", "GAP_IN_INPUT") for v in values.values())
    document = instrument_document(
        IID, [rows.row(IID, r) for r in RESOLUTIONS], [rows.state(IID, r) for r in RESOLUTIONS]
    )
    validate(document)
    assert [t["voting"] for t in document["confluence"]["timeframes"]] == [
        True,
        True,
        False,
        False,
        False,
        False,
        False,
    ]


def test_a_fresh_instrument_has_folded_nothing() -> None:
    rows = Rows()
    rows.add({"instrument_id": IID, "price_precision": 2, "size_precision": 0}, "INTERNAL")
    state = rows.state(IID, "1h")
    validate(state)
    assert (state["ts_event"], state["bars_folded"], state["warm"]) == (None, 0, False)


# the vote

ABSENT = {"kind": "ABSENT", "reason": "INPUT_UNAVAILABLE"}
sign = st.sampled_from([-1, 0, 1]).map(lambda s: {"kind": "INTEGER", "value": str(s)}) | st.just(ABSENT)
rsi = (
    st.decimals(0, 100, places=8).map(lambda d: {"kind": "DECIMAL", "value": f"{d:.8f}", "scale": 8})
    | st.sampled_from(["45.00000000", "55.00000000", "44.99999999", "55.00000001"]).map(
        lambda v: {"kind": "DECIMAL", "value": v, "scale": 8}
    )
    | st.just(ABSENT)
)


def reference_vote(row: dict[str, Any], warm: bool) -> tuple[int, int]:
    """The rule as docs/contract.md states it, read independently."""
    if not warm:
        return 0, 0
    t, m = row["values"]["trend_200.sign"], row["values"]["rsi_14.value"]
    trend = 0 if t["kind"] == "ABSENT" else int(t["value"])
    if m["kind"] == "ABSENT":
        return trend, 0
    value = Decimal(m["value"])
    return trend, (value > 55) - (value < 45)


@given(st.lists(st.tuples(sign, rsi, st.booleans()), min_size=7, max_size=7))
def test_the_vote_follows_the_rule_per_timeframe(frames: list[tuple[dict[str, Any], dict[str, Any], bool]]) -> None:
    rows = [
        {"resolution": r, "values": {"trend_200.sign": t, "rsi_14.value": m}}
        for r, (t, m, _) in zip(RESOLUTIONS, frames, strict=True)
    ]
    states = [{"warm": warm} for _, _, warm in frames]
    vote = confluence(rows, states)
    expected = [reference_vote(row, state["warm"]) for row, state in zip(rows, states, strict=True)]
    assert [(t["trend"], t["momentum"]) for t in vote["timeframes"]] == expected
    assert (vote["trend"], vote["momentum"]) == (sum(e[0] for e in expected), sum(e[1] for e in expected))
    assert vote["voting"] == sum(warm for _, _, warm in frames)


def test_the_band_edges_vote_neutral() -> None:
    def momentum(value: str) -> int:
        row = {
            "resolution": "1m",
            "values": {"trend_200.sign": ABSENT, "rsi_14.value": {"kind": "DECIMAL", "value": value, "scale": 8}},
        }
        result: int = confluence([row], [{"warm": True}])["timeframes"][0]["momentum"]
        return result

    assert [momentum(v) for v in ("45.00000000", "55.00000000", "44.99999999", "55.00000001")] == [0, 0, -1, 1]


def test_feature_state_of_a_row_with_a_gap_is_not_warm() -> None:
    row = {
        "instrument_id": IID,
        "resolution": "5m",
        "ts_event": str(T0),
        "values": {
            "sma_20.value": {"kind": "ABSENT", "reason": "GAP_IN_INPUT"},
            "rsi_14.value": {"kind": "ABSENT", "reason": "INPUT_UNAVAILABLE"},
        },
    }
    state = feature_state(row, 3, "EXTERNAL", "http://n:1")
    assert (state["warm"], state["absent"]) == (False, 2)
    row["values"]["sma_20.value"] = {"kind": "DECIMAL", "value": "1.00", "scale": 2}
    assert feature_state(row, 3, "EXTERNAL", "http://n:1")["warm"] is True
