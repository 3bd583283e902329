"""The strategy templates (GET /v2/strategy-templates): complete declarative strategies whose
parameter ranges a study can search. Each is one TOML file of package data
(``templates/<template_id>.toml``), served as a project of one file, ``strategy.toml``."""

from __future__ import annotations

import tomllib
from functools import cache
from importlib.resources import files as package_files
from typing import Any

from spine import _core
from spine.strategies.paths import ENTRY

__all__ = ["TEMPLATE_IDS", "template_text", "template_files", "template_document", "template_documents"]

#: The templates, in the order they are listed.
TEMPLATE_IDS = ("ema_cross", "rsi_mean_reversion", "donchian_breakout", "bollinger_reversion")


@cache
def template_text(template_id: str) -> str:
    """A template's ``strategy.toml``.

    # Errors
    KeyError for an id that names no template.
    """
    if template_id not in TEMPLATE_IDS:
        raise KeyError(template_id)
    resource = package_files("spine.strategies").joinpath("templates", f"{template_id}.toml")
    return resource.read_text(encoding="utf-8")


def template_files(template_id: str) -> dict[str, str]:
    """A template's project files by path (a new project's first revision)."""
    return {ENTRY: template_text(template_id)}


def template_document(template_id: str) -> dict[str, Any]:
    """The svc.strategy_template document of one template (KeyError for an unknown id)."""
    text = template_text(template_id)
    strategy = tomllib.loads(text)["strategy"]
    return {
        "version": _core.WIRE_VERSION,
        "schema_id": "svc.strategy_template",
        "schema_version": 1,
        "template_id": template_id,
        "name": strategy["name"],
        "description": strategy.get("description", ""),
        "files": [{"path": path, "content": content} for path, content in sorted(template_files(template_id).items())],
    }


def template_documents() -> list[dict[str, Any]]:
    """Every template's document, in :data:`TEMPLATE_IDS` order."""
    return [template_document(t) for t in TEMPLATE_IDS]
