"""The screener's feature state: one ``FeatureUniverse`` over every node's instruments, fed
the node's durable 1-minute bars (warm) and its live closes, and read as ``svc.feature_row``
documents. Rows of an instrument come from one channel only, never mixed.

A loop turn's live closes fold in one Rust call (:meth:`Rows.turn`, over the ``LiveBook`` that
holds each instrument's feed and newest sequence): the close, and the writers of the stream and
the observer, which listen as :class:`TurnListener`; every other change (a warm, a restore, a
catch-up's close) calls each listener with the rows it changed."""

from __future__ import annotations

from collections.abc import Callable, Iterator, MutableMapping
from typing import Any, Generic, Protocol, TypeVar

import numpy as np
import numpy.typing as npt

from spine._core import (
    DeltaWriter,
    FeatureUniverse,
    LiveBook,
    ObservationWriter,
    ScreenTable,
    Turn,
    TurnRun,
)
from spine.bars import RESOLUTIONS  # every instrument's rows are at these, finest first
from spine.features import feature_row_document
from spine.screener.instrument import feature_state
from spine.screener.node_client import Bars

__all__ = ["RESOLUTIONS", "Registering", "Rows", "Sequences", "TurnListener"]

_COLUMNS = ("ts_event", "open", "high", "low", "close", "volume")
MINUTE_NS = 60_000_000_000
W = TypeVar("W", DeltaWriter, ObservationWriter, covariant=True)
R = TypeVar("R", DeltaWriter, ObservationWriter)


class TurnListener(Protocol[W]):
    """A listener whose writer a live turn runs in Rust (the stream's ``DeltaWriter``, the
    observer's ``ObservationWriter``): ``changed`` is its listener, ``writer`` its writer with
    every instrument registered, ``took`` takes a turn's run in place of ``changed``."""

    def changed(self, pairs: bytes) -> None: ...

    def writer(self) -> W: ...

    def took(self, run: TurnRun) -> None: ...


class Registering(Generic[R]):
    """A listener's writer, each instrument the rows have gained registered before it is used
    (instruments are only ever appended to the rows, so the next index is the count so far)."""

    def __init__(self, rows: Rows, writer: R) -> None:
        self._rows = rows
        self._writer: R = writer
        self._registered = 0

    def __call__(self) -> R:
        ids = self._rows.ids
        while self._registered < len(ids):
            self._writer.register(self._registered, ids[self._registered])
            self._registered += 1
        return self._writer


class Sequences(MutableMapping[str, int]):
    """The newest node sequence folded per instrument id, held in the rows' ``LiveBook`` (where
    a live turn reads and raises it)."""

    def __init__(self, book: LiveBook, index: dict[str, int]) -> None:
        self._book, self._index = book, index

    def __getitem__(self, instrument_id: str) -> int:
        sequence = self._book.sequence(self._index[instrument_id])
        if sequence is None:
            raise KeyError(instrument_id)
        return sequence

    def get(self, instrument_id: str, default: Any = None) -> Any:
        index = self._index.get(instrument_id)
        sequence = None if index is None else self._book.sequence(index)
        return default if sequence is None else sequence

    def __setitem__(self, instrument_id: str, sequence: int) -> None:
        self._book.set_sequence(self._index[instrument_id], sequence)

    def __delitem__(self, instrument_id: str) -> None:
        if instrument_id not in self:
            raise KeyError(instrument_id)
        self._book.set_sequence(self._index[instrument_id], None)

    def __iter__(self) -> Iterator[str]:
        return (iid for iid, index in list(self._index.items()) if self._book.sequence(index) is not None)

    def __len__(self) -> int:
        return sum(1 for _ in self)


class Rows:
    """See the module docs. Instruments are added once, warmed once, then closed live."""

    def __init__(self, feature_ids: list[str] | None = None) -> None:
        self.feature_ids = feature_ids
        self.universe = FeatureUniverse(feature_ids=feature_ids)
        self.index: dict[str, int] = {}
        self.ids: list[str] = []
        #: Per instrument, the channel its rows read and the node its bars come from.
        self.origin: dict[str, tuple[str, str]] = {}
        #: Per instrument, its id, its node and the newest sequence it folded, as a turn reads them.
        self.book = LiveBook()
        #: The newest sequence folded per instrument (the node's series numbering).
        self.sequence: MutableMapping[str, int] = Sequences(self.book, self.index)
        #: Live 1-minute closes folded since start.
        self.processed = 0
        #: Moves with every change to any row (a snapshot is consistent with one version).
        self.version = 0
        #: The newest close time folded (None before the first bar).
        self.newest: int | None = None
        #: Called after every change with the rows it changed (``FeatureUniverse.close_minute``'s
        #: uint32 pairs), the version already moved on: the stream's deltas, the observations.
        self.listeners: list[Callable[[bytes], None]] = []
        #: The listeners whose writers a live turn runs (set by the stream and the observer).
        self.stream: TurnListener[DeltaWriter] | None = None
        self.observer: TurnListener[ObservationWriter] | None = None
        self._table = ScreenTable()
        #: Instruments whose rows changed since the screen table last took them.
        self._stale: set[int] = set()

    def add(self, instrument: dict[str, Any], channel: str, source: str = "local") -> int:
        """Register an ``svc.instrument_ref`` (its precisions) with the channel its rows read and
        the node (base URL) its bars come from."""
        iid = instrument["instrument_id"]
        if iid in self.index:
            raise ValueError(f"{iid} is already in the screener's universe")
        index = self.universe.add(
            channel=channel, price_precision=instrument["price_precision"], size_precision=instrument["size_precision"]
        )
        self.index[iid] = index
        self.book.add(iid, source)
        self.ids.append(iid)
        self.origin[iid] = (channel, source)
        self.version += 1  # its (empty) rows are in every snapshot from now on
        return index

    def warm(self, instrument_id: str, bars: Bars, coverage: dict[str, Any], through: int | None = None) -> int:
        """Fold an instrument's history: the spans its node observed, then its bars. With
        ``through`` (nanoseconds), rows as they stood at the minute it falls in: bars closing
        after it are left out and the spans are cut there, so no observation closes a bucket
        ending later (a bucket still open at that minute stays open, as it was live)."""
        spans = [(int(span["start"]), int(span["end"])) for span in coverage["observed"]]
        if through is not None:
            through -= through % MINUTE_NS
            kept = bars["ts_event"] <= through
            bars = {k: column[kept] for k, column in bars.items()}
            spans = [(start, min(end, through)) for start, end in spans if start < min(end, through)]
        sequence = int(bars["sequence"].max()) if len(bars["sequence"]) else None
        return self.restore(instrument_id, bars, spans, sequence)

    def restore(self, instrument_id: str, bars: Bars, spans: list[tuple[int, int]], sequence: int | None) -> int:
        """Fold an instrument's history given as observed spans, bars (oldest first) and the
        newest node sequence among them (None: no bar)."""
        index = self.index[instrument_id]
        for start, end in spans:
            self.universe.observe(index, start, end)
        taken = self.universe.warm(index, *(np.ascontiguousarray(bars[k]) for k in _COLUMNS))
        if sequence is not None:
            self.sequence[instrument_id] = sequence
        if len(bars["ts_event"]):
            self._saw(int(bars["ts_event"][-1]))
        self._changed(np.array([(index, r) for r in range(len(RESOLUTIONS))], dtype="<u4").tobytes())
        return taken

    def held(self, instrument_id: str) -> tuple[Bars, list[tuple[int, int]]]:
        """A copy of an instrument's folding input: its 1-minute series' columns (ts_event
        uint64, open..volume int64) and its observed spans."""
        index = self.index[instrument_id]
        columns = self.universe.series_columns(index)
        bars = {k: np.frombuffer(columns[k], dtype="<u8" if k == "ts_event" else "<i8") for k in _COLUMNS}
        return bars, self.universe.coverage(index)

    def close(self, instrument_id: str, bars: Bars) -> bytes:
        """Fold live closes of one instrument, oldest first; the changed (instrument,
        resolution) pairs as the universe reports them."""
        index = self.index[instrument_id]
        instrument = np.array([index], dtype=np.uint32)
        changed = []
        for k in range(len(bars["ts_event"])):  # a call closes one minute
            ts = int(bars["ts_event"][k])
            self.universe.observe(index, ts - MINUTE_NS, ts)
            changed.append(self.universe.close_minute(instrument, *(bars[c][k : k + 1] for c in _COLUMNS)))
            self.book.raise_sequences([index], [int(bars["sequence"][k])])
            self.processed += 1
            self._saw(ts)
        pairs = b"".join(changed)
        self._changed(pairs)
        return pairs

    def close_many(self, instrument_ids: list[str], bars: Bars) -> bytes:
        """Fold live closes of several instruments at once, bar ``k`` of ``bars`` being
        ``instrument_ids[k]``'s (an instrument's bars oldest first): the rows, sequences, counts
        and listener calls of :meth:`close` called for each bar in turn, in one run per stretch
        of distinct instruments (usually the whole call): one universe call (in instrument
        order, which lets a large minute split across threads), one version step and one
        listener call each."""
        indexes = np.array([self.index[iid] for iid in instrument_ids], dtype=np.uint32)
        changed, sequences = [], bars["sequence"]
        for run in _distinct_runs(indexes):
            order = run[np.argsort(indexes[run], kind="stable")]
            ts = bars["ts_event"][order]
            for index, end in zip(indexes[order].tolist(), ts.tolist(), strict=True):
                self.universe.observe(index, end - MINUTE_NS, end)
            pairs = self.universe.close_minute(indexes[order], ts, *(bars[c][order] for c in _COLUMNS[1:]))
            self.book.raise_sequences(indexes[run].tolist(), sequences[run].tolist())
            self.processed += len(run)
            self._saw(int(ts.max()))
            self._changed(pairs)
            changed.append(pairs)
        return b"".join(changed)

    def turn(self, feed: str, payloads: list[bytes]) -> Turn:
        """Fold a loop turn of feed ``feed``'s live close payloads (its node's base URL) in one
        call (``LiveBook.turn``): each of its runs counts, steps the version and reaches the
        listeners as a :meth:`close_many` run does. Where it stopped, the newest close offered
        and its refusal (after the runs it completed) are the caller's to act on."""
        stream, observer = self.stream, self.observer
        turn = self.book.turn(
            self.universe,
            feed,
            payloads,
            self.version,
            deltas=None if stream is None else stream.writer(),
            observations=None if observer is None else observer.writer(),
        )
        for run in turn.runs:
            self.processed += run.bars
            self._saw(run.newest)
            self._changed(run.changed, run)
        return turn

    def _changed(self, pairs: bytes, run: TurnRun | None = None) -> None:
        """Step the version and call the listeners; a turn's ``run`` goes to the listeners whose
        writers made it, in their place."""
        self.version += 1
        self._stale.update(np.frombuffer(pairs, dtype="<u4")[0::2].tolist())
        took: dict[Callable[[bytes], None], TurnListener[Any]] = (
            {}
            if run is None
            else {listener.changed: listener for listener in (self.stream, self.observer) if listener is not None}
        )
        for listener in self.listeners:
            owner = took.get(listener)
            if owner is None:
                listener(pairs)
            else:
                owner.took(run)  # type: ignore[arg-type]

    def table(self) -> ScreenTable:
        """The screen table over every current row (rows changed since the last call re-read)."""
        for index in sorted(self._stale):
            for resolution in RESOLUTIONS:
                self._table.upsert_universe(self.universe, index, self.ids[index], resolution)
        self._stale.clear()
        return self._table

    def _saw(self, ts_event: int) -> None:
        self.newest = ts_event if self.newest is None else max(self.newest, ts_event)

    def state(self, instrument_id: str, resolution: str) -> dict[str, Any]:
        """The ``svc.feature_state`` summary of the instrument's row at ``resolution``."""
        channel, source = self.origin[instrument_id]
        taken = self.universe.bars_taken(self.index[instrument_id], resolution)
        return feature_state(self.row(instrument_id, resolution), taken, channel, source)

    def row(self, instrument_id: str, resolution: str) -> dict[str, Any]:
        """The instrument's ``svc.feature_row`` at ``resolution``."""
        index = self.index[instrument_id]
        last = self.universe.last_ts_event(index, resolution)
        return feature_row_document(instrument_id, resolution, last, self.universe.row(index, resolution))


def _distinct_runs(indexes: npt.NDArray[np.uint32]) -> list[npt.NDArray[np.intp]]:
    """Positions of ``indexes`` cut into runs in which no instrument comes twice, in turn."""
    runs: list[npt.NDArray[np.intp]] = []
    seen: set[int] = set()
    start = 0
    for k, index in enumerate(indexes.tolist()):
        if index in seen:
            runs.append(np.arange(start, k))
            seen.clear()
            start = k
        seen.add(index)
    if start < len(indexes):
        runs.append(np.arange(start, len(indexes)))
    return runs
