"""Query-string checks shared by the routes: time ranges."""

from __future__ import annotations

import pytest

from spine.http.errors import HttpError
from spine.http.request import Query


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("", (None, None)),
        ("start=5", (5, None)),
        ("end=5", (None, 5)),
        ("start=5&end=5", (5, 5)),  # inclusive: one instant
        ("start=5&end=18446744073709551615", (5, 2**64 - 1)),
    ],
)
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


@pytest.mark.parametrize(
    ("text", "nanos"),
    [
        ("0", 0),
        ("1704067200000000000", 1_704_067_200_000_000_000),
        ("2024-01-01", 1_704_067_200_000_000_000),
        ("2024-01-01T00:00:00Z", 1_704_067_200_000_000_000),
        ("2024-01-01T00:00Z", 1_704_067_200_000_000_000),
        ("2024-01-01T09:30:00.000000001Z", 1_704_101_400_000_000_001),
        ("2024-02-29T23:59:59.5+00:00", 1_709_251_199_500_000_000),
        ("1970-01-01", 0),
    ],
)
def test_times_are_nanoseconds_or_iso_8601_utc_converted_exactly(text: str, nanos: int) -> None:
    assert Query(f"start={text.replace('+', '%2B')}", {"start"}).nanos("start") == nanos


@pytest.mark.parametrize(
    "text",
    [
        "2024-13-01",
        "2023-02-29",
        "2024-01-01T00:00:00",
        "2024-01-01T00:00:00+02:00",
        "2024-01-01T00:00:00.0000000001Z",
        "1969-12-31T23:59:59Z",
        "-1",
        "01",
        "1.5",
        "18446744073709551616",
        "yesterday",
    ],
)
def test_a_time_that_is_neither_form_is_refused_in_words(text: str) -> None:
    with pytest.raises(HttpError) as caught:
        Query(f"start={text.replace('+', '%2B')}", {"start"}).nanos("start")
    assert caught.value.symbol == "INVALID_PARAMETER"
    assert "ISO-8601 UTC time" in str(caught.value) and "^(" not in str(caught.value)
