"""The simulated venue hands its events over a burst at a time: the framework's data queue
drains whatever is queued in one loop step, so a burst handed over at once would hold the
loop (and every HTTP request on it) for its whole length."""

from __future__ import annotations

from typing import Any

from spine.node.sim.client import BURST, SimDataClient
from spine.node.sim.market import MINUTE_NS

START = 29_000_000 * MINUTE_NS


def venue(events_per_instrument: int, instruments: int = 3) -> tuple[SimDataClient, list[Any]]:
    """A client with only what ``emit_until`` reads (no framework behind it)."""
    client = SimDataClient.__new__(SimDataClient)
    handed: list[Any] = []
    client._emitted_to = START
    client._instruments = list(range(instruments))

    def minute_events(instrument: int, end: int, after: int, until: int) -> list[tuple[int, Any]]:
        step = MINUTE_NS // (events_per_instrument + 1)
        return [
            (end - MINUTE_NS + (k + 1) * step, (instrument, end, k))
            for k in range(events_per_instrument)
            if after < end - MINUTE_NS + (k + 1) * step <= until
        ]

    client._minute_events = minute_events  # type: ignore[method-assign]
    client._handle_data = handed.append  # type: ignore[method-assign]
    return client, handed


def test_a_flood_is_handed_over_in_bursts_with_a_pause_after_each() -> None:
    client, handed = venue(events_per_instrument=300)
    steps = []
    for count in client.emit_until(START + 5 * MINUTE_NS):
        steps.append((count, len(handed)))
    assert len(handed) == 5 * 3 * 300  # nothing lost
    before = 0
    for count, total in steps:
        assert count <= BURST and total - before == count  # each pause follows at most one burst
        before = total
    # In time order across instruments, as a venue's feed is.
    assert [e[1] for e in handed] == sorted(e[1] for e in handed)


def test_a_minute_s_generation_pauses_after_each_instrument() -> None:
    client, handed = venue(events_per_instrument=0, instruments=4)
    # Minutes closing at +1, +2 and the one still open (+3): a pause per instrument in each.
    assert list(client.emit_until(START + 2 * MINUTE_NS)) == [0] * 12
    assert handed == []


def test_nothing_is_emitted_twice_or_when_the_clock_has_not_moved() -> None:
    client, handed = venue(events_per_instrument=10)
    list(client.emit_until(START + MINUTE_NS // 2))
    first = len(handed)
    assert list(client.emit_until(START + MINUTE_NS // 2)) == []
    list(client.emit_until(START + MINUTE_NS))
    assert len(handed) == 3 * 10 and first < len(handed)
    assert len({id(e) for e in handed}) == len(handed)
