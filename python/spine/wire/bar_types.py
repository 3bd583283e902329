"""Bar names shared by the node, its HTTP surface and clients, with no framework import: the
1-minute channels, the wire resolutions and the framework bar type each names, and the hub
kind a bar event is published under."""

from __future__ import annotations

import re

__all__ = [
    "BAR_CHANNELS",
    "BAR_RESOLUTIONS",
    "CHANNELS",
    "RESOLUTION_SPECS",
    "bar_kind",
    "bar_type_of",
    "instrument_of",
]

#: The durable 1-minute channels: venue candles and bars aggregated from trades, never mixed.
CHANNELS = ("EXTERNAL", "INTERNAL")
BAR_CHANNELS = CHANNELS
#: What the bar stream carries: the 1-second tier, the durable minute and the derived folds.
BAR_RESOLUTIONS = ("1s", "1m", "5m", "15m", "30m", "1h", "4h", "1d")
#: Wire resolution -> the framework's bar specification.
RESOLUTION_SPECS = {
    "1s": "1-SECOND",
    "1m": "1-MINUTE",
    "5m": "5-MINUTE",
    "15m": "15-MINUTE",
    "30m": "30-MINUTE",
    "1h": "1-HOUR",
    "4h": "4-HOUR",
    "1d": "1-DAY",
}


def bar_type_of(instrument_id: str, resolution: str, channel: str) -> str:
    """The framework bar type string, e.g. ``BTCUSDT.SIM-1-MINUTE-LAST-EXTERNAL``."""
    return f"{instrument_id}-{RESOLUTION_SPECS[resolution]}-LAST-{channel}"


#: ``{instrument_id}-{step}-{aggregation}-{price type}-{source}``: the id is what precedes the
#: last four fields (an id may hold ``-`` itself: ``ETHUSDT-PERP.SIM``).
_BAR_TYPE = re.compile(r"^(?P<iid>.+)-[1-9][0-9]*-[A-Z]+-[A-Z]+-(EXTERNAL|INTERNAL)$")


def instrument_of(bar_type: str) -> str:
    """The instrument id of a bar type of any step (``X.SIM-1-DAY-LAST-EXTERNAL`` -> ``X.SIM``)."""
    match = _BAR_TYPE.match(bar_type)
    return match["iid"] if match else bar_type.split("-1-MINUTE-")[0]


def bar_kind(resolution: str, channel: str) -> str:
    """The hub kind a bar event is published under (its SSE event is ``bar``): a stream keeps
    the resolutions and channels it asked for at enqueue, like its instrument."""
    return f"bar:{resolution}:{channel}"
