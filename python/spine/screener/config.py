"""Screener configuration: a TOML file (``--config`` or ``SPINE_SCREENER_CONFIG``) over the
embedded defaults, then ``SPINE_SCREENER_*`` environment overrides (``spine.settings``).

The defaults follow the default local node (``spine node`` on 127.0.0.1:8700).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import ClassVar, Literal

import msgspec

from spine.settings import ConfigError, ServerSettings, check_nodes, load_settings

__all__ = ["ConfigError", "ScreenerConfig", "load_config"]

#: At most this many venue nodes feed one screener.
MAX_NODES = 64


class ScreenerConfig(ServerSettings, forbid_unknown_fields=True, frozen=True):
    FILE_VARIABLE: ClassVar[str] = "SPINE_SCREENER_CONFIG"
    ENVIRONMENT_PREFIX: ClassVar[str] = "SPINE_SCREENER"
    ENVIRONMENT_KEYS: ClassVar[tuple[str, ...]] = ("screener_id", "nodes", "channel", "data_dir", "host", "port")
    WHAT: ClassVar[str] = "screener configuration"

    screener_id: str = "spine-screener-1"
    #: The venue nodes' base URLs (``http://host:port``) whose instruments and bars it reads.
    nodes: list[str] = msgspec.field(default_factory=lambda: ["http://127.0.0.1:8700"])
    #: The bar channel rows are computed from; None: each node's live channel. Rows never mix
    #: EXTERNAL and INTERNAL bars.
    channel: Literal["EXTERNAL", "INTERNAL"] | None = None
    data_dir: str = "var/spine-screener"
    port: int = 8710
    #: Bar-page requests in flight per node while warming.
    warm_concurrency: int = 4
    #: An upstream request that has not answered within this long fails (and is retried).
    upstream_timeout_secs: float = 10.0
    #: Reconnects to a node back off from the first to the last, with jitter.
    reconnect_min_secs: float = 0.5
    reconnect_max_secs: float = 30.0
    #: The state checkpoint is written this often, and at shutdown.
    checkpoint_secs: float = 60.0
    #: Subscribers ``/v2/stream/screener`` serves at once; more are refused (503).
    stream_subscribers: int = 1_024
    #: Point-in-time screens run at once (each folds its scope's history on the one event loop,
    #: so more at once only interleaves them) and screens waiting for a place; more are 503.
    point_in_time_screens: int = 1
    point_in_time_queue: int = 4
    #: Pattern observations kept (the newest, over every instrument and resolution).
    observations_kept: int = 100_000

    def __post_init__(self) -> None:
        super().__post_init__()
        check_nodes(self.nodes, MAX_NODES)
        self.check_range("observations_kept", 1, 10_000_000)
        self.check_range("stream_subscribers", 1, 65_536)
        self.check_range("point_in_time_screens", 1, 64)
        self.check_range("point_in_time_queue", 0, 1_024)
        self.check_range("warm_concurrency", 1, 64)
        self.check_seconds("upstream_timeout_secs", "checkpoint_secs", "reconnect_min_secs", "reconnect_max_secs")
        if self.reconnect_min_secs > self.reconnect_max_secs:
            raise ConfigError(
                f"reconnect_min_secs {self.reconnect_min_secs} is above reconnect_max_secs "
                f"{self.reconnect_max_secs}; allowed: min <= max"
            )


def load_config(path: str | None = None, environ: Mapping[str, str] = os.environ) -> ScreenerConfig:
    """The file (if any) over the defaults, then the environment over both."""
    return load_settings(ScreenerConfig, path, environ)
