"""A submit's checks of what its run would lack (:mod:`spine.gateway.runnable`) against a fake
node on loopback and catalog dirs on disk: each refusal, one bar read per instrument with the
instruments' size precisions from the upstream look, and nothing refused on a guess (a node out
of reach, a node answering no page, files that cannot be read now)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]
import pytest
from aiohttp import web
from loopback_app import FakeUpstream, serving

from spine.gateway.catalogs import holding
from spine.gateway.runnable import Run, RunChecks
from spine.gateway.upstream_table import Upstreams
from spine.http.errors import HttpError

#: Closes the fake node holds bars for (1m and every derived resolution alike).
HELD = (1_000, 2_000)


class FakeNode(FakeUpstream):
    """A node listing BTCUSDT.SIM (size precision 3) and ETHUSDT.SIM (no bars); its bars page
    answers as :data:`HELD` says, or with ``bars_status``."""

    def __init__(self, bars_status: int = 200, observed_from: int | None = None) -> None:
        super().__init__(
            [
                {"instrument_id": "BTCUSDT.SIM", "size_precision": 3},
                {"instrument_id": "ETHUSDT.SIM", "size_precision": 4},
            ]
        )
        self.bars_status = bars_status
        #: Where the served window's observed time begins (None: the page carries no coverage).
        self.observed_from = observed_from

    async def more(self, request: web.Request) -> web.Response:
        if request.path == "/v2/bars":
            if self.bars_status != 200:
                return web.Response(status=self.bars_status, text="down")
            start, end = int(request.query["start"]), int(request.query["end"])
            btc = request.query["bar_type"].startswith("BTCUSDT.SIM-")
            held = btc and start <= HELD[1] and end >= HELD[0]
            page: dict[str, Any] = {"bars": [{"ts_event": str(HELD[0])}] if held else []}
            if self.observed_from is not None:
                page["coverage"] = {"observed": [{"start": str(self.observed_from), "end": str(HELD[1])}]}
            return web.json_response(page)
        return await super().more(request)


def run(*instruments: str, start: int = 0, end: int = 10_000, quantity: str = "0.1", resolution: str = "1m") -> Run:
    return Run(instruments, resolution, "EXTERNAL", start, end, quantity)


def checked(
    fake: FakeNode | None, scenario: Callable[[RunChecks], Awaitable[Any]], catalogs: tuple[str, ...] = ()
) -> Any:
    """``scenario`` over checks of a gateway fronting ``fake`` (None: a node out of reach),
    after its first look at the upstreams."""

    async def main() -> Any:
        async with _node(fake) as url:
            upstreams = Upstreams([url], None, 5.0)
            try:
                await upstreams.refresh()
                return await scenario(RunChecks(upstreams, catalogs))
            finally:
                await upstreams.aclose()

    return asyncio.run(main())


@asynccontextmanager
async def _node(fake: FakeNode | None) -> AsyncIterator[str]:
    if fake is None:
        yield "http://127.0.0.1:9"  # discard port: nothing listens
    else:
        async with serving(fake.app) as url:
            yield url


def refused(fake: FakeNode | None, the_run: Run, catalogs: tuple[str, ...] = ()) -> HttpError:
    async def scenario(checks: RunChecks) -> HttpError:
        with pytest.raises(HttpError) as caught:
            await checks.check(the_run)
        return caught.value

    error: HttpError = checked(fake, scenario, catalogs)
    return error


def passes(fake: FakeNode | None, the_run: Run, catalogs: tuple[str, ...] = ()) -> None:
    async def scenario(checks: RunChecks) -> None:
        await checks.check(the_run)

    checked(fake, scenario, catalogs)


def test_a_run_with_bars_passes_on_one_bar_read() -> None:
    fake = FakeNode()
    passes(fake, run("BTCUSDT.SIM", resolution="1h"))
    assert fake.asked["/v2/bars"] == 1 and fake.asked["/v2/instruments"] == 1  # the look's list is reused


def test_an_instrument_no_node_lists_is_not_found() -> None:
    error = refused(FakeNode(), run("NOPE.SIM"))
    assert error.symbol == "NOT_FOUND" and "NOPE.SIM" in error.text and "GET /v2/instruments" in error.text
    error = refused(FakeNode(), run("ABC.NOWHERE"))
    assert error.symbol == "NOT_FOUND" and "'NOWHERE'" in error.text and "venues: SIM" in error.text


def test_a_span_without_bars_is_refused_naming_the_bar_type() -> None:
    error = refused(FakeNode(), run("BTCUSDT.SIM", start=3_000, end=4_000, resolution="4h"))
    assert error.symbol == "NO_BARS" and "BTCUSDT.SIM-4-HOUR-LAST-EXTERNAL" in error.text, error.text


def test_a_span_reaching_below_the_served_window_is_left_to_the_run() -> None:
    """A node serves its newest minutes while its catalog keeps weeks below them: an empty
    page refuses only a span inside the time the node observed."""
    passes(FakeNode(observed_from=900), run("BTCUSDT.SIM", start=100, end=800))  # the catalog may hold it
    error = refused(FakeNode(observed_from=900), run("BTCUSDT.SIM", start=3_000, end=4_000))
    assert error.symbol == "NO_BARS" and "BTCUSDT.SIM-1-MINUTE-LAST-EXTERNAL" in error.text, error.text
    decade = 3_650 * 86_400 * 10**9  # older than any node's retention: refused
    error = refused(FakeNode(observed_from=decade + 900), run("BTCUSDT.SIM", start=100, end=800))
    assert error.symbol == "NO_BARS", error.text
    passes(FakeNode(observed_from=decade + 700), run("BTCUSDT.SIM", start=100, end=800))


def test_a_run_fails_only_when_no_instrument_has_bars_so_does_the_submit() -> None:
    passes(FakeNode(), run("BTCUSDT.SIM", "ETHUSDT.SIM"))
    error = refused(FakeNode(), run("ETHUSDT.SIM", "BTCUSDT.SIM", start=5_000))
    assert error.symbol == "NO_BARS" and "ETHUSDT.SIM" in error.text and "BTCUSDT.SIM" in error.text


def test_a_quantity_finer_than_the_listed_size_step_is_refused() -> None:
    error = refused(FakeNode(), run("BTCUSDT.SIM", quantity="0.0001"))
    assert error.symbol == "INVALID_QUANTITY" and "size step 0.001 (size precision 3)" in error.text, error.text
    passes(FakeNode(), run("BTCUSDT.SIM", quantity="0.0010"))  # trailing zeros need no finer step


def test_nothing_is_refused_on_a_guess() -> None:
    passes(None, run("NOPE.SIM"))  # its node is out of reach
    passes(FakeNode(bars_status=500), run("BTCUSDT.SIM", start=3_000, end=4_000))  # the node answers no page


def _bar_dir(root: Path, bar_type: str) -> Path:
    directory = root / "external" / "data" / "bar" / bar_type
    directory.mkdir(parents=True)
    return directory


def test_catalog_files_that_cannot_be_read_now_refuse_nothing(tmp_path: Path) -> None:
    (_bar_dir(tmp_path, "X.IMP-1-MINUTE-LAST-EXTERNAL") / "part.parquet").write_bytes(b"not parquet")
    found = holding([str(tmp_path)], "X.IMP", "1m", "EXTERNAL", 0, 10)
    assert found is not None and found.bars is None and not found.absent
    passes(None, run("X.IMP"), (str(tmp_path),))


def test_a_catalog_holding_other_bars_only_is_absent_for_the_run(tmp_path: Path) -> None:
    _bar_dir(tmp_path, "Y.IMP-1-DAY-LAST-EXTERNAL")
    catalogs = (str(tmp_path),)
    minute = holding(catalogs, "Y.IMP", "1m", "EXTERNAL", 0, 10)
    assert minute is not None and minute.absent and "daily bars only" in minute.reason
    internal = holding(catalogs, "Y.IMP", "1d", "INTERNAL", 0, 10)
    assert internal is not None and internal.absent and "no INTERNAL bars" in internal.reason
    assert holding(catalogs, "Z.IMP", "1d", "EXTERNAL", 0, 10) is None  # held nowhere: the nodes are asked
    # An absent bar type fails its run whatever the other instruments hold.
    error = refused(FakeNode(), run("Y.IMP", "BTCUSDT.SIM"), catalogs)
    assert error.symbol == "NO_BARS" and "Y.IMP" in error.text and "BTCUSDT" not in error.text, error.text


def test_imported_minutes_too_few_for_one_bar_of_the_resolution_are_refused(tmp_path: Path) -> None:
    """A coarse run over a few imported minutes folds to nothing: refused at submit, naming the
    count and what one bar needs; enough minutes pass (gaps are the run's to report)."""
    directory = _bar_dir(tmp_path, "W.IMP-1-MINUTE-LAST-EXTERNAL")
    closes = [k * 60 * 10**9 for k in range(1, 6)]
    pq.write_table(pa.table({"ts_event": pa.array(closes, pa.uint64())}), directory / "part.parquet")
    catalogs = [str(tmp_path)]
    few = holding(catalogs, "W.IMP", "1h", "EXTERNAL", 0, 10**13)
    assert (
        few is not None
        and few.bars is False
        and "holds 5 1-minute bars" in few.reason
        and "1h bar needs 60" in few.reason
    )
    enough = holding(catalogs, "W.IMP", "5m", "EXTERNAL", 0, 10**13)
    assert enough is not None and enough.bars is True
    error = refused(FakeNode(), run("W.IMP", end=10**13, resolution="15m"), tuple(catalogs))
    assert error.symbol == "NO_BARS" and "15m bar needs 15" in error.text, error.text
