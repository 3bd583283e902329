"""``POST /v2/screener/screen`` on a real screener over a real node: results validate against
the schemas (stock validator), every ranked row meets the filter and the sort, equal
definitions share an id, and every kind of bad body is a 400 naming what was wrong."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from nodes import envelope, post
from screeners import screener

from reference.canonical_json import identity
from reference.wire_validator import validate

__all__ = ["screener"]  # the fixture, imported for this module's tests

ROUTE = "/v2/screener/screen"
RESOLUTIONS = ("1m", "5m", "15m", "30m", "1h", "4h", "1d")


def definition(**fields: Any) -> dict[str, Any]:
    base = {
        "version": "spine.v2",
        "schema_id": "svc.screen_definition",
        "schema_version": 1,
        "resolutions": ["1m", "5m"],
        "instrument_ids": None,
        "filter": {
            "all": [{"key": "rsi_14.value", "op": "GE", "value": "0"}, {"key": "sma_20.value", "op": "IS_NOT_ABSENT"}]
        },
        "sort": [{"key": "rsi_14.value", "direction": "DESC"}],
        "limit": 10,
        "as_of": None,
    }
    return {**base, **fields}


def screened(url: str, body: dict[str, Any]) -> dict[str, Any]:
    status, result = post(url + ROUTE, body)
    assert status == 200, result
    validate(result)
    return result


def value(row: dict[str, Any], key: str) -> Decimal | None:
    cell = row["values"][key]
    return None if cell["kind"] == "ABSENT" else Decimal(cell["value"])


def test_a_screen_ranks_rows_that_meet_its_filter_in_its_order(screener: str) -> None:
    body = definition()
    result = screened(screener, body)
    assert result["definition"] == body
    assert result["screen_id"] == identity(
        "screen_id", {k: v for k, v in body.items() if k not in ("version", "schema_id", "schema_version")}
    )
    assert result["evaluated"] == 48 * 2 and 0 < len(result["rows"]) <= 10 <= result["matched"]
    assert [row["rank"] for row in result["rows"]] == list(range(1, len(result["rows"]) + 1))
    rsi = [value(row, "rsi_14.value") for row in result["rows"]]
    assert all(r is not None and r >= 0 for r in rsi) and rsi == sorted(rsi, reverse=True)  # type: ignore[type-var]
    assert all(value(row, "sma_20.value") is not None and row["resolution"] in ("1m", "5m") for row in result["rows"])


def test_scope_ties_and_absent_values(screener: str) -> None:
    ids = ["BTCUSDT.SIM", "ETHUSDT.SIM", "NOT_HELD.SIM"]
    everything = screened(
        screener, definition(resolutions=list(RESOLUTIONS), instrument_ids=ids, filter=None, sort=[], limit=1000)
    )
    # Unknown ids are ignored; an empty sort orders by instrument_id, then resolution by duration.
    assert everything["evaluated"] == everything["matched"] == 14
    assert [(r["instrument_id"], r["resolution"]) for r in everything["rows"]] == [
        (i, r) for i in ids[:2] for r in RESOLUTIONS
    ]
    # The 1d rows of a short history are still warming: ABSENT, and IS_ABSENT finds them.
    absent = screened(
        screener,
        definition(
            resolutions=list(RESOLUTIONS),
            instrument_ids=ids,
            limit=1000,
            filter={"key": "trend_200.ratio", "op": "IS_ABSENT"},
            sort=[],
        ),
    )
    assert {r["resolution"] for r in absent["rows"]} >= {"1d"}
    assert all(r["values"]["trend_200.ratio"]["kind"] == "ABSENT" for r in absent["rows"])


def test_equal_definitions_share_an_id_and_a_different_one_does_not(screener: str) -> None:
    one, two = screened(screener, definition()), screened(screener, definition(limit=11))
    assert one["screen_id"] == screened(screener, definition())["screen_id"] != two["screen_id"]


#: Each bad body: what it changes, then the symbol and a fragment the detail must hold.
BAD = {
    "unknown top-level key": ({"colour": "red"}, "UNKNOWN_BODY_KEYS", "unknown keys colour; allowed keys: version"),
    "unknown feature key": (
        {"filter": {"key": "rsi_15.value", "op": "GT", "value": "1"}},
        "INVALID_BODY",
        '$.filter.key: row key "rsi_15.value" is not in the registry; allowed: ',
    ),
    "unknown operator": ({"filter": {"key": "rsi_14.value", "op": "ABOUT", "value": "1"}}, "INVALID_BODY", "ABOUT"),
    "unknown member": (
        {"filter": {"key": "rsi_14.value", "op": "GT", "value": "1", "x": 1}},
        "INVALID_BODY",
        "$.filter",
    ),
    "a float literal": ({"filter": {"key": "rsi_14.value", "op": "GT", "value": 50.5}}, "INVALID_BODY", "50.5"),
    "a float limit": ({"limit": 10.0}, "INVALID_BODY", "$.limit"),
    "an exponent decimal": (
        {"filter": {"key": "rsi_14.value", "op": "GT", "value": "5e1"}},
        "INVALID_BODY",
        "$.filter.value",
    ),
    "an unknown resolution": ({"resolutions": ["2h"]}, "INVALID_BODY", "$.resolutions[0]"),
    "limit 0": ({"limit": 0}, "INVALID_BODY", "$.limit"),
    "limit 1001": ({"limit": 1001}, "INVALID_BODY", "$.limit"),
    "an unknown sort key": ({"sort": [{"key": "nope.value", "direction": "ASC"}]}, "INVALID_BODY", "$.sort[0].key"),
    "a bad direction": ({"sort": [{"key": "rsi_14.value", "direction": "UP"}]}, "INVALID_BODY", "$.sort[0]"),
    "low above high": (
        {"filter": {"key": "rsi_14.value", "op": "BETWEEN", "low": "60", "high": "40"}},
        "INVALID_BODY",
        "$.filter",
    ),
    "a bad as_of": ({"as_of": "yesterday"}, "INVALID_BODY", "$.as_of"),
    "a wrong schema id": ({"schema_id": "svc.screen_result"}, "INVALID_BODY", "$.schema_id"),
}


@pytest.mark.parametrize("case", BAD)
def test_bad_definitions_are_refused_naming_what_was_wrong(screener: str, case: str) -> None:
    change, symbol, fragment = BAD[case]
    status, body = post(screener + ROUTE, definition(**change))
    detail = envelope((status, body), 400, symbol)
    assert detail.startswith("POST /v2/screener/screen: ") and fragment in detail, detail


def test_a_missing_field_not_json_and_oversized_bodies_are_refused(screener: str) -> None:
    without = definition()
    del without["limit"]
    assert 'missing member "limit"' in envelope(post(screener + ROUTE, without), 400, "INVALID_BODY")
    envelope(post(screener + ROUTE, b"{not json"), 400, "INVALID_BODY")
    envelope(post(screener + ROUTE, b"[1, 2]"), 400, "INVALID_BODY")
    envelope(post(screener + ROUTE, b'{"limit": 1, "limit": 2}'), 400, "INVALID_BODY")
    assert "larger than" in envelope(post(screener + ROUTE, b" " * (2 << 20)), 400, "INVALID_BODY")
