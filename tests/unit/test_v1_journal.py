"""The v1 journal: run-scoped cursors, the kept window, resume, and resync when a cursor
cannot be honoured (ahead of the run, fallen out of the window, or events dropped)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from spine.node.v1_stream import Backlog, Journal
from spine.wire.projection import frame


def publish(journal: Journal, count: int, instrument: str = "BTCUSDT.SIM") -> None:
    for k in range(count):
        document = {
            "version": "spine.v2",
            "schema_id": "svc.trade_tick",
            "schema_version": 1,
            "instrument_id": instrument,
            "k": k,
        }
        journal.record("trade", instrument, frame("trade", document))


def messages(raw: bytes | Backlog) -> list[dict[str, Any]]:
    if isinstance(raw, Backlog):
        raw = b"".join(iter(lambda: raw.take(1 << 20), b""))  # type: ignore[union-attr]
    out = []
    for message in raw.decode().split("\n\n"):
        if not message:
            continue
        fields = dict(line.split(": ", 1) for line in message.split("\n"))
        out.append({**fields, "data": json.loads(fields["data"])})
    return out


def test_events_get_increasing_cursors_and_carry_the_v2_document() -> None:
    journal = Journal("run-1")
    publish(journal, 3)
    subscription, backlog = journal.open(0, None)
    got = messages(backlog)
    assert [m["id"] for m in got] == ["1", "2", "3"]
    assert got[2]["data"] == {
        "version": "spine.v1",
        "schema_id": "v1.stream_event",
        "schema_version": 1,
        "run_id": "run-1",
        "cursor": "3",
        "kind": "trade",
        "document": {
            "version": "spine.v2",
            "schema_id": "svc.trade_tick",
            "schema_version": 1,
            "instrument_id": "BTCUSDT.SIM",
            "k": 2,
        },
    }
    subscription.close()


def test_resume_gives_what_follows_the_cursor_then_live_events() -> None:
    journal = Journal("run-1")
    publish(journal, 5)
    subscription, backlog = journal.open(3, None)
    assert [m["id"] for m in messages(backlog)] == ["4", "5"]
    publish(journal, 1)
    assert [m["id"] for m in messages(asyncio.run(subscription.next(timeout=0)))] == ["6"]


def test_a_filtered_resume_keeps_only_its_instrument() -> None:
    journal = Journal(None)
    publish(journal, 2, "A.SIM")
    publish(journal, 2, "B.SIM")
    _, backlog = journal.open(0, "B.SIM")
    assert [m["id"] for m in messages(backlog)] == ["3", "4"]


def test_cursors_outside_the_window_get_resync() -> None:
    journal = Journal("run-1", capacity=4)
    publish(journal, 10)  # keeps 7..10
    assert journal.oldest == 7
    _, backlog = journal.open(6, None)  # 7.. is all still kept
    assert [m["id"] for m in messages(backlog)] == ["7", "8", "9", "10"]
    (expired,) = messages(journal.open(5, None)[1])  # 6 is gone
    assert expired["event"] == "resync" and "id" not in expired
    assert expired["data"] == {
        "version": "spine.v1",
        "schema_id": "v1.resync",
        "schema_version": 1,
        "run_id": "run-1",
        "requested": "5",
        "oldest": "7",
        "latest": "10",
        "reason": "CURSOR_EXPIRED",
    }
    (ahead,) = messages(journal.open(11, None)[1])
    assert ahead["data"]["reason"] == "CURSOR_AHEAD"


def test_a_run_numbers_from_its_base_and_refuses_cursors_below_it_even_before_any_event() -> None:
    journal = Journal("run-2", base=1_000)
    (before,) = messages(journal.open(990, None)[1])  # an earlier run's cursor, nothing published yet
    assert before["data"]["reason"] == "CURSOR_EXPIRED"
    publish(journal, 2)
    _, backlog = journal.open(1_000, None)  # the run's start: everything it kept
    assert [m["id"] for m in messages(backlog)] == ["1001", "1002"]
    (earlier,) = messages(journal.open(999, None)[1])
    assert earlier["data"]["reason"] == "CURSOR_EXPIRED"


def test_a_backlog_is_read_piece_by_piece_and_resyncs_when_its_frames_leave_the_journal() -> None:
    journal = Journal("run-1", capacity=8)
    publish(journal, 8)
    _, backlog = journal.open(0, None)
    piece = messages(backlog.take(1))  # one whole frame at least
    assert [m["id"] for m in piece] == ["1"]
    publish(journal, 4)  # 2..4 leave the journal before the client takes them
    (expired,) = messages(backlog.take(1 << 20))
    assert expired["event"] == "resync" and expired["data"]["reason"] == "CURSOR_EXPIRED"
    assert expired["data"]["requested"] == "1"
    assert backlog.take(1 << 20) == b""  # then live events (9.. are in the subscription)
