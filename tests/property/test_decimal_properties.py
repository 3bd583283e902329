"""Property tests: decimals and timestamps (pinned decision 4) against the stdlib reference."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from hypothesis import assume, given
from hypothesis import strategies as st

import spine
from reference import decimal_ref as ref

I128_MIN, I128_MAX, U64_MAX = ref.I128_MIN, ref.I128_MAX, ref.U64_MAX
MAX_SCALE = ref.MAX_SCALE

scales = st.integers(0, MAX_SCALE)
any_scales = st.one_of(scales, st.integers(MAX_SCALE + 1, 64))
mantissas = st.one_of(
    st.integers(I128_MIN + 1, I128_MAX),
    st.integers(-(10**6), 10**6),
    st.sampled_from([I128_MIN + 1, -1, 0, 1, I128_MAX, 10**18, -(10**18), 5, -5]),
)


@st.composite
def decimal_texts(draw: st.DrawFn, max_int_digits: int = 42, max_frac_digits: int = 24) -> str:
    """Syntactically valid decimal strings (negative zero excluded), short and long."""
    integer = draw(
        st.one_of(
            st.just("0"),
            st.from_regex(rf"[1-9][0-9]{{0,{max_int_digits - 1}}}", fullmatch=True),
            st.from_regex(r"[1-9][0-9]{0,3}", fullmatch=True),
        )
    )
    fraction = draw(st.from_regex(rf"[0-9]{{0,{max_frac_digits}}}", fullmatch=True))
    text = integer + (f".{fraction}" if fraction else "")
    negative = draw(st.booleans()) and text.strip("0.") != ""
    return f"-{text}" if negative else text


near_miss_texts = st.one_of(
    st.from_regex(r"[-+]?[0-9]{0,4}(\.[0-9]{0,4})?([eE][-+]?[0-9]{1,2})?", fullmatch=True),
    st.from_regex(r"\s?-?0[0-9]{1,3}(\.[0-9]{1,3})?\s?", fullmatch=True),
    st.sampled_from(
        ["", "-", ".", "1.", ".5", "+1", "1e5", "1E5", "0x1", "1_000", " 1", "1 ", "1\n",
         "NaN", "inf", "-inf", "1.2.3", "--1", "\u0661", "\uff11", "1\u00a0", "-0", "-0.0",
         "-0.000000000000000000000", "00", "01.5", "-00.1"]
    ),
    st.text(max_size=12),
)  # fmt: skip


def _outcome(call: Any, errors: tuple[type[Exception], ...]) -> tuple[str, Any]:
    try:
        return "ok", call()
    except errors as error:
        return getattr(error, "symbol", type(error).__name__), None


def _spine(call: Any) -> tuple[str, Any]:
    return _outcome(call, (spine.DecimalError, spine.TimestampError))


def _reference(call: Any) -> tuple[str, Any]:
    return _outcome(call, (ref.DecimalRefusal, ref.TimestampRefusal))


def _fraction_digits(text: str) -> int:
    return len(text.partition(".")[2])


def _natural_mantissa_fits(text: str) -> bool:
    digits = text.lstrip("-").replace(".", "")
    return len(digits) <= 39 and I128_MIN <= int(text.replace(".", "")) <= I128_MAX


# format and parse


@given(mantissas, scales)
def test_format_matches_the_reference(raw: int, scale: int) -> None:
    text = spine.format_decimal(raw, scale)
    assert text == ref.format_decimal(raw, scale)
    assert _fraction_digits(text) == scale
    assert not text.startswith("-") or raw < 0


@given(mantissas, scales)
def test_parse_format_round_trip(raw: int, scale: int) -> None:
    text = spine.format_decimal(raw, scale)
    assert spine.parse_decimal(text, scale) == raw
    assert ref.parse_decimal(text, scale) == raw


@given(st.one_of(decimal_texts(), near_miss_texts), any_scales)
def test_parse_matches_the_reference(text: str, scale: int) -> None:
    assert _spine(lambda: spine.parse_decimal(text, scale)) == _reference(lambda: ref.parse_decimal(text, scale))


@given(decimal_texts(max_frac_digits=MAX_SCALE), scales)
def test_parse_at_enough_scale_is_exact(text: str, scale: int) -> None:
    assume(_fraction_digits(text) <= scale)
    expected = _reference(lambda: ref.parse_decimal(text, scale))
    assert _spine(lambda: spine.parse_decimal(text, scale)) == expected
    if expected[0] == "ok":
        assert Decimal(spine.format_decimal(expected[1], scale)) == Decimal(text)


@given(decimal_texts(max_frac_digits=30), st.data())
def test_more_digits_than_the_scale_are_refused(text: str, data: st.DataObject) -> None:
    # The scale is drawn below the text's digits (not filtered by assume: that rejected too
    # many examples now and then and failed hypothesis' filter health check).
    digits = _fraction_digits(text)
    assume(digits > 0)
    scale = data.draw(st.integers(0, min(digits - 1, MAX_SCALE)), label="scale")
    assert _spine(lambda: spine.parse_decimal(text, scale)) == ("DECIMAL_SCALE_EXCEEDED", None)


@given(st.integers(0, 20), st.booleans(), scales)
def test_negative_zero_is_refused(zeros: int, point: bool, scale: int) -> None:
    text = "-0" + ("." + "0" * max(zeros, 1) if point else "")
    assert _spine(lambda: spine.parse_decimal(text, scale)) == ("INVALID_DECIMAL", None)
    assert _spine(lambda: spine.quantize_decimal(text, scale)) == ("INVALID_DECIMAL", None)
    assert _reference(lambda: ref.parse_decimal(text, scale)) == ("INVALID_DECIMAL", None)


@given(near_miss_texts, scales)
def test_syntax_outside_the_pattern_is_refused(text: str, scale: int) -> None:
    expected = _reference(lambda: ref.parse_decimal(text, scale))
    assume(expected[0] == "INVALID_DECIMAL")
    assert _spine(lambda: spine.parse_decimal(text, scale)) == expected
    assert _spine(lambda: spine.quantize_decimal(text, scale)) == expected


# quantize


@given(decimal_texts(max_int_digits=21, max_frac_digits=MAX_SCALE), scales)
def test_quantize_is_half_even(text: str, scale: int) -> None:
    # quantize_decimal reads its input at the input's own scale, so the input itself must fit
    # the fixed-point range (at most 18 fractional digits, an i128 mantissa).
    assume(_natural_mantissa_fits(text))
    assert _spine(lambda: spine.quantize_decimal(text, scale)) == _reference(lambda: ref.quantize_decimal(text, scale))


@st.composite
def exact_ties(draw: st.DrawFn) -> tuple[str, int]:
    """A value exactly halfway between two representable values at the target scale."""
    target = draw(st.integers(0, MAX_SCALE - 1))
    extra = draw(st.integers(1, MAX_SCALE - target))
    whole = draw(st.integers(-(10**15), 10**15))
    sign = -1 if whole < 0 or (whole == 0 and draw(st.booleans())) else 1
    raw = whole * 10**extra + sign * 5 * 10 ** (extra - 1)
    return ref.format_decimal(raw, target + extra), target


@given(exact_ties())
def test_quantize_ties_go_to_even(case: tuple[str, int]) -> None:
    text, scale = case
    result = spine.quantize_decimal(text, scale)
    assert result == ref.quantize_decimal(text, scale)
    last = result.replace(".", "").lstrip("-")[-1]
    assert int(last) % 2 == 0


@given(decimal_texts(max_int_digits=21, max_frac_digits=MAX_SCALE), scales)
def test_quantize_to_the_own_scale_or_wider_is_exact(text: str, scale: int) -> None:
    assume(_fraction_digits(text) <= scale and _natural_mantissa_fits(text))
    expected = _reference(lambda: ref.quantize_decimal(text, scale))
    assert _spine(lambda: spine.quantize_decimal(text, scale)) == expected
    if expected[0] == "ok":
        assert expected[1] == spine.format_decimal(spine.parse_decimal(text, scale), scale)


# timestamps


@given(st.integers(0, U64_MAX))
def test_timestamps_in_range(value: int) -> None:
    assert spine.parse_timestamp(str(value)) == value == ref.parse_timestamp(str(value))


@given(st.integers(U64_MAX + 1, 10**40))
def test_timestamps_above_u64_are_refused(value: int) -> None:
    assert _spine(lambda: spine.parse_timestamp(str(value))) == ("INVALID_TIMESTAMP", None)


@given(
    st.one_of(
        st.text(max_size=24),
        st.from_regex(r"[-+ ]?0*[0-9]{0,21}(\.[0-9])?", fullmatch=True),
        st.sampled_from(["", "0", "00", "01", "-1", "+1", "1.0", "1e9", "\u0661", "\uff11"]),
    )
)
def test_timestamp_text_matches_the_reference(text: str) -> None:
    assert _spine(lambda: spine.parse_timestamp(text)) == _reference(lambda: ref.parse_timestamp(text))
