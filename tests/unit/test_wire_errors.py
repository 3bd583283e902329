"""The published error table, the pinned error body and docs/error-codes.md."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from spine.errors import SpineError
from spine.schemas import all_schemas
from spine.wire.errors import ERROR_CODES, UnknownErrorSymbol, error_body, render_markdown

DOC = Path(__file__).resolve().parents[2] / "docs" / "error-codes.md"
REQUIRED = {
    "INVALID_PARAMETER",
    "UNKNOWN_PARAMETER",
    "UNKNOWN_BODY_KEYS",
    "INVALID_CURSOR",
    "LIMIT_OUT_OF_RANGE",
    "INVALID_INSTRUMENT_ID",
    "INVALID_BAR_TYPE",
    "INVALID_BODY",
    "NOT_FOUND",
    "UNKNOWN_KIND",
    "DISCOVERY_NOT_REGISTERED",
    "NOT_SUPPORTED_ON_THIS_NODE",
    "METHOD_NOT_ALLOWED",
    "MUTATION_REFUSED",
    "CONFLICT",
    "CAPABILITY_DEFERRED",
    "UPSTREAM_UNAVAILABLE",
    "NOT_READY",
    "INTERNAL",
}
ENVELOPE = Draft202012Validator(all_schemas()[("svc.error_envelope", 1)])


def test_table_covers_the_required_symbols() -> None:
    assert REQUIRED <= set(ERROR_CODES)


def test_codes_are_unique_and_read_as_their_status() -> None:
    codes = [row.code for row in ERROR_CODES.values()]
    assert len(codes) == len(set(codes))
    for symbol, row in ERROR_CODES.items():
        assert row.symbol == symbol and re.fullmatch(r"[A-Z][A-Z0-9_]*", symbol)
        assert row.code // 100 == row.http_status and row.code % 100 >= 1
        assert 400 <= row.http_status <= 599 and row.meaning


@pytest.mark.parametrize(
    ("symbol", "status"),
    [
        ("CAPABILITY_DEFERRED", 501),
        ("NOT_SUPPORTED_ON_THIS_NODE", 404),
        ("UNKNOWN_BODY_KEYS", 400),
        ("MUTATION_REFUSED", 403),
        ("DISCOVERY_NOT_REGISTERED", 404),
        ("UNKNOWN_KIND", 404),
    ],
)
def test_spec_statuses(symbol: str, status: int) -> None:
    assert ERROR_CODES[symbol].http_status == status


@pytest.mark.parametrize("symbol", sorted(ERROR_CODES))
def test_error_body_is_the_pinned_shape_and_validates(symbol: str) -> None:
    body = error_body(symbol, "some text")
    error = {"code": ERROR_CODES[symbol].code, "detail": f"{symbol}: some text"}
    assert body == {"version": "spine.v2", "error": error}
    assert list(ENVELOPE.iter_errors(body)) == []


def test_error_body_keeps_the_text_exactly() -> None:
    text = "POST /v2/backtests: unknown keys ['x']; allowed keys ['a', 'b']"
    assert error_body("UNKNOWN_BODY_KEYS", text)["error"]["detail"] == f"UNKNOWN_BODY_KEYS: {text}"


def test_error_body_refuses_unknown_symbols() -> None:
    with pytest.raises(UnknownErrorSymbol, match="UNKNOWN_ERROR_SYMBOL: 'TEAPOT'") as caught:
        error_body("TEAPOT", "short and stout")
    assert isinstance(caught.value, SpineError) and isinstance(caught.value, ValueError)


@pytest.mark.parametrize("text", ["", "   "])
def test_error_body_refuses_an_empty_detail(text: str) -> None:
    with pytest.raises(UnknownErrorSymbol, match="detail text is empty"):
        error_body("NOT_FOUND", text)


def test_the_published_doc_matches_the_table() -> None:
    assert DOC.read_text(encoding="utf-8") == render_markdown(), (
        "docs/error-codes.md is stale; regenerate it from spine.wire.errors.render_markdown()"
    )
    for row in ERROR_CODES.values():
        assert f"| `{row.symbol}` | {row.code} | {row.http_status} |" in render_markdown()
