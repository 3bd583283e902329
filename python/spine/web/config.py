"""Web server configuration: a TOML file (``--config`` or ``SPINE_WEB_CONFIG``) over the
embedded defaults, then ``SPINE_WEB_*`` environment overrides (``spine.settings``). The
deployment mode is this host's (``deployment_mode`` or ``SPINE_DEPLOYMENT_MODE``), never a
request's."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import ClassVar

from spine.settings import ConfigError, ServerSettings, check_base_url, load_settings

__all__ = ["ConfigError", "WebConfig", "load_config"]


class WebConfig(ServerSettings, forbid_unknown_fields=True, frozen=True):
    FILE_VARIABLE: ClassVar[str] = "SPINE_WEB_CONFIG"
    ENVIRONMENT_PREFIX: ClassVar[str] = "SPINE_WEB"
    ENVIRONMENT_KEYS: ClassVar[tuple[str, ...]] = ("gateway", "host", "port")
    WHAT: ClassVar[str] = "web configuration"

    #: The gateway's base URL: every ``/api/engine/`` request goes there.
    gateway: str = "http://127.0.0.1:8800"
    port: int = 8900
    #: A gateway request that has not answered within this long fails (502); streams are not
    #: bounded by it.
    upstream_timeout_secs: float = 10.0

    def __post_init__(self) -> None:
        super().__post_init__()
        check_base_url(self.gateway, "gateway", "gateway base URL")
        self.check_seconds("upstream_timeout_secs")


def load_config(path: str | None = None, environ: Mapping[str, str] = os.environ) -> WebConfig:
    """The file (if any) over the defaults, then the environment over both."""
    return load_settings(WebConfig, path, environ)
