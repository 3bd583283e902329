"""``spine screener``: the process entry point. SIGINT and SIGTERM set one stop event; the
screener stops its feeds and its app and exits 0. A bad configuration exits 2, an address it
cannot listen on 3, before anything starts."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import Mapping, Sequence

from spine.http.serve import check_listen
from spine.screener.config import ConfigError, ScreenerConfig, load_config

__all__ = ["run_screener"]


async def _serve(config: ScreenerConfig) -> None:
    from spine.screener.service import Screener

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    await Screener(config).run(stop)


def run_screener(config_path: str | None, nodes: Sequence[str] = (), port: int | None = None,
                 data_dir: str | None = None, environ: Mapping[str, str] = os.environ) -> int:
    """Run until SIGINT or SIGTERM; the flags override the file and the environment."""
    overrides = dict(environ)
    if nodes:
        overrides["SPINE_SCREENER_NODES"] = ",".join(nodes)
    if port is not None:
        overrides["SPINE_SCREENER_PORT"] = str(port)
    if data_dir is not None:
        overrides["SPINE_SCREENER_DATA_DIR"] = data_dir
    try:
        config = load_config(config_path, overrides)
    except ConfigError as error:
        print(f"spine screener: {error}", file=sys.stderr)
        return 2
    try:
        check_listen(config.host, config.port)
    except OSError as error:
        print(f"spine screener: refusing to start: cannot listen on {config.host}:{config.port}: "
              f"{error.strerror or error}", file=sys.stderr)
        return 3
    print(f"spine screener {config.screener_id}: nodes {', '.join(config.nodes)}; "
          f"http://{config.host}:{config.port}/v2/screener/health", flush=True)
    asyncio.run(_serve(config))
    print(f"spine screener {config.screener_id}: stopped", flush=True)
    return 0
