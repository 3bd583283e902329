"""The coverage ledger: classification, the subscription lifecycle (every transition and
every refusal), flow, totals that reconcile with discovery, views, and signed cursors."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from reference.wire_validator import validate
from spine.node.hydration import IllegalTransition
from spine.node.ledger import LEDGER_CHANNELS, ROUTES, CoverageLedger, DiscoveryNotRegistered
from spine.wire.cursors import (
    MAX_LIMIT,
    InvalidCursor,
    LimitOutOfRange,
    check_limit,
    decode_cursor,
    encode_cursor,
)

SCHEMA = Path(__file__).resolve().parents[2] / "schemas" / "own" / "svc.coverage_ledger.json"
PERP = frozenset(
    {
        "quotes",
        "trades",
        "bars_external",
        "bars_internal",
        "mark_price",
        "index_price",
        "funding_rate",
        "instrument_status",
        "liquidation",
    }
)
SPOT = frozenset({"quotes", "trades", "bars_external", "bars_internal", "instrument_status"})


def checked(document: dict[str, Any]) -> dict[str, Any]:
    """Validate with the independent validator, then return it."""
    validate(document, "svc.coverage_ledger")
    return document


def reconcile(document: dict[str, Any], discovered: int) -> None:
    (totals,) = document["shards"]
    c = totals["channels"]
    assert totals["discovered"] == discovered
    assert totals["active"] + totals["inactive"] == discovered
    assert c["eligible"] + c["upstream_unsupported"] == discovered * len(LEDGER_CHANNELS)
    assert c["planned"] + c["subscribed"] + c["failed"] + c["unretained"] == c["eligible"]
    assert c["with_flow"] + c["quiet"] == c["subscribed"]


def channel(ledger: CoverageLedger, iid: str, name: str) -> dict[str, Any]:
    (item,) = checked(ledger.entry(iid))["items"]
    return next(c for c in item["channels"] if c["channel"] == name)


@pytest.fixture
def ledger() -> CoverageLedger:
    book = CoverageLedger("sim-node-1", classify=lambda iid: "DELISTED" if iid.startswith("OLD") else None)
    book.register_discovery([("BTCUSDT-PERP.SIM", PERP), ("ETHUSDT.SIM", SPOT), ("OLDCOIN.SIM", SPOT)])
    return book


def test_channels_are_the_schemas_ledger_channels() -> None:
    schema = json.loads(SCHEMA.read_bytes())
    assert LEDGER_CHANNELS == tuple(schema["$defs"]["ledger_channel"]["enum"])


# discovery and classification


def test_not_registered_until_discovery_and_reads_refused_before() -> None:
    book = CoverageLedger("s")
    assert not book.registered
    with pytest.raises(DiscoveryNotRegistered, match="DISCOVERY_NOT_REGISTERED"):
        book.page(None, 10, "all")
    with pytest.raises(DiscoveryNotRegistered):
        book.entry("A.SIM")
    book.register_discovery([])
    assert book.registered
    doc = checked(book.page(None, 10, "all"))
    assert doc["items"] == [] and doc["next_cursor"] is None
    reconcile(doc, 0)


def test_without_a_hook_every_instrument_is_active() -> None:
    book = CoverageLedger("s")
    book.register_discovery([("A.SIM", SPOT), ("B.SIM", frozenset())])
    doc = checked(book.page(None, 10, "all"))
    assert [i["status"] for i in doc["items"]] == ["ACTIVE", "ACTIVE"]
    assert doc["shards"][0]["active"] == 2 and doc["shards"][0]["inactive"] == 0


def test_a_venue_reason_makes_an_instrument_inactive(ledger: CoverageLedger) -> None:
    assert checked(ledger.entry("OLDCOIN.SIM"))["items"][0]["status"] == "INACTIVE:DELISTED"
    assert checked(ledger.entry("ETHUSDT.SIM"))["items"][0]["status"] == "ACTIVE"
    totals = ledger.page(None, 10, "all")["shards"][0]
    assert (totals["active"], totals["inactive"]) == (2, 1)


def test_a_status_reported_after_discovery_moves_an_instrument_between_active_and_inactive(
    ledger: CoverageLedger,
) -> None:
    ledger.classify("ETHUSDT.SIM", "SIM_CIRCUIT_BREAKER")
    assert checked(ledger.entry("ETHUSDT.SIM"))["items"][0]["status"] == "INACTIVE:SIM_CIRCUIT_BREAKER"
    totals = ledger.page(None, 10, "all")["shards"][0]
    assert (totals["discovered"], totals["active"], totals["inactive"]) == (3, 1, 2)
    ledger.classify("ETHUSDT.SIM", None)
    assert checked(ledger.entry("ETHUSDT.SIM"))["items"][0]["status"] == "ACTIVE"
    ledger.classify("NOTHERE.SIM", "HALT")  # not discovered here: ignored
    with pytest.raises(ValueError, match="inactive reason"):
        ledger.classify("ETHUSDT.SIM", "two\nlines")


@pytest.mark.parametrize("reason", ["", "two\nlines", "a\rb", "x\u2028y"])
def test_a_reason_that_the_status_grammar_cannot_carry_is_refused(reason: str) -> None:
    book = CoverageLedger("s", classify=lambda _: reason)
    with pytest.raises(ValueError, match="inactive reason"):
        book.register_discovery([("A.SIM", SPOT)])
    assert not book.registered


def test_eligible_channels_start_planned_and_the_rest_are_upstream_unsupported(ledger: CoverageLedger) -> None:
    (item,) = checked(ledger.entry("ETHUSDT.SIM"))["items"]
    assert [c["channel"] for c in item["channels"]] == list(LEDGER_CHANNELS)
    for state in item["channels"]:
        if state["channel"] in SPOT:
            assert (state["eligibility"], state["subscription"], state["flow"]) == ("eligible", "planned", None)
        else:
            assert (state["eligibility"], state["subscription"], state["flow"]) == ("upstream_unsupported", None, None)


def test_eligible_lists_the_eligible_channels_in_ledger_order(ledger: CoverageLedger) -> None:
    assert ledger.eligible("ETHUSDT.SIM") == [c for c in LEDGER_CHANNELS if c in SPOT]
    assert ledger.eligible("BTCUSDT-PERP.SIM") == [c for c in LEDGER_CHANNELS if c in PERP]
    ledger.subscribed("ETHUSDT.SIM", "quotes")  # the subscription state does not matter
    assert ledger.eligible("ETHUSDT.SIM") == [c for c in LEDGER_CHANNELS if c in SPOT]
    assert ledger.eligible("NOPE.SIM") == [] and CoverageLedger("s").eligible("ETHUSDT.SIM") == []


@pytest.mark.parametrize(
    ("discovery", "match"),
    [
        ([("A.SIM", SPOT), ("A.SIM", SPOT)], "discovered twice"),
        ([("A.SIM", frozenset({"candles"}))], "not ledger channels"),
        ([("not-an-id", SPOT)], "SYMBOL.VENUE"),
        ([("A.sim", SPOT)], "SYMBOL.VENUE"),
        ([("A" * 125 + ".SIM", SPOT)], "SYMBOL.VENUE"),
    ],
)
def test_a_bad_discovery_is_refused_and_changes_nothing(
    ledger: CoverageLedger, discovery: list[tuple[str, frozenset[str]]], match: str
) -> None:
    before = ledger.page(None, 10, "all")
    with pytest.raises(ValueError, match=match):
        ledger.register_discovery(discovery)
    assert ledger.page(None, 10, "all")["items"] == before["items"]


def test_a_later_discovery_replaces_the_set_and_keeps_surviving_lifecycles(ledger: CoverageLedger) -> None:
    ledger.subscribed("ETHUSDT.SIM", "trades")
    ledger.saw("ETHUSDT.SIM", "trades", 7)
    ledger.subscribed("ETHUSDT.SIM", "quotes")
    ledger.out_of_order("ETHUSDT.SIM", 2)
    ledger.register_discovery([("ETHUSDT.SIM", frozenset({"trades", "mark_price"})), ("NEW.SIM", SPOT)])
    doc = checked(ledger.page(None, 10, "all"))
    reconcile(doc, 2)
    assert [i["instrument_id"] for i in doc["items"]] == ["ETHUSDT.SIM", "NEW.SIM"]
    assert channel(ledger, "ETHUSDT.SIM", "trades")["flow"] == "with_flow"
    assert channel(ledger, "ETHUSDT.SIM", "quotes")["eligibility"] == "upstream_unsupported"
    assert channel(ledger, "ETHUSDT.SIM", "mark_price")["subscription"] == "planned"
    assert doc["items"][0]["out_of_order"] == 2


# the subscription lifecycle


def test_planned_to_subscribed_is_quiet_until_an_event(ledger: CoverageLedger) -> None:
    ledger.subscribed("ETHUSDT.SIM", "trades")
    state = channel(ledger, "ETHUSDT.SIM", "trades")
    assert (state["subscription"], state["flow"], state["last_event_ts"]) == ("subscribed", "quiet", None)
    ledger.saw("ETHUSDT.SIM", "trades", 1_700_000_000_000_000_000)
    state = channel(ledger, "ETHUSDT.SIM", "trades")
    assert (state["flow"], state["last_event_ts"]) == ("with_flow", "1700000000000000000")


def test_last_event_ts_is_the_newest_event_time_seen(ledger: CoverageLedger) -> None:
    ledger.subscribed("ETHUSDT.SIM", "trades")
    for ts in (20, 10, None, 30, 25):
        ledger.saw("ETHUSDT.SIM", "trades", ts)
    assert channel(ledger, "ETHUSDT.SIM", "trades")["last_event_ts"] == "30"


def test_an_event_seen_while_planned_counts_once_subscribed(ledger: CoverageLedger) -> None:
    ledger.saw("ETHUSDT.SIM", "quotes")
    assert channel(ledger, "ETHUSDT.SIM", "quotes")["flow"] is None
    ledger.subscribed("ETHUSDT.SIM", "quotes")
    assert channel(ledger, "ETHUSDT.SIM", "quotes")["flow"] == "with_flow"


def test_planned_to_failed_carries_the_error(ledger: CoverageLedger) -> None:
    ledger.failed("ETHUSDT.SIM", "quotes", "instrument is not trading")
    state = channel(ledger, "ETHUSDT.SIM", "quotes")
    assert (state["subscription"], state["flow"], state["last_error"]) == ("failed", None, "instrument is not trading")


def test_subscribed_to_failed_drops_flow(ledger: CoverageLedger) -> None:
    ledger.subscribed("ETHUSDT.SIM", "quotes")
    ledger.saw("ETHUSDT.SIM", "quotes", 5)
    ledger.failed("ETHUSDT.SIM", "quotes", "venue dropped the stream")
    state = channel(ledger, "ETHUSDT.SIM", "quotes")
    assert (state["subscription"], state["flow"], state["last_event_ts"]) == ("failed", None, "5")


def test_failed_to_planned_keeps_the_error_until_subscribed(ledger: CoverageLedger) -> None:
    ledger.failed("ETHUSDT.SIM", "quotes", "timeout")
    ledger.planned("ETHUSDT.SIM", "quotes")
    state = channel(ledger, "ETHUSDT.SIM", "quotes")
    assert (state["subscription"], state["last_error"]) == ("planned", "timeout")
    ledger.subscribed("ETHUSDT.SIM", "quotes")
    state = channel(ledger, "ETHUSDT.SIM", "quotes")
    assert (state["subscription"], state["flow"], state["last_error"]) == ("subscribed", "quiet", None)


def test_subscribed_to_planned_starts_a_new_subscription_without_flow(ledger: CoverageLedger) -> None:
    ledger.subscribed("ETHUSDT.SIM", "quotes")
    ledger.saw("ETHUSDT.SIM", "quotes")
    ledger.planned("ETHUSDT.SIM", "quotes")
    assert channel(ledger, "ETHUSDT.SIM", "quotes")["subscription"] == "planned"
    ledger.subscribed("ETHUSDT.SIM", "quotes")
    assert channel(ledger, "ETHUSDT.SIM", "quotes")["flow"] == "quiet"


def test_repeated_calls_are_no_ops_and_a_repeated_failure_updates_the_error(ledger: CoverageLedger) -> None:
    ledger.planned("ETHUSDT.SIM", "quotes")
    assert channel(ledger, "ETHUSDT.SIM", "quotes")["subscription"] == "planned"
    ledger.subscribed("ETHUSDT.SIM", "quotes")
    ledger.saw("ETHUSDT.SIM", "quotes")
    ledger.subscribed("ETHUSDT.SIM", "quotes")
    assert channel(ledger, "ETHUSDT.SIM", "quotes")["flow"] == "with_flow"
    ledger.failed("ETHUSDT.SIM", "quotes", "first")
    ledger.failed("ETHUSDT.SIM", "quotes", "second")
    assert channel(ledger, "ETHUSDT.SIM", "quotes")["last_error"] == "second"


def test_failed_to_subscribed_is_refused(ledger: CoverageLedger) -> None:
    ledger.failed("ETHUSDT.SIM", "quotes", "x")
    with pytest.raises(IllegalTransition, match="failed -> subscribed") as info:
        ledger.subscribed("ETHUSDT.SIM", "quotes")
    assert (info.value.from_state, info.value.to_state) == ("failed", "subscribed")
    assert channel(ledger, "ETHUSDT.SIM", "quotes")["subscription"] == "failed"


@pytest.mark.parametrize("call", ["planned", "subscribed", "failed", "saw"])
def test_every_call_on_an_ineligible_channel_is_refused(ledger: CoverageLedger, call: str) -> None:
    args: tuple[Any, ...] = ("ETHUSDT.SIM", "funding_rate") + (("boom",) if call == "failed" else ())
    with pytest.raises(IllegalTransition, match="upstream_unsupported ->"):
        getattr(ledger, call)(*args)
    state = channel(ledger, "ETHUSDT.SIM", "funding_rate")
    assert (state["subscription"], state["flow"], state["last_event_ts"]) == (None, None, None)


@pytest.mark.parametrize("call", ["planned", "subscribed", "failed", "saw"])
def test_an_unknown_channel_or_instrument_is_refused(ledger: CoverageLedger, call: str) -> None:
    extra: tuple[Any, ...] = ("boom",) if call == "failed" else ()
    with pytest.raises(ValueError, match="not a ledger channel"):
        getattr(ledger, call)("ETHUSDT.SIM", "candles", *extra)
    with pytest.raises(KeyError):
        getattr(ledger, call)("NOPE.SIM", "quotes", *extra)


def test_a_failure_without_its_error_and_a_bad_time_are_refused(ledger: CoverageLedger) -> None:
    with pytest.raises(ValueError, match="needs its error"):
        ledger.failed("ETHUSDT.SIM", "quotes", "")
    with pytest.raises(ValueError, match="nanoseconds"):
        ledger.saw("ETHUSDT.SIM", "quotes", -1)
    assert channel(ledger, "ETHUSDT.SIM", "quotes")["subscription"] == "planned"


def test_an_unretained_instrument_is_discovered_and_classified_with_no_subscribe_call() -> None:
    ledger = CoverageLedger("sim-node-1", classify=lambda iid: "HALTED" if iid == "SOLUSDT.SIM" else None)
    ledger.register_discovery([("BTCUSDT.SIM", SPOT), ("SOLUSDT.SIM", SPOT)], unretained=frozenset({"SOLUSDT.SIM"}))
    document = checked(ledger.page(None, 10))
    reconcile(document, 2)
    assert document["shards"][0]["channels"]["unretained"] == len(SPOT)
    assert checked(ledger.entry("SOLUSDT.SIM"))["items"][0]["status"] == "INACTIVE:HALTED"
    assert channel(ledger, "SOLUSDT.SIM", "trades") == {
        "channel": "trades",
        "eligibility": "eligible",
        "subscription": "unretained",
        "flow": None,
        "last_event_ts": None,
        "last_error": None,
    }
    assert channel(ledger, "SOLUSDT.SIM", "mark_price")["eligibility"] == "upstream_unsupported"
    assert ledger.eligible("SOLUSDT.SIM") == [c for c in LEDGER_CHANNELS if c in SPOT]
    for call in (
        lambda: ledger.planned("SOLUSDT.SIM", "trades"),
        lambda: ledger.subscribed("SOLUSDT.SIM", "trades"),
        lambda: ledger.failed("SOLUSDT.SIM", "trades", "boom"),
        lambda: ledger.saw("SOLUSDT.SIM", "trades"),
    ):
        with pytest.raises(IllegalTransition, match="SOLUSDT.SIM trades: unretained -> "):
            call()
    # Joining the retained set at a later discovery starts its channels planned.
    ledger.register_discovery([("BTCUSDT.SIM", SPOT), ("SOLUSDT.SIM", SPOT)])
    assert channel(ledger, "SOLUSDT.SIM", "trades")["subscription"] == "planned"
    reconcile(checked(ledger.page(None, 10)), 2)


def test_out_of_order_counts_per_instrument_and_per_shard(ledger: CoverageLedger) -> None:
    ledger.out_of_order("BTCUSDT-PERP.SIM")
    ledger.out_of_order("BTCUSDT-PERP.SIM", 3)
    ledger.out_of_order("ETHUSDT.SIM")
    assert checked(ledger.entry("BTCUSDT-PERP.SIM"))["items"][0]["out_of_order"] == 4
    assert ledger.page(None, 10, "all")["shards"][0]["out_of_order"] == 5
    with pytest.raises(ValueError):
        ledger.out_of_order("ETHUSDT.SIM", -1)
    with pytest.raises(KeyError):
        ledger.out_of_order("NOPE.SIM")


# documents, totals and views


def test_totals_reconcile_with_discovery_through_a_whole_lifecycle(ledger: CoverageLedger) -> None:
    reconcile(checked(ledger.page(None, 10, "all")), 3)
    ledger.subscribed("BTCUSDT-PERP.SIM", "trades")
    ledger.saw("BTCUSDT-PERP.SIM", "trades", 1)
    ledger.subscribed("BTCUSDT-PERP.SIM", "funding_rate")
    ledger.failed("OLDCOIN.SIM", "quotes", "instrument is not trading")
    doc = checked(ledger.page(None, 10, "all"))
    reconcile(doc, 3)
    assert doc["shards"][0]["channels"] == {
        "eligible": 19,
        "upstream_unsupported": 14,
        "planned": 16,
        "subscribed": 2,
        "failed": 1,
        "unretained": 0,
        "with_flow": 1,
        "quiet": 1,
    }


def test_totals_reconcile_on_a_larger_shard() -> None:
    book = CoverageLedger("big", classify=lambda iid: "HALTED" if int(iid[1:].split(".")[0]) % 7 == 0 else None)
    book.register_discovery([(f"I{k}.SIM", PERP if k % 2 else SPOT) for k in range(500)])
    for k in range(0, 500, 3):
        book.subscribed(f"I{k}.SIM", "trades")
        if k % 2:
            book.saw(f"I{k}.SIM", "trades")
    for k in range(1, 500, 5):
        book.failed(f"I{k}.SIM", "quotes", "refused")
    doc = checked(book.page(None, 1, "all"))
    reconcile(doc, 500)
    assert doc["shards"][0]["inactive"] == len(range(0, 500, 7))


def test_entry_is_the_same_document_with_one_item(ledger: CoverageLedger) -> None:
    doc = checked(ledger.entry("ETHUSDT.SIM"))
    assert doc["view"] == "instrument" and doc["next_cursor"] is None
    assert [i["instrument_id"] for i in doc["items"]] == ["ETHUSDT.SIM"]
    assert doc["shards"] == ledger.page(None, 10, "all")["shards"]
    with pytest.raises(KeyError):
        ledger.entry("NOPE.SIM")


def test_views_list_failures_and_quiet_subscriptions(ledger: CoverageLedger) -> None:
    assert checked(ledger.page(None, 10, "failures"))["items"] == []
    assert checked(ledger.page(None, 10, "quiet"))["items"] == []
    ledger.failed("OLDCOIN.SIM", "quotes", "x")
    ledger.subscribed("ETHUSDT.SIM", "trades")
    ledger.subscribed("BTCUSDT-PERP.SIM", "trades")
    ledger.saw("BTCUSDT-PERP.SIM", "trades")
    failures = checked(ledger.page(None, 10, "failures"))
    quiet = checked(ledger.page(None, 10, "quiet"))
    assert failures["view"] == "failures" and quiet["view"] == "quiet"
    assert [i["instrument_id"] for i in failures["items"]] == ["OLDCOIN.SIM"]
    assert [i["instrument_id"] for i in quiet["items"]] == ["ETHUSDT.SIM"]
    assert len(quiet["items"][0]["channels"]) == len(LEDGER_CHANNELS)  # items carry every channel
    assert failures["shards"] == quiet["shards"] == ledger.page(None, 1, "all")["shards"]
    with pytest.raises(ValueError, match="view"):
        ledger.page(None, 10, "instrument")  # type: ignore[arg-type]


# paging and cursors


@pytest.mark.parametrize("limit", [1, 2, 3, 7, 50, MAX_LIMIT])
def test_paging_walks_every_item_exactly_once(limit: int) -> None:
    book = CoverageLedger("s")
    ids = [f"I{k:03d}.SIM" for k in range(50)]
    book.register_discovery([(iid, SPOT) for iid in reversed(ids)])
    seen: list[str] = []
    cursor: str | None = None
    pages = 0
    while True:
        doc = checked(book.page(cursor, limit, "all"))
        assert len(doc["items"]) <= limit
        seen += [i["instrument_id"] for i in doc["items"]]
        pages += 1
        cursor = doc["next_cursor"]
        if cursor is None:
            break
    assert seen == ids  # instrument-id order, each once
    assert pages == -(-len(ids) // limit)


def test_paging_a_filtered_view() -> None:
    book = CoverageLedger("s")
    book.register_discovery([(f"I{k}.SIM", SPOT) for k in range(10)])
    for k in (1, 4, 5, 9):
        book.failed(f"I{k}.SIM", "trades", "x")
    first = book.page(None, 3, "failures")
    assert first["next_cursor"] is not None
    second = checked(book.page(first["next_cursor"], 3, "failures"))
    assert [i["instrument_id"] for i in first["items"] + second["items"]] == ["I1.SIM", "I4.SIM", "I5.SIM", "I9.SIM"]
    assert second["next_cursor"] is None


def tamper(cursor: str) -> str:
    raw = bytearray(base64.urlsafe_b64decode(cursor + "=="))
    raw[7] ^= 1  # the offset's lowest byte: page 1 becomes page 0
    return base64.urlsafe_b64encode(bytes(raw)).rstrip(b"=").decode()


def test_a_tampered_or_cross_route_cursor_is_refused(ledger: CoverageLedger) -> None:
    cursor = ledger.page(None, 1, "all")["next_cursor"]
    assert cursor is not None
    for bad in (tamper(cursor), cursor[:-1], cursor + "A", "", "!" * len(cursor), cursor.upper()):
        with pytest.raises(InvalidCursor, match="INVALID_CURSOR"):
            ledger.page(bad, 1, "all")
    with pytest.raises(InvalidCursor):
        ledger.page(cursor, 1, "quiet")  # another route
    other = CoverageLedger("other-shard")
    other.register_discovery([("A.SIM", SPOT), ("B.SIM", SPOT)])
    with pytest.raises(InvalidCursor):
        other.page(cursor, 1, "all")  # the same route on another shard
    assert isinstance(InvalidCursor("x"), ValueError)


def test_cursor_helpers_bind_the_route() -> None:
    for offset in (0, 1, 999, 2**63 - 1):
        assert decode_cursor(ROUTES["all"], encode_cursor(ROUTES["all"], offset)) == offset
    with pytest.raises(InvalidCursor):
        decode_cursor(ROUTES["quiet"], encode_cursor(ROUTES["all"], 5))
    with pytest.raises(InvalidCursor):
        decode_cursor("/v2/coverage", 5)  # type: ignore[arg-type]
    for offset in (-1, 2**63, True):
        with pytest.raises(ValueError, match="offset"):
            encode_cursor("/r", offset)


@pytest.mark.parametrize("limit", [0, -1, MAX_LIMIT + 1, True])
def test_a_limit_outside_1_to_1000_is_refused_naming_the_range(ledger: CoverageLedger, limit: int) -> None:
    with pytest.raises(LimitOutOfRange, match=r"1\.\.1000"):
        ledger.page(None, limit, "all")
    with pytest.raises(ValueError):
        check_limit(limit)


def test_a_cursor_past_the_end_yields_an_empty_last_page(ledger: CoverageLedger) -> None:
    cursor = ledger.page(None, 2, "all")["next_cursor"]
    ledger.register_discovery([("ONLY.SIM", SPOT)])  # the list shrank under the cursor
    doc = checked(ledger.page(cursor, 2, "all"))
    assert doc["items"] == [] and doc["next_cursor"] is None
