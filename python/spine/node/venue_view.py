"""The venue node as its app sees it: :class:`spine.node.view.NodeView` over the node's
book, ledgers, ingestion actor and status. Each query reads the node's state at the call;
nothing here keeps state of its own but the instrument documents, rebuilt only for an
instrument the framework replaced."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Protocol

from spine._core import FoldResult, Series
from spine.fanout import FanOut
from spine.node.persist.series_book import Precision
from spine.node.view import Connection, Counts, CoverageView, ExecutionView, NodeView
from spine.wire.projection import instrument_doc

if TYPE_CHECKING:
    from spine.node.actor import IngestionActor
    from spine.node.config import NodeConfig
    from spine.node.connection import ConnectionWatch
    from spine.node.hydration import HydrationBook
    from spine.node.ledger import CoverageLedger
    from spine.node.persist.series_book import SeriesBook
    from spine.node.repair import GapWatch
    from spine.node.status import EngineStatusProducer

__all__ = ["Imports", "Venue", "VenueView"]


class Imports(Protocol):
    """Bars an import holds at a resolution the node otherwise folds (``CatalogHistory``)."""

    def imported(self, instrument_id: str, resolution: str) -> FoldResult | None: ...


class Venue(Protocol):
    """The parts of the node's service (``spine.node.service.VenueNode``) the view reads; the
    view names no service type, so the service builds the view without a loop between them."""

    config: NodeConfig
    run_id: str
    hub: FanOut
    status: EngineStatusProducer
    gaps: GapWatch
    hydration: HydrationBook
    actor: IngestionActor
    connection: ConnectionWatch
    ledger: CoverageLedger
    book: SeriesBook

    #: The catalog venue's imports (None on any other venue).
    imports: Imports | None
    #: A paper node's execution reads (None on a market-data node).
    execution: ExecutionView | None

    @property
    def refused_writes(self) -> int: ...
    def retention_state(self, instrument_id: str) -> str: ...


class VenueView(NodeView):
    """See the module docs."""

    def __init__(self, node: Venue) -> None:
        self._node = node
        config = node.config
        self.node_id = config.node_id
        self.integration = config.venue
        self.venue = config.venue_name
        self.deployment_mode = config.mode
        self.live_channel = config.live_channel
        self.manifest_path = config.manifest
        self.run_id = node.run_id
        self.hub = node.hub
        self.execution = node.execution
        #: Instrument id -> (the framework instrument, its document).
        self._docs: dict[str, tuple[Any, dict[str, Any]]] = {}

    # lifecycle and health

    def lifecycle(self) -> str:
        return self._node.status.lifecycle

    def engine_status(self, now: int) -> dict[str, Any]:
        return self._node.status.document(now)

    def writes_refused(self) -> bool:
        return self._node.refused_writes > 0

    def gaps_unresolved(self) -> bool:
        return self._node.gaps.unresolved()

    def hydration_counts(self) -> dict[str, int]:
        return self._node.hydration.counts()

    def counts(self) -> Counts:
        actor = self._node.actor
        counters = actor.counters
        return Counts(
            instruments=len(actor.discovered),
            quotes=counters.quotes,
            trades=counters.trades,
            bars=sum(counters.bars_accepted.values()),
        )

    def connection(self, now: int) -> Connection:
        return self._node.connection.look(now)

    # instruments, selection and facts

    def instrument_docs(self) -> list[dict[str, Any]]:
        docs = []
        for instrument in self._node.actor.cache.instruments():
            iid = str(instrument.id)
            kept = self._docs.get(iid)
            if kept is None or kept[0] is not instrument:
                kept = self._docs[iid] = (instrument, instrument_doc(instrument))
            docs.append(kept[1])
        docs.sort(key=lambda doc: doc["instrument_id"])
        return docs

    def ingested(self) -> Iterable[str]:
        return self._node.actor.ingested

    def retention_state(self, instrument_id: str) -> str:
        return self._node.retention_state(instrument_id)

    def discovery_registered(self) -> bool:
        return self._node.ledger.registered

    def fact_kinds(self) -> frozenset[str]:
        return self._node.actor.kinds

    def facts(self, kind: str) -> dict[str, dict[str, Any]]:
        return self._node.actor.facts.get(kind, {})

    # hydration and coverage ledgers

    def hydration_page(self, cursor: str | None, limit: int) -> dict[str, Any]:
        return self._node.hydration.page(cursor, limit)

    def hydration_entry(self, instrument_id: str) -> dict[str, Any] | None:
        hydration = self._node.hydration
        return hydration.entry(instrument_id) if instrument_id in hydration else None

    def coverage_page(self, cursor: str | None, limit: int, view: CoverageView) -> dict[str, Any]:
        return self._node.ledger.page(cursor, limit, view)

    def coverage_entry(self, instrument_id: str) -> dict[str, Any]:
        return self._node.ledger.entry(instrument_id)

    def eligible_channels(self, instrument_id: str) -> list[str]:
        return self._node.ledger.eligible(instrument_id)

    # bars

    def holds(self, instrument_id: str) -> bool:
        return instrument_id in self._node.book

    def discovered(self, instrument_id: str) -> bool:
        return instrument_id in self._node.book or instrument_id in self._node.actor.unretained

    def series(self, instrument_id: str, channel: str) -> Series:
        return self._node.book.series(instrument_id, channel)

    def precision(self, instrument_id: str) -> Precision:
        return self._node.book.precision(instrument_id)

    def held(self) -> Iterable[tuple[str, str, Series]]:
        return self._node.book.held()

    def series_coverage(self, instrument_id: str, channel: str) -> dict[str, Any]:
        return self._node.actor.coverage(instrument_id, channel)

    def imported(self, instrument_id: str, resolution: str, channel: str) -> FoldResult | None:
        imports = self._node.imports
        return None if imports is None or channel != "EXTERNAL" else imports.imported(instrument_id, resolution)
