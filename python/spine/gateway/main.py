"""``spine gateway``: the process entry point. SIGINT and SIGTERM set one stop event; the
gateway stops its app and exits 0. A bad configuration exits 2, an address it cannot listen
on 3, before anything starts."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from spine.gateway.config import GatewayConfig, load_config
from spine.http.serve import run_until_signalled, start_config
from spine.settings import flag_overrides

__all__ = ["run_gateway"]


def run_gateway(
    config_path: str | None,
    nodes: Sequence[str] = (),
    screener: str | None = None,
    port: int | None = None,
    data_dir: str | None = None,
    catalogs: Sequence[str] = (),
    environ: Mapping[str, str] = os.environ,
) -> int:
    """Run until SIGINT or SIGTERM; the flags override the file and the environment."""
    overrides = flag_overrides(
        environ,
        GatewayConfig.ENVIRONMENT_PREFIX,
        nodes=tuple(nodes),
        screener=screener,
        port=port,
        data_dir=data_dir,
        catalogs=tuple(catalogs),
    )
    config = start_config("spine gateway", lambda: load_config(config_path, overrides))
    if isinstance(config, int):
        return config
    print(
        f"spine gateway {config.gateway_id}: nodes {', '.join(config.nodes)}; screener {config.screener}; "
        f"http://{config.host}:{config.port}/v2/health",
        flush=True,
    )
    from spine.gateway.api import GatewayApp
    from spine.gateway.service import Gateway

    gateway = Gateway(config)
    # The app reads the gateway through its view (spine.gateway.api): it is put together here.
    run_until_signalled(f"spine gateway {config.gateway_id}", lambda stop: gateway.run(stop, GatewayApp(gateway)))
