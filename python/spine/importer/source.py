"""Reading a bar file: CSV (``.csv``, ``.csv.gz``) or Parquet (``.parquet``, ``.pq``), in
Arrow record batches of the six columns, so long files stream.

Headers are matched case-insensitively after trimming: ``open``, ``high``, ``low``,
``close``, ``volume`` and exactly one timestamp column, ``ts_event`` or one of its aliases
``timestamp``, ``time``, ``date``. Other columns are ignored. CSV cells are read as text
(never as floats); Parquet columns keep their types for :mod:`spine.importer.parse`.
"""

from __future__ import annotations

import csv
import gzip
import io
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.csv as pacsv  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]

from spine.importer.refusal import ImportRefused

__all__ = ["BarFile", "TIMESTAMP_NAMES", "VALUE_NAMES", "open_bar_file"]

TIMESTAMP_NAMES = ("ts_event", "timestamp", "time", "date")
VALUE_NAMES = ("open", "high", "low", "close", "volume")
BATCH_ROWS = 65_536


@dataclass
class BarFile:
    """An opened bar file: its kind, the header name of each column, the row count when it is
    known without reading (Parquet metadata; a plain CSV's line count)."""

    path: Path
    csv: bool
    columns: dict[str, str]  # our name ("ts" or a value name) -> the file's header name
    total: int | None

    def batches(self) -> Iterator[pa.RecordBatch]:
        """Record batches with columns named ``ts``, ``open`` ... ``volume``."""
        names = ["ts", *VALUE_NAMES]
        if self.csv:
            yield from self._csv_batches(names)
            return
        try:
            parquet = pq.ParquetFile(self.path)
            for batch in parquet.iter_batches(batch_size=BATCH_ROWS, columns=[self.columns[n] for n in names]):
                yield pa.RecordBatch.from_arrays(batch.columns, names=names)
        except (pa.ArrowException, OSError) as error:
            raise ImportRefused(f"{self.path}: unreadable Parquet data: {error}") from None

    def _csv_batches(self, names: list[str]) -> Iterator[pa.RecordBatch]:
        header = list(self.columns.values())
        convert = pacsv.ConvertOptions(
            column_types={h: pa.string() for h in header},
            include_columns=header,
            strings_can_be_null=False,
            quoted_strings_can_be_null=False,
        )
        try:
            reader = pacsv.open_csv(
                pa.input_stream(str(self.path), compression="detect"),
                read_options=pacsv.ReadOptions(block_size=4 << 20),
                convert_options=convert,
            )
            for batch in reader:
                yield pa.RecordBatch.from_arrays([batch.column(self.columns[n]) for n in names], names=names)
        except (pa.ArrowException, UnicodeDecodeError) as error:
            raise ImportRefused(f"{self.path}: not a well-formed CSV file: {error}") from None


def _suffix(path: Path) -> str:
    name = path.name.lower()
    for suffix in (".csv.gz", ".csv", ".parquet", ".pq"):
        if name.endswith(suffix):
            return suffix
    raise ImportRefused(f"{path}: allowed file kinds .csv, .csv.gz, .parquet, .pq")


def _map_columns(path: Path, header: list[str]) -> dict[str, str]:
    by_name: dict[str, str] = {}
    for name in header:
        key = name.strip().lower()
        if key in by_name:
            raise ImportRefused(f"{path}: the header holds {key!r} twice ({by_name[key]!r}, {name!r})")
        by_name[key] = name
    stamps = [n for n in TIMESTAMP_NAMES if n in by_name]
    missing = [n for n in VALUE_NAMES if n not in by_name]
    if len(stamps) != 1 or missing:
        need = ", ".join(missing + ([] if stamps else ["ts_event (or timestamp, time, date)"]))
        problem = (
            f"missing {need}"
            if need
            else f"several timestamp columns ({', '.join(stamps)}); keep one of ts_event, timestamp, time, date"
        )
        raise ImportRefused(
            f"{path}: {problem}; the header holds {', '.join(header) or 'nothing'}; "
            "allowed: ts_event (or timestamp, time, date), open, high, low, close, volume"
        )
    return {"ts": by_name[stamps[0]], **{n: by_name[n] for n in VALUE_NAMES}}


def _csv_rows(path: Path, compressed: bool) -> int | None:
    """Data rows of a plain CSV, from its line count (a compressed one: unknown)."""
    if compressed:
        return None
    lines, last = 0, b"\n"
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 22):
            lines += chunk.count(b"\n")
            last = chunk[-1:]
    return max(0, lines + (last != b"\n") - 1)


def open_bar_file(path: Path) -> BarFile:
    """Open ``path`` and map its header (refused, naming what is wrong, when it does not fit)."""
    suffix = _suffix(path)
    if not path.is_file():
        raise ImportRefused(f"{path}: no such file")
    if suffix in (".parquet", ".pq"):
        try:
            parquet = pq.ParquetFile(path)
        except (pa.ArrowInvalid, OSError) as error:
            raise ImportRefused(f"{path}: not a Parquet file: {error}") from None
        return BarFile(path, False, _map_columns(path, parquet.schema_arrow.names), parquet.metadata.num_rows)
    compressed = suffix == ".csv.gz"
    raw = gzip.open(path, "rb") if compressed else path.open("rb")
    with raw, io.TextIOWrapper(raw, encoding="utf-8-sig", newline="") as text:
        try:
            header = next(csv.reader(text), [])
        except (UnicodeDecodeError, csv.Error, OSError) as error:
            raise ImportRefused(f"{path}: unreadable CSV header: {error}") from None
    return BarFile(path, True, _map_columns(path, header), _csv_rows(path, compressed))
