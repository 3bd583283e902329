"""The sandbox execution client of a paper node, as NautilusTrader 1.221 builds it.

The client fills paper orders against the venue's data it hears on the message bus: quotes,
trades and instruments under ``data.*.<VENUE>.*``. Bar topics name the bar type
(``data.bars.BTCUSDT.SIM-1-MINUTE-LAST-EXTERNAL``) and miss that pattern, so the node routes its
venue's bars to the client itself: a strategy that sees only bars then fills at their closes,
as a backtest does."""

from __future__ import annotations

import logging
from decimal import Decimal
from typing import Any

from nautilus_trader.adapters.sandbox.config import SandboxExecutionClientConfig
from nautilus_trader.adapters.sandbox.factory import SandboxLiveExecClientFactory
from nautilus_trader.config import ImportableControllerConfig

from spine.node.config import SandboxConfig

__all__ = ["controller", "execution_client", "route_bars"]

log = logging.getLogger("spine.node.paper")


def execution_client(venue: str, sandbox: SandboxConfig, sink: list[Any]) -> tuple[Any, type]:
    """The client's configuration for ``venue`` and a factory that keeps the client it builds
    in ``sink``."""
    config = SandboxExecutionClientConfig(
        venue=venue,
        starting_balances=list(sandbox.starting_balances),
        oms_type="NETTING",
        account_type="MARGIN",
        default_leverage=Decimal(sandbox.leverage),
        bar_execution=True,
        trade_execution=False,
    )

    class Keeping(SandboxLiveExecClientFactory):
        @staticmethod
        def create(**kwargs: Any) -> Any:
            client = SandboxLiveExecClientFactory.create(**kwargs)
            sink.append(client)
            return client

    # The framework's node builder hands the portfolio only to a factory of this very name.
    Keeping.__name__ = SandboxLiveExecClientFactory.__name__
    return config, Keeping


def controller() -> ImportableControllerConfig:
    """The trader's controller: with one, strategies can be added to a running trader (the
    sandbox's runs start after the node does)."""
    return ImportableControllerConfig(
        controller_path="nautilus_trader.trading.controller:Controller",
        config_path="nautilus_trader.live.config:ControllerConfig",
        config={},
    )


def route_bars(msgbus: Any, venue: str, client: Any) -> None:
    """Feed the venue's bars to the sandbox client (their topics miss its own subscription).
    A bar the client cannot take is logged and dropped: an exception raised into the data
    engine's publish would end the whole process (the framework exits on a handler's error)."""

    def fill_on(bar: Any) -> None:
        try:
            client.on_data(bar)
        except Exception as error:  # noqa: BLE001 (see above: never into the framework)
            log.warning("sandbox: %s not taken: %s", bar.bar_type, error)

    msgbus.subscribe(topic=f"data.bars.*.{venue}-*", handler=fill_on)
