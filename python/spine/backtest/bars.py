"""The bars a run reads: an instrument's 1-minute bars of one channel from a node's durable
catalog, as exact columns, folded by ``spine._core`` to the plan's resolution with the same
withholding rules as the bar routes, then built as framework bars at the instrument's
precisions.

- An instrument id is checked as a catalog name (no ``/``, ``\\`` or ``..``:
  :mod:`spine.wire.instruments`) before any path is built from it.
- A node's catalog dir holds ``external/`` and ``internal/`` roots. The catalog serving an
  instrument is the first given whose ``<dir>/<channel lower>/data/bar/<bar type>`` exists
  (bar type ``SYMBOL.VENUE-1-MINUTE-LAST-<CHANNEL>``); its instrument comes from the same root.
  A 1d run of an instrument with no minute bars takes the daily bars ``spine import`` stored
  (``...-1-DAY-LAST-EXTERNAL``) as they are: nothing to fold, no skipped span.
- Prices are read from the parquet files as exact mantissas (the framework's i128 raw at scale
  1e16, reinterpreted as decimal128 and rescaled without loss): no float ever holds a price.
- ``start``/``end`` bound the 1-minute bars' close times, inclusive. Coverage is the bars'
  own extent (the catalog keeps no observation record): on EXTERNAL a missing minute inside
  it is a gap, on INTERNAL a no-trade minute; a withheld bucket is never filled, it is
  reported as a skipped span, and the features restart after it (``mark_gap``).
- A node may be writing meanwhile (files renamed into place, a rewrite moving old files
  out first): a read is retried, bounded, until the directory listing is the same before and
  after it and every file read.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.compute as pc  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]

from spine._core import fold_columns
from spine.backtest.api import BacktestError
from spine.wire.bar_types import bar_type_of
from spine.wire.instruments import catalog_id_problem

__all__ = ["InstrumentBars", "fingerprint", "load_instrument", "minute_columns", "nautilus_bars"]

COLUMNS = ("open", "high", "low", "close", "volume")
FIXED_SCALE = 16  # the wheel's FIXED_PRECISION: a raw value is the number times 10^16
READ_ATTEMPTS = 8
READ_BACKOFF_SECS = 0.05
STEP_NS = {"1m": 60, "5m": 300, "15m": 900, "30m": 1800, "1h": 3600, "4h": 14400, "1d": 86400}


@dataclass(frozen=True)
class InstrumentBars:
    """One instrument's derived bars: the framework instrument, the bar type fed to the engine,
    the columns (``ts_event`` uint64 closes, prices and volume int64 mantissas at the
    instrument's precisions), the withheld spans ``(start, end, reason)``, and the 1-minute
    bars read."""

    instrument_id: str
    instrument: Any
    bar_type: str
    price_precision: int
    size_precision: int
    columns: dict[str, npt.NDArray[Any]]
    withheld: list[tuple[int, int, str]]
    #: The input bars read, and their resolution (``1m``; ``1d`` for imported daily bars).
    inputs_read: int
    source: str = "1m"

    def __len__(self) -> int:
        return len(self.columns["ts_event"])

    def withheld_buckets(self, resolution: str) -> int:
        """How many buckets the withheld spans hold."""
        step = STEP_NS[resolution] * 1_000_000_000
        return sum((end - start) // step for start, end, _ in self.withheld)

    def rows(self) -> list[tuple[int, int, int, int, int, int]]:
        """The derived bars as ``(ts_event, open, high, low, close, volume)`` int rows."""
        c = self.columns
        return list(zip(*(c[name].tolist() for name in ("ts_event", *COLUMNS)), strict=True))

    def gap_closes(self) -> list[int]:
        """The closes of the bars that follow a withheld span (the features restart before
        them), oldest first."""
        ends = self.columns["ts_event"]
        index = np.searchsorted(ends, np.array([end for _, end, _ in self.withheld], dtype=np.uint64), side="left")
        return sorted({int(ends[i]) for i in index if i < len(ends)})


def find_root(catalogs: list[Path], instrument_id: str, channel: str, resolution: str = "1m") -> Path | None:
    """The channel root of the first catalog dir holding the instrument's bars of
    ``resolution`` (``1m``: the durable minute; ``1d``: daily bars an import stored), if any."""
    bar_type = bar_type_of(instrument_id, resolution, channel)
    for directory in catalogs:
        root = Path(directory) / channel.lower()
        if (root / "data" / "bar" / bar_type).is_dir():
            return root
    return None


def minute_columns(
    root: Path, bar_type: str, price_precision: int, size_precision: int, start: int | None, end: int | None
) -> dict[str, npt.NDArray[Any]]:
    """The bar type's 1-minute bars with closes in ``[start, end]`` as exact columns, oldest
    first, read consistently while a node may be writing (see the module docs)."""
    directory = root / "data" / "bar" / bar_type
    for attempt in range(READ_ATTEMPTS):
        before = sorted(directory.glob("*.parquet"))
        try:
            tables = [pq.read_table(path) for path in before]
        except FileNotFoundError:
            tables = None
        if tables is not None and sorted(directory.glob("*.parquet")) == before and (before or attempt):
            return _exact(tables, price_precision, size_precision, start, end, bar_type)
        time.sleep(READ_BACKOFF_SECS * (attempt + 1))
    raise BacktestError(
        f"CATALOG_BUSY: the bars of {bar_type} kept changing while read ({READ_ATTEMPTS} attempts)", "CATALOG_BUSY"
    )


def _exact(
    tables: list[Any], price_precision: int, size_precision: int, start: int | None, end: int | None, bar_type: str
) -> dict[str, npt.NDArray[Any]]:
    names = ("ts_event", *COLUMNS)
    if not tables:
        return {name: np.empty(0, dtype=np.uint64 if name == "ts_event" else np.int64) for name in names}
    table = pa.concat_tables([t.select(list(names)) for t in tables]).sort_by("ts_event")
    ts = table.column("ts_event").combine_chunks()
    keep = None
    if start is not None:
        keep = pc.greater_equal(ts, pa.scalar(start, pa.uint64()))
    if end is not None:
        upper = pc.less_equal(ts, pa.scalar(end, pa.uint64()))
        keep = upper if keep is None else pc.and_(keep, upper)
    if keep is not None:
        table = table.filter(keep)
    out: dict[str, npt.NDArray[Any]] = {
        "ts_event": np.ascontiguousarray(table.column("ts_event").to_numpy(), dtype=np.uint64)
    }
    if len(out["ts_event"]) > 1 and not bool(np.all(np.diff(out["ts_event"].astype(np.int64)) > 0)):
        raise BacktestError(f"INVALID_BARS: {bar_type} holds duplicate closes", "INVALID_BARS")
    for name in COLUMNS:
        scale = size_precision if name == "volume" else price_precision
        out[name] = _mantissas(table.column(name).combine_chunks(), scale, f"{bar_type} {name}")
    return out


def _mantissas(raw: Any, scale: int, what: str) -> npt.NDArray[np.int64]:
    """Framework raw values (16-byte little-endian i128 at 1e16) as int64 mantissas at
    ``scale``; a value finer than the scale or beyond int64 is refused, never rounded."""
    n = len(raw)
    if n == 0:
        return np.empty(0, dtype=np.int64)
    as_decimal = pa.Array.from_buffers(pa.decimal128(38, FIXED_SCALE), n, [None, raw.buffers()[1]], offset=raw.offset)
    try:
        rescaled = as_decimal.cast(pa.decimal128(38, scale), safe=True)
    except pa.ArrowInvalid as error:
        raise BacktestError(
            f"INVALID_BARS: {what} holds a value finer than precision {scale}: {error}", "INVALID_BARS"
        ) from error
    words = np.frombuffer(rescaled.buffers()[1], dtype="<i8")[2 * rescaled.offset : 2 * (rescaled.offset + n)]
    low, high = words[0::2], words[1::2]
    if np.any(high != (low >> 63)):
        raise BacktestError(f"INVALID_BARS: {what} holds a value beyond a 64-bit mantissa", "INVALID_BARS")
    return np.ascontiguousarray(low, dtype=np.int64)


def load_instrument(
    catalogs: list[Path], instrument_id: str, resolution: str, channel: str, start: int | None, end: int | None
) -> InstrumentBars:
    """Read, check and fold one instrument's bars (see the module docs)."""
    from nautilus_trader.persistence.catalog import ParquetDataCatalog

    problem = catalog_id_problem(instrument_id)
    if problem is not None:  # before any path is built from it
        raise BacktestError(f"INVALID_INSTRUMENT_ID: {problem}", "INVALID_INSTRUMENT_ID")
    if resolution not in STEP_NS:
        raise BacktestError(f"INVALID_RESOLUTION: {resolution!r}; allowed: {', '.join(STEP_NS)}", "INVALID_RESOLUTION")
    # The durable minute, folded; else, for a daily run, daily bars an import stored, as they are.
    source = "1m"
    root = find_root(catalogs, instrument_id, channel)
    if root is None and resolution == "1d":
        source, root = "1d", find_root(catalogs, instrument_id, channel, "1d")
    if root is None:
        wanted = bar_type_of(instrument_id, "1m", channel)
        daily = "" if resolution == "1d" else " (daily bars serve 1d runs only)"
        # The worker's directories are its own business: the reason names how many were read.
        raise BacktestError(
            f"NO_BARS: no catalog holds {wanted}{daily}; the worker reads {len(catalogs)} catalog "
            f"dirs ({channel.lower()} channel)",
            "NO_BARS",
        )
    found = ParquetDataCatalog(str(root)).instruments(instrument_ids=[instrument_id])
    if not found:
        raise BacktestError(
            f"NO_INSTRUMENT: a catalog holds bars of {instrument_id} but not the instrument", "NO_INSTRUMENT"
        )
    instrument = found[0]
    p, s = int(instrument.price_precision), int(instrument.size_precision)
    inputs = minute_columns(root, bar_type_of(instrument_id, source, channel), p, s, start, end)
    n = len(inputs["ts_event"])
    if n == 0 or source == "1d":
        columns, withheld = inputs, []
    else:
        folded = fold_columns(inputs["ts_event"], *(inputs[c] for c in COLUMNS), resolution=resolution, channel=channel)
        raw = folded.columns()
        columns = {"ts_event": np.frombuffer(raw["ts_event"], dtype="<u8").astype(np.uint64)}
        for name in COLUMNS:
            columns[name] = np.frombuffer(raw[name], dtype="<i8").astype(np.int64)
        withheld = [(int(a), int(b), str(r)) for a, b, r in folded.withheld()]
    return InstrumentBars(
        instrument_id, instrument, bar_type_of(instrument_id, resolution, channel), p, s, columns, withheld, n, source
    )


def nautilus_bars(bars: InstrumentBars) -> list[Any]:
    """The derived bars as framework ``Bar`` objects (``ts_event = ts_init`` = the close) at the
    instrument's precisions, built from the exact mantissas."""
    from nautilus_trader.model.data import Bar, BarType
    from nautilus_trader.model.objects import Price, Quantity

    bar_type = BarType.from_str(bars.bar_type)
    p, s = bars.price_precision, bars.size_precision
    pm, sm = 10 ** (FIXED_SCALE - p), 10 ** (FIXED_SCALE - s)
    price, qty = Price.from_raw, Quantity.from_raw
    c = bars.columns
    return [
        Bar(bar_type, price(o * pm, p), price(h * pm, p), price(lo * pm, p), price(cl * pm, p), qty(v * sm, s), ts, ts)
        for ts, o, h, lo, cl, v in zip(
            c["ts_event"].tolist(),
            c["open"].tolist(),
            c["high"].tolist(),
            c["low"].tolist(),
            c["close"].tolist(),
            c["volume"].tolist(),
            strict=True,
        )
    ]


def fingerprint(bars: InstrumentBars) -> dict[str, Any]:
    """One instrument's part of ``bar_fingerprint``: its bar type, precisions, bar count, a
    SHA-256 digest of the derived columns (little-endian, in ``ts_event, open, high, low,
    close, volume`` order) and the withheld spans."""
    digest = hashlib.sha256()
    for name in ("ts_event", *COLUMNS):
        digest.update(np.ascontiguousarray(bars.columns[name]).astype("<u8" if name == "ts_event" else "<i8").tobytes())
    return {
        "instrument_id": bars.instrument_id,
        "bar_type": bars.bar_type,
        "price_precision": bars.price_precision,
        "size_precision": bars.size_precision,
        "bars": len(bars),
        "sha256": digest.hexdigest(),
        "withheld": [[str(a), str(b), r] for a, b, r in bars.withheld],
    }
