"""The node's API's one view of what it serves: every query its handlers make, typed.

A venue node implements it over its book, ledgers and ingestion actor
(``spine.node.venue_view.VenueView``); a gateway implements it again over its upstreams. What
crosses it is a wire document (a dict the schemas describe), a core object (``Series``), the
fan-out hub, or a plain value: never a framework type, so the node's API (``spine.node.api``)
imports no framework.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from spine._core import FoldResult, Series
from spine.fanout import FanOut

__all__ = ["Connection", "Counts", "CoverageView", "ExecutionView", "NodeView", "OrderRefused", "Precision"]

#: The coverage ledger's pages: every instrument, its failures, or its quiet series.
CoverageView = Literal["all", "failures", "quiet"]


@dataclass(frozen=True)
class Counts:
    """What the node has taken in since it started (``svc.node_status`` counters)."""

    instruments: int
    quotes: int
    trades: int
    bars: int


class Connection(Protocol):
    """The venue connection as observed now (``svc.connection_state``)."""

    @property
    def state(self) -> str: ...
    @property
    def since(self) -> int | None: ...
    @property
    def clients(self) -> list[tuple[str, bool]]: ...
    @property
    def last_error(self) -> str | None: ...


class Precision(Protocol):
    """An instrument's decimal places for prices and sizes."""

    @property
    def price(self) -> int: ...
    @property
    def size(self) -> int: ...


class OrderRefused(ValueError):
    """A command the node cannot place: an unknown instrument, a quantity or price the
    instrument cannot represent, an order that is not open."""

    def __init__(self, symbol: str, text: str) -> None:
        super().__init__(text)
        self.symbol, self.text = symbol, text


class ExecutionView(Protocol):
    """A paper node's execution reads: wire documents from its sandbox account and the orders,
    fills and positions on its venue, newest first (``instrument_id``: one instrument's); and
    the operator's paper commands."""

    def accounts(self) -> list[dict[str, Any]]: ...
    def orders(self, instrument_id: str | None) -> list[dict[str, Any]]: ...
    def fills(self, instrument_id: str | None) -> list[dict[str, Any]]: ...
    def positions(self, instrument_id: str | None) -> list[dict[str, Any]]: ...

    def submit(self, body: Any) -> dict[str, Any]:
        """Place a paper order (an ``OrderBody``): its ``svc.command_result``; raises
        ``OrderRefused`` (symbol, text) for what the node cannot place."""

    def cancel(self, body: Any) -> dict[str, Any]:
        """Cancel an open paper order (a ``CancelBody``), as :meth:`submit` answers."""

    def command(self, command_id: str) -> dict[str, Any] | None:
        """A command's ``svc.command_result`` as it is now; None for an unknown id."""


class NodeView(Protocol):
    """What one served venue exposes to the HTTP app. Identity is fixed for the run; every
    method answers from the state as it is at the call."""

    node_id: str
    #: The integration name, lower case (``sim``, ``binance``).
    integration: str
    #: The venue every instrument id names (``SIM``, or the configured ``sim.venue_name``).
    venue: str
    #: ``public-readonly`` or ``private-operator``, from server-side configuration only.
    deployment_mode: str
    #: The bar channel a page without ``bar_type`` reads (``EXTERNAL`` or ``INTERNAL``).
    live_channel: str
    #: The retained-ingestion manifest file, or None for an unmanaged node.
    manifest_path: str | None
    run_id: str
    #: Closed bars, quotes and trades as they are published (streams subscribe here).
    hub: FanOut
    #: A paper node's execution reads; None on a market-data node (they are deferred there).
    execution: ExecutionView | None

    # lifecycle and health
    def lifecycle(self) -> str: ...
    def engine_status(self, now: int) -> dict[str, Any]: ...
    def writes_refused(self) -> bool: ...
    def gaps_unresolved(self) -> bool: ...
    def hydration_counts(self) -> dict[str, int]: ...
    def counts(self) -> Counts: ...
    def connection(self, now: int) -> Connection: ...

    # instruments, selection and facts
    def instrument_docs(self) -> list[dict[str, Any]]:
        """Every listed instrument's ``svc.instrument_ref``, by instrument id."""

    def ingested(self) -> Iterable[str]: ...
    def retention_state(self, instrument_id: str) -> str: ...
    def discovery_registered(self) -> bool: ...
    def fact_kinds(self) -> frozenset[str]:
        """The fact kinds some discovered instrument carries."""

    def facts(self, kind: str) -> dict[str, dict[str, Any]]:
        """The latest fact of ``kind`` per instrument id."""

    # --- hydration and coverage ledgers (documents; raise DiscoveryNotRegistered or
    # ValueError for a bad cursor as the ledgers do) -------------------------------------------
    def hydration_page(self, cursor: str | None, limit: int) -> dict[str, Any]: ...
    def hydration_entry(self, instrument_id: str) -> dict[str, Any] | None: ...
    def coverage_page(self, cursor: str | None, limit: int, view: CoverageView) -> dict[str, Any]: ...
    def coverage_entry(self, instrument_id: str) -> dict[str, Any]:
        """Raises KeyError for an instrument outside the ledger."""

    def eligible_channels(self, instrument_id: str) -> list[str]: ...

    # bars
    def holds(self, instrument_id: str) -> bool:
        """Whether bars of ``instrument_id`` are ingested here."""

    def discovered(self, instrument_id: str) -> bool:
        """Held, or listed by the venue and left out by the manifest."""

    def series(self, instrument_id: str, channel: str) -> Series: ...
    def precision(self, instrument_id: str) -> Precision: ...
    def held(self) -> Iterable[tuple[str, str, Series]]:
        """Every (instrument id, channel, series) held."""

    def series_coverage(self, instrument_id: str, channel: str) -> dict[str, Any]:
        """The series' ``svc.series_coverage``: the same object while it is unchanged."""

    def imported(self, instrument_id: str, resolution: str, channel: str) -> FoldResult | None:
        """The bars an import holds at ``resolution`` (a catalog venue's daily import), served
        as imported instead of folded; None where nothing is imported at that resolution."""
