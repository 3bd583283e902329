"""``spine screener``: the process entry point. SIGINT and SIGTERM set one stop event; the
screener stops its feeds and its app and exits 0. A bad configuration exits 2, an address it
cannot listen on 3, before anything starts."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from spine.http.serve import run_until_signalled, start_config
from spine.screener.config import ScreenerConfig, load_config
from spine.settings import flag_overrides

__all__ = ["run_screener"]


def run_screener(
    config_path: str | None,
    nodes: Sequence[str] = (),
    port: int | None = None,
    data_dir: str | None = None,
    environ: Mapping[str, str] = os.environ,
) -> int:
    """Run until SIGINT or SIGTERM; the flags override the file and the environment."""
    overrides = flag_overrides(
        environ, ScreenerConfig.ENVIRONMENT_PREFIX, nodes=tuple(nodes), port=port, data_dir=data_dir
    )
    config = start_config("spine screener", lambda: load_config(config_path, overrides))
    if isinstance(config, int):
        return config
    print(
        f"spine screener {config.screener_id}: nodes {', '.join(config.nodes)}; "
        f"http://{config.host}:{config.port}/v2/screener/health",
        flush=True,
    )
    from spine.screener.api import ScreenerApp
    from spine.screener.service import Screener

    screener = Screener(config)
    # The app reads the screener through its view (spine.screener.api): it is put together here.
    run_until_signalled(f"spine screener {config.screener_id}", lambda stop: screener.run(stop, ScreenerApp(screener)))
