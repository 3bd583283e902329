"""What a notebook pays to read a 5,000-bar page with ``spine.client``, side by side in one run:

- ``spine``: the client's decode, every step of the contract's client-side decode (the strict
  parser, the tags, the structure checked by jsonschema-rs);
- ``jsonschema``: the same steps with the structure checked by jsonschema (Python), as the
  decoder did before it used jsonschema-rs;
- ``json.loads``: what a script with a bare HTTP client does, checking nothing.

And the page as a polars frame with exact decimals (``bars_frame``) against
``polars.DataFrame`` of the rows with floats (what loses the decimals).

Run: ``pytest benches/bench_client.py --benchmark-group-by=group``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from pytest_benchmark.fixture import BenchmarkFixture

from spine._core import canonicalize
from spine.client import Answer, bars_frame, decode, tool
from spine.schemas import validator_for

BARS = 5_000
EXAMPLE = Path(__file__).resolve().parents[1] / "tests" / "data" / "wire_examples" / "svc.bar_envelope.json"


def page() -> bytes:
    """A 5,000-bar page, its bars one minute apart, every value a served decimal string."""
    document = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    first = document["bars"][0]
    document["bars"] = [
        {**first, "sequence": i + 1, "ts_event": str(int(first["ts_event"]) + 60_000_000_000 * i)} for i in range(BARS)
    ]
    return json.dumps(document).encode()


PAGE = page()


def with_jsonschema(raw: bytes) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(canonicalize(raw))
    assert document["schema_id"] == "svc.bar_envelope" and document["version"] == "spine.v2"
    errors = list(validator_for("svc.bar_envelope", 1).iter_errors(document))
    assert not errors
    return document


DECODERS: dict[str, Callable[[bytes], Any]] = {
    "spine": lambda raw: decode(Answer(200, raw), tool("bars_list")),
    "jsonschema": with_jsonschema,
    "json.loads": json.loads,
}


def test_the_decoders_agree() -> None:
    decoded = {name: run(PAGE) for name, run in DECODERS.items()}
    assert decoded["spine"] == decoded["jsonschema"] == decoded["json.loads"]


@pytest.mark.benchmark(group="decode a 5,000-bar page")
@pytest.mark.parametrize("rival", list(DECODERS))
def test_decode(benchmark: BenchmarkFixture, rival: str) -> None:
    assert len(benchmark(DECODERS[rival], PAGE)["bars"]) == BARS


FRAMES: dict[str, Callable[[list[dict[str, Any]]], Any]] = {
    "spine": bars_frame,
    "polars floats": lambda bars: pl.DataFrame(bars).with_columns(
        pl.col(c).cast(pl.Float64) for c in ("open", "high", "low", "close", "volume")
    ),
}


@pytest.mark.benchmark(group="a 5,000-bar page as a polars frame")
@pytest.mark.parametrize("rival", list(FRAMES))
def test_frame(benchmark: BenchmarkFixture, rival: str) -> None:
    bars = json.loads(PAGE)["bars"]
    frame = benchmark(FRAMES[rival], bars)
    assert frame.height == BARS and [str(v) for v in frame["close"].head(3).to_list()] == [
        str(float(b["close"])) if rival != "spine" else b["close"] for b in bars[:3]
    ]
