"""Node configuration: a TOML file (``--config`` or ``SPINE_NODE_CONFIG``) over the embedded
defaults, then ``SPINE_*`` environment overrides. Unknown keys are refused by name, so a typo
never silently falls back to a default.

The defaults run on one machine with nothing installed: the simulated venue, local Parquet
catalogs under ``./var/spine``, loopback HTTP.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar, Literal

import msgspec

from spine.settings import ConfigError, ServerSettings, load_settings

__all__ = [
    "MAX_SIM_SPEED",
    "MAX_VENUE_NAME",
    "SandboxConfig",
    "CatalogConfig",
    "ConfigError",
    "DeploymentMode",
    "FloorsConfig",
    "NodeConfig",
    "SimConfig",
    "load_config",
]

DeploymentMode = Literal["public-readonly", "private-operator"]
#: The simulated venue's fastest clock: a venue hour per wall second.
MAX_SIM_SPEED = 3_600.0
#: Ten years of minutes: a bound a catalog's disk can be planned for.
MAX_RETENTION_DAYS = 3_650
#: The longest simulated venue name; the name is a wire ``symbol`` (``^[A-Z][A-Z0-9_]*$``).
MAX_VENUE_NAME = 32
_VENUE_NAME = re.compile(r"[A-Z][A-Z0-9_]*")


class FloorsConfig(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    min_free_inodes: int = 1_000
    max_files: int = 100_000
    min_free_bytes: int = 64 * 2**20


class SimConfig(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    #: The venue's name: every instrument id is ``SYMBOL.<venue_name>``, and it names the data
    #: client. Two nodes with different names are two venues.
    venue_name: str = "SIM"
    seed: int = 7
    #: Venue seconds per wall second (1.0: real time), at most ``MAX_SIM_SPEED``.
    speed: float = 1.0
    start_ns: int | None = None
    spot: int = 12
    perpetuals: int = 12
    option_expiries: int = 2
    option_strikes: int = 6
    candle_skip: float = 0.002
    #: Instrument id -> history, no_history, transient:<n> or failed.
    history: dict[str, str] = {}

    def __post_init__(self) -> None:
        if len(self.venue_name) > MAX_VENUE_NAME or not _VENUE_NAME.fullmatch(self.venue_name):
            raise ConfigError(
                f"sim.venue_name {self.venue_name!r}: allowed an upper-case letter, then upper-case "
                f"letters, digits or _ (^[A-Z][A-Z0-9_]*$), at most {MAX_VENUE_NAME} characters"
            )
        for instrument_id in self.history:
            if not instrument_id.endswith(f".{self.venue_name}"):
                raise ConfigError(
                    f"sim.history names {instrument_id!r}: allowed instrument ids of venue "
                    f"{self.venue_name} (SYMBOL.{self.venue_name})"
                )


#: A starting balance: an exact decimal amount and a currency code (``"100000 USDT"``).
_BALANCE = re.compile(r"(0|[1-9][0-9]{0,17})(\.[0-9]{1,9})? [A-Z][A-Z0-9]{1,9}")


class SandboxConfig(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """A paper node (``enabled``): the venue node plus NautilusTrader's sandbox execution client
    for its venue, filling paper orders on the node's own data (docs/contract.md, "Paper
    nodes"). The account is a MARGIN account (the simulated venue lists perpetuals, which a
    CASH account refuses); balances start over at every start."""

    enabled: bool = False
    #: The account's balances at start, one per currency: ``"<amount> <CURRENCY>"``.
    starting_balances: list[str] = msgspec.field(default_factory=lambda: ["100000 USDT"])
    #: The account's leverage, an exact decimal (1: none).
    leverage: str = "1"

    def __post_init__(self) -> None:
        for balance in self.starting_balances:
            if not _BALANCE.fullmatch(balance):
                raise ConfigError(
                    f"sandbox.starting_balances {balance!r}: allowed an exact amount, a space and a currency "
                    'code, e.g. "100000 USDT"'
                )
        if not self.starting_balances:
            raise ConfigError("sandbox.starting_balances: at least one balance")
        if not re.fullmatch(r"[1-9][0-9]{0,2}(\.[0-9]{1,4})?", self.leverage):
            raise ConfigError(f"sandbox.leverage {self.leverage!r}: allowed an exact decimal from 1 to 999")


class CatalogConfig(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """The catalog venue (``venue = "catalog"``): the instruments ``spine import`` wrote for one
    venue, served from their import catalog (docs/contract.md, "The catalog venue")."""

    #: The import catalog directory (``spine import --catalog DIR``); its ``external/`` root is read.
    path: str = "var/spine-up/imports"
    #: The venue served (``spine import --venue NAME``): every instrument of it found there.
    venue_name: str | None = None

    def __post_init__(self) -> None:
        name = self.venue_name
        if name is not None and (len(name) > MAX_VENUE_NAME or not _VENUE_NAME.fullmatch(name)):
            raise ConfigError(
                f"catalog.venue_name {name!r}: allowed an upper-case letter, then upper-case "
                f"letters, digits or _ (^[A-Z][A-Z0-9_]*$), at most {MAX_VENUE_NAME} characters"
            )


class NodeConfig(ServerSettings, forbid_unknown_fields=True, frozen=True):
    FILE_VARIABLE: ClassVar[str] = "SPINE_NODE_CONFIG"
    #: The node's variables carry no process word (``SPINE_PORT``, ``SPINE_SIM_SPEED``).
    ENVIRONMENT_KEYS: ClassVar[tuple[str, ...]] = (
        "node_id",
        "venue",
        "data_dir",
        "live_channel",
        "host",
        "port",
        "manifest",
        "retention_days",
        "sim.speed",
        "sim.seed",
        "sim.venue_name",
        "catalog.path",
        "catalog.venue_name",
        "sandbox.enabled",
        "sandbox.starting_balances",
    )
    WHAT: ClassVar[str] = "node configuration"

    node_id: str = "spine-node-1"
    venue: Literal["sim", "binance", "bybit", "catalog"] = "sim"
    data_dir: str = "var/spine"
    #: Which 1-minute channel is live (served by default); both are ingested and stored.
    live_channel: Literal["EXTERNAL", "INTERNAL"] = "EXTERNAL"
    #: The non-durable 1-second tier covers this many instruments from the universe's start.
    seconds_prefix: int = 25
    #: An EXTERNAL minute without its candle counts as a gap once the venue clock is this far
    #: past the minute's close (venues send candles at or just after the close).
    external_grace_secs: float = 5.0
    capacity: int = 5_000
    flush_secs: float = 60.0
    consolidation_secs: float = 86_400.0
    #: History requested for an empty series, in minutes.
    hydrate_minutes: int = 5_000
    #: How many days of 1-minute bars the catalogs keep before each bar type's newest close
    #: (the series serves the newest ``capacity``); on the simulated venue a fresh series
    #: is backfilled that far (``spine.node.backfill``).
    retention_days: float = 30.0
    floors: FloorsConfig = FloorsConfig()
    #: A path that must be a mount point for the catalogs to be written (None: no check).
    expect_mount: str | None = None
    #: A retained-ingestion manifest: a file with one instrument id per line (None: unmanaged).
    manifest: str | None = None
    #: The interpreter's thread switch interval (``sys.setswitchinterval``): how long the
    #: HTTP server's threads may wait for the GIL while ingestion holds it (Python's default
    #: is 5 ms).
    gil_switch_secs: float = 0.000_2
    sim: SimConfig = SimConfig()
    catalog: CatalogConfig = CatalogConfig()
    sandbox: SandboxConfig = SandboxConfig()

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.capacity < 1 or self.seconds_prefix < 0 or self.flush_secs <= 0 or self.hydrate_minutes < 0:
            raise ConfigError(
                "capacity >= 1, seconds_prefix >= 0, flush_secs > 0 and hydrate_minutes >= 0 are required"
            )
        self.check_range("external_grace_secs", 0, 3_600)
        if not 0 < self.retention_days <= MAX_RETENTION_DAYS:
            raise ConfigError(f"retention_days {self.retention_days:g}: allowed above 0, at most {MAX_RETENTION_DAYS}")
        if not 0.000_01 <= self.gil_switch_secs <= 0.1:
            raise ConfigError(f"gil_switch_secs {self.gil_switch_secs}: allowed 0.00001..0.1")
        if not 0 < self.sim.speed <= MAX_SIM_SPEED:
            raise ConfigError(f"sim.speed {self.sim.speed}: allowed above 0, at most {MAX_SIM_SPEED:g}")
        if self.venue == "catalog" and self.catalog.venue_name is None:
            raise ConfigError(
                'venue "catalog" needs catalog.venue_name (SPINE_CATALOG_VENUE_NAME): the venue '
                "named by spine import --venue"
            )

    @property
    def venue_name(self) -> str:
        """The venue in every instrument id the node serves: ``sim.venue_name`` on the
        simulated venue, ``catalog.venue_name`` on the catalog venue, else the adapter's
        (``BINANCE``, ``BYBIT``)."""
        if self.venue == "sim":
            return self.sim.venue_name
        if self.venue == "catalog" and self.catalog.venue_name is not None:
            return self.catalog.venue_name
        return self.venue.upper()

    @property
    def catalog_dir(self) -> Path:
        return Path(self.data_dir) / "catalog"


def load_config(path: str | None = None, environ: Mapping[str, str] = os.environ) -> NodeConfig:
    """The file (if any) over the defaults, then the environment over both."""
    return load_settings(NodeConfig, path, environ)
