"""The bar page cache: a repeated query is served the same bytes while the series and its
coverage are unchanged, and a new bar or a new coverage document makes the next read fresh."""

from __future__ import annotations

import json
from typing import Any

import pytest

from spine.http.errors import HttpError
from spine.http.request import Query
from spine.node.bar_pages import BarPages
from spine.node.persist.series_book import SeriesBook

M = 60 * 10**9
IID = "BTCUSDT.SIM"
PARAMS = ("instrument_id", "bar_type", "start", "end", "after_sequence", "limit", "cursor")


class View:
    """A node view over one book: what bar pages read."""

    live_channel = "EXTERNAL"

    def __init__(self, book: SeriesBook) -> None:
        self.book = book
        self.coverage_doc: dict[str, Any] = {"stand-in": 1}

    def holds(self, instrument_id: str) -> bool:
        return instrument_id in self.book

    discovered = holds

    def series(self, instrument_id: str, channel: str) -> Any:
        return self.book.series(instrument_id, channel)

    def precision(self, instrument_id: str) -> Any:
        return self.book.precision(instrument_id)

    def series_coverage(self, instrument_id: str, channel: str) -> dict[str, Any]:
        return self.coverage_doc

    def imported(self, instrument_id: str, resolution: str, channel: str) -> None:
        return None


@pytest.fixture
def node() -> Any:
    book = SeriesBook()
    book.register(IID, 2, 3)
    series = book.series(IID, "EXTERNAL")
    for k in range(1, 121):
        series.push(k * M, 100 + k, 110 + k, 90 + k, 105 + k, 7)
    return View(book)


def page(pages: BarPages, raw: str) -> bytes:
    return pages.get(Query(raw, PARAMS))


def test_repeated_query_is_served_from_the_cache(node: Any) -> None:
    pages = BarPages(node)
    first = page(pages, f"instrument_id={IID}&limit=50")
    assert page(pages, f"instrument_id={IID}&limit=50") is first
    document = json.loads(first)
    assert [b["ts_event"] for b in document["bars"]] == [str(k * M) for k in range(1, 51)]
    assert document["bars"][0]["open"] == "1.01" and document["bars"][0]["volume"] == "0.007"
    assert document["next_cursor"] is not None


def test_a_new_bar_or_coverage_refreshes_the_page(node: Any) -> None:
    pages = BarPages(node)
    first = page(pages, f"instrument_id={IID}&limit=500")
    node.book.series(IID, "EXTERNAL").push(121 * M, 1, 1, 1, 1, 1)
    second = page(pages, f"instrument_id={IID}&limit=500")
    assert len(json.loads(second)["bars"]) == len(json.loads(first)["bars"]) + 1
    node.coverage_doc = {"stand-in": 2}
    assert json.loads(page(pages, f"instrument_id={IID}&limit=500"))["coverage"] == {"stand-in": 2}


def test_derived_pages_fold_on_read_and_follow_the_cursor(node: Any) -> None:
    pages = BarPages(node)
    bar_type = f"{IID}-5-MINUTE-LAST-EXTERNAL"
    first = json.loads(page(pages, f"bar_type={bar_type}&limit=10"))
    assert first["resolution"] == "5m" and len(first["bars"]) == 10
    rest = json.loads(page(pages, f"bar_type={bar_type}&limit=10&cursor={first['next_cursor']}"))
    assert [b["ts_event"] for b in rest["bars"]] == [str(k * 5 * M) for k in range(11, 21)]
    assert rest["withheld"] == [] and rest["next_cursor"] is not None


def test_a_cursor_of_another_bar_type_is_refused(node: Any) -> None:
    pages = BarPages(node)
    cursor = json.loads(page(pages, f"instrument_id={IID}&limit=10"))["next_cursor"]
    with pytest.raises(HttpError) as caught:
        page(pages, f"bar_type={IID}-5-MINUTE-LAST-EXTERNAL&cursor={cursor}")
    assert caught.value.symbol == "INVALID_CURSOR"


def test_a_query_longer_than_the_memo_bound_is_served_but_never_kept(
    node: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Memos hold a bounded count of entries and MEMO_RAW_MAX bounds each: a client padding
    valid queries cannot pin memory. A longer query is parsed on every request instead."""
    from spine.http import request

    short = f"instrument_id={IID}&limit=5"
    wide = f"instrument_id={IID}&limit=5&start=60000000000&end=1000000000000000000"
    pages = BarPages(node)
    monkeypatch.setattr(request, "MEMO_RAW_MAX", len(wide) - 1)
    assert json.loads(page(pages, short))["bars"] and short in pages._requests
    assert page(pages, wide) == page(pages, wide)
    assert json.loads(page(pages, wide))["bars"] and wide not in pages._requests
