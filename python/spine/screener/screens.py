"""Screen results: a ``svc.screen_definition`` evaluated by the Rust screen table
(``spine._core.ScreenTable``) and answered as ``svc.screen_result``, each ranked row a full
``svc.screener_row``. The definition arrives as the strict-parsed body bytes; the table
enforces its grammar and names the JSON path of anything it refuses."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from spine._core import WIRE_VERSION, ScreenTable, identity
from spine.errors import ScreenError
from spine.http.errors import HttpError

__all__ = ["ROUTE", "check", "evaluate", "screen_id"]

ROUTE = "POST /v2/screener/screen"
#: The members a definition's identity leaves out: its document tags.
_TAGS = ("version", "schema_id", "schema_version")


def screen_id(definition: dict[str, Any]) -> str:
    """Equal definitions (tags aside) have equal ids."""
    return identity("screen_id", {k: v for k, v in definition.items() if k not in _TAGS})


def check(body: bytes) -> None:
    """Refuse ``body`` as :func:`evaluate` would, without any rows (an empty table checks the
    whole grammar): a point-in-time screen is checked before it costs a node read."""
    evaluate(body, ScreenTable(), lambda instrument_id, resolution: {}, 0)


def evaluate(body: bytes, table: ScreenTable, row: Callable[[str, str], dict[str, Any]], as_of: int) -> dict[str, Any]:
    """The ``svc.screen_result`` of ``body`` over ``table``; ``row(instrument_id, resolution)``
    gives a ranked row's ``svc.feature_row``. A refused definition is a 400 INVALID_BODY."""
    try:
        ranked, evaluated, matched = table.screen(body)
    except ScreenError as error:
        raise HttpError("INVALID_BODY", f"{ROUTE}: {str(error).removeprefix('INVALID_SCREEN: ')}") from None
    definition = msgspec.json.decode(body)
    rows = []
    for instrument_id, resolution, rank in ranked:
        feature_row = row(instrument_id, resolution)
        rows.append(
            {
                "version": WIRE_VERSION,
                "schema_id": "svc.screener_row",
                "schema_version": 1,
                "instrument_id": instrument_id,
                "resolution": resolution,
                "rank": rank,
                "ts_event": feature_row["ts_event"],
                "values": feature_row["values"],
            }
        )
    return {
        "version": WIRE_VERSION,
        "schema_id": "svc.screen_result",
        "schema_version": 1,
        "screen_id": screen_id(definition),
        "definition": definition,
        "as_of": str(as_of),
        "evaluated": evaluated,
        "matched": matched,
        "rows": rows,
    }
