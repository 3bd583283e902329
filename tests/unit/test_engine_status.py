"""The engine status producer: every row of the spec's lifecycle table, every refused move,
counters that only grow, per-authority counters sorted, and schema-valid documents."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import pytest

from reference.wire_validator import validate
from spine.node.hydration import IllegalTransition
from spine.node.status import AUTHORITY_COUNTERS, COUNTERS, EngineStatusProducer

TS = 1_700_000_220_000_000_000
STATES = ("STARTING", "RUNNING", "CHECKPOINTED", "COMPLETED", "FAILED")
# The spec's table: (from, to) -> the producer method that performs it.
TABLE: dict[tuple[str, str], Callable[[EngineStatusProducer], None]] = {
    ("STARTING", "RUNNING"): EngineStatusProducer.begin,
    ("RUNNING", "CHECKPOINTED"): EngineStatusProducer.checkpoint,
    ("CHECKPOINTED", "RUNNING"): EngineStatusProducer.resume,
    ("RUNNING", "COMPLETED"): EngineStatusProducer.finish,
    ("RUNNING", "FAILED"): lambda p: p.fail("disk full"),
}
MOVES: dict[str, Callable[[EngineStatusProducer], None]] = {
    "begin": EngineStatusProducer.begin,
    "checkpoint": EngineStatusProducer.checkpoint,
    "resume": EngineStatusProducer.resume,
    "finish": EngineStatusProducer.finish,
    "fail": lambda p: p.fail("boom"),
}
TARGET = {
    "begin": "RUNNING",
    "checkpoint": "CHECKPOINTED",
    "resume": "RUNNING",
    "finish": "COMPLETED",
    "fail": "FAILED",
}
SOURCE = {
    "begin": "STARTING",
    "checkpoint": "RUNNING",
    "resume": "CHECKPOINTED",
    "finish": "RUNNING",
    "fail": "RUNNING",
}
PATH_TO = {
    "STARTING": [],
    "RUNNING": ["begin"],
    "CHECKPOINTED": ["begin", "checkpoint"],
    "COMPLETED": ["begin", "finish"],
    "FAILED": ["begin", "fail"],
}


def checked(document: dict[str, Any]) -> dict[str, Any]:
    validate(document, "svc.engine_status")
    return document


def producer_in(state: str, run_id: str | None = "run-0001") -> EngineStatusProducer:
    producer = EngineStatusProducer(run_id)
    for move in PATH_TO[state]:
        MOVES[move](producer)
    assert producer.lifecycle == state
    return producer


def test_a_new_producer_is_starting_with_zero_counters() -> None:
    doc = checked(EngineStatusProducer("run-0001").document(TS))
    assert doc == {
        "version": "spine.v2",
        "schema_id": "svc.engine_status",
        "schema_version": 1,
        "run_id": "run-0001",
        "lifecycle": "STARTING",
        "ts_event": str(TS),
        "counters": dict.fromkeys(COUNTERS, 0),
        "authorities": [],
        "last_error": None,
    }
    assert checked(EngineStatusProducer(None).document(0))["run_id"] is None


@pytest.mark.parametrize(("edge", "move"), list(TABLE.items()), ids=[f"{a}->{b}" for a, b in TABLE])
def test_every_row_of_the_lifecycle_table(edge: tuple[str, str], move: Callable[[EngineStatusProducer], None]) -> None:
    producer = producer_in(edge[0])
    move(producer)
    assert producer.lifecycle == edge[1]
    assert checked(producer.document(TS))["lifecycle"] == edge[1]


# Every (state, method) pair but the table's own rows: ``resume`` is not a second ``begin``.
REFUSED = [(state, name) for state, name in itertools.product(STATES, MOVES) if state != SOURCE[name]]


@pytest.mark.parametrize(("state", "move"), REFUSED, ids=[f"{s}-{m}" for s, m in REFUSED])
def test_every_move_outside_the_table_is_refused(state: str, move: str) -> None:
    producer = producer_in(state)
    before = producer.document(TS)
    with pytest.raises(IllegalTransition, match=f"{state} -> {TARGET[move]}") as info:
        MOVES[move](producer)
    assert (info.value.from_state, info.value.to_state) == (state, TARGET[move])
    assert producer.document(TS) == before
    assert isinstance(info.value, ValueError)


def test_the_refused_moves_cover_everything_but_the_table() -> None:
    assert {(SOURCE[m], TARGET[m]) for m in MOVES} == set(TABLE)
    assert len(REFUSED) + len(TABLE) == len(STATES) * len(MOVES)


def test_a_run_can_checkpoint_and_resume_repeatedly() -> None:
    producer = producer_in("RUNNING")
    for _ in range(3):
        producer.checkpoint()
        producer.resume()
    producer.finish()
    assert checked(producer.document(TS))["lifecycle"] == "COMPLETED"


def test_failed_carries_last_error_and_needs_one() -> None:
    producer = producer_in("RUNNING")
    with pytest.raises(ValueError, match="last_error"):
        producer.fail("")
    assert producer.lifecycle == "RUNNING"
    producer.fail("catalog volume not writable")
    doc = checked(producer.document(TS))
    assert (doc["lifecycle"], doc["last_error"]) == ("FAILED", "catalog volume not writable")


def test_record_error_counts_and_keeps_the_latest() -> None:
    producer = producer_in("RUNNING")
    producer.record_error("bar refused")
    producer.record_error("history timeout")
    doc = checked(producer.document(TS))
    assert (doc["counters"]["errors"], doc["last_error"], doc["lifecycle"]) == (2, "history timeout", "RUNNING")
    with pytest.raises(ValueError):
        producer.record_error("")


# counters


def test_counters_add_and_set() -> None:
    producer = producer_in("RUNNING")
    for k, name in enumerate(COUNTERS):
        producer.add(name)
        producer.add(name, k)
    producer.set_counter("bars_accepted", 100)
    doc = checked(producer.document(TS))
    assert doc["counters"] == {
        "bars_accepted": 100,
        "bars_rejected": 2,
        "signals_emitted": 3,
        "orders_submitted": 4,
        "fills": 5,
        "errors": 6,
    }
    assert producer.counter("fills") == 5


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda p: p.add("bars_accepted", -1), "only grows"),
        (lambda p: p.set_counter("bars_accepted", 4), "only grows"),
        (lambda p: p.set_counter("bars_accepted", 2**63), "only grows"),
        (lambda p: p.set_counter("fills", True), "only grows"),
        (lambda p: p.add("bars", 1), "not an engine counter"),
        (lambda p: p.add_authority("EXTERNAL", "gaps", -1), "only grows"),
        (lambda p: p.set_authority("EXTERNAL", "gaps", 1), "only grows"),
        (lambda p: p.add_authority("", "gaps"), "non-empty"),
        (lambda p: p.add_authority("EXTERNAL", "holes"), "not an authority counter"),
    ],
)
def test_counter_refusals_change_nothing(call: Callable[[Any], None], match: str) -> None:
    producer = EngineStatusProducer("r", authorities=["EXTERNAL"])
    producer.set_counter("bars_accepted", 5)
    producer.set_authority("EXTERNAL", "gaps", 2)
    before = producer.document(TS)
    with pytest.raises(ValueError, match=match):
        call(producer)
    assert producer.document(TS) == before


def test_authorities_are_reported_from_the_start_and_sorted() -> None:
    producer = EngineStatusProducer("r", authorities=["SIM.INTERNAL", "SIM.EXTERNAL"])
    zero: dict[str, Any] = dict.fromkeys(AUTHORITY_COUNTERS, 0)
    assert checked(producer.document(TS))["authorities"] == [
        {"authority": "SIM.EXTERNAL", **zero},
        {"authority": "SIM.INTERNAL", **zero},
    ]
    producer.begin()
    producer.add_authority("SIM.INTERNAL", "duplicates", 2)
    producer.add_authority("SIM.EXTERNAL", "gaps")
    producer.set_authority("SIM.EXTERNAL", "out_of_order", 7)
    producer.add_authority("BINANCE.EXTERNAL", "gaps", 3)  # first seen here
    doc = checked(producer.document(TS))
    assert doc["authorities"] == [
        {"authority": "BINANCE.EXTERNAL", "gaps": 3, "duplicates": 0, "out_of_order": 0},
        {"authority": "SIM.EXTERNAL", "gaps": 1, "duplicates": 0, "out_of_order": 7},
        {"authority": "SIM.INTERNAL", "gaps": 0, "duplicates": 2, "out_of_order": 0},
    ]


def test_counters_stay_writable_after_a_terminal_state() -> None:
    producer = producer_in("COMPLETED")
    producer.add("bars_accepted", 3)  # late events are still real counts
    assert checked(producer.document(TS))["counters"]["bars_accepted"] == 3


@pytest.mark.parametrize("ts", [-1, 2**64, True])
def test_a_document_time_outside_u64_nanoseconds_is_refused(ts: Any) -> None:
    with pytest.raises(ValueError, match="nanoseconds"):
        EngineStatusProducer("r").document(ts)


def test_documents_in_every_state_validate() -> None:
    for state in STATES:
        producer = producer_in(state)
        producer.add("bars_accepted", 3)
        producer.add_authority("SIM.EXTERNAL", "gaps")
        checked(producer.document(TS))
