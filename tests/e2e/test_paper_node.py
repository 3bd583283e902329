"""A paper node (``spine node`` with ``[sandbox] enabled``, private-operator) as a real
process: it serves the market data a node serves and its execution reads, READY in its
registry: the sandbox account with its configured starting balances, and the orders, fills
and positions pages. The operator's paper orders fill (MARKET) and rest and cancel (LIMIT),
each followed at /v2/commands/{id} and seen in the reads; every refusal names what was wrong.
A market-data node refuses orders in public-readonly (403 first) and keeps answering 501
CAPABILITY_DEFERRED for the reads; every document validates against its published schema."""

from __future__ import annotations

import time
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from gateways import spawn_gateway
from nodes import envelope, get, post, running_node, stop, wait_for

from reference.wire_validator import validate

SANDBOX = '[sandbox]\nenabled = true\nstarting_balances = ["100000 USDT", "2.5 BTC"]\n'
READS = ("spine.account.get", "spine.accounts.list", "spine.orders.list", "spine.fills.list", "spine.positions.list")


@pytest.fixture(scope="module")
def paper(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    home = tmp_path_factory.mktemp("paper")
    with running_node(home, SANDBOX, warm_bars=10, SPINE_DEPLOYMENT_MODE="private-operator") as url:
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
        for path in ("/v2/account", "/v2/accounts", "/v2/orders", "/v2/fills", "/v2/positions", "/v2/commands/x"):
            detail = envelope(get(node + path), 501, "CAPABILITY_DEFERRED")
            assert "paper node" in detail
        envelope(post(node + "/v2/orders", order("MARKET")), 403, "MUTATION_REFUSED")  # public-readonly: first
        envelope(
            post(node + "/v2/orders/cancel", {"instrument_id": IID, "client_order_id": "O-1"}), 403, "MUTATION_REFUSED"
        )


IID = "BTCUSDT.SIM"


def order(
    kind: str, side: str = "BUY", quantity: str = "0.01", price: str | None = None, **gates: Any
) -> dict[str, Any]:
    body = {"instrument_id": IID, "side": side, "order_type": kind, "quantity": quantity, "price": price}
    return {**body, "paper": True, "confirmed": True, **gates}


def settled(url: str, command_id: str, states: tuple[str, ...]) -> dict[str, Any]:
    """The command's result once it reaches one of ``states`` (bounded: fails past 30 s)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        status, result = get(f"{url}/v2/commands/{command_id}")
        assert status == 200, result
        if result["state"] in states:
            validate(result)
            return result
        time.sleep(0.05)
    raise AssertionError(f"command {command_id} not {states} within 30 s: {result}")


def test_a_market_order_fills_and_shows_in_every_read(paper: str) -> None:
    status, pending = post(paper + "/v2/orders", order("MARKET", quantity="0.01"))
    assert status == 202, pending
    validate(pending)
    assert (pending["command"], pending["state"]) == ("ORDER", "PENDING")
    done = settled(paper, pending["command_id"], ("COMPLETED", "REJECTED"))
    assert done["state"] == "COMPLETED", done
    client_order_id = done["client_order_id"]
    orders = get(paper + "/v2/orders")[1]
    validate(orders)
    placed = next(o for o in orders["items"] if o["client_order_id"] == client_order_id)
    validate(placed)
    assert (placed["status"], Decimal(placed["filled_qty"]), placed["strategy_id"]) == (
        "FILLED",
        Decimal("0.01"),
        "operator",
    )
    fills = [f for f in get(paper + "/v2/fills")[1]["items"] if f["client_order_id"] == client_order_id]
    assert len(fills) == 1 and fills[0]["last_px"] == placed["avg_px"]
    validate(fills[0])
    positions = get(f"{paper}/v2/positions?instrument_id={IID}")[1]["items"]
    assert positions and positions[0]["side"] == "LONG"
    validate(positions[0])
    usdt = next(b for b in get(paper + "/v2/account")[1]["balances"] if b["currency"] == "USDT")
    assert Decimal(usdt["total"]) < Decimal("100000")  # the taker fee


def test_a_resting_limit_order_is_cancelled(paper: str) -> None:
    close = Decimal(get(f"{paper}/v2/bars?instrument_id={IID}&limit=1")[1]["bars"][-1]["close"])
    price = str(int(close / 2))  # far below the market: it rests
    status, pending = post(paper + "/v2/orders", order("LIMIT", price=price))
    assert status == 202, pending
    accepted = settled(paper, pending["command_id"], ("ACCEPTED", "REJECTED"))
    assert accepted["state"] == "ACCEPTED", accepted
    cancel = {"instrument_id": IID, "client_order_id": accepted["client_order_id"], "paper": True, "confirmed": True}
    status, cancelling = post(paper + "/v2/orders/cancel", cancel)
    assert status == 202 and cancelling["command"] == "CANCEL", cancelling
    assert settled(paper, cancelling["command_id"], ("COMPLETED", "REJECTED"))["state"] == "COMPLETED"
    assert settled(paper, pending["command_id"], ("COMPLETED",))["state"] == "COMPLETED"  # cancelled: done
    resting = next(
        o for o in get(paper + "/v2/orders")[1]["items"] if o["client_order_id"] == accepted["client_order_id"]
    )
    assert (resting["status"], Decimal(resting["price"]), Decimal(resting["filled_qty"])) == (
        "CANCELED",
        Decimal(price),
        0,
    )
    detail = envelope(post(paper + "/v2/orders/cancel", cancel), 409, "CONFLICT")
    assert "CANCELED, not open" in detail


@pytest.mark.parametrize(
    ("body", "status", "symbol", "named"),
    [
        (order("MARKET", paper=False), 400, "INVALID_BODY", "paper must be true"),
        (order("MARKET", confirmed=False), 400, "INVALID_BODY", "confirmed must be true"),
        (
            {k: v for k, v in order("MARKET").items() if k not in ("paper", "confirmed")},
            400,
            "INVALID_BODY",
            "paper and confirmed",
        ),
        (order("LIMIT"), 400, "INVALID_BODY", "price is required for LIMIT"),
        (order("MARKET", price="1"), 400, "INVALID_BODY", "must be null for MARKET"),
        ({**order("MARKET"), "instrument_id": "NOPE.SIM"}, 404, "NOT_FOUND", "NOPE.SIM"),
        (order("MARKET", quantity="0.0000000001"), 400, "INVALID_QUANTITY", "decimal places"),
        (order("MARKET", quantity="1e3"), 400, "INVALID_BODY", "quantity"),
        ({**order("MARKET"), "leverage": "2"}, 400, "UNKNOWN_BODY_KEYS", "leverage"),
    ],
)
def test_an_order_the_node_cannot_place_is_refused_naming_why(
    paper: str, body: dict[str, Any], status: int, symbol: str, named: str
) -> None:
    assert named in envelope(post(paper + "/v2/orders", body), status, symbol)


def test_a_float_quantity_and_unknown_commands_are_refused(paper: str) -> None:
    raw_body = (
        b'{"instrument_id": "BTCUSDT.SIM", "side": "BUY", "order_type": "MARKET", "quantity": 0.5, '
        b'"paper": true, "confirmed": true}'
    )
    envelope(post(paper + "/v2/orders", raw_body), 400, "INVALID_BODY")
    envelope(get(paper + "/v2/commands/" + "0" * 64), 404, "NOT_FOUND")
    cancel = {"instrument_id": IID, "client_order_id": "O-NOPE", "paper": True, "confirmed": True}
    envelope(post(paper + "/v2/orders/cancel", cancel), 404, "NOT_FOUND")


def test_the_gateway_routes_paper_routes_to_the_paper_node(paper: str, tmp_path: Path) -> None:
    """Through a private-operator gateway over the paper node: the order goes to the node of
    its instrument's venue, its command is followed and the reads answer as the node does."""
    process, gateway = spawn_gateway(tmp_path, [paper], paper, SPINE_DEPLOYMENT_MODE="private-operator")
    try:
        wait_for(process, lambda: get(gateway + "/v2/health")[1]["ready"] is True, "ready")
        wait_for(
            process,
            lambda: (
                {e["id"]: e["availability"] for e in get(gateway + "/v2/registry")[1]["operations"]}[
                    "spine.orders.submit"
                ]
                == "READY"
            ),
            "the paper node's registry read",
        )
        status, pending = post(gateway + "/v2/orders", order("MARKET", side="SELL", quantity="0.02"))
        assert status == 202, pending
        done = settled(gateway, pending["command_id"], ("COMPLETED", "REJECTED"))
        assert done["state"] == "COMPLETED", done
        assert get(gateway + "/v2/account") == get(paper + "/v2/account")
        assert get(gateway + "/v2/orders?limit=50") == get(paper + "/v2/orders?limit=50")
        envelope(get(gateway + "/v2/commands/" + "0" * 64), 404, "NOT_FOUND")
        envelope(post(gateway + "/v2/orders", {**order("MARKET"), "instrument_id": "X.NOPE"}), 404, "NOT_FOUND")
    finally:
        stop(process)


def test_a_gateway_without_a_paper_node_defers_them(tmp_path: Path) -> None:
    (tmp_path / "node").mkdir()
    with running_node(tmp_path / "node", warm_bars=0) as node:
        process, gateway = spawn_gateway(tmp_path / "gateway", [node], node, SPINE_DEPLOYMENT_MODE="private-operator")
        try:
            wait_for(process, lambda: get(gateway + "/v2/health")[1]["ready"] is True, "ready")
            assert "no paper node" in envelope(get(gateway + "/v2/account"), 501, "CAPABILITY_DEFERRED")
            detail = envelope(post(gateway + "/v2/orders", order("MARKET")), 501, "CAPABILITY_DEFERRED")
            assert "is no paper node" in detail
        finally:
            stop(process)
