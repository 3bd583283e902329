"""Point-in-time rows: ``Rows.warm`` through an instant over a longer history (its observed
spans reaching past it) equals rows fed only the bars up to that instant one close at a time,
at every resolution, whatever bucket boundary the instant falls on; the refusals a
point-in-time screen makes before it reads any node; that it reads only the instruments in its
scope; and that a node it cannot read fails it whole."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import numpy as np
import pytest
from test_features import MINUTE, make_bars

from spine.http.errors import HttpError
from spine.screener.as_of import MAX_INSTRUMENTS, is_point_in_time, screen_as_of
from spine.screener.node_client import UpstreamError
from spine.screener.rows import RESOLUTIONS, Rows

REF = {"instrument_id": "BTCUSDT.SIM", "price_precision": 2, "size_precision": 3}
N = 2_000
#: One minute without a candle inside the observed span (an EXTERNAL gap).
MISSING = 700


def history() -> tuple[dict[str, Any], dict[str, Any]]:
    """Bars with ``sequence`` (one minute missing) and the coverage the node states for them."""
    cols = make_bars(11, N)
    keep = np.arange(N) != MISSING
    bars = {k: np.ascontiguousarray(cols[k][keep]) for k in ("ts_event", "open", "high", "low", "close", "volume")}
    bars["sequence"] = np.arange(1, keep.sum() + 1, dtype=np.uint64)
    first, last = int(bars["ts_event"][0]), int(bars["ts_event"][-1])
    return bars, {"observed": [{"start": str(first - MINUTE), "end": str(last)}]}


def rows_of(rows: Rows) -> list[tuple[Any, ...]]:
    return [
        (r["ts_event"], json.dumps(r["values"], sort_keys=True))
        for r in (rows.row(REF["instrument_id"], resolution) for resolution in RESOLUTIONS)
    ]


@pytest.mark.parametrize("offset", [0, 30 * 10**9])
@pytest.mark.parametrize("at", [MISSING - 5, 1_199, 1_437, 1_500, 1_679, N - 1])
def test_a_warm_through_an_instant_equals_closing_exactly_the_bars_up_to_it(at: int, offset: int) -> None:
    bars, coverage = history()
    through = int(make_bars(11, N)["ts_event"][at]) + offset
    warmed = Rows()
    warmed.add(REF, "EXTERNAL")
    warmed.warm(REF["instrument_id"], bars, coverage, through=through)
    fed = Rows()
    fed.add(REF, "EXTERNAL")
    kept = bars["ts_event"] <= through
    fed.close(REF["instrument_id"], {k: column[kept] for k, column in bars.items()})
    assert rows_of(warmed) == rows_of(fed)
    stood = [row[0] for row in rows_of(warmed)]
    assert all(ts is None or int(ts) <= through for ts in stood)
    assert warmed.newest == fed.newest <= through


def test_an_instant_before_every_bar_leaves_every_row_warming_up() -> None:
    bars, coverage = history()
    rows = Rows()
    rows.add(REF, "EXTERNAL")
    rows.warm(REF["instrument_id"], bars, coverage, through=int(bars["ts_event"][0]) - MINUTE)
    for resolution in RESOLUTIONS:
        row = rows.row(REF["instrument_id"], resolution)
        assert row["ts_event"] is None
        assert {value.get("reason") for value in row["values"].values()} == {"WARMING_UP"}


def definition(as_of: str | None, instrument_ids: list[str] | None = None) -> bytes:
    return json.dumps(
        {
            "version": "spine.v2",
            "schema_id": "svc.screen_definition",
            "schema_version": 1,
            "resolutions": ["1m"],
            "instrument_ids": instrument_ids,
            "filter": None,
            "sort": [],
            "limit": 10,
            "as_of": as_of,
        }
    ).encode()


def test_which_definitions_are_point_in_time() -> None:
    assert is_point_in_time(definition("1")) and not is_point_in_time(definition(None))
    assert not is_point_in_time(b'{"as_of": 1}')  # left to the grammar check, which refuses it


def held(instruments: int, newest: int | None) -> Rows:
    rows = Rows()
    for k in range(instruments):
        rows.add({**REF, "instrument_id": f"I{k}.SIM"}, "EXTERNAL")
    rows.newest = newest
    return rows


@pytest.mark.parametrize(
    ("body", "rows", "fragment"),
    [
        (
            definition(str(60 * MINUTE + 1)),
            held(1, 60 * MINUTE),
            f"$.as_of: {60 * MINUTE + 1} is after the newest minute this screener has folded ({60 * MINUTE})",
        ),
        (definition("0"), held(1, None), "$.as_of: 0 is after the newest minute this screener has folded (none yet)"),
        (
            definition("0"),
            held(MAX_INSTRUMENTS + 1, MINUTE),
            f"$.instrument_ids: a point-in-time screen reads at most "
            f"{MAX_INSTRUMENTS} instruments' history; "
            f"{MAX_INSTRUMENTS + 1} are in scope",
        ),
        (definition("0x"), held(1, MINUTE), "$.as_of"),
    ],
)
def test_refusals_before_any_node_is_read(body: bytes, rows: Rows, fragment: str) -> None:
    with pytest.raises(HttpError) as refused:
        asyncio.run(screen_as_of(body, [], rows, 4))
    assert refused.value.symbol == "INVALID_BODY" and fragment in refused.value.text, refused.value.text


def test_the_cap_counts_the_instruments_in_scope_not_those_held() -> None:
    result = asyncio.run(screen_as_of(definition("0", ["NOT_HELD.SIM"]), [], held(MAX_INSTRUMENTS + 1, MINUTE), 4))
    assert result["evaluated"] == 0 and result["rows"] == [] and result["as_of"] == "0"


class FakeFeed:
    """A node feed's face as a point-in-time screen uses it: its instruments, its channel and
    their history (``history`` of a down node fails as the node client does)."""

    def __init__(self, ids: list[str], down: bool = False) -> None:
        self.instruments = {iid: {**REF, "instrument_id": iid} for iid in ids}
        self.channel = "EXTERNAL"
        self.down = down
        self.asked: list[tuple[str, int | None]] = []

    async def history(self, instrument: dict[str, Any], end: int | None = None) -> tuple[Any, Any]:
        self.asked.append((instrument["instrument_id"], end))
        if self.down:
            raise UpstreamError("http://127.0.0.1:1", "GET /v2/bars", "ConnectError: refused")
        bars, coverage = history()
        return bars, coverage


def test_only_the_instruments_in_scope_are_read_each_through_as_of() -> None:
    feeds = [FakeFeed(["I0.SIM", "I1.SIM"]), FakeFeed(["I2.SIM", "I3.SIM"])]
    rows = held(4, int(history()[0]["ts_event"][-1]))
    as_of = int(history()[0]["ts_event"][1_000])
    body = definition(str(as_of), ["I3.SIM", "I0.SIM", "I9.SIM"])
    result = asyncio.run(screen_as_of(body, feeds, rows, 2))  # type: ignore[arg-type]
    assert [feed.asked for feed in feeds] == [[("I0.SIM", as_of)], [("I3.SIM", as_of)]]
    assert [(row["instrument_id"], row["ts_event"]) for row in result["rows"]] == [
        ("I0.SIM", str(as_of)),
        ("I3.SIM", str(as_of)),
    ]


def test_a_node_that_cannot_be_read_fails_the_whole_screen_naming_it() -> None:
    feeds = [FakeFeed(["I0.SIM"]), FakeFeed(["I1.SIM"], down=True)]
    with pytest.raises(HttpError) as refused:
        asyncio.run(screen_as_of(definition(str(MINUTE)), feeds, held(2, MINUTE), 4))  # type: ignore[arg-type]
    assert refused.value.symbol == "UPSTREAM_UNAVAILABLE" and refused.value.status == 502
    assert (
        f"as_of {MINUTE} " in refused.value.text
        and "http://127.0.0.1:1 could not be read (GET /v2/bars: " in refused.value.text
    ), refused.value.text
