"""A paper node (``spine node`` with ``[sandbox] enabled``) as a real process: it serves the
market data a node serves and its execution reads, READY in its registry: the sandbox account
with its configured starting balances, and the orders, fills and positions pages. A
market-data node keeps answering 501 CAPABILITY_DEFERRED for them; every document validates
against its published schema."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from nodes import envelope, get, running_node

from reference.wire_validator import validate

SANDBOX = '[sandbox]\nenabled = true\nstarting_balances = ["100000 USDT", "2.5 BTC"]\n'
READS = ("spine.account.get", "spine.accounts.list", "spine.orders.list", "spine.fills.list", "spine.positions.list")


@pytest.fixture(scope="module")
def paper(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with running_node(tmp_path_factory.mktemp("paper"), SANDBOX, warm_bars=10) as url:
        yield url


def test_the_registry_shows_the_execution_reads_ready(paper: str) -> None:
    status, registry = get(paper + "/v2/registry")
    assert status == 200
    validate(registry)
    availability = {entry["id"]: entry["availability"] for entry in registry["operations"]}
    assert {op: availability[op] for op in READS} == dict.fromkeys(READS, "READY")
    assert availability["spine.bars.list"] == "READY"  # a venue node all the same
    assert availability["spine.sandbox.start"] == "UNAVAILABLE"


def test_the_account_holds_the_starting_balances(paper: str) -> None:
    status, account = get(paper + "/v2/account")
    assert status == 200, account
    validate(account)
    assert (account["account_id"], account["venue"], account["account_type"]) == ("SIM-001", "SIM", "MARGIN")
    balances = {b["currency"]: b for b in account["balances"]}
    assert balances["USDT"]["total"] == balances["USDT"]["free"] and balances["USDT"]["locked"] in ("0", "0.00000000")
    assert balances["USDT"]["total"].startswith("100000") and balances["BTC"]["total"].startswith("2.5")
    status, accounts = get(paper + "/v2/accounts")
    assert status == 200
    validate(accounts)
    assert accounts["items"] == [account] and accounts["next_cursor"] is None


@pytest.mark.parametrize("kind", ["orders", "fills", "positions"])
def test_the_execution_reports_are_pages(paper: str, kind: str) -> None:
    status, page = get(f"{paper}/v2/{kind}?limit=10")
    assert status == 200, page
    validate(page)
    assert (page["kind"], page["items"], page["next_cursor"]) == (kind, [], None)
    status, page = get(f"{paper}/v2/{kind}?instrument_id=BTCUSDT.SIM")
    assert status == 200 and page["items"] == []
    envelope(get(f"{paper}/v2/{kind}?limit=0"), 400, "LIMIT_OUT_OF_RANGE")
    envelope(get(f"{paper}/v2/{kind}?cursor=nonsense"), 400, "INVALID_CURSOR")


def test_a_market_data_node_defers_them(tmp_path: Path) -> None:
    with running_node(tmp_path, warm_bars=0) as node:
        for path in ("/v2/account", "/v2/accounts", "/v2/orders", "/v2/fills", "/v2/positions"):
            detail = envelope(get(node + path), 501, "CAPABILITY_DEFERRED")
            assert "paper node" in detail
