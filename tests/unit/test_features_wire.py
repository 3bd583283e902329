"""Feature documents on the wire: specs, rows and deltas validate against their schemas (with
an independent validator), config_hash is the identity of the canonical spec body, and bad
input raises FeatureError (a SpineError and a ValueError) naming the problem."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import referencing
from jsonschema import Draft202012Validator
from referencing.jsonschema import DRAFT202012
from refusals import raises
from test_features import make_bars

from reference.canonical_json import canonical_dumps
from spine import canonical_json, identity
from spine.features import FeatureState, compute_features, feature_row, feature_specs, row_delta

SCHEMAS = Path(__file__).resolve().parents[2] / "schemas"
LOADED = {p.name: json.loads(p.read_bytes()) for p in SCHEMAS.glob("*.json")}
REGISTRY = referencing.Registry().with_resources((s["$id"], DRAFT202012.create_resource(s)) for s in LOADED.values())
TAGS = ("version", "schema_id", "schema_version", "config_hash")
COLUMNS = ("ts_event", "open", "high", "low", "close", "volume")


def validator(name: str) -> Draft202012Validator:
    return Draft202012Validator(LOADED[f"{name}.json"], registry=REGISTRY)


def errors(name: str, document: Any) -> list[str]:
    return [e.message for e in validator(name).iter_errors(document)]


def test_specs_validate_and_hash_their_canonical_body() -> None:
    specs = feature_specs()
    assert [s["feature_id"] for s in specs] == [
        "sma_20",
        "ema_20",
        "rsi_14",
        "atr_14",
        "bb_20_2",
        "macd_12_26_9",
        "roc_10",
        "rvol_20",
        "vol_z_20",
        "vwap_20",
        "donchian_20",
        "trend_200",
    ]
    for spec in specs:
        assert errors("svc.feature_spec", spec) == []
        body = {k: v for k, v in spec.items() if k not in TAGS}
        # The identity by hand (pinned decision 3) over the reference canonical JSON.
        canonical = canonical_dumps(body)
        assert canonical == canonical_json(body)
        domain = b"spine.v2/config_hash"
        preimage = len(domain).to_bytes(8, "big") + domain + len(canonical).to_bytes(8, "big") + canonical
        assert spec["config_hash"] == hashlib.sha256(preimage).hexdigest() == identity("config_hash", body)
        assert spec["feature_version"] == "1.0.2" and spec["input_kind"] == "BAR"
        assert spec["implementation"].startswith("spine_core.features.")
    assert len({s["config_hash"] for s in specs}) == len(specs)


def test_config_hash_is_stable() -> None:
    # Pinned: a change here changes every stored row's provenance; bump feature_version.
    # (1.0.1: the SMA sums its window when read; 1.0.2: realised volatility and VWAP compute
    # theirs when read; see docs/contract.md.)
    by_id = {s["feature_id"]: s["config_hash"] for s in feature_specs()}
    assert by_id["rsi_14"] == "f983121ea0e337e7053365ea1ce61b44085d9672c56e3f2a71f5ad2d95db888d"
    assert feature_specs() == feature_specs()


def test_rows_and_deltas_validate() -> None:
    cols = make_bars(3, 260)
    state = FeatureState(price_scale=2, size_scale=3)
    empty = feature_row(state, instrument_id="BTCUSDT.SIM", resolution="1h")
    assert empty["ts_event"] is None and errors("svc.feature_row", empty) == []
    previous = state.row()
    for cut in (10, 30, 199, 260):
        assert state.warm(*(cols[k][:0] for k in COLUMNS)) == 0  # an empty batch is a no-op
        start = 0 if state.last_ts_event is None else int(np.searchsorted(cols["ts_event"], state.last_ts_event)) + 1
        state.warm(*(cols[k][start:cut] for k in COLUMNS))
        document = feature_row(state, instrument_id="BTCUSDT.SIM", resolution="1h")
        assert errors("svc.feature_row", document) == []
        for value in document["values"].values():
            if value["kind"] == "DECIMAL":
                assert len(value["value"].partition(".")[2]) == value["scale"]
        delta = row_delta(
            previous,
            document["values"],
            instrument_id="BTCUSDT.SIM",
            resolution="1h",
            ts_event=int(cols["ts_event"][cut - 1]),
        )
        assert errors("svc.feature_row_delta", delta) == []
        assert all(op["op"] == "UPSERT" for op in delta["operations"])
        previous = document["values"]
    narrower = FeatureState(price_scale=2, size_scale=3, feature_ids=["rsi_14"])
    narrower.warm(*(cols[k] for k in COLUMNS))
    retired = row_delta(previous, narrower.row(), instrument_id="BTCUSDT.SIM", resolution="1h", ts_event=1)
    ops = {op["key"]: op["op"] for op in retired["operations"]}
    assert "rsi_14.value" not in ops and set(ops.values()) == {"RETIRE"} and len(ops) == 18
    assert errors("svc.feature_row_delta", retired) == []


def test_schemas_refuse_what_the_contract_refuses() -> None:
    row = json.loads((SCHEMAS.parent / "tests/data/wire_examples/svc.feature_row.json").read_text())
    bad_values = [
        {"kind": "DECIMAL", "value": 1.5, "scale": 1},
        {"kind": "DECIMAL", "value": "1.5"},
        {"kind": "INTEGER", "value": 1},
        {"kind": "INTEGER", "value": "-0"},
        {"kind": "ABSENT", "reason": "WARMING_UP"},
        {"kind": "ABSENT", "reason": "INPUT_UNAVAILABLE", "bars_seen": 1},
        {"kind": "ABSENT", "reason": "NOPE"},
        {"kind": "ZERO"},
        None,
    ]
    for value in bad_values:
        assert errors("svc.feature_row", {**row, "values": {"rsi_14.value": value}}), value
    assert errors("svc.feature_row", {**row, "values": {"rsi_14": {"kind": "INTEGER", "value": "1"}}})
    delta = json.loads((SCHEMAS.parent / "tests/data/wire_examples/svc.feature_row_delta.json").read_text())
    correct = {"op": "CORRECT", "key": "rsi_14.value", "value": {"kind": "INTEGER", "value": "1"}}
    assert errors("svc.feature_row_delta", {**delta, "operations": [correct]})
    retire_with_value = {"op": "RETIRE", "key": "rsi_14.value", "value": {"kind": "INTEGER", "value": "1"}}
    assert errors("svc.feature_row_delta", {**delta, "operations": [retire_with_value]})
    spec = feature_specs()[0]
    assert errors("svc.feature_spec", {**spec, "parameters": {"period": 20}})
    assert errors("svc.feature_spec", {**spec, "outputs": [{**spec["outputs"][0], "value_type": "INTEGER"}]})


# refusals


def test_bad_input_raises_clear_errors() -> None:
    cols = make_bars(8, 30)
    args = [cols[k] for k in COLUMNS]
    state = FeatureState(price_scale=2, size_scale=3)
    raises("LENGTH_MISMATCH", lambda: state.warm(*args[:5], args[5][:-1]))
    unsorted = args[0].copy()
    unsorted[[3, 4]] = unsorted[[4, 3]]
    error = raises("UNSORTED_BARS", lambda: state.warm(unsorted, *args[1:]))
    assert "bar 4" in str(error)
    high = args[2].copy()
    high[7] = args[3][7] - 1
    raises("INCONSISTENT_BAR", lambda: state.warm(args[0], args[1], high, *args[3:]))
    raises("INVALID_COLUMN", lambda: state.warm(args[0], args[1].astype(np.float64), *args[2:]))
    raises("INVALID_COLUMN", lambda: state.warm(args[0], args[1].astype(np.int32), *args[2:]))
    raises("INVALID_COLUMN", lambda: state.warm(args[0].astype(np.int64), *args[1:]))
    raises("INVALID_COLUMN", lambda: state.warm(args[0], args[1][::-1][::2], *args[2:]))
    raises("INVALID_COLUMN", lambda: state.warm(args[0], [1, 2, 3], *args[2:]))
    assert state.last_ts_event is None  # nothing was taken
    assert state.warm(*args) == 30
    raises("UNSORTED_BARS", lambda: state.warm(*args))
    raises("UNSORTED_BARS", lambda: state.update(int(args[0][-1]), 1, 1, 1, 1, 1))
    raises("INVALID_BAR", lambda: state.update(-1, 1, 1, 1, 1, 1))
    raises("INVALID_BAR", lambda: state.update(2**64, 1, 1, 1, 1, 1))
    raises("INVALID_BAR", lambda: state.update(int(args[0][-1]) + 1, 2**63, 1, 1, 1, 1))
    raises("INCONSISTENT_BAR", lambda: state.update(int(args[0][-1]) + 1, 1, 1, 1, 1, -1))
    raises("INVALID_PRECISION", lambda: FeatureState(price_scale=19, size_scale=0))
    raises("INVALID_PRECISION", lambda: FeatureState(price_scale=0, size_scale=-1))
    raises("INVALID_PRECISION", lambda: FeatureState(price_scale=2**70, size_scale=0))
    raises("UNKNOWN_FEATURE", lambda: FeatureState(price_scale=0, size_scale=0, feature_ids=["rsi_99"]))
    raises("DUPLICATE_FEATURE", lambda: FeatureState(price_scale=0, size_scale=0, feature_ids=["rsi_14"] * 2))
    raises("UNKNOWN_FEATURE", lambda: compute_features(*args, price_scale=2, size_scale=3, feature_ids=["x"]))


def test_selection_order_and_properties() -> None:
    state = FeatureState(price_scale=4, size_scale=1, feature_ids=["trend_200", "atr_14"])
    assert state.feature_ids == ["trend_200", "atr_14"]
    assert state.keys == ["atr_14.value", "trend_200.ratio", "trend_200.sign"]
    assert list(state.row()) == state.keys
    assert (state.price_scale, state.size_scale) == (4, 1)
    empty = FeatureState(price_scale=0, size_scale=0, feature_ids=[])
    assert empty.row() == {} and empty.warm(*(np.empty(0, dtype=t) for t in ("u8",) + ("i8",) * 5)) == 0


@pytest.mark.parametrize("ts_event", [1.5, True, -5, 2**64, "1"])
def test_a_delta_refuses_a_ts_event_that_is_no_nanosecond_instant(ts_event: object) -> None:
    from spine.errors import TimestampError

    with pytest.raises(TimestampError, match="INVALID_TIMESTAMP: ts_event .* allowed: an int 0..2\\^64-1"):
        row_delta({}, {}, instrument_id="BTCUSDT.SIM", resolution="1h", ts_event=ts_event)  # type: ignore[arg-type]


# documents are produced valid or not at all: bad arguments are refused naming them


@pytest.mark.parametrize(
    ("instrument_id", "resolution", "named"),
    [
        ("BTCUSDT", "1m", "instrument_id"),
        ("btc.sim", "1m", "instrument_id"),
        ("BTC USDT.SIM", "1m", "instrument_id"),
        ("X" * 130 + ".SIM", "1m", "instrument_id"),
        (1, "1m", "instrument_id"),
        ("BTCUSDT.SIM", "7x", "resolution"),
        ("BTCUSDT.SIM", "01m", "resolution"),
        ("BTCUSDT.SIM", "1m\n", "resolution"),
        ("BTCUSDT.SIM", None, "resolution"),
    ],
)
def test_rows_and_deltas_refuse_an_id_or_resolution_the_schema_refuses(
    instrument_id: Any, resolution: Any, named: str
) -> None:
    state = FeatureState(price_scale=2, size_scale=0, feature_ids=["rsi_14"])
    for call in (
        lambda: feature_row(state, instrument_id=instrument_id, resolution=resolution),
        lambda: row_delta({}, state.row(), instrument_id=instrument_id, resolution=resolution, ts_event=1),
    ):
        error = raises("INVALID_FEATURE_INPUT", call)
        assert f"{named} {(instrument_id if named == 'instrument_id' else resolution)!r}" in str(error)
        assert "allowed" in str(error)


@pytest.mark.parametrize(
    ("previous", "current", "says"),
    [
        ({}, {"rsi_14.value": {"kind": "ZERO"}}, "current['rsi_14.value']"),
        ({}, {"rsi_14.value": 0}, "current['rsi_14.value']"),
        ({}, {"rsi_14.value": None}, "current['rsi_14.value']"),
        ({}, {"rsi_14.value": {"kind": "ABSENT", "reason": "WARMING_UP"}}, "current['rsi_14.value']"),
        ({}, {"rsi_14.value": {"kind": "DECIMAL", "value": 1.5, "scale": 1}}, "current['rsi_14.value']"),
        ({}, {"rsi_14": {"kind": "INTEGER", "value": "1"}}, "'rsi_14' is not a row key"),
        ({"RSI.value": {"kind": "INTEGER", "value": "1"}}, {}, "'RSI.value' is not a row key"),
        ({1: {"kind": "INTEGER", "value": "1"}}, {}, "1 is not a row key"),
        (None, {}, "previous"),
        ({}, [], "current"),
        ({}, 0, "current"),
    ],
)
def test_a_delta_refuses_values_and_keys_outside_the_contract(previous: Any, current: Any, says: str) -> None:
    error = raises(
        "INVALID_FEATURE_INPUT",
        lambda: row_delta(previous, current, instrument_id="BTCUSDT.SIM", resolution="1m", ts_event=1),
    )
    assert says in str(error), str(error)


def test_a_row_of_something_else_is_refused_naming_the_argument() -> None:
    with pytest.raises(TypeError, match="state must be a FeatureState"):
        feature_row(object(), instrument_id="BTCUSDT.SIM", resolution="1m")  # type: ignore[arg-type]


def test_a_registry_leave_and_a_value_turning_absent_are_distinct_operations() -> None:
    warm = {
        "rsi_14.value": {"kind": "DECIMAL", "value": "55.0000", "scale": 4},
        "sma_20.value": {"kind": "DECIMAL", "value": "1.00000000", "scale": 8},
    }
    gap = {"kind": "ABSENT", "reason": "GAP_IN_INPUT"}
    delta = row_delta(warm, {"rsi_14.value": gap}, instrument_id="BTCUSDT.SIM", resolution="5m", ts_event=60)
    assert delta["operations"] == [
        {"op": "UPSERT", "key": "rsi_14.value", "value": gap},
        {"op": "RETIRE", "key": "sma_20.value"},
    ]
    assert errors("svc.feature_row_delta", delta) == []


@pytest.mark.parametrize("feature_ids", ["rsi_14", b"rsi_14"])
def test_one_feature_id_given_as_a_string_is_refused_not_split_into_characters(feature_ids: Any) -> None:
    cols = make_bars(4, 20)
    error = raises(
        "INVALID_FEATURE_INPUT",
        lambda: compute_features(*(cols[k] for k in COLUMNS), price_scale=2, size_scale=3, feature_ids=feature_ids),
    )
    assert "feature_ids" in str(error) and "['rsi_14']" in str(error)


def test_the_package_root_exports_every_error_and_the_feature_surface() -> None:
    import spine
    import spine.errors
    import spine.features

    for name in (
        "SpineError",
        "BarsError",
        "FeatureError",
        "HubError",
        "CanonicalJsonError",
        "DecimalError",
        "TimestampError",
        "IdentityNameError",
    ):
        assert getattr(spine, name) is getattr(spine.errors, name) and name in spine.__all__
    for name in ("feature_specs", "FeatureState", "FeatureUniverse", "compute_features", "feature_row", "row_delta"):
        assert getattr(spine, name) is getattr(spine.features, name) and name in spine.__all__
