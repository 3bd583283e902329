"""A bar page selects withheld buckets as it selects bars: by close time, inclusive bounds."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from spine.node.bar_pages import _closes_within

M = 60 * 10**9
STEP = 15 * M


def test_a_withheld_bucket_is_found_by_its_own_close_and_not_by_a_minute_inside_it() -> None:
    assert _closes_within(0, STEP, STEP, STEP, STEP)
    assert not _closes_within(0, STEP, STEP, M, M)
    assert _closes_within(0, STEP, STEP, None, None)
    assert not _closes_within(0, STEP, STEP, STEP + 1, None)
    assert not _closes_within(0, STEP, STEP, None, STEP - 1)


@given(
    st.integers(0, 50),
    st.integers(1, 20),
    st.one_of(st.none(), st.integers(0, 80 * STEP)),
    st.one_of(st.none(), st.integers(0, 80 * STEP)),
)
def test_matches_scanning_every_close_of_the_span(first: int, buckets: int, low: int | None, high: int | None) -> None:
    start, end = first * STEP, (first + buckets) * STEP
    closes = range(start + STEP, end + 1, STEP)
    expected = any((low is None or c >= low) and (high is None or c <= high) for c in closes)
    assert _closes_within(start, end, STEP, low, high) == expected
