"""What an import was asked to do: the command's flags, checked before the file is opened.

Names follow the rest of Spine: a venue is ``^[A-Z][A-Z0-9_]*$`` (at most 32 characters, as
``sim.venue_name``); a symbol is upper-case ``^[A-Z0-9][A-Z0-9._-]*$`` (at most 32; a dot is
fine, ``InstrumentId`` splits on the last one; no ``/``, which would nest catalog
directories); the default symbol is the file's stem upper-cased, checked the same way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from nautilus_trader.model.objects import FIXED_PRECISION

from spine.importer.refusal import ImportRefused

__all__ = ["DEFAULT_CATALOG_DIR", "ImportOptions", "MAX_PRECISION", "STEPS", "Step"]

#: The local stack's node catalog (``spine up``'s data dir ``var/spine-up``); the EXTERNAL
#: root below it is what backtest workers read.
DEFAULT_CATALOG_DIR = Path("var/spine-up/imports")
#: Price and size precision limit: this NautilusTrader build's fixed-point precision (16 in
#: the high-precision wheel; 9 in a standard one), read from the framework, not assumed.
MAX_PRECISION: int = int(FIXED_PRECISION)

_VENUE = re.compile(r"^[A-Z][A-Z0-9_]*$")
_SYMBOL = re.compile(r"^[A-Z0-9][A-Z0-9._-]*$")
_CURRENCY = re.compile(r"^[A-Z][A-Z0-9]{2,15}$")
_NAME_MAX = 32


@dataclass(frozen=True)
class Step:
    """A declared bar step: its flag, length and the bar-type spec written."""

    flag: str
    ns: int
    spec: str


STEPS: dict[str, Step] = {
    "1m": Step("1m", 60 * 10**9, "1-MINUTE"),
    "1d": Step("1d", 86_400 * 10**9, "1-DAY"),
}


@dataclass(frozen=True)
class ImportOptions:
    """One import, as the command line states it (see ``spine import --help``)."""

    file: Path
    venue: str
    catalog_dir: Path = DEFAULT_CATALOG_DIR
    symbol: str | None = None
    step: str = "1m"
    price_precision: int | None = None
    size_precision: int | None = None
    currency: str = "USD"
    open_time: bool = False
    replace: bool = False
    #: None: a progress line when stderr is a TTY or the file holds over 100,000 rows.
    progress: bool | None = None

    def __post_init__(self) -> None:
        if not _VENUE.match(self.venue) or len(self.venue) > _NAME_MAX:
            raise ImportRefused(f"--venue {self.venue!r}: allowed ^[A-Z][A-Z0-9_]*$, at most {_NAME_MAX} characters")
        if self.symbol is not None and (not _SYMBOL.match(self.symbol) or len(self.symbol) > _NAME_MAX):
            raise ImportRefused(
                f"--symbol {self.symbol!r}: allowed ^[A-Z0-9][A-Z0-9._-]*$ (upper case), at most {_NAME_MAX} characters"
            )
        if self.symbol is None:
            stem = self.default_symbol()
            if not _SYMBOL.match(stem) or len(stem) > _NAME_MAX:
                raise ImportRefused(
                    f"the file's stem {stem!r} is not a symbol (allowed ^[A-Z0-9][A-Z0-9._-]*$, "
                    f"at most {_NAME_MAX} characters): name one with --symbol"
                )
        if self.step not in STEPS:
            raise ImportRefused(f"--step {self.step!r}: allowed {', '.join(STEPS)}")
        for flag, value in (("--price-precision", self.price_precision), ("--size-precision", self.size_precision)):
            if value is not None and not 0 <= value <= MAX_PRECISION:
                raise ImportRefused(f"{flag} {value}: allowed 0..{MAX_PRECISION} (NautilusTrader's fixed precision)")
        if not _CURRENCY.match(self.currency):
            raise ImportRefused(f"--currency {self.currency!r}: allowed ^[A-Z][A-Z0-9]{{2,15}}$ (e.g. USD, USDT)")

    def default_symbol(self) -> str:
        name = self.file.name
        for suffix in (".csv.gz", ".csv", ".parquet", ".pq"):
            if name.lower().endswith(suffix):
                return name[: -len(suffix)].upper()
        return self.file.stem.upper()

    @property
    def resolved_symbol(self) -> str:
        return self.symbol if self.symbol is not None else self.default_symbol()

    @property
    def instrument_id(self) -> str:
        return f"{self.resolved_symbol}.{self.venue}"

    @property
    def bar_step(self) -> Step:
        return STEPS[self.step]

    @property
    def bar_type(self) -> str:
        return f"{self.instrument_id}-{self.bar_step.spec}-LAST-EXTERNAL"

    @property
    def root(self) -> Path:
        """The EXTERNAL catalog root written."""
        return self.catalog_dir / "external"
