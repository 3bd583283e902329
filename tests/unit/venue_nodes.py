"""A ``VenueNode`` with no framework behind it, for tests of its series, stores and state
files: two SIM spot instruments written to the catalogs and registered, and the bars the
ingestion actor would take."""

from __future__ import annotations

from pathlib import Path

import msgspec
import numpy as np
from nautilus_trader.model.data import Bar, BarType
from nautilus_trader.model.objects import Price, Quantity

from spine.node.config import NodeConfig
from spine.node.service import VenueNode
from spine.node.sim.universe import SimUniverseConfig, make_instruments

M = 60 * 10**9
T0 = 29_000_000 * M
INSTRUMENTS = make_instruments(SimUniverseConfig(spot=2, perpetuals=0, option_expiries=0))


def venue_node(data_dir: Path, *, capacity: int = 5_000) -> VenueNode:
    config = msgspec.convert(
        {
            "data_dir": str(data_dir),
            "capacity": capacity,
            "floors": {"min_free_inodes": 0, "max_files": 10**9, "min_free_bytes": 0},
        },
        NodeConfig,
    )
    node = VenueNode(config)
    for store in node.stores.values():
        store.write_instruments(INSTRUMENTS)
    return discovered(node)


def discovered(node: VenueNode) -> VenueNode:
    """``node`` with BTCUSDT.SIM and ETHUSDT.SIM registered, as discovery registers them."""
    for instrument in INSTRUMENTS:
        node.book.register(str(instrument.id), instrument.price_precision, instrument.size_precision)
    return node


def close(node: VenueNode, instrument_id: str, channel: str, k: int) -> int:
    """A closed bar at minute ``k`` as the ingestion actor takes it (the series numbers it, the
    store queues it for the next flush); the sequence it was served with."""
    p = node.book.precision(instrument_id)
    price = Price(100 + k, p.price)
    bar = Bar(
        BarType.from_str(f"{instrument_id}-1-MINUTE-LAST-{channel}"),
        price,
        price,
        price,
        price,
        Quantity(1, p.size),
        T0 + k * M,
        T0 + k * M,
    )
    node.book.push(instrument_id, channel, bar)
    node.stores[channel].append(bar)
    return node.book.series(instrument_id, channel).last_sequence


def numbers(node: VenueNode, instrument_id: str, channel: str) -> dict[int, int]:
    """The series' bars, close -> sequence."""
    columns = node.book.series(instrument_id, channel).columns()
    return dict(
        zip(
            np.frombuffer(columns["ts_event"], "<u8").tolist(),
            np.frombuffer(columns["sequence"], "<u8").tolist(),
            strict=True,
        )
    )
