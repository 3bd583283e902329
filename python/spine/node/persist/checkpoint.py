"""What one flush writes, taken on the event loop in one synchronous step: every store's pending
bars and a copy of every series (its columns, last sequence and observed spans).

The flush then writes the catalogs (appends and any rewrite: late bars, consolidation) and
the series' state files from this copy only, on a worker thread if it likes.
Bars that close meanwhile wait for the next flush in the catalogs and in the state alike, so
the catalog rows and the saved sequences always describe the same bars: a reload gives every
durable bar the number it was served with. Taking costs what copying the state always cost
(``Series.columns`` copies every column once); building framework bars for a rewrite is left
to the thread.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from nautilus_trader.model.data import Bar

from spine.node.persist import series_state
from spine.node.persist.series_book import Precision, SeriesBook, framework_bars
from spine.node.persist.store import CatalogStore
from spine.wire.bar_types import instrument_of

__all__ = ["Checkpoint"]


@dataclass(frozen=True)
class Held:
    """One series as it was taken."""

    columns: dict[str, bytes]
    last_sequence: int
    coverage: list[tuple[int, int]]
    precision: Precision


class Checkpoint:
    """Taken at construction (on the loop); read by the flush's writer."""

    def __init__(self, book: SeriesBook, stores: Mapping[str, CatalogStore]) -> None:
        #: Per channel, the store's pending bars by bar type (the store no longer holds them).
        self.pending = {channel: store.take() for channel, store in stores.items()}
        self.held: dict[str, dict[str, Held]] = {channel: {} for channel in stores}
        for instrument_id, channel, series in book.held():
            if channel in self.held:
                self.held[channel][instrument_id] = Held(
                    series.columns(), series.last_sequence, series.coverage(), book.precision(instrument_id)
                )

    def state(
        self,
        channel: str,
        observed: dict[str, list[tuple[int, int]]] | None = None,
    ) -> dict[str, series_state.Saved]:
        """The channel's series' state, as ``series_state.write`` takes it; with ``observed``,
        its spans (by instrument, none when missing) instead of those taken."""
        return {
            instrument_id: series_state.saved(
                held.columns, held.last_sequence, held.coverage if observed is None else observed.get(instrument_id, [])
            )
            for instrument_id, held in self.held[channel].items()
        }

    def coverage(self) -> dict[str, dict[str, list[tuple[int, int]]]]:
        """The observed spans taken, per channel and instrument."""
        return {
            channel: {instrument_id: held.coverage for instrument_id, held in by_id.items()}
            for channel, by_id in self.held.items()
        }

    def bars(self, bar_type: str, *, channel: str) -> list[Bar]:
        """A series' bars as taken, as framework bars of ``bar_type`` (what a rewrite writes)."""
        held = self.held[channel][instrument_of(bar_type)]
        return framework_bars(bar_type, held.columns, held.precision)

    def oldest(self, bar_type: str, *, channel: str) -> int | None:
        """The oldest close of the series as taken (None for a series not held or empty)."""
        held = self.held[channel].get(instrument_of(bar_type))
        stamps = None if held is None else held.columns["ts_event"]
        return int.from_bytes(stamps[:8], "little") if stamps else None
