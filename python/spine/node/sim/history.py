"""The simulated venue's history endpoint (hydration and backfill). Per instrument it answers
with history (the same candles the live feed emits), no history, a transient failure that
clears after a set number of attempts, or a hard failure, as configured."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from nautilus_trader.model.instruments import Instrument

from spine.node.sim.market import Candle, SimMarket

__all__ = ["HistoryAnswer", "HistoryPlan", "OUTCOMES"]

OUTCOMES = ("history", "no_history", "transient", "failed")
_PLAN = re.compile(r"^(history|no_history|failed|transient:[1-9][0-9]*)$")


@dataclass(frozen=True)
class HistoryAnswer:
    """One answer: ``outcome`` in OUTCOMES; candles only with ``history``."""

    outcome: str
    candles: list[Candle] = field(default_factory=list)
    error: str | None = None


class HistoryPlan:
    """How each instrument's history requests are answered."""

    def __init__(
        self, market: SimMarket, instruments: list[Instrument], plan: dict[str, str], venue: str = "SIM"
    ) -> None:
        self._venue = venue
        known = {str(i.id) for i in instruments}
        for instrument_id, answer in plan.items():
            if instrument_id not in known:
                raise ValueError(f"history plan names {instrument_id!r}, which is not in the {self._venue} universe")
            if not _PLAN.match(answer):
                raise ValueError(
                    f"history plan for {instrument_id}: {answer!r}; allowed: history, no_history, transient:<n>, failed"
                )
        self._market = market
        self._index = {str(i.id): k for k, i in enumerate(instruments)}
        self._plan = dict(plan)
        self._failures: dict[str, int] = {}

    def fetch(self, instrument_id: str, start_ns: int, end_ns: int) -> HistoryAnswer:
        """Candles closing in ``(start_ns, end_ns]``, or the planned refusal."""
        return self.refusal(instrument_id) or HistoryAnswer("history", self.candles(instrument_id, start_ns, end_ns))

    def refusal(self, instrument_id: str) -> HistoryAnswer | None:
        """The planned refusal of one request (counted, for ``transient:<n>``), or None when it
        is answered with history."""
        plan = self._plan.get(instrument_id, "history")
        if plan == "no_history":
            return HistoryAnswer("no_history")
        if plan == "failed":
            return HistoryAnswer(
                "failed", error=f"{self._venue} history for {instrument_id}: permission denied (hard failure)"
            )
        if plan.startswith("transient:"):
            seen = self._failures.get(instrument_id, 0)
            if seen < int(plan.split(":")[1]):
                self._failures[instrument_id] = seen + 1
                return HistoryAnswer(
                    "transient", error=f"{self._venue} history for {instrument_id}: timed out (attempt {seen + 1})"
                )
        return None

    def candles(self, instrument_id: str, start_ns: int, end_ns: int) -> list[Candle]:
        """The instrument's candles closing in ``(start_ns, end_ns]``."""
        return self._market.candles(self._index[instrument_id], start_ns, end_ns)
