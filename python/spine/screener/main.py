"""``spine screener``: the process entry point. SIGINT and SIGTERM set one stop event; the
screener stops its feeds and its app and exits 0. A bad configuration exits 2, an address it
cannot listen on 3, before anything starts."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import Mapping, Sequence

from spine.http.serve import start_config
from spine.screener.config import ScreenerConfig, load_config

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
    config = start_config("spine screener", lambda: load_config(config_path, overrides))
    if isinstance(config, int):
        return config
    print(f"spine screener {config.screener_id}: nodes {', '.join(config.nodes)}; "
          f"http://{config.host}:{config.port}/v2/screener/health", flush=True)
    asyncio.run(_serve(config))
    print(f"spine screener {config.screener_id}: stopped", flush=True)
    # Everything is stopped and closed. Leave now rather than through interpreter teardown:
    # there a native server thread finishing late can abort the process (seen under load), and
    # a clean stop must exit 0.
    sys.stderr.flush()
    os._exit(0)
