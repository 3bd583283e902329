"""Gateway configuration: a TOML file (``--config`` or ``SPINE_GATEWAY_CONFIG``) over the
embedded defaults, then ``SPINE_GATEWAY_*`` environment overrides (``spine.settings``).

The defaults front the default local node (127.0.0.1:8700) and screener (127.0.0.1:8710)."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import ClassVar

import msgspec

from spine.settings import ConfigError, ServerSettings, check_base_url, check_nodes, load_settings

__all__ = ["ConfigError", "GatewayConfig", "load_config"]

#: At most this many venue nodes behind one gateway.
MAX_NODES = 64


class GatewayConfig(ServerSettings, forbid_unknown_fields=True, frozen=True):
    FILE_VARIABLE: ClassVar[str] = "SPINE_GATEWAY_CONFIG"
    ENVIRONMENT_PREFIX: ClassVar[str] = "SPINE_GATEWAY"
    ENVIRONMENT_KEYS: ClassVar[tuple[str, ...]] = (
        "gateway_id",
        "nodes",
        "screener",
        "data_dir",
        "host",
        "port",
        "database",
        "catalogs",
    )
    WHAT: ClassVar[str] = "gateway configuration"

    gateway_id: str = "spine-gateway-1"
    #: The venue nodes' base URLs (``http://host:port``).
    nodes: list[str] = msgspec.field(default_factory=lambda: ["http://127.0.0.1:8700"])
    #: The screener's base URL; None: no screener (its routes answer UPSTREAM_UNAVAILABLE).
    screener: str | None = "http://127.0.0.1:8710"
    data_dir: str = "var/spine-gateway"
    port: int = 8800
    #: An upstream request that has not answered within this long fails (502).
    upstream_timeout_secs: float = 10.0
    #: How often every upstream is looked at (reachability, each node's venues).
    refresh_secs: float = 5.0
    #: Strategies, revisions and backtest jobs (SQLAlchemy URL); None: ``sqlite:///DATA_DIR/spine.db``.
    #: Workers (``spine worker --database``) must be given the same.
    database: str | None = None
    #: The execution block every backtest runs with (never chosen by a request): starting
    #: capital in the instruments' quote currency, and the fill model's seed.
    #: Catalog dirs the workers read beside the nodes' (``spine import``'s): an instrument held
    #: there is known at submit and validation though no node lists it.
    catalogs: list[str] = msgspec.field(default_factory=list)
    backtest_capital: str = "100000"
    backtest_seed: int = 42
    #: A RUNNING job whose worker has not beaten for this long is taken back by the gateway
    #: too (as by any worker: keep equal to the workers' ``stale_secs``), and a worker not
    #: seen for this long is not alive.
    worker_stale_secs: float = 10.0
    #: Attempts a job is given before a lost worker fails it (the workers' ``max_attempts``).
    worker_max_attempts: int = 2
    #: How often the gateway looks at the queue and the workers.
    queue_watch_secs: float = 1.0
    #: Live job streams (``/v2/stream/backtests``) at once; more are 503 SUBSCRIBERS_FULL.
    job_stream_subscribers: int = 1_024
    #: How often the study scheduler looks at its studies' trials (an action wakes it at once).
    study_poll_secs: float = 0.1

    @property
    def database_url(self) -> str:
        return self.database or f"sqlite:///{self.data_dir}/spine.db"

    def __post_init__(self) -> None:
        super().__post_init__()
        check_nodes(self.nodes, MAX_NODES)
        if self.screener is not None:
            check_base_url(self.screener, "screener", "screener base URL")
        self.check_seconds(
            "upstream_timeout_secs", "refresh_secs", "worker_stale_secs", "queue_watch_secs", "study_poll_secs"
        )
        if not re.fullmatch(r"[1-9][0-9]{0,15}(\.[0-9]{1,8})?", self.backtest_capital):
            raise ConfigError(
                f"backtest_capital {self.backtest_capital!r}: allowed a positive decimal string, "
                "at most 16 integer and 8 fractional digits"
            )
        self.check_range("worker_max_attempts", 1, 100)
        self.check_range("job_stream_subscribers", 1, 65_536)
        self.check_range("backtest_seed", 0, 2**32 - 1)


def load_config(path: str | None = None, environ: Mapping[str, str] = os.environ) -> GatewayConfig:
    """The file (if any) over the defaults, then the environment over both."""
    return load_settings(GatewayConfig, path, environ)
