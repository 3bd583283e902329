"""Tool server configuration: a TOML file (``--config`` or ``SPINE_TOOLS_CONFIG``) over the
embedded defaults, then ``SPINE_TOOLS_*`` environment overrides (``spine.settings``)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import ClassVar

from spine.client.transport import DEFAULT_GATEWAY
from spine.settings import ConfigError, Settings, check_base_url, load_settings

__all__ = ["ConfigError", "ToolsConfig", "load_config"]


class ToolsConfig(Settings, forbid_unknown_fields=True, frozen=True):
    FILE_VARIABLE: ClassVar[str] = "SPINE_TOOLS_CONFIG"
    ENVIRONMENT_PREFIX: ClassVar[str] = "SPINE_TOOLS"
    ENVIRONMENT_KEYS: ClassVar[tuple[str, ...]] = ("gateway", "timeout_secs")
    SHARED_KEYS: ClassVar[tuple[str, ...]] = ("log_level",)
    WHAT: ClassVar[str] = "tool server configuration"

    #: The gateway's base URL: every tool calls it.
    gateway: str = DEFAULT_GATEWAY
    #: A gateway request that has not answered within this long is a tool error (a stream
    #: tool's batch is bounded by its own ``seconds``).
    timeout_secs: float = 30.0
    #: Written to stderr: stdout carries the protocol only.
    log_level: str = "ERROR"

    def __post_init__(self) -> None:
        check_base_url(self.gateway, "gateway", "gateway base URL")
        self.check_seconds("timeout_secs")


def load_config(path: str | None = None, environ: Mapping[str, str] = os.environ) -> ToolsConfig:
    """The file (if any) over the defaults, then the environment over both."""
    return load_settings(ToolsConfig, path, environ)
