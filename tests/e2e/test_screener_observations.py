"""``GET /v2/screener/observations`` on a real screener over a real node at 600x: the patterns
seen as bars close validate against the schemas (stock validator), each one's values make its
pattern, its identity is the stated one, pages filter and follow one another without a double,
a kept observation reads the same every time, and bad queries are 400 naming what was wrong."""

from __future__ import annotations

import time
from decimal import Decimal
from typing import Any

import pytest
from nodes import envelope, get
from screeners import ok, screener

from reference.canonical_json import identity

__all__ = ["screener"]  # the fixture, imported for this module's tests

ROUTE = "/v2/screener/observations"


def everything(url: str, query: str = "") -> list[dict[str, Any]]:
    page = ok(url + ROUTE + f"?limit=50{query}")
    items = list(page["items"])
    while page["next_cursor"] is not None:
        page = ok(url + ROUTE + f"?limit=50{query}&cursor={page['next_cursor']}")
        items += page["items"]
    return items


@pytest.fixture(scope="module")
def seen(screener: str) -> list[dict[str, Any]]:
    """The observations once there are a few dozen (closes at 600x make them quickly)."""
    deadline = time.monotonic() + 60
    while len(ok(screener + ROUTE + "?limit=1000")["items"]) < 30:
        assert time.monotonic() < deadline, "fewer than 30 observations within 60 s of closes at 600x"
        time.sleep(0.2)
    return everything(screener)


def number(document: dict[str, Any], key: str) -> Decimal:
    return Decimal(document["values"][key]["value"])


def test_each_observation_is_what_its_values_say(seen: list[dict[str, Any]]) -> None:
    assert len(seen) >= 30
    for o in seen:
        assert o["observation_id"] == identity(
            "observation_id", {k: o[k] for k in ("instrument_id", "resolution", "pattern", "ts_event")}
        )
        pattern = o["pattern"]
        if pattern == "RSI_ENTER_OVERBOUGHT":
            assert number(o, "rsi_14.value") > 70
        elif pattern == "RSI_LEAVE_OVERBOUGHT":
            assert number(o, "rsi_14.value") <= 70
        elif pattern == "RSI_ENTER_OVERSOLD":
            assert number(o, "rsi_14.value") < 30
        elif pattern == "RSI_LEAVE_OVERSOLD":
            assert number(o, "rsi_14.value") >= 30
        elif pattern == "MA_CROSS_UP":
            assert number(o, "ema_20.value") > number(o, "sma_20.value")
        elif pattern == "MA_CROSS_DOWN":
            assert number(o, "ema_20.value") < number(o, "sma_20.value")
        elif pattern == "MACD_SIGNAL_CROSS_UP":
            assert number(o, "macd_12_26_9.line") > number(o, "macd_12_26_9.signal")
        elif pattern == "MACD_SIGNAL_CROSS_DOWN":
            assert number(o, "macd_12_26_9.line") < number(o, "macd_12_26_9.signal")
        elif pattern == "BOLLINGER_BREAK_UP":
            assert number(o, "bb_20_2.percent_b") > 1
        elif pattern == "BOLLINGER_BREAK_DOWN":
            assert number(o, "bb_20_2.percent_b") < 0
    assert len({o["observation_id"] for o in seen}) == len(seen)


def test_kept_observations_read_the_same_every_time(screener: str, seen: list[dict[str, Any]]) -> None:
    again = {o["observation_id"]: o for o in everything(screener)}
    assert all(again.get(o["observation_id"], o) == o for o in seen)
    assert [o["observation_id"] for o in seen] == [i for i in again if i in {o["observation_id"] for o in seen}]


def test_filters_by_instrument_resolution_and_time(screener: str, seen: list[dict[str, Any]]) -> None:
    first = seen[0]
    mine = everything(screener, f"&instrument_id={first['instrument_id']}&resolution={first['resolution']}")
    assert first in mine and all(
        (o["instrument_id"], o["resolution"]) == (first["instrument_id"], first["resolution"]) for o in mine
    )
    ts = sorted(int(o["ts_event"]) for o in seen)
    low, high = ts[len(ts) // 4], ts[3 * len(ts) // 4]
    window = everything(screener, f"&start={low}&end={high}")
    assert {o["observation_id"] for o in window} >= {
        o["observation_id"] for o in seen if low <= int(o["ts_event"]) <= high
    }
    assert all(low <= int(o["ts_event"]) <= high for o in window)


REFUSALS = {
    "?resolution=2h": (400, "INVALID_PARAMETER"),
    "?start=10&end=5": (400, "INVALID_PARAMETER"),
    "?start=-1": (400, "INVALID_PARAMETER"),
    "?end=1.5": (400, "INVALID_PARAMETER"),
    "?limit=0": (400, "LIMIT_OUT_OF_RANGE"),
    "?limit=1001": (400, "LIMIT_OUT_OF_RANGE"),
    "?cursor=forged": (400, "INVALID_CURSOR"),
    "?instrument_id=NOPE.SIM": (404, "NOT_FOUND"),
    "?instrument_id=bad%20id": (400, "INVALID_INSTRUMENT_ID"),
    "?pattern=MA_CROSS_UP": (400, "UNKNOWN_PARAMETER"),
}


@pytest.mark.parametrize("query", REFUSALS)
def test_bad_queries_are_refused(screener: str, query: str) -> None:
    envelope(get(screener + ROUTE + query), *REFUSALS[query])


def test_a_cursor_is_bound_to_its_filters(screener: str, seen: list[dict[str, Any]]) -> None:
    cursor = ok(screener + ROUTE + "?limit=1")["next_cursor"]
    assert cursor is not None
    envelope(get(screener + ROUTE + f"?limit=1&resolution=1m&cursor={cursor}"), 400, "INVALID_CURSOR")
