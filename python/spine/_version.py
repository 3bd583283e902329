"""The installed distribution's version (one source: pyproject.toml)."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("spine-gateway")
except PackageNotFoundError:  # running from a source tree without an install
    __version__ = "0+unknown"
