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
    if backend == "polars":
        return _polars(data, [n for n in decimals if n in data], [n for n in times if n in data])
    if backend == "pandas":
        return _pandas(data, decimals, times)
    raise ValueError(f"backend {backend!r}: allowed 'polars' or 'pandas'")


def _polars(data: dict[str, list[Any]], decimals: Sequence[str], times: Sequence[str]) -> Any:
    """The served strings parsed by polars itself (Rust): each decimal column at its largest
    served scale, refused when a value does not fit (polars would null it), never nulled."""
    import polars as pl

    out = pl.DataFrame(data, schema_overrides={name: pl.String for name in (*decimals, *times)})
    exact = []
    for name in decimals:
        served = out[name]
        scale = out.select(pl.col(name).str.extract(r"\.(\d+)$").str.len_chars().max()).item() or 0
        parsed = served.str.to_decimal(scale=scale)
        if parsed.null_count() != served.null_count():
            lost = served.filter(parsed.is_null() & served.is_not_null())[0]
            raise ValueError(f"{name}: {lost} does not fit a polars Decimal(38, {scale}) (use pandas)")
        exact.append(parsed)
    times_utc = (pl.from_epoch(pl.col(n).cast(pl.Int64), time_unit="ns").dt.replace_time_zone("UTC") for n in times)
    return out.with_columns(*exact, *times_utc)


def _pandas(data: dict[str, list[Any]], decimals: Sequence[str], times: Sequence[str]) -> Any:
    import pandas as pd  # type: ignore[import-untyped]  # (no stubs pinned; a test dependency only)

    for name in decimals:
        data[name] = [None if v is None else Decimal(v) for v in data.get(name, [])]
    out = pd.DataFrame(data)
    for name in times:
        nanos = [None if v is None else int(v) for v in data.get(name, [])]
        out[name] = pd.to_datetime(pd.Series(nanos, dtype="Int64"), unit="ns", utc=True)
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
