"""Rival 1: FastAPI on uvicorn, returning the pre-built documents as dicts (FastAPI's default
path: ``jsonable_encoder`` then ``JSONResponse``), with its usual typed query parameters."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, HTTPException

from benches.http.pages import load, page_key

DOCUMENTS = load()
app = FastAPI()


@app.get("/v2/bars")
async def bars(instrument_id: str | None = None, bar_type: str | None = None, limit: int = 500) -> Any:
    key = page_key(instrument_id, bar_type)
    if key is None:
        raise HTTPException(404, "not a pre-built page")
    return DOCUMENTS[key]


@app.get("/v2/health")
async def health() -> Any:
    return DOCUMENTS["health"]
