"""One venue node feeding the screener's rows: discover its instruments, warm each from its
durable 1-minute bars (a bounded number of page requests in flight), then follow its live
closes. An instrument found in the screener's checkpoint (same node, channel and precisions)
is restored from it and asks only for the bars above its watermark, unless the node's
numbering is no longer the one checkpointed (its store replaced): then it warms in full. A
close whose sequence is not the next one means bars were missed (a dropped event, a
reconnect, a node restart): the instrument catches up from the pages after the last sequence
it folded. A lost stream reconnects with exponential backoff and jitter, catching every
instrument up first; a node that is down never stops the others (each has its feed).

Closes that arrive together (a node publishes a minute's closes in one turn and sends each
subscriber one write) are folded together, their raw payloads in one Rust call
(``Rows.turn``): the reader hands over everything it took before it next waits on the socket,
so no close waits past the loop turn it arrived in, and no timer is involved. The feed keeps
the control: a close out of sequence stops the call, and the instrument catches up from the
pages before the closes after it go on. A payload the call's strict reader refuses sends the
turn down the per-event path (each payload decoded, then one ``Rows.close_many`` per run of
closes), which raises what it always raised, or takes what it always took."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any, Literal, TypeVar

import numpy as np

from spine.errors import SpineError
from spine.screener.checkpoint import Held
from spine.screener.node_client import Bars, NodeClient, UpstreamError, bar_columns
from spine.screener.rows import Rows

__all__ = ["NodeFeed"]

log = logging.getLogger("spine.screener")
T = TypeVar("T")
FeedState = Literal["STARTING", "RUNNING", "RECONNECTING", "STOPPED"]


class NodeFeed:
    """See the module docs. ``channel`` None reads the node's live channel."""

    def __init__(
        self, node: NodeClient, rows: Rows, *, channel: str | None, concurrency: int, backoff: tuple[float, float]
    ) -> None:
        self.node, self.rows = node, rows
        self.channel = channel
        self._concurrency = concurrency
        self._backoff = backoff
        self.state: FeedState = "STARTING"
        self.instruments: dict[str, dict[str, Any]] = {}
        #: Stream connections tried, and those lost (a reconnect each).
        self.connects = 0
        self.reconnects = 0
        #: Connection accounting: a stream open now; streams opened, and ended after opening;
        #: connects and warm-up reads that failed.
        self.open = False
        self.accepted = self.closed = self.refused = 0
        #: Turns of closes taken from streams (a stream that delivers resets the backoff).
        self.batches = 0
        #: Times an instrument caught up from pages after a sequence jump.
        self.catch_ups = 0
        self.last_error: str | None = None
        #: The newest close time the node offered (input lag is measured against it).
        self.offered: int | None = None
        self._warmed: set[str] = set()
        #: The checkpoint's instruments of this node not restored yet, by id.
        self.saved: dict[str, Held] = {}
        #: While warming: instruments restored from the checkpoint, bar pages and bars read.
        self.resumed = self.warm_pages = self.warm_bars = 0

    async def warm(self) -> None:
        """Discover the node's instruments and warm each not warmed yet (``UpstreamError`` if
        the node cannot be read; calling again goes on where it stopped). An instrument another
        node's feed already serves is left to it."""
        listed = await self.node.instruments()
        if self.channel is None:
            self.channel = await self._live_channel(listed)
        gate = asyncio.Semaphore(self._concurrency)

        async def one(instrument: dict[str, Any]) -> None:
            iid = instrument["instrument_id"]
            saved = self._usable(instrument)
            async with gate:
                resumed = saved is not None and await self._resume(instrument, saved)
                history = None if resumed else await self.history(instrument)
            if history is None:
                self.resumed += 1
            else:
                self.rows.warm(iid, *history)
            self.saved.pop(iid, None)
            self._warmed.add(iid)

        for instrument in listed:
            iid = instrument["instrument_id"]
            if iid in self.rows.index and iid not in self.instruments:
                log.warning("%s: %s is already fed by another node; skipped", self.node.base_url, iid)
                continue
            if iid not in self.instruments:
                self.instruments[iid] = instrument
                self.rows.add(instrument, self.channel, self.node.base_url)
        for iid in set(self.saved) - {instrument["instrument_id"] for instrument in listed}:
            log.info("%s: %s is no longer listed; its checkpoint is dropped", self.node.base_url, iid)
            del self.saved[iid]
        await asyncio.gather(*(one(self.instruments[iid]) for iid in self.instruments if iid not in self._warmed))

    def held(self) -> list[Held]:
        """The checkpoint of this node's instruments now (copies, taken in one step): those
        warmed, and those of the previous checkpoint not restored yet."""
        taken = []
        for iid, instrument in self.instruments.items():
            if iid in self._warmed:
                bars, spans = self.rows.held(iid)
                taken.append(
                    Held(
                        self.node.base_url,
                        instrument,
                        self.channel or "EXTERNAL",
                        self.rows.sequence.get(iid, 0),
                        spans,
                        bars,
                    )
                )
        return taken + [held for iid, held in self.saved.items() if iid not in self._warmed]

    async def follow(self, stop: asyncio.Event) -> None:
        """Fold the node's live closes until ``stop`` is set, reconnecting when the stream
        is lost."""
        delay = self._backoff[0]
        while not stop.is_set():
            taken = self.batches
            try:
                if await self._stream(stop):
                    return
                raise UpstreamError(self.node.name, "GET /v2/stream/bars", "the stream ended")
            except (UpstreamError, SpineError) as error:  # a refused bar too: reconnect and catch up
                self._lost(str(error))
            if self.batches > taken:
                delay = self._backoff[0]  # closes came through: back off from the start again
            if await _sleep_or_stop(stop, delay * random.uniform(0.5, 1.5)):
                break
            delay = min(delay * 2, self._backoff[1])
            try:
                for iid in list(self.instruments):
                    await self._catch_up(iid)
            except (UpstreamError, SpineError) as error:
                self._lost(str(error))
        self.state = "STOPPED"

    async def _stream(self, stop: asyncio.Event) -> bool:
        """One stream connection, folded until it ends (False) or ``stop`` is set (True); the
        connection is counted opened, closed, or refused when it never opened."""
        self.connects += 1
        self.state = "RUNNING"
        opened = False

        def on_open() -> None:
            nonlocal opened
            opened, self.open = True, True
            self.accepted += 1

        try:
            payloads = self.node.close_payloads(self.channel or "EXTERNAL", on_open)
            async with contextlib.aclosing(turns(payloads)) as batches:
                async for events in batches:
                    await self._take(events)
                    self.batches += 1
                    if stop.is_set():
                        return True
            return False
        finally:
            if opened:
                self.open = False
                self.closed += 1
            else:
                self.refused += 1

    def failed(self, error: str) -> None:
        """A warm-up read that failed (the node down or refusing): counted refused."""
        self.last_error = error
        self.refused += 1

    def accounting(self) -> dict[str, Any]:
        """This node's entry in ``svc.screener_health.connections.upstreams``."""
        return {
            "node": self.node.name,
            "state": self.state,
            "open": int(self.open),
            "accepted": self.accepted,
            "closed": self.closed,
            "refused": self.refused,
            "last_error": self.last_error,
        }

    def _lost(self, error: str) -> None:
        self.state, self.last_error = "RECONNECTING", error
        self.reconnects += 1
        log.warning("%s", error)

    async def _take(self, payloads: list[bytes]) -> None:
        """Fold a turn's closes (see the module docs), a Rust call up to each close that jumps
        its instrument's sequence (the instrument catches up from the pages after the closes
        before it are folded); a refusal of the fold is raised after the newest close offered
        is noted."""
        while payloads:
            turn = self.rows.turn(self.node.base_url, payloads)
            if turn.offered is not None:
                self.offered = turn.offered if self.offered is None else max(self.offered, turn.offered)
            if turn.error is not None:
                raise turn.error
            if turn.stop == "REFUSED":
                await self._take_decoded(payloads)
                return
            if turn.stop != "JUMP" or turn.event is None or turn.instrument is None:
                return
            await self._catch_up(self.rows.ids[turn.instrument])
            payloads = payloads[turn.event + 1 :]

    async def _take_decoded(self, payloads: list[bytes]) -> None:
        """The per-event path: each payload decoded as the stream's reader decoded it, then
        folded; one that does not decode ends the turn, after those before it are folded, with
        the reader's error."""
        events: list[dict[str, Any]] = []
        for payload in payloads:
            try:
                events.append(json.loads(payload.decode()))
            except Exception:
                await self._take_events(events)
                raise
        await self._take_events(events)

    async def _take_events(self, events: list[dict[str, Any]]) -> None:
        """Fold closes in order: each run of them in sequence at once; a close whose sequence
        jumps catches its instrument up from the pages (after the run before it is folded)."""
        ids: list[str] = []
        runs: list[Bars] = []
        queued: dict[str, int] = {}  # per instrument in the run, the newest sequence it folds
        for event in events:
            iid = event["instrument_id"]
            instrument = self.instruments.get(iid)
            if instrument is None or not event["bars"]:
                continue  # listed after discovery: the next warm takes it
            bar = bar_columns(event["bars"], instrument["price_precision"], instrument["size_precision"])
            ts = int(bar["ts_event"][0])
            self.offered = ts if self.offered is None else max(self.offered, ts)
            sequence, last = int(bar["sequence"][0]), queued.get(iid, self.rows.sequence.get(iid))
            if last is not None and sequence <= last:
                continue  # folded already (a catch-up took it)
            if last is not None and sequence != last + 1:
                self._fold(ids, runs)
                ids, runs, queued = [], [], {}
                await self._catch_up(iid)
                continue
            ids.extend([iid] * len(bar["ts_event"]))
            runs.append(bar)
            queued[iid] = max(last or 0, int(bar["sequence"].max()))
        self._fold(ids, runs)

    def _fold(self, ids: list[str], runs: list[Bars]) -> None:
        if ids:
            self.rows.close_many(ids, {k: np.concatenate([bars[k] for bars in runs]) for k in runs[0]})

    async def _catch_up(self, instrument_id: str) -> None:
        """Fold the bars after the last sequence folded, oldest first."""
        instrument = self.instruments[instrument_id]
        after = self.rows.sequence.get(instrument_id)
        async for bars, _ in self.node.bar_pages(instrument, self.channel or "EXTERNAL", after_sequence=after):
            if len(bars["ts_event"]):
                self.catch_ups += 1
                self.rows.close(instrument_id, bars)

    async def history(
        self, instrument: dict[str, Any], after_sequence: int | None = None, end: int | None = None
    ) -> tuple[Bars, dict[str, Any]]:
        """An instrument's durable 1-minute bars (those above ``after_sequence`` and closing at
        or before ``end`` when given) and its node's coverage."""
        pages = [
            page
            async for page in self.node.bar_pages(
                instrument, self.channel or "EXTERNAL", after_sequence=after_sequence, end=end
            )
        ]
        bars = {k: np.concatenate([columns[k] for columns, _ in pages]) for k in pages[0][0]}
        self.warm_pages += len(pages)
        self.warm_bars += len(bars["ts_event"])
        return bars, pages[-1][1]

    def _usable(self, instrument: dict[str, Any]) -> Held | None:
        """The instrument's checkpoint when it can be restored: same channel and precisions,
        and a watermark (an instrument that had folded no bar gains nothing from it)."""
        saved = self.saved.get(instrument["instrument_id"])
        if saved is None or saved.sequence == 0:
            return None
        if saved.channel != self.channel or any(
            saved.instrument.get(k) != instrument[k] for k in ("price_precision", "size_precision")
        ):
            log.warning(
                "%s: %s changed channel or precisions since the checkpoint; warming in full",
                self.node.base_url,
                instrument["instrument_id"],
            )
            return None
        return saved

    async def _resume(self, instrument: dict[str, Any], saved: Held) -> bool:
        """Restore an instrument from its checkpoint and the node's bars above its watermark;
        False (nothing folded) when the node's numbering is not the one checkpointed: the bar
        at the watermark is not the one held, or a bar above it closes at a time already held
        (the node's store was replaced and renumbered)."""
        newer, coverage = await self.history(instrument, after_sequence=saved.sequence - 1)
        at = np.flatnonzero(newer["sequence"] == saved.sequence)
        above = newer["sequence"] > saved.sequence
        if (
            not len(at)
            or not _holds(saved.bars, newer, int(at[0]))
            or np.isin(newer["ts_event"][above], saved.bars["ts_event"]).any()
        ):
            log.warning(
                "%s: %s: the node's bars from sequence %d are not those checkpointed (its store was "
                "replaced?); warming in full",
                self.node.base_url,
                instrument["instrument_id"],
                saved.sequence,
            )
            return False
        merged = {k: np.concatenate([saved.bars[k], newer[k][above]]) for k in saved.bars}
        order = np.argsort(merged["ts_event"], kind="stable")
        spans = saved.spans + [(int(s["start"]), int(s["end"])) for s in coverage["observed"]]
        self.rows.restore(
            instrument["instrument_id"], {k: v[order] for k, v in merged.items()}, spans, int(newer["sequence"].max())
        )
        return True

    async def _live_channel(self, listed: list[dict[str, Any]]) -> str:
        """The channel the node serves by default: a page asked without a bar type says."""
        if not listed:
            return "EXTERNAL"
        page = await self.node.get("/v2/bars", {"instrument_id": listed[0]["instrument_id"], "limit": 1})
        channel: str = page["channel"]
        return channel


def _holds(bars: Bars, page: Bars, k: int) -> bool:
    """Whether ``bars`` hold bar ``k`` of ``page`` (its close time and values)."""
    at = int(np.searchsorted(bars["ts_event"], page["ts_event"][k]))
    return at < len(bars["ts_event"]) and all(int(bars[c][at]) == int(page[c][k]) for c in bars)


async def turns(source: AsyncIterator[T]) -> AsyncGenerator[list[T], None]:
    """``source`` a loop turn at a time: what it yields before it next waits (on its socket)
    comes as one list, handed over as soon as it waits. A reader task takes the items; while
    the caller is busy with a list (a catch-up awaiting pages), the reader stops after one
    more item, so the socket pushes back as it did without the reader. The source's error
    ends the iteration with that error."""
    pending: list[T] = []
    loop = asyncio.get_running_loop()
    ready: asyncio.Future[None] = loop.create_future()
    idle = asyncio.Event()

    async def read() -> None:
        async for item in source:
            pending.append(item)
            if not ready.done():
                ready.set_result(None)
            if not idle.is_set():
                await idle.wait()

    reader = asyncio.create_task(read())
    try:
        while True:
            idle.set()
            await asyncio.wait((reader, ready), return_when=asyncio.FIRST_COMPLETED)
            idle.clear()
            if pending:
                taken = pending[:]
                pending.clear()
                ready = loop.create_future()
                yield taken
            elif reader.done():
                reader.result()
                return
    finally:
        reader.cancel()
        await asyncio.gather(reader, return_exceptions=True)


async def _sleep_or_stop(stop: asyncio.Event, seconds: float) -> bool:
    """Wait ``seconds`` unless ``stop`` is set first; whether it was."""
    try:
        await asyncio.wait_for(stop.wait(), seconds)
        return True
    except TimeoutError:
        return False
