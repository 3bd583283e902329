"""The roster routes on private-operator nodes (``SPINE_DEPLOYMENT_MODE=private-operator``), as
real ``spine node`` processes: one with a retained-ingestion manifest (changes rewrite the file
and show as pending until the next start), one unmanaged (changes are a 409 conflict). Every
answer is validated against schemas/ by the independent validator."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from nodes import envelope, get, post, running_node

from reference.wire_validator import validate

ROUTES = ("/v2/selection", "/v2/selection/remove")
RETAINED = ("BTCUSDT.SIM", "ETHUSDT-PERP.SIM")


@pytest.fixture(scope="module")
def managed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    directory = tmp_path_factory.mktemp("selection")
    manifest = directory / "retained.txt"
    manifest.write_text("# the operator's roster\n" + "".join(f"{iid}\n" for iid in RETAINED))
    with running_node(directory, f'manifest = "{manifest}"\n', SPINE_DEPLOYMENT_MODE="private-operator") as url:
        yield url, manifest


@pytest.fixture(scope="module")
def unmanaged(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with running_node(tmp_path_factory.mktemp("unmanaged"), SPINE_DEPLOYMENT_MODE="private-operator") as url:
        yield url


def page(got: tuple[int, Any]) -> dict[str, Any]:
    status, document = got
    assert status == 200, document
    validate(document)
    assert document["schema_id"] == "svc.selection_page"
    return document


def rows(base: str) -> dict[str, dict[str, Any]]:
    return {row["instrument_id"]: row for row in page(get(base + "/v2/selection?limit=1000"))["items"]}


def listed(manifest: Path) -> list[str]:
    """The ids in the file, checking its shape: comment lines first, then the ids sorted."""
    lines = manifest.read_text().splitlines()
    comments = [line for line in lines if line.startswith("#")]
    assert comments and lines[: len(comments)] == comments
    ids = lines[len(comments) :]
    assert ids == sorted(set(ids))
    return ids


def test_rows_join_the_running_roster_and_the_manifest_on_disk(managed: tuple[str, Path]) -> None:
    base, _ = managed
    roster = rows(base)
    assert len(roster) == 48
    for iid, row in roster.items():
        if iid in RETAINED:
            assert (row["selected"], row["retention_state"], row["manifest"], row["second_tier"]) == (
                True,
                "retained",
                True,
                True,
            ), row
            assert {"quotes", "trades", "bars_second"} <= set(row["channels"])
        else:
            assert (row["selected"], row["retention_state"], row["manifest"], row["channels"], row["second_tier"]) == (
                False,
                "unretained",
                False,
                [],
                False,
            ), row


def test_changes_rewrite_the_manifest_and_show_as_pending(managed: tuple[str, Path]) -> None:
    base, manifest = managed
    added = page(post(base + "/v2/selection", {"instrument_ids": ["SOLUSDT.SIM", "BTCUSDT.SIM", "SOLUSDT.SIM"]}))
    assert added["next_cursor"] is None
    assert [(r["instrument_id"], r["manifest"], r["selected"], r["retention_state"]) for r in added["items"]] == [
        ("BTCUSDT.SIM", True, True, "retained"),
        ("SOLUSDT.SIM", True, False, "unretained"),
    ]
    assert listed(manifest) == ["BTCUSDT.SIM", "ETHUSDT-PERP.SIM", "SOLUSDT.SIM"]
    assert rows(base)["SOLUSDT.SIM"]["manifest"] is True  # the GET reads the file as it is now

    removed = page(post(base + "/v2/selection/remove", {"instrument_ids": ["BTCUSDT.SIM"]}))
    (row,) = removed["items"]
    assert (row["instrument_id"], row["manifest"], row["selected"]) == ("BTCUSDT.SIM", False, True)
    assert listed(manifest) == ["ETHUSDT-PERP.SIM", "SOLUSDT.SIM"]

    before = manifest.stat().st_mtime_ns
    assert page(post(base + "/v2/selection/remove", {"instrument_ids": ["BTCUSDT.SIM"]}))["items"] == [row]
    assert manifest.stat().st_mtime_ns == before  # nothing to change: the file is left alone


@pytest.mark.parametrize("route", ROUTES)
def test_an_id_the_venue_does_not_list_is_404_and_changes_nothing(managed: tuple[str, Path], route: str) -> None:
    base, manifest = managed
    before = manifest.read_bytes()
    text = envelope(post(base + route, {"instrument_ids": ["BTCUSDT.SIM", "NOPE.SIM"]}), 404, "NOT_FOUND")
    assert "NOPE.SIM" in text and "BTCUSDT.SIM" not in text
    assert manifest.read_bytes() == before


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize(
    ("body", "words"),
    [
        (b"BTCUSDT.SIM", "INVALID_JSON"),
        (b"", "INVALID_JSON"),
        (b'["BTCUSDT.SIM"]', "must be a JSON object"),
        (b'{"instrument_ids": [1.5]}', "FLOAT_REFUSED"),
        ({"instrument_ids": []}, "$.instrument_ids"),
        ({"instrument_ids": "BTCUSDT.SIM"}, "$.instrument_ids"),
        ({"instrument_ids": ["btcusdt.sim"]}, "$.instrument_ids[0]"),
        ({"instrument_ids": ["BTCUSDT.SIM"] * 1001}, "$.instrument_ids"),
        ({}, "instrument_ids"),
    ],
)
def test_a_bad_body_is_invalid_body_and_changes_nothing(
    managed: tuple[str, Path], route: str, body: object, words: str
) -> None:
    base, manifest = managed
    before = manifest.read_bytes()
    text = envelope(post(base + route, body), 400, "INVALID_BODY")
    assert text.startswith(f"POST {route}: ") and words in text, text
    assert manifest.read_bytes() == before


@pytest.mark.parametrize("route", ROUTES)
def test_a_roster_body_is_sealed(managed: tuple[str, Path], route: str) -> None:
    base, manifest = managed
    before = manifest.read_bytes()
    text = envelope(
        post(base + route, {"instrument_ids": ["BTCUSDT.SIM"], "force": True, "at": "now"}), 400, "UNKNOWN_BODY_KEYS"
    )
    assert text == f"POST {route}: unknown keys at, force; allowed keys: instrument_ids"
    assert manifest.read_bytes() == before


@pytest.mark.parametrize("route", ROUTES)
def test_an_unmanaged_node_has_no_roster_to_change(unmanaged: str, route: str) -> None:
    text = envelope(post(unmanaged + route, {"instrument_ids": ["BTCUSDT.SIM"]}), 409, "CONFLICT")
    assert "already selected" in text and "manifest" in text
    row = rows(unmanaged)["BTCUSDT.SIM"]
    assert (row["selected"], row["retention_state"], row["manifest"]) == (True, "unmanaged", None)


def test_a_private_operator_node_lists_its_commands_ready(managed: tuple[str, Path]) -> None:
    base, _ = managed
    status, registry = get(base + "/v2/registry")
    assert status == 200
    validate(registry)
    by_path = {(op["method"], op["path"]): op for op in registry["operations"]}
    assert by_path[("POST", "/v2/selection")]["availability"] == "READY"
    assert by_path[("POST", "/v2/selection/remove")]["availability"] == "READY"


@pytest.mark.parametrize(
    "query",
    [
        "instrument_id=SOLUSDT.SIM",
        "bar_type=SOLUSDT.SIM-1-MINUTE-LAST-INTERNAL",
        "bar_type=SOLUSDT.SIM-1-HOUR-LAST-EXTERNAL",
    ],
)
def test_an_unretained_instruments_bar_page_is_empty_and_terminal(managed: tuple[str, Path], query: str) -> None:
    base, _ = managed
    status, document = get(f"{base}/v2/bars?{query}")
    assert status == 200, document
    validate(document)
    assert (document["bars"], document["withheld"], document["next_cursor"]) == ([], [], None)
    coverage = document["coverage"]
    validate(coverage)
    assert (coverage["retention_state"], coverage["history_terminal"], coverage["bar_count"], coverage["observed"]) == (
        "unretained",
        True,
        0,
        [],
    )
    assert coverage["sparse_ok"] is (coverage["channel"] == "INTERNAL")
    status, v1 = get(f"{base}/bars?{query}")
    assert status == 200 and v1["bars"] == [] and v1["next_cursor"] is None, v1
    retained = get(f"{base}/v2/bars?instrument_id=BTCUSDT.SIM")[1]["coverage"]
    assert (retained["retention_state"], retained["history_terminal"]) == ("retained", False)


def test_an_undiscovered_instrument_is_still_not_found(managed: tuple[str, Path]) -> None:
    base, _ = managed
    assert envelope(get(f"{base}/v2/bars?instrument_id=NOPE.SIM"), 404, "NOT_FOUND")


def test_the_ledger_and_status_count_every_discovered_instrument(managed: tuple[str, Path]) -> None:
    base, _ = managed
    status, ledger = get(base + "/v2/coverage?limit=1000")
    assert status == 200, ledger
    validate(ledger)
    (shard,) = ledger["shards"]
    assert shard["discovered"] == len(ledger["items"]) == 48
    assert shard["active"] + shard["inactive"] == 48
    c = shard["channels"]
    assert c["planned"] + c["subscribed"] + c["failed"] + c["unretained"] == c["eligible"]
    assert c["eligible"] + c["upstream_unsupported"] == 48 * 11
    status, sol = get(base + "/v2/coverage/SOLUSDT.SIM")
    assert status == 200, sol
    validate(sol)
    eligible = [ch for ch in sol["items"][0]["channels"] if ch["eligibility"] == "eligible"]
    assert eligible and all(ch["subscription"] == "unretained" and ch["flow"] is None for ch in eligible)
    node_status = get(base + "/v2/status")[1]
    assert node_status["counters"]["instruments"] == 48
