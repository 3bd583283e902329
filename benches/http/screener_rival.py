"""The screen's rival: FastAPI on uvicorn answering ``POST /v2/screener/screen`` with polars
over a DataFrame of the screener's rows (fetched from its snapshot; the file is in
``SPINE_BENCH_SCREENER_ROWS``), values as Int64 mantissas at each key's scale (exact), nulls
for ABSENT. It evaluates the definitions the bench sends (``all`` of BETWEEN / GT / LT
conditions, a sort with nulls last and ties by instrument then resolution, a limit) and
answers the ranked rows with their values, as a ``svc.screen_result`` does."""

from __future__ import annotations

import json
import os
from decimal import Decimal
from pathlib import Path
from typing import Any

import polars as pl
from fastapi import FastAPI, Request

RESOLUTIONS = ("1m", "5m", "15m", "30m", "1h", "4h", "1d")


def _mantissa(value: dict[str, Any], scale: int) -> int | None:
    if value["kind"] == "ABSENT":
        return None
    return int(Decimal(value["value"]).scaleb(scale))


def load(path: Path) -> tuple[pl.DataFrame, dict[str, int], dict[tuple[str, str], dict[str, Any]]]:
    """The frame, each key's scale, and each row's ``svc.feature_row`` by (instrument, resolution)."""
    rows = json.loads(path.read_text())
    scales = {
        key: int(value.get("scale", 0))
        for row in rows
        for key, value in row["values"].items()
        if value["kind"] == "DECIMAL"
    }
    keys = list(rows[0]["values"])
    frame = pl.DataFrame(
        {
            "instrument_id": [row["instrument_id"] for row in rows],
            "resolution": [row["resolution"] for row in rows],
            "duration": [RESOLUTIONS.index(row["resolution"]) for row in rows],
            **{
                key: pl.Series(key, [_mantissa(row["values"][key], scales.get(key, 0)) for row in rows], dtype=pl.Int64)
                for key in keys
            },
        }
    )
    return frame, scales, {(row["instrument_id"], row["resolution"]): row for row in rows}


FRAME, SCALES, ROWS = (
    load(Path(os.environ.get("SPINE_BENCH_SCREENER_ROWS", "/dev/null")))
    if "SPINE_BENCH_SCREENER_ROWS" in os.environ
    else (pl.DataFrame(), {}, {})
)
app = FastAPI()


def screen(
    frame: pl.DataFrame, scales: dict[str, int], definition: dict[str, Any]
) -> tuple[list[tuple[str, str, int]], int, int]:
    def _literal(key: str, text: str) -> int:
        return int(Decimal(text).scaleb(scales.get(key, 0)))

    frame = frame.filter(pl.col("resolution").is_in(definition["resolutions"]))
    condition = pl.lit(True)
    for c in definition["filter"]["all"]:
        column = pl.col(c["key"])
        if c["op"] == "BETWEEN":
            condition &= column.is_between(_literal(c["key"], c["low"]), _literal(c["key"], c["high"]))
        elif c["op"] == "GT":
            condition &= column > _literal(c["key"], c["value"])
        elif c["op"] == "LT":
            condition &= column < _literal(c["key"], c["value"])
        else:
            raise ValueError(f"the rival does not evaluate {c['op']}")
    matched = frame.filter(condition)
    sort = definition["sort"]
    top = matched.sort(
        [s["key"] for s in sort] + ["instrument_id", "duration"],
        descending=[s["direction"] == "DESC" for s in sort] + [False, False],
        nulls_last=True,
    ).head(definition["limit"])
    ranked = [(i, r, n + 1) for n, (i, r) in enumerate(top.select("instrument_id", "resolution").iter_rows())]
    return ranked, frame.height, matched.height


@app.post("/v2/screener/screen")
async def screen_route(request: Request) -> Any:
    definition = json.loads(await request.body())
    ranked, evaluated, matched = screen(FRAME, SCALES, definition)
    rows = [
        {
            "instrument_id": i,
            "resolution": r,
            "rank": rank,
            "ts_event": ROWS[(i, r)]["ts_event"],
            "values": ROWS[(i, r)]["values"],
        }
        for i, r, rank in ranked
    ]
    return {
        "schema_id": "svc.screen_result",
        "definition": definition,
        "evaluated": evaluated,
        "matched": matched,
        "rows": rows,
    }


@app.get("/v2/health")
async def health() -> Any:
    return {"rows": FRAME.height}
