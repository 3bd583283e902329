"""Process configuration, the same way for every process: a TOML file over the embedded
defaults, then environment overrides, converted to the process's sealed Struct. Unknown keys
are refused by name, so a typo never silently falls back to a default."""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

import msgspec

__all__ = ["ConfigError", "load_settings"]

S = TypeVar("S", bound=msgspec.Struct)


class ConfigError(ValueError):
    """A configuration value or key refused, naming it and what is allowed."""


def load_settings(kind: type[S], path: str | None, environ: Mapping[str, str], overrides: Mapping[str, str],
                  what: str) -> S:
    """``kind`` from the file at ``path`` (if any) over its defaults, then the variables of
    ``overrides`` (variable -> dotted key) found in ``environ`` over both. A key ending in
    ``[]`` takes a comma-separated list (``a,b`` -> ``["a", "b"]``)."""
    tree: dict[str, Any] = {}
    if path:
        try:
            tree = tomllib.loads(Path(path).read_text())
        except (OSError, tomllib.TOMLDecodeError) as error:
            raise ConfigError(f"config file {path}: {error}") from error
    for variable, dotted in overrides.items():
        if variable in environ:
            *parents, leaf = dotted.removesuffix("[]").split(".")
            node = tree
            for key in parents:
                node = node.setdefault(key, {})
            text = environ[variable]
            node[leaf] = [part.strip() for part in text.split(",")] if dotted.endswith("[]") else text
    try:
        # strict=False lets environment strings convert to the declared int/float types.
        return msgspec.convert(tree, kind, strict=False)
    except msgspec.ValidationError as error:
        raise ConfigError(f"{what}: {error}") from error
