"""Query-string checks shared by the routes: time ranges."""

from __future__ import annotations

import pytest

from spine.http.errors import HttpError
from spine.http.request import Query


@pytest.mark.parametrize(("raw", "expected"), [
    ("", (None, None)),
    ("start=5", (5, None)),
    ("end=5", (None, 5)),
    ("start=5&end=5", (5, 5)),  # inclusive: one instant
    ("start=5&end=18446744073709551615", (5, 2**64 - 1)),
])
def test_a_range_in_order_is_taken(raw: str, expected: tuple[int | None, int | None]) -> None:
    assert Query(raw, {"start", "end"}).span() == expected


def test_an_end_before_its_start_is_refused_not_served_empty() -> None:
    with pytest.raises(HttpError) as caught:
        Query("start=10&end=9", {"start", "end"}).span()
    assert caught.value.symbol == "INVALID_PARAMETER"
    assert "end=9 precedes start=10" in str(caught.value)


@pytest.mark.parametrize("raw", ["start=%FF", "%C3=1", "end=%ED%A0%80"])  # not UTF-8 (a lone surrogate too)
def test_percent_encoding_that_is_not_utf8_is_refused_not_replaced(raw: str) -> None:
    with pytest.raises(HttpError) as caught:
        Query(raw, {"start", "end"})
    assert caught.value.symbol == "INVALID_PARAMETER" and "not UTF-8" in str(caught.value)


def test_utf8_percent_encoding_is_read() -> None:
    assert Query("start=%31%32", {"start"}).nanos("start") == 12
