"""``spine web``: the process entry point. SIGINT and SIGTERM stop it (exit 0); a bad
configuration exits 2, an address it cannot listen on 3, before anything starts."""

from __future__ import annotations

import os
from collections.abc import Mapping

from spine.http.serve import run_until_signalled, start_config
from spine.settings import flag_overrides
from spine.web.config import WebConfig, load_config

__all__ = ["run_web"]


def run_web(
    config_path: str | None,
    gateway: str | None = None,
    port: int | None = None,
    environ: Mapping[str, str] = os.environ,
) -> int:
    """Run until SIGINT or SIGTERM; the flags override the file and the environment."""
    overrides = flag_overrides(environ, WebConfig.ENVIRONMENT_PREFIX, gateway=gateway, port=port)
    config = start_config("spine web", lambda: load_config(config_path, overrides))
    if isinstance(config, int):
        return config
    print(f"spine web: http://{config.host}:{config.port}/ over {config.gateway} ({config.mode})", flush=True)
    from spine.web.api import WebApp
    from spine.web.service import Web

    web = Web(config)
    return run_until_signalled("spine web", lambda stop: web.run(stop, WebApp(config, web.proxy)))
