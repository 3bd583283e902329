"""``spine import``: the command entry point. One import, start to finish; a refused import
exits 2 and a file or catalog it cannot read or write exits 1, both having written nothing."""

from __future__ import annotations

import sys
from pathlib import Path

from spine.importer.config import DEFAULT_CATALOG_DIR, ImportOptions
from spine.importer.refusal import ImportRefused
from spine.importer.service import run_import

__all__ = ["run_importer"]


def run_importer(
    file: str,
    venue: str,
    catalog: str | None = None,
    *,
    symbol: str | None = None,
    step: str = "1m",
    price_precision: int | None = None,
    size_precision: int | None = None,
    currency: str = "USD",
    open_time: bool = False,
    replace: bool = False,
) -> int:
    """Import ``file`` as the command's flags ask; print the summary line and exit 0."""
    try:
        options = ImportOptions(
            file=Path(file),
            venue=venue,
            catalog_dir=Path(catalog or DEFAULT_CATALOG_DIR),
            symbol=symbol,
            step=step,
            price_precision=price_precision,
            size_precision=size_precision,
            currency=currency,
            open_time=open_time,
            replace=replace,
        )
        summary = run_import(options)
    except ImportRefused as error:
        print(f"spine import: {error}; nothing was written", file=sys.stderr)
        return 2
    except OSError as error:  # reading the file or writing the catalog (rolled back, see importer.catalog)
        print(f"spine import: {error}; nothing was written", file=sys.stderr)
        return 1
    print(summary.line())
    return 0
