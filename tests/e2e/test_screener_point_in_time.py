"""Point-in-time screens (``as_of`` in the definition) on a real screener over a real node: the
result equals a screen over a screener fed exactly the node's bars up to ``as_of`` (a fresh
``Rows`` in this process, closing them one minute at a time), byte for byte; it does not move
as later bars close; before any bar every value is ABSENT WARMING_UP; an ``as_of`` ahead of the
screener and a node that cannot be read are refused."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from nodes import envelope, get, post, running_node, stop, wait_for
from screeners import screener, spawn_screener

from reference.wire_validator import validate
from spine.screener.node_client import bar_columns
from spine.screener.rows import RESOLUTIONS, Rows
from spine.screener.screens import evaluate

__all__ = ["screener"]  # the fixture, imported for this module's tests

ROUTE = "/v2/screener/screen"
IDS = ["BTCUSDT.SIM", "ETHUSDT-PERP.SIM", "SOLUSDT.SIM"]
MINUTE = 60 * 10**9
#: Bars the node must hold before an ``as_of`` is chosen inside its history.
HISTORY = 120
STEPS = {
    "1m": MINUTE,
    "5m": 5 * MINUTE,
    "15m": 15 * MINUTE,
    "30m": 30 * MINUTE,
    "1h": 60 * MINUTE,
    "4h": 240 * MINUTE,
    "1d": 1440 * MINUTE,
}


def definition(as_of: int | None, **fields: Any) -> dict[str, Any]:
    return {
        "version": "spine.v2",
        "schema_id": "svc.screen_definition",
        "schema_version": 1,
        "resolutions": list(RESOLUTIONS),
        "instrument_ids": IDS,
        "filter": None,
        "sort": [{"key": "rsi_14.value", "direction": "DESC"}],
        "limit": 1000,
        "as_of": None if as_of is None else str(as_of),
        **fields,
    }


def screened(url: str, body: dict[str, Any]) -> dict[str, Any]:
    status, result = post(url + ROUTE, body)
    assert status == 200, result
    validate(result)
    return result


def node_bars(base: str, iid: str, end: int | None = None) -> tuple[str, list[dict[str, Any]]]:
    """The node's 1-minute bars of ``iid`` on its live channel (closing at or before ``end``)."""
    query = f"/v2/bars?instrument_id={iid}&limit=5000" + ("" if end is None else f"&end={end}")
    status, page = get(base + query)
    assert status == 200, page
    bars = page["bars"]
    while page["next_cursor"] is not None:
        page = get(base + query + f"&cursor={page['next_cursor']}")[1]
        bars += page["bars"]
    return page["channel"], bars


def fed_exactly(base: str, as_of: int) -> Rows:
    """A screener's rows fed the node's bars up to ``as_of`` one close at a time, as it folds
    live closes: the independent computation a point-in-time screen must equal."""
    refs = {ref["instrument_id"]: ref for ref in get(base + "/v2/instruments?limit=1000")[1]["items"]}
    rows = Rows()
    for iid in IDS:
        channel, bars = node_bars(base, iid, as_of)
        assert all(int(bar["ts_event"]) <= as_of for bar in bars)
        rows.add(refs[iid], channel)
        columns = bar_columns(bars, refs[iid]["price_precision"], refs[iid]["size_precision"])
        rows.close(iid, columns)
    return rows


def chosen_as_of(base: str) -> int:
    """A minute inside the node's history, off every derived bucket's boundary, plus 30 s."""
    deadline = time.monotonic() + 60
    while len(bars := node_bars(base, IDS[0])[1]) < HISTORY and time.monotonic() < deadline:
        time.sleep(0.5)
    closes = [int(bar["ts_event"]) for bar in bars[: len(bars) * 3 // 4]]
    minute = next(ts for ts in reversed(closes) if ts % (5 * MINUTE) != 0)
    return minute + 30 * 10**9


@pytest.fixture(scope="module")
def as_of(base: str, screener: str) -> int:
    return chosen_as_of(base)


def test_a_point_in_time_screen_equals_a_screener_fed_exactly_the_bars_up_to_as_of(
    base: str, screener: str, as_of: int
) -> None:
    body = definition(as_of)
    result = screened(screener, body)
    assert result["as_of"] == str(as_of) and result["evaluated"] == result["matched"] == len(IDS) * 7
    rows = fed_exactly(base, as_of)
    expected = evaluate(json.dumps(body).encode(), rows.table(), rows.row, as_of)
    assert json.dumps(result, sort_keys=True) == json.dumps(expected, sort_keys=True)
    stood = {(r["instrument_id"], r["resolution"]): r["ts_event"] for r in result["rows"]}
    assert all(ts is None or int(ts) <= as_of for ts in stood.values())
    # Each row stands at the newest bucket closed by the minute as_of falls in (the bucket open
    # then is not closed), and the finer rows already carry values.
    minute = as_of - 30 * 10**9
    for (iid, resolution), ts in stood.items():
        step = STEPS[resolution]
        assert ts == (None if resolution in ("4h", "1d") else str(minute - minute % step)), (iid, resolution)
    assert all(
        any(v["kind"] != "ABSENT" for v in r["values"].values())
        for r in result["rows"]
        if r["resolution"] in ("1m", "5m")
    )


def test_a_point_in_time_screen_does_not_move_as_later_bars_close(base: str, screener: str, as_of: int) -> None:
    before = screened(screener, definition(as_of))
    newest = int(node_bars(base, IDS[0])[1][-1]["ts_event"])
    deadline = time.monotonic() + 30
    while int(node_bars(base, IDS[0])[1][-1]["ts_event"]) < newest + 10 * MINUTE:
        assert time.monotonic() < deadline, "the node produced no new bars"
        time.sleep(0.2)
    assert screened(screener, definition(as_of)) == before


def test_before_the_first_bar_every_value_is_warming_up(base: str, screener: str) -> None:
    first = min(int(node_bars(base, iid)[1][0]["ts_event"]) for iid in IDS)
    result = screened(screener, definition(first - MINUTE))
    assert result["evaluated"] == len(result["rows"]) == len(IDS) * 7
    for row in result["rows"]:
        assert row["ts_event"] is None
        assert {value["kind"] for value in row["values"].values()} == {"ABSENT"}
        assert {value["reason"] for value in row["values"].values()} == {"WARMING_UP"}, row


def test_every_instrument_in_scope_and_ids_not_held(screener: str, as_of: int) -> None:
    everything = screened(screener, definition(as_of, instrument_ids=None, resolutions=["1h"]))
    assert everything["evaluated"] == 48
    some = screened(screener, definition(as_of, instrument_ids=["BTCUSDT.SIM", "NOT_HELD.SIM"]))
    assert some["evaluated"] == 7 and {r["instrument_id"] for r in some["rows"]} == {"BTCUSDT.SIM"}


def test_an_as_of_ahead_of_the_screener_or_malformed_is_refused(screener: str) -> None:
    detail = envelope(post(screener + ROUTE, definition(9_000_000_000_000_000_000)), 400, "INVALID_BODY")
    assert detail.startswith(f"POST {ROUTE}: $.as_of: 9000000000000000000 is after the newest minute"), detail
    body = {**definition(None), "as_of": "12x"}
    assert "$.as_of" in envelope(post(screener + ROUTE, body), 400, "INVALID_BODY")
    body = definition(0, filter={"key": "nope.value", "op": "IS_ABSENT"})  # the grammar first, no node read
    assert "$.filter.key" in envelope(post(screener + ROUTE, body), 400, "INVALID_BODY")


def test_a_node_that_cannot_be_read_is_a_502_naming_it(tmp_path: Path) -> None:
    process = None
    try:
        (tmp_path / "screener").mkdir()
        with running_node(tmp_path, warm_bars=100) as node:
            process, url = spawn_screener(tmp_path / "screener", node)
            wait_for(process, lambda: get(url + "/v2/screener/health")[1]["processed"] > 0, "folding closes")
            as_of = int(
                get(url + "/v2/screener/rows?instrument_id=BTCUSDT.SIM&resolution=1m")[1]["rows"][0]["ts_event"]
            )
            screened(url, definition(as_of))
        detail = envelope(post(url + ROUTE, definition(as_of)), 502, "UPSTREAM_UNAVAILABLE")
        assert detail.startswith(f"POST {ROUTE}: as_of {as_of} ") and "node-1 could not be read" in detail, detail
        assert node.split("//")[1] not in detail
    finally:
        if process is not None:
            stop(process)
