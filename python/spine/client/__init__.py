"""The Python client of a Spine gateway, and the tool table ``spine tools`` and ``spine client``
share with it. A table of contents: the logic lives in the submodules.

    from spine.client import Client, bars_frame
    with Client("http://127.0.0.1:8800") as spine:
        bars = bars_frame(spine.bars_list(instrument_id="BTCUSDT.SIM", limit=500))
"""

from __future__ import annotations

from spine.client.client import TERMINAL_STATES, Client, decode, strategy_files
from spine.client.errors import ArgumentError, ContractViolation, GatewayError, GatewayUnreachable
from spine.client.frames import bars_frame, equity_frame, fills_frame, frame
from spine.client.table import Tool, tool, tools
from spine.client.transport import DEFAULT_GATEWAY, Answer, Batch, Event, Gateway

__all__ = [
    "DEFAULT_GATEWAY",
    "TERMINAL_STATES",
    "Answer",
    "ArgumentError",
    "Batch",
    "Client",
    "ContractViolation",
    "Event",
    "Gateway",
    "GatewayError",
    "GatewayUnreachable",
    "Tool",
    "bars_frame",
    "decode",
    "equity_frame",
    "fills_frame",
    "frame",
    "strategy_files",
    "tool",
    "tools",
]
