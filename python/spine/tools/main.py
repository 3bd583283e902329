"""``spine tools``: the process entry point. It serves the protocol on stdin and stdout until
stdin closes (exit 0); a bad configuration exits 2 before anything starts. Logs go to stderr:
stdout carries the protocol and nothing else."""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping

from spine.settings import ConfigError, flag_overrides
from spine.tools.config import ToolsConfig, load_config

__all__ = ["run_tools"]


def run_tools(config_path: str | None, gateway: str | None = None, environ: Mapping[str, str] = os.environ) -> int:
    overrides = flag_overrides(environ, ToolsConfig.ENVIRONMENT_PREFIX, gateway=gateway)
    try:
        config = load_config(config_path, overrides)
    except ConfigError as error:
        print(f"spine tools: {error}", file=sys.stderr)
        return 2
    logging.basicConfig(stream=sys.stderr, level=config.log_level.upper(), format="spine tools: %(message)s")
    import anyio
    from mcp.server.stdio import stdio_server

    from spine.tools.api import build_server
    from spine.tools.service import ToolService

    service = ToolService(config)
    server = build_server(service)

    async def serve() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    try:
        anyio.run(serve)
    except KeyboardInterrupt:
        pass
    finally:
        service.close()
    return 0
