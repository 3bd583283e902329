"""Turning record batches into exact columns, checking each rule as it goes.

- Prices and volumes are read as decimal text: CSV cells, Parquet string columns, decimal128
  columns (their text at the type's scale) and integer columns. The grammar is the wire's
  (``-?(0|[1-9][0-9]*)(\\.[0-9]+)?``, surrounding blanks trimmed). A value is exact at a
  precision when its value is (``1.500`` is exact at 2; ``1.505`` is not); never rounded.
- Without a stated precision, a batch parses at the largest number of decimals written in it
  (at most ``INFERRED_MAX``); :func:`rescale` brings every batch to the file's largest at the
  end (the inferred precision).
- Float columns (Parquet float32/float64) need the precision flag; each float becomes its
  shortest round-trip text (``numpy.format_float_positional(unique=True)``, so float32 reads
  as float32) and must be exact at that precision.
- ``high >= max(open, close)``, ``low <= min(open, close)``, ``volume >= 0``.
- The timestamp is the bar's CLOSE (NautilusTrader's ``ts_event``) unless ``--open-time``
  says it is the open (close = open + step): nanoseconds as integers (values below 10^17,
  i.e. before 1973-03-03, are refused as seconds, milliseconds or microseconds), ISO-8601 text
  (an offset is converted to UTC; text without one is read as UTC), Parquet timestamp (a
  zone-less one read as UTC) or date columns. Closes are strictly increasing and on the step's
  grid (whole minutes; 00:00 UTC for daily bars).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import numpy as np
import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.compute as pc  # type: ignore[import-untyped]
from numpy.typing import NDArray

from spine._core import format_decimal, parse_decimal, parse_decimal_column
from spine.errors import DecimalError
from spine.importer.config import MAX_PRECISION, STEPS
from spine.importer.refusal import ImportRefused, where

__all__ = ["INFERRED_MAX", "Chunk", "Fixed", "Parser", "iso", "rescale"]

I64 = NDArray[np.int64]
_STEPS = {name: step.ns for name, step in STEPS.items()}
_INT64_MAX = 2**63 - 1
_EPOCH_FLOOR = 10**17  # 1973-03-03T09:46:40Z in nanoseconds
#: The largest precision read off the digits without a flag: more is float noise
#: (``110.00000000000001``), refused naming the row.
INFERRED_MAX = 8
#: Local midnight with a zone offset other than UTC (``2004-08-19 00:00:00-04:00``, a
#: yfinance daily export): the daily bar of that local date.
_LOCAL_MIDNIGHT = r"^([0-9]{4}-[0-9]{2}-[0-9]{2})[T ]00:00(?::00(?:\.0+)?)?[+-](?:0[1-9]|1[0-9]|2[0-3]):?[0-5][0-9]$"
_DECIMAL_GRAMMAR = "plain decimal text such as 123.45 (no exponent, no '+', no thousands separator)"


@dataclass(frozen=True)
class Fixed:
    """A precision that is not inferred, and what fixed it (for refusals)."""

    precision: int
    source: str
    #: Stated by its flag: only a flag's precision admits float columns.
    flag: bool = False


@dataclass
class Chunk:
    """One batch's bars as exact columns: closes (ns), int64 mantissas of open, high, low,
    close at ``price_scale`` and of volume at ``size_scale``; ``first_row`` is 1-based."""

    first_row: int
    ts: I64
    prices: list[I64]
    volume: I64
    price_scale: int
    size_scale: int


def iso(ns: int) -> str:
    """A close time as ISO-8601 UTC (to the nanosecond when it has one)."""
    seconds, fraction = divmod(ns, 10**9)
    text = (datetime(1970, 1, 1, tzinfo=UTC) + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%S")
    return text + (f".{fraction:09d}Z" if fraction else "Z")


def _unit_hint(value: int) -> str:
    if value >= 10**14:
        return "microseconds"
    return "milliseconds" if value >= 10**11 else "seconds"


@dataclass(kw_only=True)
class Parser:
    """Parses batch after batch of one file (see the module docs); keeps the last close so
    ordering is checked across batches."""

    csv: bool
    step_ns: int
    step_name: str
    open_time: bool
    price: Fixed | None
    size: Fixed | None
    #: Rows parsed so far (over every batch).
    rows: int = field(default=0, init=False)
    _last: int | None = field(default=None, init=False)
    #: The smallest spacing of consecutive closes yet, and the (1-based) row that ends it.
    _gap: tuple[int, int] | None = field(default=None, init=False)

    def _at(self, index: int) -> str:
        return where(self.rows + index + 1, self.csv)

    def parse(self, batch: pa.RecordBatch) -> Chunk:
        """Check and convert one batch; raises :class:`ImportRefused` naming the row."""
        for name in batch.schema.names:
            column = batch.column(name)
            if column.null_count:
                index = int(pc.index(pc.is_null(column), True).as_py())
                raise ImportRefused(
                    f"{self._at(index)}: {name if name != 'ts' else 'the timestamp'} is empty; "
                    "allowed: a value in every column"
                )
        ts = self._timestamps(batch.column("ts"))
        texts = {name: self._texts(batch.column(name), name) for name in ("open", "high", "low", "close", "volume")}
        price_scale = (
            self.price.precision if self.price else max(self._inferred(texts[n], n) for n in texts if n != "volume")
        )
        size_scale = self.size.precision if self.size else self._inferred(texts["volume"], "volume")
        prices = [self._mantissas(texts[n], n, price_scale, self.price) for n in ("open", "high", "low", "close")]
        volume = self._mantissas(texts["volume"], "volume", size_scale, self.size)
        self._check_bars(prices, volume, price_scale, size_scale)
        self._check_times(ts)
        chunk = Chunk(self.rows + 1, ts, prices, volume, price_scale, size_scale)
        self.rows += batch.num_rows
        return chunk

    # timestamps

    def _timestamps(self, column: pa.Array) -> I64:
        kind = column.type
        ns: I64
        if pa.types.is_integer(kind):
            values = column.to_numpy()
            if (values < 0).any():
                index = int(np.argmax(values < 0))
                raise ImportRefused(
                    f"{self._at(index)}: timestamp {values[index]} is negative; allowed: "
                    "nanoseconds since 1970-01-01 UTC"
                )
            if (values > _INT64_MAX).any():
                index = int(np.argmax(values > _INT64_MAX))
                raise ImportRefused(
                    f"{self._at(index)}: timestamp {values[index]} is past 2262; allowed: "
                    "nanoseconds since 1970-01-01 UTC"
                )
            ns = values.astype(np.int64)
            self._check_epoch(ns, np.ones(len(ns), dtype=bool))
        elif pa.types.is_timestamp(kind) or pa.types.is_date(kind):
            ns = pc.cast(pc.cast(column, pa.timestamp("ns")), pa.int64()).to_numpy().astype(np.int64)
        elif pa.types.is_string(kind) or pa.types.is_large_string(kind):
            column = pc.utf8_trim_whitespace(column)
            if self.step_name == "1d":  # a stamp at local midnight labels its local date
                column = pc.replace_substring_regex(column, _LOCAL_MIDNIGHT, r"\1")
            ns = self._text_timestamps(column)
        else:
            raise ImportRefused(
                f"the timestamp column is {kind}; allowed: integer nanoseconds, ISO-8601 text, "
                "Parquet timestamp or date"
            )
        if (ns < 0).any():
            index = int(np.argmax(ns < 0))
            raise ImportRefused(
                f"{self._at(index)}: timestamp {_cell(column, index)} is before 1970-01-01; "
                "allowed: 1970 onwards (NautilusTrader timestamps are unsigned)"
            )
        if self.open_time:
            ns = ns + self.step_ns
        elif self.step_name == "1d":
            ns = ns + self.step_ns * _dates(column)  # a date is that day's bar: it closes at the next midnight
        return ns

    def _text_timestamps(self, texts: pa.Array) -> I64:
        digits = pc.match_substring_regex(texts, r"^[0-9]+$").to_numpy(zero_copy_only=False)
        values = texts.to_pylist()
        ns = np.zeros(len(values), dtype=np.int64)
        for index in np.flatnonzero(digits).tolist():
            number = int(values[index])
            if number > _INT64_MAX:
                raise ImportRefused(
                    f"{self._at(index)}: timestamp {number} is past 2262; allowed: nanoseconds since 1970-01-01 UTC"
                )
            ns[index] = number
        self._check_epoch(ns, digits)
        others = np.flatnonzero(~digits)
        if len(others):
            ns[others] = self._iso(texts.take(pa.array(others)), others)
        return ns

    def _iso(self, texts: pa.Array, rows: NDArray[np.int64]) -> I64:
        """ISO-8601 text as UTC nanoseconds: a date alone is its midnight, text without a zone
        is UTC (Arrow's own ISO-8601 parser, given an explicit zone)."""
        zone = pc.match_substring_regex(texts, r"(Z|[+-][0-9]{2}:?[0-9]{2})$")
        date = pc.match_substring_regex(texts, r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")
        zoned = pc.if_else(
            date,
            pc.binary_join_element_wise(texts, "T00:00:00Z", ""),
            pc.if_else(zone, texts, pc.binary_join_element_wise(texts, "Z", "")),
        )
        try:
            parsed: I64 = zoned.cast(pa.timestamp("ns", tz="UTC")).cast(pa.int64()).to_numpy().astype(np.int64)
            return parsed
        except pa.ArrowInvalid:
            pass
        for index, text in enumerate(zoned.to_pylist()):
            try:
                pa.array([text]).cast(pa.timestamp("ns", tz="UTC"))
            except pa.ArrowInvalid:
                raise ImportRefused(
                    f"{self._at(int(rows[index]))}: timestamp {texts[index].as_py()!r} is not a time; allowed: "
                    "nanoseconds since 1970-01-01 UTC or ISO-8601 text such as 2024-01-01T00:01:00Z"
                ) from None
        raise AssertionError("Arrow refused a column every value of which parses")

    def _check_epoch(self, ns: I64, integral: NDArray[np.bool_]) -> None:
        small = integral & (ns < _EPOCH_FLOOR)
        if small.any():
            index = int(np.argmax(small))
            value = int(ns[index])
            raise ImportRefused(
                f"{self._at(index)}: timestamp {value} reads as {iso(value)} in nanoseconds; it looks "
                f"like {_unit_hint(value)}; allowed: integer nanoseconds since 1970-01-01 UTC "
                "(from 1973-03-03 on) or ISO-8601 text"
            )

    # values

    def _texts(self, column: pa.Array, name: str) -> pa.Array:
        kind = column.type
        fixed = self.size if name == "volume" else self.price
        if pa.types.is_string(kind) or pa.types.is_large_string(kind):
            return pc.utf8_trim_whitespace(column)
        if pa.types.is_decimal(kind):
            if kind.scale < 0:
                raise ImportRefused(f"column {name} is {kind}; allowed: decimals with scale >= 0")
            return pc.cast(column, pa.string())
        if pa.types.is_integer(kind):
            return pc.cast(column, pa.string())
        if pa.types.is_floating(kind):
            if fixed is None or not fixed.flag:
                flag = "--size-precision" if name == "volume" else "--price-precision"
                raise ImportRefused(
                    f"column {name} is {kind}: floats are not exact decimal text; allowed: decimal "
                    f"text, decimal128 or integer columns, or pass {flag} N and every float must be "
                    "exact at N"
                )
            return pa.array([_float_text(v) for v in column.to_numpy(zero_copy_only=False)], pa.string())
        raise ImportRefused(
            f"column {name} is {kind}; allowed: decimal text, decimal128, integer (or float with a precision flag)"
        )

    def _inferred(self, texts: pa.Array, name: str) -> int:
        """The largest number of decimals ``texts`` write, within NautilusTrader's precision."""
        if len(texts) == 0:
            return 0
        scales = _written_scales(texts)
        index = int(np.argmax(scales))
        if scales[index] > INFERRED_MAX:
            flag = "--size-precision" if name == "volume" else "--price-precision"
            raise ImportRefused(
                f"{self._at(index)}: {name} {texts[index].as_py()!r} writes {scales[index]} decimals; "
                f"allowed: at most {INFERRED_MAX} without a precision flag (more is float noise such as "
                f"110.00000000000001), or {flag} N (N at most {MAX_PRECISION}) when the digits are real"
            )
        return int(scales[index])

    def _mantissas(self, texts: pa.Array, name: str, scale: int, fixed: Fixed | None) -> I64:
        # Trailing fractional zeros carry no value: drop them so "1.500" is exact at scale 2.
        trimmed = pc.replace_substring_regex(texts, r"^(-?[0-9]+\.[0-9]*?)0+$", r"\1")
        values = pc.replace_substring_regex(trimmed, r"\.$", "").to_pylist()
        try:
            return np.frombuffer(parse_decimal_column(values, scale), dtype="<i8").astype(np.int64)
        except DecimalError:
            pass
        what = "size" if name == "volume" else "price"
        stated = f" ({fixed.source})" if fixed else ""
        original = texts.to_pylist()
        for index, value in enumerate(values):
            try:
                mantissa = parse_decimal(value, scale)
            except DecimalError as error:
                if error.symbol == "DECIMAL_SCALE_EXCEEDED":
                    raise ImportRefused(
                        f"{self._at(index)}: {name} {original[index]!r} is not exact at {what} "
                        f"precision {scale}{stated}; allowed: at most {scale} decimals"
                    ) from None
                raise ImportRefused(
                    f"{self._at(index)}: {name} {original[index]!r} is not a decimal number; "
                    f"allowed: {_DECIMAL_GRAMMAR}"
                ) from None
            if not -_INT64_MAX <= mantissa <= _INT64_MAX:
                raise ImportRefused(
                    f"{self._at(index)}: {name} {original[index]!r} is out of range at {what} "
                    f"precision {scale}; allowed: |value| x 10^{scale} below 2^63"
                ) from None
        raise AssertionError("parse_decimal_column refused a column every value of which parses")

    def _check_bars(self, prices: list[I64], volume: I64, price_scale: int, size_scale: int) -> None:
        o, h, lo, c = prices
        bad = (h < np.maximum(o, c)) | (lo > np.minimum(o, c))
        if bad.any():
            i = int(np.argmax(bad))
            values = ", ".join(
                f"{n} {format_decimal(int(a[i]), price_scale)}"
                for n, a in zip(("open", "high", "low", "close"), prices, strict=True)
            )
            raise ImportRefused(
                f"{self._at(i)}: {values}; allowed: high >= max(open, close) and low <= min(open, close)"
            )
        if (volume < 0).any():
            i = int(np.argmax(volume < 0))
            raise ImportRefused(
                f"{self._at(i)}: volume {format_decimal(int(volume[i]), size_scale)}; allowed: volume >= 0"
            )

    def _check_times(self, ts: I64) -> None:
        label = "close" if not self.open_time else "close (open + step)"
        off = ts % self.step_ns != 0
        if off.any():
            i = int(np.argmax(off))
            grid = "a whole minute" if self.step_name == "1m" else "00:00 UTC"
            hint = "" if self.open_time else " (a file stamped with each bar's open wants --open-time)"
            raise ImportRefused(
                f"{self._at(i)}: {label} {iso(int(ts[i]))} is not on {grid}; allowed: "
                f"{self.step_name} bars close on {grid}{hint}"
            )
        full = ts if self._last is None else np.concatenate((np.array([self._last], dtype=np.int64), ts))
        base = 0 if self._last is None else 1  # full[j] is ts[j - base]
        back = full[1:] <= full[:-1]
        if back.any():
            j = int(np.argmax(back)) + 1
            i = j - base
            a, b = int(full[j - 1]), int(full[j])
            what = "a duplicate of" if a == b else "before"
            raise ImportRefused(
                f"{self._at(i)}: {label} {iso(b)} is {what} {iso(a)} in {self._at(i - 1)}; allowed: "
                "strictly increasing times, one bar per close (sort the file, drop duplicates)"
            )
        if len(full) > 1:
            gaps = np.diff(full)
            j = int(np.argmin(gaps))
            if self._gap is None or gaps[j] < self._gap[0]:
                self._gap = (int(gaps[j]), self.rows + j + 2 - base)
        if len(ts):
            self._last = int(ts[-1])

    def finish(self) -> None:
        """The file-wide check, after the last batch: consecutive bars as close as the step
        somewhere (a daily file read as 1-minute bars would be every row a day apart)."""
        if self._gap is None or self._gap[0] == self.step_ns:
            return
        gap, row = self._gap
        fits = next((name for name, ns in _STEPS.items() if ns == gap), None)
        hint = f"give --step {fits}" if fits else f"resample them to {self.step_name} bars"
        raise ImportRefused(
            f"{where(row, self.csv)}: the closest bars are {_span(gap)} apart (its close and the one before "
            f"it); allowed: {self.step_name} bars, {_span(self.step_ns)} apart at least once: {hint}"
        )


def _span(ns: int) -> str:
    """A spacing in words: ``1 minute``, ``5 minutes``, ``1 day``, ``36 hours``."""
    for unit, size in (("day", 86_400), ("hour", 3_600), ("minute", 60), ("second", 1)):
        if ns % (size * 10**9) == 0:
            count = ns // (size * 10**9)
            return f"{count} {unit}{'s' if count != 1 else ''}"
    return f"{ns} ns"


def _dates(column: pa.Array) -> NDArray[np.int64]:
    """1 where a timestamp is a date alone (a date column, or ``YYYY-MM-DD`` text), else 0."""
    if pa.types.is_date(column.type):
        return np.ones(len(column), dtype=np.int64)
    if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
        dates = pc.match_substring_regex(column, r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")
        flags: NDArray[np.int64] = dates.to_numpy(zero_copy_only=False).astype(np.int64)
        return flags
    return np.zeros(len(column), dtype=np.int64)


def _cell(column: pa.Array, index: int) -> str:
    return repr(column[index].as_py())


def _float_text(value: np.floating) -> str:
    text = np.format_float_positional(value, unique=True, trim="-")
    return "0" if text == "-0" else text


def _written_scales(texts: pa.Array) -> NDArray[np.int64]:
    """The number of decimals each text writes."""
    point = pc.find_substring(texts, ".").to_numpy(zero_copy_only=False)
    length = pc.utf8_length(texts).to_numpy(zero_copy_only=False)
    scales: NDArray[np.int64] = np.where(point >= 0, length - point - 1, 0).astype(np.int64)
    return scales


def rescale(chunks: list[Chunk], price_scale: int, size_scale: int, csv: bool) -> None:
    """Bring every chunk to the file's precisions (in place), refusing a value whose mantissa
    would leave int64 (the range Spine's bar kernels hold)."""
    for chunk in chunks:
        for index, column in enumerate(chunk.prices):
            chunk.prices[index] = _scaled(column, chunk.price_scale, price_scale, chunk.first_row, csv)
        chunk.volume = _scaled(chunk.volume, chunk.size_scale, size_scale, chunk.first_row, csv)
        chunk.price_scale, chunk.size_scale = price_scale, size_scale


def _scaled(column: I64, scale: int, target: int, first_row: int, csv: bool) -> I64:
    if scale == target:
        return column
    factor = 10 ** (target - scale)
    limit = _INT64_MAX // factor
    over = np.abs(column) > limit
    if over.any():
        i = int(np.argmax(over))
        raise ImportRefused(
            f"{where(first_row + i, csv)}: {format_decimal(int(column[i]), scale)} is out of range at "
            f"precision {target}; allowed: |value| x 10^{target} below 2^63"
        )
    scaled: I64 = column * factor
    return scaled
