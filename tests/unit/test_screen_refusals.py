"""Every refusal of ``ScreenTable``: a ``ScreenError`` (also a ``ValueError``) whose message
names the path or key, what was wrong and what is allowed."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from spine import ScreenError, ScreenTable, SpineError, feature_specs
from spine.features import FeatureUniverse

EXAMPLE: dict[str, Any] = {
    "version": "spine.v2",
    "schema_id": "svc.screen_definition",
    "schema_version": 1,
    "resolutions": ["5m", "1h"],
    "instrument_ids": None,
    "filter": {"key": "rsi_14.value", "op": "GT", "value": "50"},
    "sort": [{"key": "rsi_14.value", "direction": "DESC"}],
    "limit": 50,
    "as_of": None,
}
LEAF = {"key": "rsi_14.value", "op": "IS_ABSENT"}


def table() -> ScreenTable:
    t = ScreenTable()
    t.upsert("BTC.BINANCE", "1h", {k: {"kind": "DECIMAL", "value": "1", "scale": s} for k, s in t.keys})
    return t


def refused(**changes: Any) -> ScreenError:
    definition = copy.deepcopy(EXAMPLE) | changes
    with pytest.raises(ScreenError) as caught:
        table().screen(definition)
    return caught.value


def test_the_default_table_holds_the_registry_keys_at_their_scales() -> None:
    keys = [(f"{f['feature_id']}.{o['name']}", o["scale"]) for f in feature_specs() for o in f["outputs"]]
    assert ScreenTable().keys == keys
    assert table().screen(EXAMPLE) == ([], 1, 0)
    below = copy.deepcopy(EXAMPLE) | {"filter": {"key": "rsi_14.value", "op": "GT", "value": "0.99999"}}
    assert table().screen(below) == ([("BTC.BINANCE", "1h", 1)], 1, 1)


def test_a_key_outside_the_registry_is_refused_naming_it_and_the_registry() -> None:
    e = refused(filter={"key": "rsi_15.value", "op": "IS_ABSENT"})
    assert e.symbol == "INVALID_SCREEN"
    assert isinstance(e, ValueError) and isinstance(e, SpineError)
    assert str(e).startswith('INVALID_SCREEN: $.filter.key: row key "rsi_15.value" is not in the registry; allowed: ')
    assert "rsi_14.value" in str(e) and "trend_200.sign" in str(e)
    assert "$.sort[0].key" in str(refused(sort=[{"key": "nope.value", "direction": "ASC"}]))


def test_between_with_low_above_high_is_refused() -> None:
    e = refused(filter={"key": "rsi_14.value", "op": "BETWEEN", "low": "70.00001", "high": "70"})
    assert "$.filter" in str(e) and "allowed: low <= high" in str(e)
    # Equal ends are allowed, at any number of digits.
    t = table()
    t.screen(
        copy.deepcopy(EXAMPLE)
        | {
            "filter": {
                "key": "rsi_14.value",
                "op": "BETWEEN",
                "low": "70.000000000000000000001",
                "high": "70.000000000000000000001",
            }
        }
    )


def test_nesting_deeper_than_four_is_refused() -> None:
    depth4 = {"all": [{"any": [{"all": [LEAF]}]}]}
    assert table().screen(copy.deepcopy(EXAMPLE) | {"filter": depth4})[2] == 0
    e = refused(filter={"all": [{"any": [{"all": [{"any": [LEAF]}]}]}]})
    assert "$.filter.all[0].any[0].all[0].any[0]: nesting depth 5; allowed: at most 4" in str(e)


def test_a_repeated_sort_key_is_refused() -> None:
    e = refused(sort=[{"key": "rsi_14.value", "direction": "ASC"}, {"key": "rsi_14.value", "direction": "DESC"}])
    assert '$.sort[1].key: sort key "rsi_14.value" is repeated' in str(e)


@pytest.mark.parametrize(
    ("changes", "where"),
    [
        ({"version": "spine.v1"}, "$.version"),
        ({"schema_id": "svc.screen_result"}, "$.schema_id"),
        ({"schema_version": 2}, "$.schema_version"),
        ({"resolutions": []}, "$.resolutions"),
        ({"resolutions": ["2m"]}, "$.resolutions[0]"),
        ({"resolutions": ["1m", "1m"]}, "$.resolutions[1]"),
        ({"instrument_ids": []}, "$.instrument_ids"),
        ({"instrument_ids": ["A.X", "A.X"]}, "$.instrument_ids[1]"),
        ({"filter": {"all": []}}, "$.filter.all"),
        ({"filter": {"any": [LEAF] * 33}}, "$.filter.any"),
        ({"filter": {"all": [LEAF], "any": [LEAF]}}, "$.filter"),
        ({"filter": {"key": "rsi_14.value", "op": "LIKE", "value": "1"}}, "$.filter.op"),
        ({"filter": {"key": "rsi_14.value", "op": "GT"}}, "$.filter"),
        ({"filter": {"key": "rsi_14.value", "op": "GT", "value": "1e3"}}, "$.filter.value"),
        ({"filter": {"key": "rsi_14.value", "op": "GT", "value": "-0.00"}}, "$.filter.value"),
        ({"filter": {"key": "rsi_14.value", "op": "GT", "value": 1}}, "$.filter.value"),
        ({"filter": {"key": "rsi_14.value", "op": "IS_ABSENT", "value": "1"}}, "$.filter"),
        ({"filter": [LEAF]}, "$.filter"),
        ({"sort": [{"key": "rsi_14.value", "direction": "UP"}]}, "$.sort[0].direction"),
        (
            {
                "sort": [
                    {"key": k, "direction": "ASC"}
                    for k in ("rsi_14.value", "sma_20.value", "ema_20.value", "atr_14.value", "roc_10.value")
                ]
            },
            "$.sort",
        ),
        ({"limit": 0}, "$.limit"),
        ({"limit": 1001}, "$.limit"),
        ({"as_of": 5}, "$.as_of"),
        ({"as_of": "-1"}, "$.as_of"),
        ({"extra": True}, "$"),
    ],
)
def test_the_grammar_is_enforced_naming_the_path(changes: dict[str, Any], where: str) -> None:
    assert str(refused(**changes)).startswith(f"INVALID_SCREEN: {where}: ")


def test_a_missing_member_and_bad_json_are_refused() -> None:
    definition = copy.deepcopy(EXAMPLE)
    del definition["as_of"]
    with pytest.raises(ScreenError, match='missing member "as_of"'):
        table().screen(definition)
    with pytest.raises(ScreenError, match="INVALID_SCREEN"):
        table().screen(b'{"limit": 1.5}')
    with pytest.raises(ScreenError, match=r"\$.limit"):
        table().screen(copy.deepcopy(EXAMPLE) | {"limit": 1.5})
    with pytest.raises(TypeError):
        table().screen(7)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("keys", "message"),
    [
        ([("RSI.value", 2)], "is not a row key"),
        ([("rsi_14.value", 19)], "allowed: 0..=18"),
        ([("rsi_14.value", -1)], "allowed: 0..=18"),
        ([("rsi_14.value", 2), ("rsi_14.value", 2)], "declared twice"),
    ],
)
def test_table_declarations_are_refused(keys: list[tuple[str, int]], message: str) -> None:
    with pytest.raises(ScreenError, match=message) as caught:
        ScreenTable(keys)
    assert caught.value.symbol == "INVALID_SCREEN_TABLE"


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({}, 'the row has no value for "a.x"'),
        ({"a.x": {"kind": "DECIMAL", "value": "1.001", "scale": 3}}, "DECIMAL_SCALE_EXCEEDED"),
        ({"a.x": {"kind": "DECIMAL", "value": "1e2"}}, "INVALID_DECIMAL"),
        ({"a.x": {"kind": "FLOAT", "value": "1"}}, "is not a feature value"),
        ({"a.x": {"value": "1"}}, "is not a feature value"),
        ({"a.x": 1.5}, "is not a feature value"),
        ({"a.x": {"kind": "ABSENT"}, "b.y": {"kind": "ABSENT"}}, "row key b.y is not in the table; allowed: a.x"),
    ],
)
def test_rows_a_table_cannot_hold_are_refused(values: dict[str, Any], message: str) -> None:
    t = ScreenTable([("a.x", 2)])
    with pytest.raises(ScreenError, match=message) as caught:
        t.upsert("A.X", "1h", values)
    assert caught.value.symbol == "INVALID_SCREEN_TABLE"
    with pytest.raises(ScreenError, match="allowed: 1m, 5m, 15m, 30m, 1h, 4h, 1d"):
        t.upsert("A.X", "2h", {"a.x": {"kind": "ABSENT"}})
    assert len(t) == 0


def test_rows_straight_from_a_universe_equal_rows_from_their_dicts() -> None:
    import numpy as np

    u = FeatureUniverse()
    i = u.add(channel="EXTERNAL", price_precision=2, size_precision=0)
    n = 300
    ts = (np.arange(1, n + 1, dtype=np.uint64) * 60_000_000_000).astype(np.uint64)
    close = (10_000 + (np.arange(n) * 37 % 101)).astype(np.int64)
    u.warm(i, ts, close, close + 5, close - 5, close, np.full(n, 10, dtype=np.int64))
    by_dict, direct = ScreenTable(), ScreenTable()
    for resolution in ("1m", "5m", "15m", "1h"):
        by_dict.upsert("A.X", resolution, u.row(i, resolution))
        direct.upsert_universe(u, i, "A.X", resolution)
    definition = copy.deepcopy(EXAMPLE) | {
        "resolutions": ["1m", "5m", "15m", "1h"],
        "filter": None,
        "sort": [{"key": "sma_20.value", "direction": "DESC"}],
    }
    assert by_dict.screen(definition) == direct.screen(definition)
    assert direct.screen(definition)[1] == 4
    with pytest.raises(ScreenError, match="not in the table"):
        ScreenTable([("sma_20.value", 8)]).upsert_universe(u, i, "A.X", "1m")
