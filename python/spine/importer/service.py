"""One import, start to finish: open the file, read what the root holds, parse and check
every row, then write the instrument and the new bars at once (see :mod:`.catalog`).

Precisions: a flag states one; else a re-import into an instrument the root defines uses that
definition's (a flag that differs, or a file needing more decimals, is refused with a pointer
to ``--replace``); else it is inferred, the largest number of decimals the file writes. An
Equity's size precision is 0.

Re-importing: rows closing at or before the bar type's last stored close must equal the
stored bars (they are skipped, so an updated full-history file re-imports cleanly); any other
such row is refused, suggesting ``--replace``, which rewrites the bar type (and the
definition) from this file alone.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from nautilus_trader.model.data import Bar, BarType
from nautilus_trader.model.objects import FIXED_PRECISION, PRICE_MAX, QUANTITY_MAX

from spine._core import format_decimal
from spine.importer.catalog import Existing, inspect, place, stored_bars
from spine.importer.config import ImportOptions
from spine.importer.instrument import make_instrument, pair_base
from spine.importer.parse import Chunk, Fixed, Parser, iso, rescale
from spine.importer.progress import Progress
from spine.importer.refusal import ImportRefused, where
from spine.importer.source import open_bar_file

__all__ = ["Summary", "run_import"]


@dataclass(frozen=True)
class Summary:
    """What an import wrote."""

    instrument_id: str
    definition: str
    bar_type: str
    bars: int
    skipped: int
    first_close: int | None
    last_close: int | None
    price_precision: int
    size_precision: int
    root: Path
    replaced: bool

    def line(self) -> str:
        span = (
            f"first close {iso(self.first_close)}, last close {iso(self.last_close)}"
            if self.first_close is not None and self.last_close is not None
            else "no new bars"
        )
        skipped = f" ({self.skipped:,} already stored, skipped)" if self.skipped else ""
        action = "replaced" if self.replaced else "imported"
        return (
            f"{action} {self.bars:,} bars{skipped} of {self.instrument_id} ({self.definition}) as "
            f"{self.bar_type}: {span}; price precision {self.price_precision}, size precision "
            f"{self.size_precision}; catalog {self.root.resolve()}"
        )


def _definition(symbol: str, quote: str) -> str:
    base = pair_base(symbol, quote)
    return f"CurrencyPair {base}/{quote}" if base is not None else f"Equity in {quote}"


def _stored_definition(instrument: Any) -> str:
    name = type(instrument).__name__
    if name == "CurrencyPair":
        return f"CurrencyPair {instrument.base_currency.code}/{instrument.quote_currency.code}"
    return f"{name} in {instrument.quote_currency.code}"


def _fixed(options: ImportOptions, existing: Existing, definition: str) -> tuple[Fixed | None, Fixed | None]:
    """The price and size precisions that are not inferred (see the module docs)."""
    equity = definition.startswith("Equity")
    if equity and options.size_precision not in (None, 0):
        raise ImportRefused(
            f"--size-precision {options.size_precision}: {options.instrument_id} is an {definition} "
            "(it trades whole units): allowed 0; a symbol ending in --currency makes a CurrencyPair"
        )
    stored = existing.instrument if not options.replace else None
    if stored is not None and _stored_definition(stored) != definition:
        raise ImportRefused(
            f"{options.instrument_id} is defined in {options.root} as {_stored_definition(stored)}; "
            f"this import makes it an {definition}: pass the same --currency, or --replace"
        )
    fixed: list[Fixed | None] = []
    for flag, value, what in (
        ("--price-precision", options.price_precision, "price_precision"),
        ("--size-precision", options.size_precision, "size_precision"),
    ):
        held = None if stored is None else int(getattr(stored, what))
        if value is not None:
            if held is not None and value != held:
                raise ImportRefused(
                    f"{flag} {value}: {options.instrument_id} is stored at {what.replace('_', ' ')} "
                    f"{held}; allowed: {held}, or --replace to rewrite it at {value}"
                )
            fixed.append(Fixed(value, f"{flag} {value}", flag=True))
        elif held is not None:
            fixed.append(Fixed(held, f"the stored {options.instrument_id} definition; --replace rewrites it"))
        elif what == "size_precision" and equity:
            fixed.append(Fixed(0, "an Equity trades whole units; a symbol ending in --currency makes a CurrencyPair"))
        else:
            fixed.append(None)
    return fixed[0], fixed[1]


def _check_limits(chunks: list[Chunk], price: int, size: int, csv: bool) -> None:
    """NautilusTrader's value limits (PRICE_MAX, QUANTITY_MAX) at the final precisions."""
    price_limit, size_limit = int(PRICE_MAX) * 10**price, int(QUANTITY_MAX) * 10**size
    for chunk in chunks:
        for name, column, limit, scale in (
            *(("price", c, price_limit, price) for c in chunk.prices),
            ("volume", chunk.volume, size_limit, size),
        ):
            if limit < 2**63 and (over := np.abs(column) > limit).any():
                i = int(np.argmax(over))
                raise ImportRefused(
                    f"{where(chunk.first_row + i, csv)}: {name} {format_decimal(int(column[i]), scale)}"
                    f" is beyond NautilusTrader's limit {int(limit // 10**scale):,}"
                )


def _skip_stored(
    options: ImportOptions, chunks: list[Chunk], last: int, price: int, size: int, csv: bool
) -> tuple[list[Chunk], int]:
    """Drop the rows the root already holds, unchanged; refuse any other row at or before
    ``last``. Returns the remaining chunks and the rows skipped."""
    first = int(chunks[0].ts[0])
    if first > last:
        return chunks, 0
    stored = {int(b.ts_event): b for b in stored_bars(options.root, options.bar_type, first, last)}
    up_p, up_s = 10 ** (FIXED_PRECISION - price), 10 ** (FIXED_PRECISION - size)
    skipped, kept = 0, []
    for chunk in chunks:
        old = int(np.searchsorted(chunk.ts, last, side="right"))
        for i in range(old):
            close = int(chunk.ts[i])
            bar = stored.get(close)
            row = (*(int(c[i]) * up_p for c in chunk.prices), int(chunk.volume[i]) * up_s)
            if bar is None or row != (bar.open.raw, bar.high.raw, bar.low.raw, bar.close.raw, bar.volume.raw):
                problem = "has no stored bar" if bar is None else f"differs from the stored bar {bar}"
                raise ImportRefused(
                    f"{where(chunk.first_row + i, csv)}: close {iso(close)} is at or before {options.bar_type}'s last "
                    f"stored close {iso(last)} and {problem}; allowed: bars closing after {iso(last)} (rows equal "
                    f"to stored bars are skipped), or --replace to rewrite {options.bar_type} from this file"
                )
        skipped += old
        if old < len(chunk.ts):
            kept.append(
                Chunk(
                    chunk.first_row + old,
                    chunk.ts[old:],
                    [c[old:] for c in chunk.prices],
                    chunk.volume[old:],
                    price,
                    size,
                )
            )
    return kept, skipped


#: Bars built and handed to the catalog at a time (bounds the memory of long files).
PART_BARS = 250_000


def _parts(chunks: list[Chunk], bar_type: str, price: int, size: int, progress: Progress) -> Iterator[list[Bar]]:
    """Nautilus bars from the exact columns (raw values at the fixed scale), a part at a time."""
    kind = BarType.from_str(bar_type)
    up_p, up_s = 10 ** (FIXED_PRECISION - price), 10 ** (FIXED_PRECISION - size)
    part: list[Bar] = []
    done = 0
    for chunk in chunks:
        columns = zip(chunk.ts.tolist(), *(c.tolist() for c in chunk.prices), chunk.volume.tolist(), strict=True)
        part.extend(
            Bar.from_raw(kind, o * up_p, h * up_p, lo * up_p, c * up_p, price, v * up_s, size, ts, ts)
            for ts, o, h, lo, c, v in columns
        )
        if len(part) >= PART_BARS:
            done += len(part)
            yield part
            part = []
            progress.update("wrote", done)
    if part:
        done += len(part)
        yield part
    progress.update("wrote", done, final=True)


def run_import(options: ImportOptions, *, progress: Progress | None = None) -> Summary:
    """Import ``options.file``; raises :class:`ImportRefused` (nothing written) on any rule."""
    bar_file = open_bar_file(options.file)
    symbol, quote = options.resolved_symbol, options.currency
    definition = _definition(symbol, quote)
    existing = inspect(options.root, options.instrument_id, options.bar_type)
    price_fixed, size_fixed = _fixed(options, existing, definition)
    parser = Parser(
        csv=bar_file.csv,
        step_ns=options.bar_step.ns,
        step_name=options.step,
        open_time=options.open_time,
        price=price_fixed,
        size=size_fixed,
    )
    progress = progress or Progress(bar_file.total, enabled=options.progress)
    try:
        chunks = []
        for batch in bar_file.batches():
            chunks.append(parser.parse(batch))
            progress.update("read", parser.rows)
        progress.update("read", parser.rows, final=True)
        parser.finish()
        chunks = [c for c in chunks if len(c.ts)]
        if not chunks:
            raise ImportRefused(f"{options.file}: no bars; allowed: a header and at least one row")
        price = price_fixed.precision if price_fixed else max(c.price_scale for c in chunks)
        size = size_fixed.precision if size_fixed else max(c.size_scale for c in chunks)
        rescale(chunks, price, size, bar_file.csv)
        _check_limits(chunks, price, size, bar_file.csv)
        if (
            options.replace
            and existing.other_bar_types
            and existing.instrument is not None
            and ((existing.instrument.price_precision, existing.instrument.size_precision) != (price, size))
        ):
            raise ImportRefused(
                f"--replace at price/size precision {price}/{size}: {', '.join(existing.other_bar_types)} "
                f"stay stored at {existing.instrument.price_precision}/{existing.instrument.size_precision}; "
                "allowed: the stored precisions (state them with the flags)"
            )
        skipped = 0
        if not options.replace and existing.last_close is not None:
            chunks, skipped = _skip_stored(options, chunks, existing.last_close, price, size, bar_file.csv)
        write_definition = options.replace or existing.instrument is None
        instrument = make_instrument(options.instrument_id, quote, price, size) if write_definition else None
        count = sum(len(c.ts) for c in chunks)
        if count or instrument is not None:
            progress.phase("write")
            place(
                options.root,
                instrument,
                _parts(chunks, options.bar_type, price, size, progress),
                bar_type=options.bar_type,
                instrument_id=options.instrument_id,
                keep_stored=not options.replace,
                replace_definition=options.replace,
                expect_last=existing.last_close,
            )
    finally:
        progress.close()
    return Summary(
        options.instrument_id,
        definition,
        options.bar_type,
        count,
        skipped,
        int(chunks[0].ts[0]) if count else None,
        int(chunks[-1].ts[-1]) if count else None,
        price,
        size,
        options.root,
        options.replace,
    )
