"""Decimals and timestamps (pinned decision 4): worked examples and one regression per bug.

The exhaustive comparison with the stdlib reference lives in
``tests/property/test_decimal_properties.py``.
"""

from __future__ import annotations

import pytest

import spine

I128_MIN, I128_MAX = -(2**127), 2**127 - 1


@pytest.mark.parametrize(
    ("text", "scale", "raw"),
    [
        ("1.5", 3, 1500),
        ("-0.25", 2, -25),
        ("0", 0, 0),
        ("0.00", 2, 0),
        ("123", 18, 123 * 10**18),
        ("170141183460469231731687303715884105727", 0, I128_MAX),
        ("-1701411834604692317316873037158841057.27", 2, -I128_MAX),
    ],
)
def test_parse_decimal_examples(text: str, scale: int, raw: int) -> None:
    assert spine.parse_decimal(text, scale) == raw


@pytest.mark.parametrize(
    ("raw", "scale", "text"),
    [
        (0, 2, "0.00"),
        (-5, 2, "-0.05"),
        (5, 0, "5"),
        (-123456, 3, "-123.456"),
        (7, 18, "0.000000000000000007"),
        (I128_MIN, 0, "-170141183460469231731687303715884105728"),
    ],
)
def test_format_decimal_examples(raw: int, scale: int, text: str) -> None:
    assert spine.format_decimal(raw, scale) == text


@pytest.mark.parametrize(
    ("text", "scale", "rounded"),
    [
        ("2.5", 0, "2"),
        ("3.5", 0, "4"),
        ("-2.5", 0, "-2"),
        ("-0.5", 0, "0"),
        ("-0.004", 2, "0.00"),
        ("-0.005", 2, "0.00"),
        ("-0.015", 2, "-0.02"),
        ("1.2345", 3, "1.234"),
        ("1.23451", 3, "1.235"),
        ("7", 2, "7.00"),
        ("0.999", 2, "1.00"),
    ],
)
def test_quantize_decimal_examples(text: str, scale: int, rounded: str) -> None:
    assert spine.quantize_decimal(text, scale) == rounded


@pytest.mark.parametrize(
    ("call", "symbol"),
    [
        (lambda: spine.parse_decimal("1e5", 2), "INVALID_DECIMAL"),
        (lambda: spine.parse_decimal("-0.00", 2), "INVALID_DECIMAL"),
        (lambda: spine.parse_decimal("01", 2), "INVALID_DECIMAL"),
        (lambda: spine.parse_decimal("1.234", 2), "DECIMAL_SCALE_EXCEEDED"),
        (lambda: spine.parse_decimal("1", 19), "INVALID_SCALE"),
        (lambda: spine.parse_decimal("9" * 40, 0), "DECIMAL_OUT_OF_RANGE"),
        (lambda: spine.parse_decimal(str(I128_MAX + 1), 0), "DECIMAL_OUT_OF_RANGE"),
        (lambda: spine.parse_decimal(str(I128_MIN - 1), 0), "DECIMAL_OUT_OF_RANGE"),
        (lambda: spine.parse_decimal("1", 255), "INVALID_SCALE"),
        (lambda: spine.quantize_decimal("1.5", 19), "INVALID_SCALE"),
        (lambda: spine.format_decimal(1, 19), "INVALID_SCALE"),
    ],
)
def test_decimal_refusals(call: object, symbol: str) -> None:
    with pytest.raises(spine.DecimalError) as info:
        call()  # type: ignore[operator]
    assert info.value.symbol == symbol
    assert str(info.value).startswith(f"{symbol}: ")
    assert isinstance(info.value, ValueError) and isinstance(info.value, spine.SpineError)


def test_decimal_errors_name_the_value() -> None:
    with pytest.raises(spine.DecimalError, match="1e5"):
        spine.parse_decimal("1e5", 2)


@pytest.mark.parametrize("text", ["", "01", "-1", "+1", "1.0", "1e9", " 1", "1\n", "\uff11", "18446744073709551616"])
def test_timestamp_refusals(text: str) -> None:
    with pytest.raises(spine.TimestampError) as info:
        spine.parse_timestamp(text)
    assert info.value.symbol == "INVALID_TIMESTAMP"
    assert isinstance(info.value, ValueError)


def test_timestamp_extremes() -> None:
    assert spine.parse_timestamp("0") == 0
    assert spine.parse_timestamp("18446744073709551615") == 2**64 - 1


# regressions


def test_the_smallest_i128_mantissa_parses() -> None:
    # format_decimal accepts the whole signed 128-bit range; parse_decimal must read back
    # what it writes, including -2**127 (the magnitude was accumulated as a positive i128).
    for scale in (0, 2, 18):
        text = spine.format_decimal(I128_MIN, scale)
        assert spine.parse_decimal(text, scale) == I128_MIN


@pytest.mark.parametrize("scale", [-1, -(2**40), 2**32, 2**40])
def test_a_scale_outside_the_range_is_a_decimal_error(scale: int) -> None:
    # "scales 0..=18 else INVALID_SCALE": negative and huge scales too, not OverflowError.
    for call in (
        lambda: spine.parse_decimal("1", scale),
        lambda: spine.format_decimal(1, scale),
        lambda: spine.quantize_decimal("1", scale),
    ):
        with pytest.raises(spine.DecimalError) as info:
            call()
        assert info.value.symbol == "INVALID_SCALE"


@pytest.mark.parametrize("raw", [I128_MAX + 1, I128_MIN - 1, 10**60])
def test_a_mantissa_outside_i128_is_a_decimal_error(raw: int) -> None:
    # Every error Spine raises derives from SpineError (spine/errors.py).
    with pytest.raises(spine.DecimalError) as info:
        spine.format_decimal(raw, 2)
    assert info.value.symbol == "DECIMAL_OUT_OF_RANGE"
