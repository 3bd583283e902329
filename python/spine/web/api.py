"""The web server's app (RSGI, served by Granian): the UI's files from the installed package,
the host's deployment mode for the page (``GET /api/mode``), and the same-origin proxy under
``/api/engine/`` (:mod:`spine.web.proxy`). Its own refusals are the v2 error envelope."""

from __future__ import annotations

import logging
import re
from importlib import resources
from typing import Any

import msgspec

from spine._core import WIRE_VERSION
from spine.http.app import read_body
from spine.http.errors import HttpError, error_response
from spine.http.pipe import pipe
from spine.http.send_queue import SendQueue
from spine.web.config import WebConfig
from spine.web.proxy import PREFIX, Proxy

__all__ = ["STATIC", "WebApp"]

log = logging.getLogger("spine.web")
JSON = [("content-type", "application/json")]
_encode = msgspec.json.encode
#: The UI's files, shipped in the package.
STATIC = resources.files("spine.web") / "static"
#: Third-party files served from their own installed packages (pinned in pyproject.toml),
#: never copied into the repository or fetched from a CDN.
VENDOR = {
    "plotly.min.js": resources.files("plotly") / "package_data" / "plotly.min.js",
    "lightweight-charts.js": resources.files("lightweight_charts") / "js" / "lightweight-charts.js",
}
_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
}
_NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}$")
#: Verbs whose body the proxy reads and passes on.
_WITH_BODY = ("POST", "PUT", "PATCH", "DELETE")
#: The proxy adds no heartbeat of its own to a piped stream: the gateway's pass through.
_NO_HEARTBEAT_SECS = 86_400.0


class WebApp:
    """See the module docs."""

    def __init__(self, config: WebConfig, proxy: Proxy) -> None:
        self.config = config
        self.proxy = proxy

    async def __rsgi__(self, scope: Any, proto: Any) -> None:
        if scope.proto != "http":
            return
        path = scope.path
        try:
            if path == PREFIX or path.startswith(PREFIX + "/"):
                return await self._engine(scope, proto, path[len(PREFIX) :] or "/")
            if path == "/api/mode" and scope.method in ("GET", "HEAD"):
                proto.response_bytes(200, JSON, _encode({"deployment_mode": self.config.mode}))
            else:
                self._file(scope, proto, path)
        except HttpError as error:
            status, body = error_response(error)
            proto.response_bytes(status, [*JSON, *error.headers], _encode(body))

    def _file(self, scope: Any, proto: Any, path: str) -> None:
        """``/`` is the UI's page; ``/static/<name>`` one of its files, ``/vendor/<name>`` a
        library's file from its package."""
        if scope.method not in ("GET", "HEAD"):
            raise HttpError("METHOD_NOT_ALLOWED", f"{scope.method} {path}; the UI's files take GET")
        if path.startswith("/vendor/"):
            name = path.removeprefix("/vendor/")
            file = VENDOR.get(name)
        else:
            name = "index.html" if path == "/" else path.removeprefix("/static/") if path.startswith("/static/") else ""
            file = STATIC / name if _NAME.match(name) else None
        if file is None or not file.is_file():
            raise HttpError("NOT_FOUND", f"no file {path}; the UI is at /, the backend under {PREFIX}/")
        kind = _TYPES.get(name[name.rfind(".") :], "application/octet-stream")
        proto.response_bytes(200, [("content-type", kind), ("cache-control", "no-cache")], file.read_bytes())

    async def _engine(self, scope: Any, proto: Any, path: str) -> None:
        method = scope.method
        op = self.proxy.check(method, path)
        if op is not None and op.effect == "STREAM":
            last = scope.headers.get("last-event-id")
            await pipe(
                proto,
                self.proxy.streams,
                self.proxy.gateway,
                path,
                scope.query_string,
                {} if last is None else {"last-event-id": last},
                _NO_HEARTBEAT_SECS,
                WIRE_VERSION,
                SendQueue(scope.server, scope.client),
                name="the gateway",
            )
            return
        body = await read_body(proto, self.config.http_body_secs) if method in _WITH_BODY else b""
        answer = await self.proxy.forward(method, path, scope.query_string, scope.headers, body)
        proto.response_bytes(answer.status, answer.headers, answer.body)
