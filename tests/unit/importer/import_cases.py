"""Shared pieces of the importer tests: writing bar files, running an import quietly, reading
a catalog back through NautilusTrader and, independently, through polars, and snapshotting a
directory to prove nothing was written."""

from __future__ import annotations

import csv
import hashlib
from decimal import Decimal
from pathlib import Path
from typing import Any

import polars as pl
from nautilus_trader.persistence.catalog import ParquetDataCatalog

from spine.importer import ImportOptions, Summary, run_import
from spine.importer.progress import Progress

M = 60 * 10**9
DAY = 86_400 * 10**9
T0 = 1_704_067_200 * 10**9  # 2024-01-01T00:00:00Z
HEADER = ["ts_event", "open", "high", "low", "close", "volume"]
Row = tuple[Any, ...]


def write_csv(path: Path, rows: list[Row], header: list[str] = HEADER) -> Path:
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def minute_rows(n: int, start: int = T0 + M) -> list[Row]:
    """``n`` valid bars as text, closing on consecutive minutes."""
    rows = []
    for k in range(n):
        o = Decimal(100) + Decimal(k % 13) / 4
        c = o + Decimal(k % 5 - 2) / 8
        rows.append(
            (
                start + k * M,
                str(o),
                str(max(o, c) + Decimal("0.5")),
                str(min(o, c) - Decimal("0.25")),
                str(c),
                f"{k % 9}.{k % 10}",
            )
        )
    return rows


def run(tmp_path: Path, file: Path, venue: str = "TEST", **options: Any) -> Summary:
    return run_import(
        ImportOptions(file=file, venue=venue, catalog_dir=tmp_path / "catalog", **options),
        progress=Progress(None, enabled=False),
    )


def stored(root: Path, bar_type: str) -> list[Row]:
    """(ts_event, open, high, low, close, volume) as Decimals, read by NautilusTrader."""
    bars = ParquetDataCatalog(str(root)).bars(bar_types=[bar_type])
    return [(b.ts_event, *(Decimal(str(v)) for v in (b.open, b.high, b.low, b.close, b.volume))) for b in bars]


def stored_text(root: Path, bar_type: str) -> list[tuple[str, ...]]:
    """The stored values as NautilusTrader's strings (at the instrument's precision)."""
    bars = ParquetDataCatalog(str(root)).bars(bar_types=[bar_type])
    return [tuple(str(v) for v in (b.open, b.high, b.low, b.close, b.volume)) for b in bars]


def polars_rows(root: Path, bar_type: str) -> list[Row]:
    """The same rows decoded without NautilusTrader: polars reinterprets the fixed-point
    columns as little-endian i128 at scale 1e16 (nautilus-notes section 10). The notes' cast
    to Decimal(38, 16) overflows from 10^6 up (22 integer digits), so the scale is applied
    to the exact integers here."""
    files = sorted((root / "data" / "bar" / bar_type).glob("*.parquet"))
    frame = pl.concat([pl.read_parquet(f) for f in files]).sort("ts_event")
    raw = frame.select(
        pl.col("ts_event"),
        *(
            pl.col(c).bin.reinterpret(dtype=pl.Int128, endianness="little").alias(c)
            for c in ("open", "high", "low", "close", "volume")
        ),
    )
    return [(ts, *(Decimal(v).scaleb(-16) for v in values)) for ts, *values in raw.iter_rows()]


def expected(rows: list[Row]) -> list[Row]:
    return [(int(r[0]), *(Decimal(str(v)) for v in r[1:])) for r in rows]


def snapshot(directory: Path) -> dict[str, str]:
    """Every path under ``directory`` with a digest of each file's bytes."""
    if not directory.exists():
        return {}
    return {
        str(p.relative_to(directory)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
        for p in sorted(directory.rglob("*"))
    }
