"""What the gateway knows of the catalog dirs the workers read beside the nodes' (``spine
import``'s, configured as ``catalogs``): whether one holds an instrument's bars, by the layout
a run reads (``<dir>/<channel>/data/bar/<bar type>``, :mod:`spine.backtest.bars`), without
reading a file."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from spine.wire.bar_types import CHANNELS, bar_type_of
from spine.wire.instruments import catalog_id_problem

__all__ = ["held_in"]


def held_in(catalogs: Sequence[str], instrument_id: str) -> bool:
    """Whether a dir of ``catalogs`` holds 1-minute or daily bars of ``instrument_id`` (an id
    that cannot name a catalog directory is held nowhere)."""
    if not catalogs or catalog_id_problem(instrument_id) is not None:
        return False
    return any((Path(directory) / channel.lower() / "data" / "bar" / bar_type_of(instrument_id, step, channel)).is_dir()
               for directory in catalogs for channel in CHANNELS for step in ("1m", "1d"))
