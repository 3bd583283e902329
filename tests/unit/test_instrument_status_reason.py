"""Which venue instrument statuses make an instrument INACTIVE in the coverage ledger, and with
what reason (read from real NautilusTrader InstrumentStatus objects)."""

from __future__ import annotations

import pytest
from nautilus_trader.model.data import InstrumentStatus
from nautilus_trader.model.enums import MarketStatusAction
from nautilus_trader.model.identifiers import InstrumentId

from spine.node.actor import inactive_reason

IID = InstrumentId.from_str("BTCUSDT.SIM")


def status(action: str, reason: str | None = None, is_trading: bool | None = None) -> InstrumentStatus:
    return InstrumentStatus(IID, MarketStatusAction[action], 1, 1, reason=reason, is_trading=is_trading)


@pytest.mark.parametrize(
    ("made", "expected"),
    [
        (status("HALT", "SIM_CIRCUIT_BREAKER", False), "SIM_CIRCUIT_BREAKER"),
        (status("TRADING", None, True), None),
        (status("HALT"), "HALT"),  # no is_trading, no reason: the action says it
        (status("PAUSE", "  maintenance\nwindow "), "maintenance window"),  # one line, as the status grammar needs
        (status("PRE_OPEN"), None),
        (status("TRADING", "auction over", False), "auction over"),  # the venue's own word wins
        (status("CLOSE", None, True), None),
    ],
)
def test_the_venue_says_whether_an_instrument_trades(made: InstrumentStatus, expected: str | None) -> None:
    assert inactive_reason(made) == expected
