"""Process configuration, the same way for every process: a TOML file over the embedded
defaults, then environment overrides, converted to the process's sealed Struct. Unknown keys
are refused by name, so a typo never silently falls back to a default."""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, Literal, TypeVar
from urllib.parse import urlsplit

import msgspec
import msgspec.inspect

__all__ = [
    "ConfigError",
    "ServerSettings",
    "Settings",
    "check_base_url",
    "check_nodes",
    "environment_variable",
    "flag_overrides",
    "load_settings",
]

S = TypeVar("S", bound="Settings")
#: The prefix of the variables every process reads alike (:attr:`Settings.SHARED_KEYS`).
SHARED_PREFIX = "SPINE"


class ConfigError(ValueError):
    """A configuration value or key refused, naming it and what is allowed."""


class Settings(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """A process's settings name their file variable, the settings the environment overrides
    and what they are in errors (:func:`load_settings` reads them).

    A setting's variable is derived from its dotted key, never written out: the process's
    ``ENVIRONMENT_PREFIX``, ``_``, then the key upper-cased with dots as underscores, a first
    word the prefix already ends with said once (``SPINE_GATEWAY`` + ``gateway_id`` ->
    ``SPINE_GATEWAY_ID``; ``SPINE`` + ``sim.speed`` -> ``SPINE_SIM_SPEED``). ``SHARED_KEYS``
    take the bare ``SPINE`` prefix: one variable sets them for every process."""

    FILE_VARIABLE: ClassVar[str] = ""
    ENVIRONMENT_PREFIX: ClassVar[str] = "SPINE"
    #: The settings (dotted keys) the environment overrides under ``ENVIRONMENT_PREFIX``.
    ENVIRONMENT_KEYS: ClassVar[tuple[str, ...]] = ()
    SHARED_KEYS: ClassVar[tuple[str, ...]] = ()
    WHAT: ClassVar[str] = "configuration"

    @classmethod
    def environment(cls) -> dict[str, str]:
        """Every environment override: variable -> dotted key."""
        return {
            **{environment_variable(cls.ENVIRONMENT_PREFIX, key): key for key in cls.ENVIRONMENT_KEYS},
            **{environment_variable(SHARED_PREFIX, key): key for key in cls.SHARED_KEYS},
        }

    def check_range(self, name: str, low: int, high: int) -> None:
        """Refuse the setting ``name`` outside ``low..high`` (both inclusive)."""
        value = getattr(self, name)
        if not low <= value <= high:
            raise ConfigError(f"{name} {value}: allowed {low}..{high}")

    def check_seconds(self, *names: str) -> None:
        """Refuse any of the durations ``names`` not above 0 or longer than an hour."""
        for name in names:
            value = getattr(self, name)
            if not 0 < value <= 3_600:
                raise ConfigError(f"{name} {value}: allowed above 0, at most 3600")


class ServerSettings(Settings, forbid_unknown_fields=True, frozen=True):
    """What every serving process is configured with (a process's settings extend these)."""

    SHARED_KEYS: ClassVar[tuple[str, ...]] = ("log_level", "deployment_mode")

    host: str = "127.0.0.1"
    port: int = 8700
    #: Pending connections the listener queues; Granian also bounds requests in flight by it,
    #: so it caps concurrent streams (1,000 SSE subscribers need more than the default 128).
    http_backlog: int = 4_096
    #: A stream with nothing to send for this long sends ``event: heartbeat``.
    stream_heartbeat_secs: float = 15.0
    #: A POST body must arrive whole within this long of its request, else 400 INVALID_BODY: a
    #: client that stops sending midway holds no request open.
    http_body_secs: float = 10.0
    log_level: str = "ERROR"
    #: Pinned decision 7: read from here (or ``SPINE_DEPLOYMENT_MODE``) only, never from a
    #: request. Any text is accepted; see :attr:`mode` for what it resolves to.
    deployment_mode: str = "public-readonly"

    def __post_init__(self) -> None:
        self.check_range("port", 1, 65_535)
        self.check_range("http_backlog", 1, 65_535)
        self.check_seconds("stream_heartbeat_secs", "http_body_secs")

    @property
    def mode(self) -> Literal["public-readonly", "private-operator"]:
        """Only an exact ``private-operator`` unlocks the mutating routes; unset or anything
        else (a typo included) resolves to ``public-readonly``, the safe side."""
        return "private-operator" if self.deployment_mode == "private-operator" else "public-readonly"


def environment_variable(prefix: str, dotted: str) -> str:
    """The variable that overrides the setting ``dotted`` under ``prefix`` (see :class:`Settings`)."""
    name = dotted.replace(".", "_").upper()
    return f"{prefix}_{name.removeprefix(prefix.rsplit('_', 1)[-1] + '_')}"


def load_settings(kind: type[S], path: str | None, environ: Mapping[str, str]) -> S:
    """``kind`` from the file at ``path`` (else the one its ``FILE_VARIABLE`` names, if any)
    over its defaults, then the variables of its :meth:`~Settings.environment` found in
    ``environ`` over both. A list setting takes a comma-separated list (``a,b`` -> ``["a", "b"]``)."""
    path = path or environ.get(kind.FILE_VARIABLE) or None
    tree: dict[str, Any] = {}
    if path:
        try:
            tree = tomllib.loads(Path(path).read_text())
        except (OSError, tomllib.TOMLDecodeError) as error:
            raise ConfigError(f"config file {path}: {error}") from error
    for variable, dotted in kind.environment().items():
        if variable in environ:
            *parents, leaf = dotted.split(".")
            node = tree
            for key in parents:
                node = node.setdefault(key, {})
            text = environ[variable]
            node[leaf] = [part.strip() for part in text.split(",")] if _is_list(kind, dotted) else text
    try:
        # strict=False lets environment strings convert to the declared int/float types.
        return msgspec.convert(tree, kind, strict=False)
    except msgspec.ValidationError as error:
        raise ConfigError(f"{kind.WHAT}: {error}") from error


def _is_list(kind: type[Settings], dotted: str) -> bool:
    """Whether the setting ``dotted`` of ``kind`` holds a list (its variable is comma-separated)."""
    info: Any = msgspec.inspect.type_info(kind)
    for key in dotted.split("."):
        info = next(field.type for field in info.fields if field.name == key)
    return isinstance(info, msgspec.inspect.ListType)


def check_base_url(url: str, key: str, what: str) -> None:
    """Refuse ``url`` (the value of ``key``) unless it is a base URL: ``http(s)://host[:port]``."""
    parts = urlsplit(url)
    if (
        parts.scheme not in ("http", "https")
        or not parts.hostname
        or parts.query
        or parts.fragment
        or parts.path not in ("", "/")
    ):
        raise ConfigError(f"{key}: {url!r} is not a {what}; allowed: http(s)://host[:port], no path, query or fragment")


def check_nodes(nodes: list[str], maximum: int) -> None:
    """Refuse a ``nodes`` list unless it holds 1..``maximum`` distinct node base URLs."""
    if not 1 <= len(nodes) <= maximum:
        raise ConfigError(f"nodes: {len(nodes)} given; allowed 1..{maximum} base URLs")
    for url in nodes:
        check_base_url(url, "nodes", "node base URL")
    if len(set(nodes)) != len(nodes):
        raise ConfigError(f"nodes: {nodes} repeats a base URL; each node is listed once")


def flag_overrides(environ: Mapping[str, str], prefix: str, **flags: object) -> dict[str, str]:
    """``environ`` with each command-line flag given (not None, not empty) set as the variable of
    the setting it names (:func:`environment_variable`), so flags override the file and the
    environment alike (a list joins with commas, as list variables read)."""
    out = dict(environ)
    for name, value in flags.items():
        if value is None or value == () or value == []:
            continue
        out[environment_variable(prefix, name)] = ",".join(value) if isinstance(value, (list, tuple)) else str(value)
    return out
