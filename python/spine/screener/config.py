"""Screener configuration: a TOML file (``--config`` or ``SPINE_SCREENER_CONFIG``) over the
embedded defaults, then ``SPINE_SCREENER_*`` environment overrides (``spine.settings``).

The defaults follow the default local node (``spine node`` on 127.0.0.1:8700).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Literal
from urllib.parse import urlsplit

import msgspec

from spine.settings import ConfigError, load_settings

__all__ = ["ENVIRONMENT", "ConfigError", "ScreenerConfig", "load_config"]

#: At most this many venue nodes feed one screener.
MAX_NODES = 64


class ScreenerConfig(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    screener_id: str = "spine-screener-1"
    #: The venue nodes' base URLs (``http://host:port``) whose instruments and bars it reads.
    nodes: list[str] = msgspec.field(default_factory=lambda: ["http://127.0.0.1:8700"])
    #: The bar channel rows are computed from; None: each node's live channel. Rows never mix
    #: EXTERNAL and INTERNAL bars.
    channel: Literal["EXTERNAL", "INTERNAL"] | None = None
    data_dir: str = "var/spine-screener"
    host: str = "127.0.0.1"
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
    stream_heartbeat_secs: float = 15.0
    http_body_secs: float = 10.0
    http_backlog: int = 4_096
    log_level: str = "ERROR"
    #: Pinned decision 7, as on the node: server-side only.
    deployment_mode: str = "public-readonly"

    def __post_init__(self) -> None:
        if not 1 <= len(self.nodes) <= MAX_NODES:
            raise ConfigError(f"nodes: {len(self.nodes)} given; allowed 1..{MAX_NODES} base URLs")
        for url in self.nodes:
            _check_base_url(url)
        if len(set(self.nodes)) != len(self.nodes):
            raise ConfigError(f"nodes: {self.nodes} repeats a base URL; each node is listed once")
        if not 0 < self.port < 65_536:
            raise ConfigError(f"port {self.port}: allowed 1..65535")
        if not 0 < self.http_backlog <= 65_535:
            raise ConfigError(f"http_backlog {self.http_backlog}: allowed 1..65535")
        if not 1 <= self.warm_concurrency <= 64:
            raise ConfigError(f"warm_concurrency {self.warm_concurrency}: allowed 1..64")
        for name in ("upstream_timeout_secs", "checkpoint_secs", "stream_heartbeat_secs", "http_body_secs",
                     "reconnect_min_secs", "reconnect_max_secs"):
            value = getattr(self, name)
            if not 0 < value <= 3_600:
                raise ConfigError(f"{name} {value}: allowed above 0, at most 3600")
        if self.reconnect_min_secs > self.reconnect_max_secs:
            raise ConfigError(f"reconnect_min_secs {self.reconnect_min_secs} is above reconnect_max_secs "
                              f"{self.reconnect_max_secs}; allowed: min <= max")

    @property
    def mode(self) -> Literal["public-readonly", "private-operator"]:
        """Only an exact ``private-operator`` unlocks the mutating routes."""
        return "private-operator" if self.deployment_mode == "private-operator" else "public-readonly"


def _check_base_url(url: str) -> None:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment \
            or parts.path not in ("", "/"):
        raise ConfigError(f"nodes: {url!r} is not a node base URL; allowed: http(s)://host[:port], no path, "
                          "query or fragment")


#: Environment overrides: variable -> dotted config key (``[]``: a comma-separated list).
ENVIRONMENT = {
    "SPINE_SCREENER_ID": "screener_id", "SPINE_SCREENER_NODES": "nodes[]", "SPINE_SCREENER_CHANNEL": "channel",
    "SPINE_SCREENER_DATA_DIR": "data_dir", "SPINE_SCREENER_HOST": "host", "SPINE_SCREENER_PORT": "port",
    "SPINE_LOG_LEVEL": "log_level", "SPINE_DEPLOYMENT_MODE": "deployment_mode",
}


def load_config(path: str | None = None, environ: Mapping[str, str] = os.environ) -> ScreenerConfig:
    """The file (if any) over the defaults, then the environment over both."""
    return load_settings(ScreenerConfig, path or environ.get("SPINE_SCREENER_CONFIG"), environ, ENVIRONMENT,
                         "screener configuration")
