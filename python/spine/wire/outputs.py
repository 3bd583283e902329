"""The parts of a finished run's outputs, named once: the runner writes them, the store keeps
them (``job_outputs.part``), the gateway serves them and the route table names their
documents. A leaf module (the standard library only), so the route table can read it
without loading the store."""

from __future__ import annotations

from enum import StrEnum
from typing import Final

__all__ = ["OutputPart", "SERVED_PARTS", "output_part", "served_part"]


class OutputPart(StrEnum):
    """One part of a run's outputs, a list of canonical JSON documents in order (``report`` and
    ``statistics``: one document each). A member is its name as stored and served."""

    REPORT = "report"
    STATISTICS = "statistics"
    EQUITY = "equity"
    EQUITY_DAILY = "equity_daily"
    ORDERS = "orders"
    FILLS = "fills"
    POSITIONS = "positions"
    SIGNALS = "signals"
    MARKERS = "markers"
    RETIREMENTS = "retirements"
    ENGINE_STATUS = "engine_status"

    @property
    def schema_id(self) -> str:
        """The schema of each of its documents."""
        return _SCHEMA_IDS[self]


_SCHEMA_IDS: Final = {
    OutputPart.REPORT: "svc.backtest_run_result",
    OutputPart.STATISTICS: "svc.backtest_statistics",
    OutputPart.EQUITY: "svc.equity_point",
    OutputPart.EQUITY_DAILY: "svc.equity_point",
    OutputPart.ORDERS: "svc.order_summary",
    OutputPart.FILLS: "svc.fill_summary",
    OutputPart.POSITIONS: "svc.position_summary",
    OutputPart.SIGNALS: "svc.signal_event",
    OutputPart.MARKERS: "svc.chart_marker",
    OutputPart.RETIREMENTS: "svc.signal_retirement",
    OutputPart.ENGINE_STATUS: "svc.engine_status",
}

#: The parts ``/v2/backtests/{id}/outputs/{part}`` serves, in the order it lists them (the
#: report has its own route, ``/v2/backtests/{id}/report``).
SERVED_PARTS: Final = tuple(part for part in OutputPart if part is not OutputPart.REPORT)


def output_part(name: str) -> OutputPart | None:
    """The part called ``name``; None for no such part."""
    try:
        return OutputPart(name)
    except ValueError:
        return None


def served_part(name: str) -> OutputPart | None:
    """The part ``/v2/backtests/{id}/outputs/{name}`` serves; None for none."""
    part = output_part(name)
    return part if part in SERVED_PARTS else None
