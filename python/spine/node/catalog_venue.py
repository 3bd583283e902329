"""The catalog venue (``venue = "catalog"``): the instruments ``spine import`` wrote for one
venue, served as a real nautilus data client (a ``LiveMarketDataClient`` with its factory and
instrument provider) over the import catalog's EXTERNAL root (``catalog.path``/``external``,
read with ``ParquetDataCatalog``).

It has no live feed: subscriptions are accepted and nothing is ever sent; the client connects
and stays connected. Its history is the imported 1-minute bars: the node hydrates from
:class:`CatalogHistory` (asked directly, like the simulated venue), whose :meth:`~CatalogHistory.span`
gives each instrument's window (its newest ``capacity`` bars, whatever their age) and which
never confirms a minute empty (a minute the file skipped is a gap, as a skipped candle on an
EXTERNAL feed). The framework's ``request_bars`` is answered from the same bars. Imported bars
of a coarser step (``--step 1d``) are read once at connect (:class:`CatalogImports`) and served
as imported at their resolution.
docs/contract.md, "The catalog venue", records the decisions.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq  # type: ignore[import-untyped]
from nautilus_trader.common.providers import InstrumentProvider
from nautilus_trader.config import InstrumentProviderConfig, LiveDataClientConfig
from nautilus_trader.model.data import Bar
from nautilus_trader.model.identifiers import InstrumentId
from nautilus_trader.persistence.catalog import ParquetDataCatalog

from spine._core import FoldResult, parse_decimal, resolution_bars
from spine.node.config import ConfigError, NodeConfig
from spine.node.hydrator import Answer
from spine.node.venue_client import VenueClientFactory, VenueDataClient
from spine.wire.bar_types import RESOLUTION_SPECS, bar_type_of

__all__ = [
    "CatalogDataClient",
    "CatalogDataClientConfig",
    "CatalogDataClientFactory",
    "CatalogHistory",
    "CatalogImports",
    "CatalogInstrumentProvider",
    "check_catalog",
    "import_root",
    "venue_instruments",
]

MINUTE_NS = 60 * 10**9


def import_root(path: str | Path) -> Path:
    """The EXTERNAL root of an import catalog directory (``spine import --catalog DIR``)."""
    return Path(path) / "external"


def venue_instruments(root: Path, venue: str) -> list[Any]:
    """The instruments of ``venue`` the root defines, in instrument-id order (none when the root
    holds no catalog)."""
    if not (root / "data").is_dir():
        return []
    found = [i for i in ParquetDataCatalog(str(root)).instruments() if i.id.venue.value == venue]
    return sorted(found, key=lambda i: str(i.id))


def check_catalog(config: NodeConfig) -> list[Any]:
    """Refuse (:class:`ConfigError`) a catalog venue node whose data directory and import
    catalog overlap, or whose catalog holds no instrument of its venue; the instruments."""
    venue = config.venue_name
    catalog, data = Path(config.catalog.path).resolve(), Path(config.data_dir).resolve()
    if catalog == data or catalog in data.parents or data in catalog.parents:
        raise ConfigError(
            f"catalog.path {config.catalog.path} and data_dir {config.data_dir} overlap: the node "
            "writes catalogs of its own under data_dir; allowed: two separate directories"
        )
    root = import_root(config.catalog.path)
    instruments = venue_instruments(root, venue)
    if not instruments:
        others = (
            sorted({i.id.venue.value for i in ParquetDataCatalog(str(root)).instruments()})
            if (root / "data").is_dir()
            else []
        )
        held = f"it holds instruments of {', '.join(others)}" if others else "it holds no instrument"
        raise ConfigError(
            f"catalog.path {config.catalog.path}: no instrument of venue {venue} in {root} ({held}); "
            f"allowed: a directory spine import --venue {venue} --catalog DIR wrote"
        )
    return instruments


class CatalogDataClientConfig(LiveDataClientConfig, frozen=True):  # type: ignore[call-arg]
    """The catalog venue's settings (a msgspec struct, like every nautilus config)."""

    #: The venue (and client id) every instrument id names.
    venue_name: str = "CATALOG"
    #: The import catalog directory; its ``external/`` root is read.
    path: str = "var/spine-up/imports"


class CatalogInstrumentProvider(InstrumentProvider):
    """Lists the venue's instruments the import catalog defines."""

    def __init__(self, root: Path, venue: str, config: InstrumentProviderConfig | None = None) -> None:
        super().__init__(config=config)
        self._root = root
        self._venue = venue

    async def load_all_async(self, filters: dict[str, Any] | None = None) -> None:
        for instrument in await asyncio.to_thread(venue_instruments, self._root, self._venue):
            self.add(instrument)

    async def load_ids_async(self, instrument_ids: list[InstrumentId], filters: dict[str, Any] | None = None) -> None:
        await self.load_all_async()

    async def load_async(self, instrument_id: InstrumentId, filters: dict[str, Any] | None = None) -> None:
        await self.load_all_async()


class CatalogHistory:
    """The import catalog as the node's history source (asked directly; reads run off the loop,
    one at a time). ``confirms_empty`` is False: the catalog holds what the file held, so a
    minute without a bar is a gap, never venue-confirmed empty."""

    confirms_empty = False

    def __init__(self, root: Path) -> None:
        self.root = root
        self._catalog: ParquetDataCatalog | None = None
        self._lock = threading.Lock()
        self._spans: dict[tuple[str, int], tuple[int, int] | None] = {}

    def _closes(self, instrument_id: str) -> np.ndarray:
        directory = self.root / "data" / "bar" / bar_type_of(instrument_id, "1m", "EXTERNAL")
        files = sorted(directory.glob("*.parquet")) if directory.is_dir() else []
        if not files:
            return np.empty(0, np.uint64)
        closes = np.concatenate([pq.read_table(f, columns=["ts_event"]).column("ts_event").to_numpy() for f in files])
        return np.sort(closes.astype(np.uint64))

    def span(self, instrument_id: str, bars: int) -> tuple[int, int] | None:
        """The window holding the instrument's newest ``bars`` 1-minute bars: from the open of the
        oldest of them to the newest close; None when the catalog has no 1-minute bar of it."""
        key = (instrument_id, bars)
        if key not in self._spans:
            closes = self._closes(instrument_id)
            self._spans[key] = (
                None if not len(closes) else (int(closes[-min(bars, len(closes))]) - MINUTE_NS, int(closes[-1]))
            )
        return self._spans[key]

    def bars(self, instrument_id: str, start_ns: int, end_ns: int) -> list[Bar]:
        """The imported 1-minute bars closing in ``(start_ns, end_ns]``, oldest first."""
        with self._lock:
            if self._catalog is None:
                self._catalog = ParquetDataCatalog(str(self.root))
            found: list[Bar] = self._catalog.bars(
                bar_types=[bar_type_of(instrument_id, "1m", "EXTERNAL")], start=start_ns + 1, end=end_ns
            )
        return [b for b in found if start_ns < b.ts_event <= end_ns]

    async def fetch(self, instrument_id: str, start_ns: int, end_ns: int) -> Answer:
        try:
            found = await asyncio.to_thread(self.bars, instrument_id, start_ns, end_ns)
        except Exception as error:  # noqa: BLE001 - an unreadable catalog is a failure, said why
            return Answer("transient", error=f"catalog {self.root}: {instrument_id}: {error}")
        return Answer("history", found)


class CatalogImports:
    """The imported bars of steps coarser than a minute (a ``--step 1d`` import), read once
    (:meth:`load`, off the loop) and served as imported at their resolution: an import is its
    own record of those bars, where a fold of the node's 1-minute window would hold days."""

    #: The resolutions an import can hold besides its 1-minute bars.
    RESOLUTIONS = tuple(name for name in RESOLUTION_SPECS if name not in ("1s", "1m"))

    def __init__(self, root: Path) -> None:
        self.root = root
        self._bars: dict[tuple[str, str], FoldResult] = {}

    def load(self, instruments: list[Any]) -> None:
        """Read every imported bar type of ``instruments`` at :attr:`RESOLUTIONS`."""
        catalog = ParquetDataCatalog(str(self.root))
        for instrument in instruments:
            iid = str(instrument.id)
            for resolution in self.RESOLUTIONS:
                bar_type = bar_type_of(iid, resolution, "EXTERNAL")
                if (self.root / "data" / "bar" / bar_type).is_dir():
                    bars = catalog.bars(bar_types=[bar_type])
                    self._bars[(iid, resolution)] = _columns(bars, resolution, instrument)

    def imported(self, instrument_id: str, resolution: str) -> FoldResult | None:
        """The instrument's imported bars at ``resolution``, numbered 1.. oldest first; None
        when the import holds none."""
        return self._bars.get((instrument_id, resolution))


def _columns(bars: list[Bar], resolution: str, instrument: Any) -> FoldResult:
    """``bars`` as served bars at the instrument's precisions."""
    price, size = instrument.price_precision, instrument.size_precision
    o, h, lo, c = (
        np.array([parse_decimal(str(getattr(b, field)), price) for b in bars], np.int64)
        for field in ("open", "high", "low", "close")
    )
    return resolution_bars(
        np.array([b.ts_event for b in bars], np.uint64),
        o,
        h,
        lo,
        c,
        np.array([parse_decimal(str(b.volume), size) for b in bars], np.int64),
        resolution=resolution,
        sequence=np.arange(1, len(bars) + 1, dtype=np.uint64),
    )


class CatalogDataClient(VenueDataClient):
    """The venue (see the module docs)."""

    def __init__(
        self, loop: asyncio.AbstractEventLoop, msgbus: Any, cache: Any, clock: Any, config: CatalogDataClientConfig
    ) -> None:
        root = import_root(config.path)
        provider = CatalogInstrumentProvider(root, config.venue_name, InstrumentProviderConfig(load_all=True))
        super().__init__(loop, msgbus, cache, clock, config, provider)
        self.root = root
        self.history_source = CatalogHistory(root)
        self.imports = CatalogImports(root)

    # lifecycle

    async def _connect(self) -> None:
        await self._instrument_provider.initialize()
        await asyncio.to_thread(self.imports.load, self._instrument_provider.list_all())
        for instrument in self._instrument_provider.list_all():
            self._handle_data(instrument)

    async def _disconnect(self) -> None:
        pass

    # subscriptions: accepted, nothing is ever live

    async def _subscribe_quote_ticks(self, command: Any) -> None:
        pass

    async def _subscribe_trade_ticks(self, command: Any) -> None:
        pass

    async def _subscribe_bars(self, command: Any) -> None:
        pass

    async def _subscribe_instrument_status(self, command: Any) -> None:
        pass

    async def _subscribe_mark_prices(self, command: Any) -> None:
        pass

    async def _subscribe_index_prices(self, command: Any) -> None:
        pass

    async def _subscribe_funding_rates(self, command: Any) -> None:
        pass

    async def _subscribe(self, command: Any) -> None:
        pass

    async def _subscribe_instruments(self, command: Any) -> None:
        pass

    async def _subscribe_instrument(self, command: Any) -> None:
        pass

    async def _unsubscribe_quote_ticks(self, command: Any) -> None:
        pass

    async def _unsubscribe_trade_ticks(self, command: Any) -> None:
        pass

    async def _unsubscribe_bars(self, command: Any) -> None:
        pass

    # history

    async def _request_bars(self, request: Any) -> None:
        """History through the framework: the imported 1-minute bars in the request's window
        (bounds open: the whole import), newest ``limit`` when it sets one."""
        iid = str(request.bar_type.instrument_id)
        if str(request.bar_type) != bar_type_of(iid, "1m", "EXTERNAL"):
            bars: list[Bar] = []  # only the imported 1-minute bars are served
        else:
            start = int(request.start.value) if request.start is not None else -1
            end = int(request.end.value) if request.end is not None else 2**63 - 1
            bars = await asyncio.to_thread(self.history_source.bars, iid, start, end)
            if request.limit:
                bars = bars[-request.limit :]
        self._handle_bars(request.bar_type, bars, request.id, request.start, request.end, request.params)


class CatalogDataClientFactory(VenueClientFactory):
    """Builds the catalog venue's client for a node."""

    CLIENT = CatalogDataClient
    CONFIG = CatalogDataClientConfig
    VENUE = "catalog"
