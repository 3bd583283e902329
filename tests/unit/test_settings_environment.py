"""The environment variables each process reads, pinned: every name, the setting it overrides
and how its text converts. Deployments set these names, so a rename is a break; the list is
read through a mapping that records every key asked of it, so a variable added or dropped
fails here too."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from spine.gateway.config import load_config as load_gateway
from spine.node.config import load_config as load_node
from spine.screener.config import load_config as load_screener
from spine.settings import ServerSettings
from spine.worker.config import load_config as load_worker

#: Process -> (its loader, its file variable, variable -> (text set, dotted setting, value read)).
PINNED: dict[str, tuple[Callable[..., Any], str, dict[str, tuple[str, str, Any]]]] = {
    "node": (
        load_node,
        "SPINE_NODE_CONFIG",
        {
            "SPINE_NODE_ID": ("node-x", "node_id", "node-x"),
            "SPINE_VENUE": ("binance", "venue", "binance"),
            "SPINE_DATA_DIR": ("d", "data_dir", "d"),
            "SPINE_LIVE_CHANNEL": ("INTERNAL", "live_channel", "INTERNAL"),
            "SPINE_HOST": ("0.0.0.0", "host", "0.0.0.0"),
            "SPINE_PORT": ("9001", "port", 9001),
            "SPINE_MANIFEST": ("m.txt", "manifest", "m.txt"),
            "SPINE_RETENTION_DAYS": ("7.5", "retention_days", 7.5),
            "SPINE_SIM_SPEED": ("2.5", "sim.speed", 2.5),
            "SPINE_SIM_SEED": ("9", "sim.seed", 9),
            "SPINE_SIM_VENUE_NAME": ("XSIM", "sim.venue_name", "XSIM"),
            "SPINE_CATALOG_PATH": ("p", "catalog.path", "p"),
            "SPINE_CATALOG_VENUE_NAME": ("CAT", "catalog.venue_name", "CAT"),
            "SPINE_SANDBOX_ENABLED": ("true", "sandbox.enabled", True),
            "SPINE_SANDBOX_STARTING_BALANCES": ("5 BTC,100 USDT", "sandbox.starting_balances", ["5 BTC", "100 USDT"]),
            "SPINE_LOG_LEVEL": ("INFO", "log_level", "INFO"),
            "SPINE_DEPLOYMENT_MODE": ("private-operator", "deployment_mode", "private-operator"),
        },
    ),
    "screener": (
        load_screener,
        "SPINE_SCREENER_CONFIG",
        {
            "SPINE_SCREENER_ID": ("s-x", "screener_id", "s-x"),
            "SPINE_SCREENER_NODES": ("http://a:1, http://b:2", "nodes", ["http://a:1", "http://b:2"]),
            "SPINE_SCREENER_CHANNEL": ("INTERNAL", "channel", "INTERNAL"),
            "SPINE_SCREENER_DATA_DIR": ("d", "data_dir", "d"),
            "SPINE_SCREENER_HOST": ("0.0.0.0", "host", "0.0.0.0"),
            "SPINE_SCREENER_PORT": ("9002", "port", 9002),
            "SPINE_LOG_LEVEL": ("INFO", "log_level", "INFO"),
            "SPINE_DEPLOYMENT_MODE": ("private-operator", "deployment_mode", "private-operator"),
        },
    ),
    "gateway": (
        load_gateway,
        "SPINE_GATEWAY_CONFIG",
        {
            "SPINE_GATEWAY_ID": ("g-x", "gateway_id", "g-x"),
            "SPINE_GATEWAY_NODES": ("http://a:1,http://b:2", "nodes", ["http://a:1", "http://b:2"]),
            "SPINE_GATEWAY_SCREENER": ("http://s:3", "screener", "http://s:3"),
            "SPINE_GATEWAY_DATA_DIR": ("d", "data_dir", "d"),
            "SPINE_GATEWAY_HOST": ("0.0.0.0", "host", "0.0.0.0"),
            "SPINE_GATEWAY_PORT": ("9003", "port", 9003),
            "SPINE_GATEWAY_DATABASE": ("sqlite:///x.db", "database", "sqlite:///x.db"),
            "SPINE_GATEWAY_CATALOGS": ("a, b", "catalogs", ["a", "b"]),
            "SPINE_LOG_LEVEL": ("INFO", "log_level", "INFO"),
            "SPINE_DEPLOYMENT_MODE": ("private-operator", "deployment_mode", "private-operator"),
        },
    ),
    "worker": (
        load_worker,
        "SPINE_WORKER_CONFIG",
        {
            "SPINE_WORKER_ID": ("w-x", "worker_id", "w-x"),
            "SPINE_WORKER_DATABASE": ("sqlite:///x.db", "database", "sqlite:///x.db"),
            "SPINE_WORKER_CATALOGS": ("a,b", "catalogs", ["a", "b"]),
            "SPINE_WORKER_DATA_DIR": ("d", "data_dir", "d"),
            "SPINE_WORKER_RUNNER": ("json:dumps", "runner", "json:dumps"),
            "SPINE_WORKER_HEARTBEAT_SECS": ("1.5", "heartbeat_secs", 1.5),
            "SPINE_WORKER_STALE_SECS": ("20", "stale_secs", 20.0),
            "SPINE_WORKER_POLL_SECS": ("0.5", "poll_secs", 0.5),
            "SPINE_WORKER_MAX_ATTEMPTS": ("3", "max_attempts", 3),
            "SPINE_WORKER_KILL_GRACE_SECS": ("4", "kill_grace_secs", 4.0),
        },
    ),
}


class Recording(dict[str, str]):
    """An environment that notes every variable asked of it."""

    def __init__(self, values: dict[str, str]) -> None:
        super().__init__(values)
        self.asked: set[str] = set()

    def __contains__(self, key: object) -> bool:
        self.asked.add(str(key))
        return super().__contains__(key)

    def __getitem__(self, key: str) -> str:
        self.asked.add(key)
        return super().__getitem__(key)

    def get(self, key: str, default: Any = None) -> Any:  # type: ignore[override]
        self.asked.add(key)
        return super().get(key, default)


def _setting(config: Any, dotted: str) -> Any:
    for key in dotted.split("."):
        config = getattr(config, key)
    return config


@pytest.mark.parametrize("process", sorted(PINNED))
def test_a_process_reads_exactly_its_pinned_variables(process: str) -> None:
    load, file_variable, variables = PINNED[process]
    environ = Recording({})
    load(None, environ)
    assert environ.asked == {file_variable, *variables}


@pytest.mark.parametrize(("process", "variable"), [(p, v) for p in sorted(PINNED) for v in PINNED[p][2]])
def test_each_variable_overrides_its_setting(process: str, variable: str) -> None:
    load, _, variables = PINNED[process]
    text, dotted, value = variables[variable]
    default = _setting(load(None, {}), dotted)
    assert default != value
    assert _setting(load(None, {variable: text}), dotted) == value


def test_the_shared_variables_are_read_by_every_serving_process() -> None:
    shared = {"SPINE_LOG_LEVEL", "SPINE_DEPLOYMENT_MODE"}
    for process, (load, _, variables) in PINNED.items():
        if isinstance(load(None, {}), ServerSettings):
            assert shared <= set(variables), process
