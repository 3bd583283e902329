"""Documents as data frames for a notebook: bars, an equity curve, fills and other row lists.
Decimal strings become exact decimals (polars ``Decimal``, pandas ``decimal.Decimal`` objects),
nanosecond strings UTC timestamps; nothing passes through a float. polars or pandas is imported
only when asked for (neither is a dependency of Spine)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal
from typing import Any, Literal

__all__ = ["bars_frame", "equity_frame", "fills_frame", "frame"]

Backend = Literal["polars", "pandas"]

_BAR_DECIMALS = ("open", "high", "low", "close", "volume")
_EQUITY_DECIMALS = ("balance", "equity")
_FILL_DECIMALS = ("last_qty", "last_px", "commission")


def frame(
    rows: Iterable[Mapping[str, Any]],
    *,
    decimals: Sequence[str] = (),
    times: Sequence[str] = ("ts_event",),
    backend: Backend = "polars",
) -> Any:
    """``rows`` as a frame: the ``decimals`` columns exact, the ``times`` columns (integer
    nanoseconds as strings) UTC timestamps, the rest as served."""
    rows = list(rows)
    columns = list(rows[0]) if rows else [*times, *decimals]
    data = {name: [row.get(name) for row in rows] for name in columns}
    for name in decimals:
        data[name] = [None if v is None else Decimal(v) for v in data.get(name, [])]
    for name in times:
        data[name] = [None if v is None else int(v) for v in data.get(name, [])]
    if backend == "polars":
        return _polars(data, decimals, times)
    if backend == "pandas":
        return _pandas(data, times)
    raise ValueError(f"backend {backend!r}: allowed 'polars' or 'pandas'")


def _polars(data: dict[str, list[Any]], decimals: Sequence[str], times: Sequence[str]) -> Any:
    import polars as pl

    schema_overrides: dict[str, Any] = {name: _decimal_type(pl, name, data[name]) for name in decimals if name in data}
    schema_overrides |= {name: pl.Int64 for name in times if name in data}
    out = pl.DataFrame(data, schema_overrides=schema_overrides)
    return out.with_columns(pl.from_epoch(pl.col(name), time_unit="ns").dt.replace_time_zone("UTC") for name in times)


def _decimal_type(pl: Any, name: str, values: list[Decimal | None]) -> Any:
    """The column's exact polars type: the largest scale served, and room for the largest
    integer part; a column polars cannot hold exactly (over 38 digits) is refused, never nulled."""
    present = [(len(t.digits), t.exponent) for t in (v.as_tuple() for v in values if v is not None)]
    if any(not isinstance(exponent, int) for _, exponent in present):
        raise ValueError(f"{name}: a value is not a finite decimal")
    scale = max((-int(exponent) for _, exponent in present), default=0)
    whole = max((digits + int(exponent) for digits, exponent in present), default=1)
    if whole + scale > 38:
        raise ValueError(f"{name}: {whole} integer and {scale} decimal digits; a polars Decimal holds 38 (use pandas)")
    return pl.Decimal(38, scale)


def _pandas(data: dict[str, list[Any]], times: Sequence[str]) -> Any:
    import pandas as pd  # type: ignore[import-untyped]  # (no stubs pinned; a test dependency only)

    out = pd.DataFrame(data)
    for name in times:
        out[name] = pd.to_datetime(pd.Series(data[name], dtype="Int64"), unit="ns", utc=True)
    return out


def bars_frame(bars: Mapping[str, Any] | Iterable[Mapping[str, Any]], *, backend: Backend = "polars") -> Any:
    """A bar page (or its ``bars``): sequence, ts_event (the close), open, high, low, close, volume."""
    rows = bars["bars"] if isinstance(bars, Mapping) else bars
    return frame(rows, decimals=_BAR_DECIMALS, backend=backend)


def equity_frame(points: Mapping[str, Any] | Iterable[Mapping[str, Any]], *, backend: Backend = "polars") -> Any:
    """A backtest's ``equity`` (or ``equity_daily``) output page, or its items."""
    rows = points["items"] if isinstance(points, Mapping) else points
    return frame(rows, decimals=_EQUITY_DECIMALS, backend=backend)


def fills_frame(fills: Mapping[str, Any] | Iterable[Mapping[str, Any]], *, backend: Backend = "polars") -> Any:
    """A backtest's ``fills`` output page, or its items: each trade's fill, exact."""
    rows = fills["items"] if isinstance(fills, Mapping) else fills
    return frame(rows, decimals=_FILL_DECIMALS, backend=backend)
