"""What the gateway knows of the catalog dirs the workers read beside the nodes' (``spine
import``'s, configured as ``catalogs``): whether one holds an instrument's bars, by the layout
a run reads (``<dir>/<channel>/data/bar/<bar type>``, :mod:`spine.backtest.bars`), and, for a
submit, whether the bars a run would read hold one in its span and the instrument's size
precision (its definition file). Pyarrow reads the parquet files: the trading framework is
never imported here."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.compute as pc  # type: ignore[import-untyped]
import pyarrow.dataset as ds  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]

from spine.http.times import iso_utc
from spine.wire.bar_types import CHANNELS, bar_type_of
from spine.wire.instruments import catalog_id_problem

__all__ = ["Holding", "held_in", "holding"]

#: The 1-minute bars one bar of each resolution folds.
_MINUTES = {"1m": 1, "5m": 5, "15m": 15, "30m": 30, "1h": 60, "4h": 240, "1d": 1_440}

#: The framework's definition directories whose class fixes the size precision (whole units)
#: and so writes no ``size_precision`` column.
_WHOLE_UNITS = ("equity",)


def held_in(catalogs: Sequence[str], instrument_id: str) -> bool:
    """Whether a dir of ``catalogs`` holds 1-minute or daily bars of ``instrument_id`` (an id
    that cannot name a catalog directory is held nowhere)."""
    if not catalogs or catalog_id_problem(instrument_id) is not None:
        return False
    return any(
        (Path(directory) / channel.lower() / "data" / "bar" / bar_type_of(instrument_id, step, channel)).is_dir()
        for directory in catalogs
        for channel in CHANNELS
        for step in ("1m", "1d")
    )


@dataclass(frozen=True)
class Holding:
    """What the catalogs hold of one instrument for a run: whether its bars hold one closing in
    the run's span (None: the files could not be read now), why not in words, and the
    instrument's size precision (None: not read); ``absent`` when they hold no bar type the
    run reads at all (the run fails on that instrument whatever the others hold)."""

    bars: bool | None
    reason: str
    size_precision: int | None
    absent: bool = False


def holding(
    catalogs: Sequence[str], instrument_id: str, resolution: str, channel: str, start: int, end: int
) -> Holding | None:
    """What ``catalogs`` hold of ``instrument_id`` for a run (the bar type it reads as
    :func:`spine.backtest.bars.load_instrument` finds it: the channel's 1-minute bars, else for
    a 1d run the daily ones); None when no dir holds any bars of it. Reads the disk."""
    if not held_in(catalogs, instrument_id):
        return None
    found = _bar_dir(catalogs, instrument_id, channel, "1m")
    if found is None and resolution == "1d":
        found = _bar_dir(catalogs, instrument_id, channel, "1d")
    if found is None:
        return Holding(False, _missing(catalogs, instrument_id, resolution, channel), None, absent=True)
    root, directory = found
    size_precision = _size_precision(root, instrument_id)
    need = _MINUTES[resolution] if directory.name.endswith("-1-MINUTE-LAST-" + channel) else 1
    try:
        held = _count(directory, start, end)
        if held >= need:
            return Holding(True, "", size_precision)
        if held:  # fewer minutes than one bucket holds: the fold gives no bar
            return Holding(
                False,
                f"{instrument_id}: the import catalog's {directory.name} holds {held} 1-minute bars closing in "
                f"[{_iso(start)}, {_iso(end)}]; a {resolution} bar needs {need}",
                size_precision,
            )
        first, last = _extent(directory)
    except (OSError, pa.ArrowException):  # mid-rename by an import: not known now
        return Holding(None, "", size_precision)
    extent = "none" if first is None else f"closes from {_iso(first)} to {_iso(last)}"
    return Holding(
        False,
        f"{instrument_id}: the import catalog's {directory.name} {extent}, none in [{_iso(start)}, {_iso(end)}]",
        size_precision,
    )


def _bar_dir(catalogs: Sequence[str], instrument_id: str, channel: str, step: str) -> tuple[Path, Path] | None:
    """The channel root and bar type directory of the first dir holding that bar type."""
    for directory in catalogs:
        root = Path(directory) / channel.lower()
        bars = root / "data" / "bar" / bar_type_of(instrument_id, step, channel)
        if bars.is_dir():
            return root, bars
    return None


def _missing(catalogs: Sequence[str], instrument_id: str, resolution: str, channel: str) -> str:
    """Why the catalogs, which hold some bars of the instrument, hold none a run reads."""
    if resolution != "1d" and _bar_dir(catalogs, instrument_id, channel, "1d") is not None:
        return (
            f"{instrument_id}: the import catalog holds daily bars only: a 1d run reads them, a {resolution} "
            "run needs its 1-minute bars"
        )
    other = next(c for c in CHANNELS if c != channel)
    return f"{instrument_id}: the import catalog holds no {channel} bars of it (only {other})"


def _count(directory: Path, start: int, end: int) -> int:
    """The bars closing in ``[start, end]`` (row-group statistics skip what cannot match)."""
    ts = ds.field("ts_event")
    span = (ts >= pa.scalar(start, pa.uint64())) & (ts <= pa.scalar(end, pa.uint64()))
    return int(ds.dataset(directory, format="parquet").count_rows(filter=span))


def _extent(directory: Path) -> tuple[int | None, int | None]:
    """The first and last close held (for a refusal's words)."""
    table = ds.dataset(directory, format="parquet").to_table(columns=["ts_event"])
    if table.num_rows == 0:
        return None, None
    bounds = pc.min_max(table.column("ts_event"))
    return int(bounds["min"].as_py()), int(bounds["max"].as_py())


def _size_precision(root: Path, instrument_id: str) -> int | None:
    """The size precision of the instrument's definition under ``root`` (None: unread)."""
    data = root / "data"
    for kind in sorted(p for p in data.iterdir() if p.name != "bar") if data.is_dir() else ():
        files = sorted((kind / instrument_id).glob("*.parquet"))
        if not files:
            continue
        try:
            schema = pq.read_schema(files[-1])
            if "size_precision" in schema.names:
                return int(pq.read_table(files[-1], columns=["size_precision"]).column(0)[0].as_py())
        except (OSError, pa.ArrowException, IndexError):
            return None
        return 0 if kind.name in _WHOLE_UNITS else None
    return None


def _iso(nanos: int | None) -> str:
    return "none" if nanos is None else iso_utc(nanos)
