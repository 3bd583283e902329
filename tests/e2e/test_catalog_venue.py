"""The catalog venue end to end: ``spine import`` writes a CSV of old 1-minute bars (one minute
skipped inside) into an import catalog, a real ``spine node`` with ``venue = "catalog"`` serves
the instrument, its 1-minute bars exactly as the file wrote them, a 5-minute fold with the
skipped minute's bucket withheld, and writes its own durable copy under its data directory. A
catalog without an instrument of the node's venue is refused (exit 2, naming it); a daily import is
served at 1d as imported; a data directory holding a 1-DAY bar type names its venue correctly."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from nautilus_trader.persistence.catalog import ParquetDataCatalog
from nodes import free_port, get, node_env, ok, spawn, spine_import, stop, wait_for

from spine.node.config import ConfigError, load_config
from spine.node.persist.store import CatalogStore

M = 60 * 10**9
#: 2024-01-01T00:00Z: years behind the node's (wall) clock.
T0 = 1_704_067_200 * 10**9
MINUTES = 300
SKIPPED = 137  # the close T0 + SKIPPED minutes is not in the file
VENUE = "MYDATA"
IID = f"BTCUSD.{VENUE}"
BAR_TYPE = f"{IID}-1-MINUTE-LAST-EXTERNAL"


def _midnight_after(day: str) -> int:
    """The close of the daily bar of ``day`` (YYYY-MM-DD), in seconds: the next midnight UTC."""
    return int(datetime.fromisoformat(day).replace(tzinfo=UTC).timestamp()) + 86_400


def _rows() -> list[tuple[int, str, str, str, str, str]]:
    """(close, open, high, low, close price, volume) as the CSV writes them."""
    rows = []
    for k in range(1, MINUTES + 1):
        if k == SKIPPED:
            continue
        o, c = 4_200_000 + (k * 37) % 901, 4_200_000 + (k * 53) % 887
        h, lo = max(o, c) + k % 17, min(o, c) - k % 13
        text = lambda m: f"{m // 100}.{m % 100:02d}"  # noqa: E731
        rows.append((T0 + k * M, text(o), text(h), text(lo), text(c), f"{k // 7}.{k % 1000:03d}"))
    return rows


def _import(directory: Path, catalog: Path) -> list[tuple[int, str, str, str, str, str]]:
    rows = _rows()
    source = directory / "btcusd.csv"
    source.write_text("timestamp,open,high,low,close,volume\n" + "".join(",".join(map(str, r)) + "\n" for r in rows))
    done = spine_import("--venue", VENUE, "--catalog", str(catalog), str(source), env=node_env(directory / "unused"))
    assert done.stdout.startswith(f"imported {len(rows)} bars of {IID}"), done.stdout
    return rows


def _config(directory: Path, catalog: Path, venue: str = VENUE, extra: str = "") -> tuple[Path, int]:
    port = free_port()
    config = directory / "node.toml"
    config.write_text(
        f'venue = "catalog"\nport = {port}\nflush_secs = 0.5\n{extra}'
        f'[catalog]\npath = "{catalog}"\nvenue_name = "{venue}"\n'
    )
    return config, port


def _page(url: str, query: str) -> dict[str, Any]:
    return ok(url, f"/v2/bars?{query}")  # 200, and valid against its schema


def _bar_count(url: str) -> int:
    return len(_page(url, f"instrument_id={IID}&limit=5000")["bars"])


@contextmanager
def _ready_node(directory: Path, config: Path, port: int, what: str) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """A node over ``config``, its data under ``directory``/data, waited for until ready; its
    process and URL. It must exit 0 when stopped."""
    url = f"http://127.0.0.1:{port}"
    process = spawn(config, node_env(directory / "data"))
    try:
        wait_for(process, lambda: bool(get(url + "/v2/health")[1]["ready"]), what)
        yield process, url
    finally:
        _, err = stop(process)
    assert process.returncode == 0, err


def _fold(rows: list[tuple[int, str, str, str, str, str]], step: int) -> tuple[list[dict[str, str]], list[int]]:
    """The expected buckets of ``step`` minutes: whole ones as bars, the bucket ends of those
    holding the skipped minute."""
    buckets: dict[int, list[tuple[int, str, str, str, str, str]]] = {}
    for row in rows:
        buckets.setdefault(-(-(row[0] - T0) // (step * M)), []).append(row)
    bars, withheld = [], []
    for n in sorted(buckets):
        held = buckets[n]
        if len(held) < step:
            withheld.append(T0 + n * step * M)
            continue
        bars.append(
            {
                "ts_event": str(T0 + n * step * M),
                "open": held[0][1],
                "high": str(max(Decimal(r[2]) for r in held)),
                "low": str(min(Decimal(r[3]) for r in held)),
                "close": held[-1][4],
                "volume": str(sum(Decimal(r[5]) for r in held)),
            }
        )
    return bars, withheld


def test_catalog_venue_serves_imported_bars(tmp_path: Path) -> None:
    catalog = tmp_path / "imports"
    rows = _import(tmp_path, catalog)
    config, port = _config(tmp_path, catalog)
    with _ready_node(tmp_path, config, port, "ready") as (process, url):
        wait_for(process, lambda: _bar_count(url) == len(rows), "hydrated from the import catalog")
        # The skipped minute is an EXTERNAL gap, unresolved (no repair can fill it); health is
        # rebuilt at most every 100 ms, so it says so within a moment.
        wait_for(process, lambda: "UNRESOLVED_GAPS" in get(url + "/v2/health")[1]["degraded_reasons"], "degraded")
        health = ok(url, "/v2/health")
        assert health["live"] and health["ready"] and health["degraded_reasons"] == ["UNRESOLVED_GAPS"], health

        instruments = ok(url, "/v2/instruments")
        assert [i["instrument_id"] for i in instruments["items"]] == [IID], instruments
        pin = ok(url, "/v2/engine-pin")
        assert (pin["integration"], pin["venue"], pin["history"], pin["channels"]) == (
            "catalog",
            VENUE,
            True,
            ["bars_external"],
        ), pin
        assert instruments["items"][0]["price_precision"] == 2 and instruments["items"][0]["size_precision"] == 3

        page = _page(url, f"instrument_id={IID}&limit=5000")
        assert page["bar_type"] == BAR_TYPE and page["channel"] == "EXTERNAL" and page["next_cursor"] is None
        served = [(int(b["ts_event"]), b["open"], b["high"], b["low"], b["close"], b["volume"]) for b in page["bars"]]
        assert served == rows  # exactly the file: closes and decimal text
        coverage = page["coverage"]
        assert coverage["newest_close"] == str(rows[-1][0]) and coverage["bar_count"] == len(rows)
        # Observed from the open of the first imported bar to the newest close.
        assert coverage["observed"] == [{"start": str(T0), "end": str(rows[-1][0])}], coverage
        gap = [(int(g["start"]), int(g["end"])) for g in coverage["gaps"]]
        assert gap == [(T0 + (SKIPPED - 1) * M, T0 + SKIPPED * M)], coverage
        assert coverage["confirmed_empty"] == [], coverage

        folded = _page(url, f"bar_type={IID}-5-MINUTE-LAST-EXTERNAL&limit=5000")
        expected, withheld = _fold(rows, 5)
        assert [
            {k: b[k] for k in ("ts_event", "open", "high", "low", "close", "volume")} for b in folded["bars"]
        ] == expected
        assert len(expected) == MINUTES // 5 - 1 and withheld == [T0 + -(-SKIPPED // 5) * 5 * M]
        assert folded["withheld"] == [
            {"start": str(withheld[0] - 5 * M), "end": str(withheld[0]), "reason": "GAP_IN_INPUT"}
        ], folded["withheld"]

        hydration = ok(url, "/v2/hydration")
        assert [(h["instrument_id"], h["state"]) for h in hydration["items"]] == [(IID, "READY")]
    # The node wrote its own durable copy under its data directory; the import is untouched.
    own = ParquetDataCatalog(str(tmp_path / "data" / "catalog" / "external")).bars(bar_types=[BAR_TYPE])
    assert [b.ts_event for b in own] == [r[0] for r in rows]
    assert len(ParquetDataCatalog(str(catalog / "external")).bars(bar_types=[BAR_TYPE])) == len(rows)
    assert sorted(p.name for p in (catalog / "external" / "data" / "bar").iterdir()) == [BAR_TYPE]

    # A restart reloads its own copy and resumes above its newest close: nothing new to ask
    # for, the same bars, sequences and gap.
    with _ready_node(tmp_path, config, port, "ready again") as (process, url):
        wait_for(
            process, lambda: [h["state"] for h in ok(url, "/v2/hydration")["items"]] == ["READY"], "hydrated again"
        )
        again = _page(url, f"instrument_id={IID}&limit=5000")
        assert again["bars"] == page["bars"] and again["coverage"]["gaps"] == page["coverage"]["gaps"]
        assert again["coverage"]["observed"] == page["coverage"]["observed"]


def test_catalog_venue_keeps_the_newest_capacity_bars(tmp_path: Path) -> None:
    catalog = tmp_path / "imports"
    rows = _import(tmp_path, catalog)
    # A daily import of the same venue: listed, no 1-minute history (NO_HISTORY), its daily
    # bars served as imported (a weekend between them is no gap).
    daily_rows = [
        ("2024-01-04", "470.5", "472", "469.25", "471", "100"),
        ("2024-01-05", "471.1", "473.9", "470", "473.5", "250"),
        ("2024-01-08", "473.5", "474", "468.75", "469", "90"),
    ]
    lines = "".join(",".join(row) + "\n" for row in daily_rows)
    (tmp_path / "spy.csv").write_text("date,open,high,low,close,volume\n" + lines)
    daily = ("--venue", VENUE, "--step", "1d", "--catalog", str(catalog), str(tmp_path / "spy.csv"))
    spine_import(*daily, env=node_env(tmp_path / "unused"))
    config, port = _config(tmp_path, catalog, extra="capacity = 100\n")
    with _ready_node(tmp_path, config, port, "ready") as (process, url):
        wait_for(process, lambda: _bar_count(url) == 100, "hydrated with its capacity")
        page = _page(url, f"instrument_id={IID}&limit=5000")
        assert [(int(b["ts_event"]), b["close"]) for b in page["bars"]] == [(r[0], r[4]) for r in rows[-100:]]
        assert page["coverage"]["gaps"] == []  # the skipped minute is older than the newest 100 bars
        assert [i["instrument_id"] for i in ok(url, "/v2/instruments")["items"]] == [IID, f"SPY.{VENUE}"]
        wait_for(process, lambda: len(ok(url, "/v2/hydration")["items"]) == 2, "both hydrated")
        states = {h["instrument_id"]: (h["state"], h["internal_state"]) for h in ok(url, "/v2/hydration")["items"]}
        assert states == {IID: ("READY", "READY"), f"SPY.{VENUE}": ("READY", "NO_HISTORY")}, states
        minutes = _page(url, f"instrument_id=SPY.{VENUE}&limit=5000")
        assert minutes["bars"] == [] and minutes["coverage"]["exhausted"] is True
        days = _page(url, f"bar_type=SPY.{VENUE}-1-DAY-LAST-EXTERNAL&limit=2")
        keys = ("sequence", "ts_event", "open", "high", "low", "close", "volume")
        served = [tuple(b[k] for k in keys) for b in days["bars"]]
        closes = [str(_midnight_after(d) * 10**9) for d, *_ in daily_rows]
        # At the instrument's precisions: the import inferred 2 decimals for prices, 0 for sizes.
        expected = [
            (n, close, *(f"{Decimal(p):.2f}" for p in row[1:5]), row[5])
            for n, (close, row) in enumerate(zip(closes, daily_rows, strict=True), 1)
        ]
        assert served == expected[:2] and days["withheld"] == [] and days["next_cursor"], days
        rest = _page(url, f"bar_type=SPY.{VENUE}-1-DAY-LAST-EXTERNAL&cursor={days['next_cursor']}")
        assert [b["ts_event"] for b in rest["bars"]] == closes[2:] and rest["next_cursor"] is None
        after = _page(url, f"bar_type=SPY.{VENUE}-1-DAY-LAST-EXTERNAL&start={closes[1]}&end={closes[1]}")
        assert [b["ts_event"] for b in after["bars"]] == [closes[1]]


def test_catalog_without_the_venue_is_refused(tmp_path: Path) -> None:
    catalog = tmp_path / "imports"
    _import(tmp_path, catalog)
    config, _ = _config(tmp_path, catalog, venue="OTHER")
    process = spawn(config, node_env(tmp_path / "data"))
    out, err = process.communicate(timeout=120)
    assert process.returncode == 2, err
    assert "no instrument of venue OTHER" in err and str(catalog) in err and VENUE in err, err
    assert not (tmp_path / "data").exists()  # refused before anything is written
    # A data directory overlapping the import catalog is refused too.
    inside, _ = _config(tmp_path, catalog)
    process = spawn(inside, node_env(catalog / "node"))
    out, err = process.communicate(timeout=120)
    assert process.returncode == 2 and "overlap" in err, err


def test_store_venues_parse_any_bar_step(tmp_path: Path) -> None:
    store = CatalogStore(tmp_path / "root")
    for bar_type in (
        "SPY.XNYS-1-DAY-LAST-EXTERNAL",
        "ETHUSDT-PERP.SIM-1-MINUTE-LAST-EXTERNAL",
        "BTC-USD.MYDATA-1-MINUTE-LAST-EXTERNAL",
    ):
        (tmp_path / "root" / "data" / "bar" / bar_type).mkdir(parents=True)
    assert store.venues() == {"XNYS", "SIM", "MYDATA"}


def test_catalog_venue_configuration(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"catalog\.venue_name"):
        load_config(None, {"SPINE_VENUE": "catalog"})
    config = load_config(
        None, {"SPINE_VENUE": "catalog", "SPINE_CATALOG_PATH": str(tmp_path), "SPINE_CATALOG_VENUE_NAME": VENUE}
    )
    assert (config.venue_name, config.catalog.path) == (VENUE, str(tmp_path))
    with pytest.raises(ConfigError, match="catalog.venue_name 'my-data'"):
        load_config(None, {"SPINE_VENUE": "catalog", "SPINE_CATALOG_VENUE_NAME": "my-data"})


class _Spans:
    """A history source with spans of its own, as the catalog venue's (no fetch expected)."""

    confirms_empty = False

    def __init__(self, spans: dict[str, tuple[int, int] | None]) -> None:
        self.spans = spans
        self.asked: list[tuple[str, int]] = []

    def span(self, instrument_id: str, bars: int) -> tuple[int, int] | None:
        self.asked.append((instrument_id, bars))
        return self.spans[instrument_id]

    async def fetch(self, instrument_id: str, start_ns: int, end_ns: int) -> Any:
        raise AssertionError("nothing to fetch")


def test_hydration_window_is_the_sources_span_whatever_the_clock() -> None:
    import asyncio

    from spine.node.hydration import HydrationBook
    from spine.node.hydrator import Hydrator
    from spine.node.persist.hydration_state import Finished
    from spine.node.persist.series_book import SeriesBook

    a, b, c = f"A.{VENUE}", f"B.{VENUE}", f"C.{VENUE}"
    series = SeriesBook(capacity=250)
    for iid in (a, b, c):
        series.register(iid, 2, 3)
    newest = T0 + 200 * M
    series.series(b, "EXTERNAL").push(newest, 100, 110, 90, 105, 1)
    source = _Spans({a: (T0, T0 + 300 * M), b: (T0 + 50 * M, T0 + 300 * M), c: None})
    book = HydrationBook()
    hydrator = Hydrator(
        book=book,
        series=series,
        store=None,
        source=source,  # type: ignore[arg-type]
        now=lambda: T0 + 10**6 * M,
        window_minutes=30,
        finished={b: Finished("READY", 0, newest, newest)},
    )
    assert not hydrator.confirms_empty
    assert hydrator.window(a) == (T0, T0 + 300 * M)  # the span, not 30 minutes back from the clock
    assert hydrator.window(b) == (newest, T0 + 300 * M)  # resumed from its newest close
    assert ("A.MYDATA", 250) in source.asked  # the series' capacity
    book.register([c], T0)
    book.start(c, T0)
    asyncio.run(hydrator.attempt(c))  # no 1-minute bars at all: no history, nothing asked
    assert book.state(c) == "NO_HISTORY" and c in hydrator.exhausted
