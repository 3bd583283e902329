"""Property tests: feature state on arbitrary bar series.

* incremental updates and one batch warm (split anywhere) give identical rows;
* no input panics or leaks a non-finite number: every value is a wire-valid typed variant;
* values agree with the numpy reference at the declared scale (within one unit on float ties);
* a feature's values do not depend on the others selected beside it (SMA, ROC, Bollinger and
  realised volatility read another kernel's ring of closes, VWAP, Donchian and the volume
  z-score another's ring of bars, when one is long enough, and keep their own otherwise).
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

import numpy as np
from hypothesis import example, given
from hypothesis import strategies as st

from reference import indicators as ref
from spine.errors import FeatureError
from spine.features import FeatureState, feature_specs

COLUMNS = ("ts_event", "open", "high", "low", "close", "volume")
DECIMAL = re.compile(r"^-?(0|[1-9][0-9]*)(\.[0-9]+)?$")
I64 = 2**63 - 1


@st.composite
def bar_series(draw: st.DrawFn, max_bars: int = 120, max_price: int = 10**12) -> dict[str, Any]:
    n = draw(st.integers(0, max_bars))
    closes = draw(st.lists(st.integers(0, max_price), min_size=n, max_size=n))
    wicks = draw(st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 10**6)), min_size=n, max_size=n))
    volumes = draw(st.lists(st.one_of(st.just(0), st.integers(0, 10**9)), min_size=n, max_size=n))
    gaps = draw(st.lists(st.integers(1, 10**12), min_size=n, max_size=n))
    close = np.array(closes, dtype=np.int64)
    open_ = np.concatenate([close[:1], close[:-1]]).astype(np.int64)
    high = np.maximum(open_, close) + np.array([w[0] for w in wicks], dtype=np.int64)
    low = np.maximum(np.minimum(open_, close) - np.array([w[1] for w in wicks], dtype=np.int64), 0)
    return {
        "ts_event": np.cumsum(np.array(gaps, dtype=np.uint64)).astype(np.uint64),
        "open": open_,
        "high": high.astype(np.int64),
        "low": low.astype(np.int64),
        "close": close,
        "volume": np.array(volumes, dtype=np.int64),
        "price_scale": draw(st.integers(0, 18)),
        "size_scale": draw(st.integers(0, 18)),
    }


def state_for(series: dict[str, Any]) -> FeatureState:
    return FeatureState(price_scale=series["price_scale"], size_scale=series["size_scale"])


def check_wire(row: dict[str, dict[str, Any]]) -> None:
    assert len(row) == 19
    for key, value in row.items():
        kind = value["kind"]
        if kind == "DECIMAL":
            text = value["value"]
            assert DECIMAL.match(text) and not re.match(r"^-0(\.0+)?$", text), (key, text)
            assert len(text.partition(".")[2]) == value["scale"]
        elif kind == "INTEGER":
            assert value["value"] in ("-1", "0", "1"), (key, value)
        else:
            assert kind == "ABSENT" and value["reason"] in ("WARMING_UP", "INPUT_UNAVAILABLE", "GAP_IN_INPUT")


@given(bar_series(), st.integers(0, 200))
def test_incremental_equals_batch_and_is_wire_valid(series: dict[str, Any], split: int) -> None:
    batch, incremental = state_for(series), state_for(series)
    columns = [series[k] for k in COLUMNS]
    assert batch.warm(*columns) == len(series["close"])
    split = min(split, len(series["close"]))
    incremental.warm(*(c[:split] for c in columns))
    for i in range(split, len(series["close"])):
        incremental.update(*(int(c[i]) for c in columns))
    assert batch.row() == incremental.row()
    check_wire(batch.row())


@given(
    st.lists(st.tuples(st.integers(-I64 - 1, I64), st.integers(0, 2**64 - 1)), min_size=1, max_size=30),
    st.integers(0, 18),
    st.integers(0, 18),
)
def test_extreme_mantissas_never_panic_or_leak_non_finite(bars: list[tuple[int, int]], ps: int, ss: int) -> None:
    state = FeatureState(price_scale=ps, size_scale=ss)
    ts = 0
    for price, volume in bars:
        ts += 1
        try:
            state.update(ts, price, price, price, price, volume)
        except FeatureError as error:
            assert error.symbol in ("INVALID_BAR", "INCONSISTENT_BAR")
        check_wire(state.row())


@given(bar_series(max_bars=80, max_price=10**9))
def test_sma_rsi_bollinger_agree_with_the_reference(series: dict[str, Any]) -> None:
    state = state_for(series)
    state.warm(*(series[k] for k in COLUMNS))
    row = state.row()
    if len(series["close"]) == 0:
        return
    close = series["close"].astype(np.float64) / 10.0 ** series["price_scale"]
    mid, _, _, pct = ref.bollinger(close, 20, 2.0)
    # Price-level outputs are published at 8 decimals; past f64's ~16 significant digits
    # (prices above ~1e7) the last places are rounding noise in both implementations, bounded
    # by the window's rounding error: period * eps * max|price|.
    level = float(np.max(np.abs(close[-20:]))) * 20 * np.finfo(np.float64).eps
    for key, expected, scale, noise in (
        ("sma_20.value", ref.sma(close, 20), 8, level),
        ("rsi_14.value", ref.rsi(close, 14), 4, 0.0),
        ("bb_20_2.mid", mid, 8, level),
        ("bb_20_2.percent_b", pct, 6, 0.0),
    ):
        want = expected[-1]
        if np.isnan(want):
            assert row[key]["kind"] == "ABSENT", (key, row[key])
            continue
        assert row[key]["kind"] == "DECIMAL", (key, row[key], want)
        units = abs(Decimal(row[key]["value"]) - Decimal(ref.quantize(float(want), scale))).scaleb(scale)
        assert units <= 1 + noise * 10**scale, (key, row[key], want)


# row_delta refuses exactly what the schema refuses (and what the spec's scale rule refuses)

_TEXTS = st.one_of(
    st.from_regex(r"\A-?(0|[1-9][0-9]{0,21})(\.[0-9]{0,4})?\Z"),
    st.text(max_size=6),
    st.sampled_from(["-0", "-0.00", "1e3", "01", " 1", "1\n"]),
)
_ANY = st.one_of(st.none(), st.booleans(), st.integers(-(2**64), 2**64), st.floats(), _TEXTS)


@st.composite
def feature_values(draw: st.DrawFn) -> Any:
    kind = draw(st.sampled_from(["DECIMAL", "INTEGER", "UNIX_NANOS", "ABSENT", "ZERO", None]))
    value: dict[str, Any] = {} if kind is None else {"kind": kind}
    for field, strategy in (
        ("value", _TEXTS),
        ("scale", st.one_of(st.integers(-1, 19), _ANY)),
        ("reason", st.sampled_from(["WARMING_UP", "INPUT_UNAVAILABLE", "GAP_IN_INPUT", "NOPE"])),
        ("bars_seen", st.one_of(st.integers(-1, 2**63), _ANY)),
        ("bars_needed", st.integers(0, 30)),
    ):
        if draw(st.booleans()):
            value[field] = draw(strategy)
    return draw(st.one_of(st.just(value), _ANY))


def _digits_fit(value: Any) -> bool:
    """The rules beyond the schema's patterns that row_delta also keeps: no float anywhere (the
    wire has none; a stock validator takes 1.0 for an integer), a DECIMAL has exactly `scale`
    fractional digits, an INTEGER fits in 64 bits, a UNIX_NANOS in u64."""
    if any(isinstance(v, float) for v in value.values()):
        return False
    if value["kind"] == "DECIMAL":
        return len(value["value"].partition(".")[2]) == value["scale"]
    if value["kind"] == "INTEGER":
        return -(2**63) <= int(value["value"]) < 2**63
    if value["kind"] == "UNIX_NANOS":
        return int(value["value"]) < 2**64
    return True


@given(feature_values())
@example({"kind": "DECIMAL", "value": "1", "scale": 0.0})
@example({"kind": "ABSENT", "reason": "WARMING_UP", "bars_seen": 1.0, "bars_needed": 2})
@example({"kind": "DECIMAL", "value": "1.50", "scale": 1})
@example({"kind": "INTEGER", "value": "9223372036854775808"})
@example({"kind": "INTEGER", "value": "0\n"})
def test_a_delta_is_refused_exactly_when_its_value_breaks_the_contract(value: Any) -> None:
    # jsonschema-rs, not Python's jsonschema: schema patterns are ECMA-262, where `$` does not
    # match before a trailing newline, and Python's `re` does ("0\n" would pass as an integer).
    import jsonschema_rs

    from spine.features import row_delta
    from spine.schemas import all_schemas

    schema = all_schemas()[("svc.feature_row_delta", 1)]
    document = {
        "version": "spine.v2",
        "schema_id": "svc.feature_row_delta",
        "schema_version": 1,
        "instrument_id": "BTCUSDT.SIM",
        "resolution": "1m",
        "ts_event": "60",
        "operations": [{"op": "UPSERT", "key": "rsi_14.value", "value": value}],
    }
    valid = jsonschema_rs.validator_for(schema).is_valid(document) and _digits_fit(value)
    try:
        produced = row_delta({}, {"rsi_14.value": value}, instrument_id="BTCUSDT.SIM", resolution="1m", ts_event=60)
    except FeatureError as error:
        assert not valid, (value, str(error))
        assert str(error).startswith("INVALID_FEATURE_INPUT: current['rsi_14.value']: ")
    else:
        assert valid, value
        assert produced == document


SELECTIONS = (
    None,  # the default registry: SMA, Bollinger, ROC and rvol read the trend's ring of
    # closes; VWAP and Donchian the z-score's ring of bars
    ["sma_20", "bb_20_2", "roc_10"],  # SMA's ring is the source (the first of the longest)
    ["roc_10", "bb_20_2", "rvol_20"],  # realised volatility's ring (21 closes) is the source
    ["vol_z_20", "sma_20"],  # each keeps its own ring
    ["donchian_20", "vwap_20", "ema_20"],  # VWAP reads Donchian's ring of bars
)


@given(bar_series(max_bars=260), st.integers(0, 260), st.sampled_from(SELECTIONS))
def test_values_do_not_depend_on_the_features_beside_them(
    series: dict[str, Any], split: int, selection: list[str] | None
) -> None:
    columns = [series[k] for k in COLUMNS]
    split = min(split, len(series["close"]))

    def row_of(ids: list[str] | None) -> dict[str, Any]:
        state = FeatureState(price_scale=series["price_scale"], size_scale=series["size_scale"], feature_ids=ids)
        state.warm(*(c[:split] for c in columns))
        for i in range(split, len(series["close"])):
            state.update(*(int(c[i]) for c in columns))
        return state.row()

    together = row_of(selection)
    ids = selection or [spec["feature_id"] for spec in feature_specs()]
    for feature_id in ids:
        alone = row_of([feature_id])
        assert alone == {k: v for k, v in together.items() if k.startswith(f"{feature_id}.")}, feature_id
