"""``GET /v2/stream/screener`` on a real screener over a real node: the connect rows and the
live deltas validate against the schemas (stock validator), filters apply, and rows rebuilt
from a snapshot plus the stream's later events equal a later snapshot exactly. Health counts
the subscribers and what was sent."""

from __future__ import annotations

import json
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from nodes import envelope, get, stop, wait_for
from screeners import ok, pages, screener, spawn_screener

from reference.wire_validator import validate

__all__ = ["screener"]  # the fixture, imported for this module's tests

RESOLUTIONS = ("1m", "5m", "15m", "30m", "1h", "4h", "1d")
Event = tuple[int, str, dict[str, Any]]


def events(url: str, timeout: float = 15.0) -> Iterator[Event]:
    """``(id, event, document)`` of an SSE stream, as they arrive."""
    with urllib.request.urlopen(url, timeout=timeout) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        sid, name = -1, ""
        for raw in response:
            line = raw.decode().rstrip("\n")
            if line.startswith("id: "):
                sid = int(line[4:])
            elif line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                yield sid, name, json.loads(line[6:])
                sid, name = -1, ""


class StreamEnded(AssertionError):
    """The screener ended the stream (a lossless stream ends once its subscriber dropped)."""


def take_until(stream: Iterator[Event], done: Any, limit: int = 50_000) -> list[Event]:
    out = []
    for event in stream:
        out.append(event)
        if done(event) or len(out) >= limit:
            return out
    raise StreamEnded("the stream ended")


Rows = dict[tuple[str, str], dict[str, Any]]


def apply(rows: Rows, name: str, document: dict[str, Any]) -> None:
    """A client's reading of the events (the contract in docs/contract.md)."""
    key = (document["instrument_id"], document["resolution"])
    if name == "row":
        rows[key] = {"ts_event": document["ts_event"], "values": dict(document["values"])}
    elif name == "delta":
        row = rows.setdefault(key, {"ts_event": None, "values": {}})
        for op in document["operations"]:
            if op["op"] == "UPSERT":
                row["values"][op["key"]] = op["value"]
            else:
                del row["values"][op["key"]]
        row["ts_event"] = document["ts_event"]


def snapshot(url: str) -> tuple[int, Rows]:
    got = pages(url + "/v2/screener/snapshot")
    return got[0]["sequence"], {
        (r["instrument_id"], r["resolution"]): {"ts_event": r["ts_event"], "values": r["values"]}
        for page in got
        for r in page["rows"]
    }


def test_connect_rows_then_deltas_all_valid(screener: str) -> None:
    stream = events(screener + "/v2/stream/screener")
    first = take_until(stream, lambda e: e[1] != "row")
    connect = first[:-1]
    assert len(connect) == 48 * 7 and len({sid for sid, _, _ in connect}) == 1
    assert [(d["instrument_id"], d["resolution"]) for _, _, d in connect[:7]] == [
        (connect[0][2]["instrument_id"], r) for r in RESOLUTIONS
    ]
    live = first[-1:] + take_until(stream, lambda e: e[1] == "delta" and e[0] > first[-1][0] + 3)
    assert all(sid > connect[0][0] for sid, _, _ in live)
    assert {name for _, name, _ in live} <= {"row", "delta", "heartbeat"}
    for _, _, document in connect[:20] + live[:200]:
        validate(document)
    ids = [sid for sid, _, _ in live if sid >= 0]
    assert ids == sorted(ids)


def snapshot_and_stream(screener: str) -> tuple[int, Rows, int, Rows, list[Event]]:
    """A snapshot, the stream from before it to past a later snapshot, and that snapshot. A
    subscriber too slow to keep up (a loaded host) has its stream ended by the screener, as
    the contract says; the client then starts afresh, as a real one does (three tries)."""
    for _ in range(3):
        start, rows = snapshot(screener)
        stream = events(screener + "/v2/stream/screener")
        try:
            seen = take_until(stream, lambda e: e[0] > start + 5)  # subscribed, and closes are folding
            later, expected = snapshot(screener)
            # One subscriber's events come in id order: once one above `later` is here, all up to it are.
            seen += take_until(stream, lambda e: e[0] > later)
            return start, rows, later, expected, seen
        except StreamEnded:
            dropped = ok(screener + "/v2/screener/health")["egress"]["events_dropped"]
            assert dropped > 0, "the stream ended though its subscriber dropped nothing"
        finally:
            stream.close()
    raise AssertionError("the stream ended three times: the subscriber kept falling behind")


def test_a_snapshot_plus_later_events_equals_a_later_snapshot(screener: str) -> None:
    start, rows, later, expected, seen = snapshot_and_stream(screener)
    mine: Rows = {}  # from the stream alone: its connect rows, then its events
    for sid, name, document in seen:
        if sid <= later:
            apply(mine, name, document)
        if start < sid <= later:
            apply(rows, name, document)
    assert later > start
    for name, got in (("snapshot + events", rows), ("stream alone", mine)):
        differ = sorted(k for k in expected.keys() | got.keys() if got.get(k) != expected.get(k))
        assert not differ, (
            name,
            start,
            later,
            differ[:5],
            [(got.get(k), expected.get(k)) for k in differ[:1]],
            [
                (sid, n, d.get("ts_event"))
                for sid, n, d in seen
                if differ and n != "heartbeat" and (d["instrument_id"], d["resolution"]) == differ[0]
            ],
        )


def test_filters_apply_at_enqueue(screener: str) -> None:
    stream = events(screener + "/v2/stream/screener?instrument_id=BTCUSDT.SIM&resolution=1m")
    got = take_until(stream, lambda e: e[1] == "delta")
    stream.close()
    assert got[0][1] == "row" and len([e for e in got if e[1] == "row"]) == 1
    assert {(d["instrument_id"], d["resolution"]) for _, name, d in got if name != "heartbeat"} == {
        ("BTCUSDT.SIM", "1m")
    }


#: Each refused stream: the query, then the status and symbol it is answered with.
REFUSALS = {
    "?resolution=2h": (400, "INVALID_PARAMETER"),
    "?instrument_id=bad%20id": (400, "INVALID_INSTRUMENT_ID"),
    "?instrument_id=NOPE.SIM": (404, "NOT_FOUND"),
    "?channel=EXTERNAL": (400, "UNKNOWN_PARAMETER"),
}


@pytest.mark.parametrize("query", REFUSALS)
def test_bad_filters_are_refused_and_counted(screener: str, query: str) -> None:
    before = ok(screener + "/v2/screener/health")["egress"]["refused"]
    envelope(get(screener + "/v2/stream/screener" + query), *REFUSALS[query])
    assert ok(screener + "/v2/screener/health")["egress"]["refused"] == before + (query != "?channel=EXTERNAL")


def test_health_counts_subscribers_and_egress(screener: str) -> None:
    before = ok(screener + "/v2/screener/health")
    stream = events(screener + "/v2/stream/screener?resolution=1d")
    take_until(stream, lambda e: e[1] != "row" or e[2]["instrument_id"] == "ETHUSDT.SIM")
    during = ok(screener + "/v2/screener/health")["egress"]
    assert during["subscribers"] == before["egress"]["subscribers"] + 1
    assert during["accepted"] == before["egress"]["accepted"] + 1
    assert during["events_sent"] > before["egress"]["events_sent"]
    assert during["bytes_sent"] > before["egress"]["bytes_sent"]
    stream.close()
    deadline = time.monotonic() + 20
    while ok(screener + "/v2/screener/health")["egress"]["subscribers"] != before["egress"]["subscribers"]:
        assert time.monotonic() < deadline, "the closed subscriber is still counted"
        time.sleep(0.1)
    # The upstream side: one node, its stream open and accepted once.
    connections = ok(screener + "/v2/screener/health")["connections"]
    assert connections["open"] == connections["accepted"] == 1 and connections["closed"] == 0
    assert [(u["state"], u["open"], u["last_error"]) for u in connections["upstreams"]] == [("RUNNING", 1, None)]


def test_subscribers_past_the_cap_are_refused(base: str, tmp_path: Path) -> None:
    process, url = spawn_screener(tmp_path, base, config="stream_subscribers = 1\n")
    try:
        wait_for(process, lambda: get(url + "/v2/screener/health")[1]["process_state"] == "RUNNING", "running")
        stream = events(url + "/v2/stream/screener?resolution=1h")
        next(stream)
        detail = envelope(get(url + "/v2/stream/screener"), 503, "SUBSCRIBERS_FULL")
        assert "1 subscribers" in detail
        egress = ok(url + "/v2/screener/health")["egress"]
        assert (egress["subscribers"], egress["accepted"], egress["refused"]) == (1, 1, 1)
        stream.close()
    finally:
        stop(process)
    assert process.returncode == 0
