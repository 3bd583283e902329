"""Offline folding: 1-minute bars in, derived bars and withheld buckets out, as Arrow.

The work happens in ``spine._core`` (Rust); this module only converts columns. Prices and
volumes are exact: give them as ``decimal128`` columns (the scale is read from the type), as
decimal strings (the wire's form, each exactly at ``price_precision`` / ``size_precision``) or
as int64 mantissas with those precisions. ``ts_event`` may be integer nanoseconds,
``timestamp[ns]`` or nanosecond strings. Floats are refused, never rounded.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa  # type: ignore[import-untyped]

from spine._core import (
    MAX_DECIMAL_SCALE,
    FoldResult,
    Series,
    fold_columns_many,
    parse_decimal_column,
    parse_timestamp_column,
)
from spine.errors import BarsError, DecimalError, TimestampError

__all__ = ["DERIVED_RESOLUTIONS", "RESOLUTIONS", "fold_bars", "load_batch", "series_batch"]

RESOLUTIONS = ("1m", "5m", "15m", "30m", "1h", "4h", "1d")
DERIVED_RESOLUTIONS = RESOLUTIONS[1:]
PRICE_COLUMNS = ("open", "high", "low", "close")
_STEP_NS = {"1m": 60, "5m": 300, "15m": 900, "30m": 1800, "1h": 3600, "4h": 14400, "1d": 86400}


def _refuse(text: str) -> BarsError:
    return BarsError(f"INVALID_BARS: {text}", "INVALID_BARS")


_U64 = 2**64 - 1


def _span(span: Any) -> tuple[int, int]:
    """A coverage span as two integer nanosecond instants: never a float rounded or a string
    parsed into one (a rounded end could turn a withheld bucket into a computed one)."""
    try:
        start, end = span
    except (TypeError, ValueError):
        raise _refuse(f"a coverage span is a (start, end) pair of ns integers, got {span!r}") from None
    for instant in (start, end):
        if isinstance(instant, bool) or not isinstance(instant, (int, np.integer)) or not 0 <= instant <= _U64:
            raise _refuse(
                f"coverage instant {instant!r} ({type(instant).__name__}) is not a nanosecond "
                "timestamp; allowed: integers 0..2^64-1 (floats are refused, never rounded)"
            )
    return int(start), int(end)


def _resolutions(resolutions: Any) -> list[str]:
    """One resolution name or an iterable of them; anything else names the argument."""
    if isinstance(resolutions, str):
        return [resolutions]
    names = None
    if not isinstance(resolutions, (bytes, bytearray, Mapping)):
        try:
            names = list(resolutions)
        except TypeError:
            pass
    if names is None or not all(isinstance(name, str) for name in names):
        raise _refuse(
            f"resolutions {resolutions!r} is not a resolution name or a list of them; allowed: "
            + ", ".join(RESOLUTIONS)
        )
    return names


def _spans(coverage: Any) -> list[Any]:
    """Coverage as a list of spans; a value that is no iterable of spans names the argument."""
    if not isinstance(coverage, (str, bytes, bytearray, Mapping)):
        try:
            return list(coverage)
        except TypeError:
            pass
    raise _refuse(
        f"coverage {coverage!r} is not a list of spans; allowed: (start, end) pairs of ns integers, "
        "or None (one span from the first open to the last close)"
    )


def _column(bars: Any, name: str) -> Any:
    try:
        return bars[name]
    except (KeyError, IndexError, TypeError) as error:
        raise _refuse(f"missing column {name!r}; need ts_event, open, high, low, close, volume") from error


def _timestamps(values: Any) -> npt.NDArray[np.uint64]:
    """ts_event as uint64 nanoseconds from an Arrow int/timestamp column or a numpy array."""
    if isinstance(values, pa.ChunkedArray | pa.Array):
        if values.null_count:
            raise _refuse("ts_event has nulls")
        if _is_text(values.type):
            return _parsed_timestamps(values.to_pylist())
        if pa.types.is_timestamp(values.type):
            if values.type.unit != "ns":
                raise _refuse(f"ts_event must be nanoseconds, got {values.type}")
            values = values.cast(pa.int64())
        elif not pa.types.is_integer(values.type):
            raise _refuse(
                f"ts_event is an Arrow {values.type} column; allowed: integer nanoseconds, "
                "nanosecond strings or timestamp[ns]"
            )
        values = values.to_numpy()
    array = _one_dimensional(values, "ts_event")
    if array.dtype.kind in "UO":
        return _parsed_timestamps(array.tolist())
    if array.dtype.kind not in "iu":
        raise _refuse(f"ts_event must hold integer nanoseconds, got dtype {array.dtype}")
    if array.dtype.kind == "i" and array.size and array.min() < 0:
        raise _refuse("ts_event must not be negative")
    return np.ascontiguousarray(array, dtype=np.uint64)


def _mantissas(values: Any, name: str, precision: int | None) -> tuple[npt.NDArray[np.int64], int]:
    """An exact column as int64 mantissas and its scale."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if isinstance(values, pa.Array):
        if values.null_count:
            raise _refuse(f"{name} has nulls")
        if pa.types.is_decimal(values.type):
            if precision is not None and precision != values.type.scale:
                raise _refuse(
                    f"{name} is {values.type} (scale {values.type.scale}) but precision {precision!r} "
                    "was given; give no precision with decimal columns, or the columns' own scale"
                )
            return _decimal_mantissas(values, name), _checked_scale(values.type.scale, name)
        if _is_text(values.type):
            return _parsed_decimals(values.to_pylist(), name, precision)
        if not pa.types.is_integer(values.type):
            raise _refuse(
                f"{name} is an Arrow {values.type} column; allowed: decimal128, decimal strings or integer mantissas"
            )
        values = values.to_numpy()
    array = _one_dimensional(values, name)
    if array.dtype.kind in "UO":
        return _parsed_decimals(array.tolist(), name, precision)
    if array.dtype.kind not in "iu":
        raise _refuse(f"{name} must be int64 mantissas or decimal128, got dtype {array.dtype} (floats are refused)")
    if precision is None:
        raise _refuse(f"{name} holds integer mantissas: pass price_precision and size_precision")
    if array.dtype == np.uint64 and array.size and array.max() > np.iinfo(np.int64).max:
        raise _refuse(f"{name} has a mantissa beyond int64")
    return np.ascontiguousarray(array, dtype=np.int64), _checked_scale(precision, name)


def _is_text(arrow_type: Any) -> bool:
    return bool(pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type))


def _parsed_timestamps(values: list[Any]) -> npt.NDArray[np.uint64]:
    """Nanosecond strings, each checked (digits only, no sign, within u64) in one Rust pass."""
    try:
        return np.frombuffer(parse_timestamp_column(values), dtype="<u8").astype(np.uint64)
    except (TimestampError, TypeError) as error:
        raise _refuse(f"ts_event: {error}") from error


def _parsed_decimals(values: list[Any], name: str, precision: int | None) -> tuple[npt.NDArray[np.int64], int]:
    """Decimal strings as mantissas at the precision given (each exact: more fractional digits
    than the precision is refused, never rounded), in one Rust pass."""
    if precision is None:
        raise _refuse(
            f"{name} holds decimal strings: pass price_precision and size_precision (the "
            "instrument's precisions, which every string must fit exactly)"
        )
    scale = _checked_scale(precision, name)
    try:
        mantissas = np.frombuffer(parse_decimal_column(values, scale), dtype="<i8").astype(np.int64)
    except (DecimalError, TypeError) as error:
        raise _refuse(f"{name}: {error}") from error
    return mantissas, scale


def _one_dimensional(values: Any, name: str) -> npt.NDArray[Any]:
    array = np.asarray(values)
    if array.ndim != 1:
        raise _refuse(f"{name} must be a 1-D column, got {array.ndim} dimensions")
    return array


def _checked_scale(scale: int, name: str) -> int:
    if type(scale) is not int:
        raise _refuse(
            f"{name} has precision {scale!r} ({type(scale).__name__}); allowed: an int 0 to {MAX_DECIMAL_SCALE}"
        )
    if not 0 <= scale <= MAX_DECIMAL_SCALE:
        raise _refuse(f"{name} has precision {scale}; allowed: 0 to {MAX_DECIMAL_SCALE}")
    return scale


def _decimal_mantissas(values: pa.Array, name: str) -> npt.NDArray[np.int64]:
    if values.type.bit_width != 128:
        raise _refuse(f"{name} must be decimal128, got {values.type}")
    words = np.frombuffer(values.buffers()[1], dtype="<i8")
    words = words[2 * values.offset : 2 * (values.offset + len(values))].reshape(-1, 2)
    low, high = words[:, 0], words[:, 1]
    if np.any(high != (low >> 63)):
        raise _refuse(f"{name} has a value beyond a signed 64-bit mantissa")
    return np.ascontiguousarray(low)


def _scale_of(columns: Mapping[str, int], names: Sequence[str]) -> int:
    scales = {columns[n] for n in names}
    if len(scales) != 1:
        raise _refuse(f"{', '.join(names)} must share one scale, got {sorted(scales)}")
    return scales.pop()


def _decimal_array(mantissas: npt.NDArray[np.int64], scale: int) -> pa.Array:
    words = np.empty((len(mantissas), 2), dtype="<i8")
    words[:, 0] = mantissas
    words[:, 1] = mantissas >> 63
    return pa.Array.from_buffers(pa.decimal128(38, scale), len(mantissas), [None, pa.py_buffer(words)])


def _result_table(result: FoldResult, price_scale: int, size_scale: int) -> pa.Table:
    raw = result.columns()
    ends = np.frombuffer(raw["ts_event"], dtype="<u8")
    step = _STEP_NS[result.resolution] * 1_000_000_000
    withheld = result.withheld()
    n, k = len(ends), len(withheld)
    timestamp = pa.timestamp("ns", tz="UTC")
    bar_columns = {
        "resolution": pa.array([result.resolution] * (n + k), pa.string()),
        "start": pa.array(np.concatenate([ends - step, [w[0] for w in withheld]]).astype("<i8"), timestamp),
        "ts_event": pa.array(np.concatenate([ends, [w[1] for w in withheld]]).astype("<i8"), timestamp),
    }
    for name in (*PRICE_COLUMNS, "volume"):
        scale = size_scale if name == "volume" else price_scale
        array = _decimal_array(np.frombuffer(raw[name], dtype="<i8"), scale)
        bar_columns[name] = pa.concat_arrays([array, pa.nulls(k, array.type)])
    bar_columns["withheld"] = pa.array([None] * n + [w[2] for w in withheld], pa.string())
    # Bars and withheld spans never overlap, so ordering by start interleaves them in time.
    return pa.table(bar_columns).sort_by("start")


def fold_bars(
    bars: Any,
    resolutions: str | Iterable[str] = DERIVED_RESOLUTIONS,
    *,
    channel: str = "EXTERNAL",
    coverage: Iterable[tuple[int, int]] | None = None,
    price_precision: int | None = None,
    size_precision: int | None = None,
) -> pa.Table:
    """Fold 1-minute bars to derived resolutions on the UTC calendar grid.

    ``bars``: a pyarrow Table / RecordBatch or a mapping of columns named ts_event (close
    time, ns), open, high, low, close, volume; strictly increasing, each a whole minute.
    ``coverage``: observed ``[start, end)`` spans in ns (default: one span from the first
    open to the last close). On EXTERNAL a minute missing inside coverage is a gap; on
    INTERNAL it is a no-trade minute.

    Returns one table, sorted by resolution (as given) then time: a row per derived bar
    (``withheld`` null) and a row per withheld span (prices null, ``withheld`` = reason).
    """
    names = _resolutions(resolutions)
    if not isinstance(channel, str):
        raise _refuse(f"channel {channel!r} is not a channel name; allowed: 'EXTERNAL', 'INTERNAL'")
    ts_event = _timestamps(_column(bars, "ts_event"))
    exact: dict[str, npt.NDArray[np.int64]] = {}
    scales: dict[str, int] = {}
    for name in PRICE_COLUMNS:
        exact[name], scales[name] = _mantissas(_column(bars, name), name, price_precision)
    exact["volume"], scales["volume"] = _mantissas(_column(bars, "volume"), "volume", size_precision)
    price_scale = _scale_of(scales, PRICE_COLUMNS)
    spans = None if coverage is None else [_span(span) for span in _spans(coverage)]
    if not names:
        raise _refuse("resolutions is empty; allowed: " + ", ".join(RESOLUTIONS))
    results = fold_columns_many(
        ts_event,
        exact["open"],
        exact["high"],
        exact["low"],
        exact["close"],
        exact["volume"],
        resolutions=names,
        channel=channel,
        coverage=spans,
    )
    tables = [_result_table(result, price_scale, scales["volume"]) for result in results]
    return pa.concat_tables(tables)


def series_batch(series: Series) -> pa.RecordBatch:
    """The bars a series holds as one Arrow record batch, oldest first: ``ts_event``
    (timestamp[ns, UTC], the close), ``sequence`` (uint64) and ``open``..``volume`` as
    decimal128 at the series' precisions. The columns wrap the core's buffers (no per-bar
    Python loop)."""
    raw = series.columns()
    ends = np.frombuffer(raw["ts_event"], dtype="<u8").astype("<i8")
    columns = {
        "ts_event": pa.array(ends, pa.timestamp("ns", tz="UTC")),
        "sequence": pa.array(np.frombuffer(raw["sequence"], dtype="<u8")),
    }
    for name in (*PRICE_COLUMNS, "volume"):
        scale = series.size_precision if name == "volume" else series.price_precision
        columns[name] = _decimal_array(np.frombuffer(raw[name], dtype="<i8"), scale)
    return pa.RecordBatch.from_pydict(columns)


def load_batch(series: Series, bars: Any) -> int:
    """Bulk load 1-minute bars (a record batch, table or mapping of columns, as ``fold_bars``
    takes them) into ``series`` through its arrival rule; returns the bars accepted. Decimal
    columns must carry the series' precisions exactly: a bar is never rescaled on the way in."""
    ts_event = _timestamps(_column(bars, "ts_event"))
    exact: dict[str, npt.NDArray[np.int64]] = {}
    for name in (*PRICE_COLUMNS, "volume"):
        wanted = series.size_precision if name == "volume" else series.price_precision
        exact[name], scale = _mantissas(_column(bars, name), name, wanted)
        if scale != wanted:
            raise _refuse(f"{name} has scale {scale}; this series holds precision {wanted}")
    return series.extend(ts_event, *(exact[name] for name in (*PRICE_COLUMNS, "volume")))
