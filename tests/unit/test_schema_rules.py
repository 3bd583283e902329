"""The rules the schemas encode: pinned value grammars and cross-field constraints.

Each case edits a valid example (tests/data/wire_examples) in one place and checks the
schema's verdict with spine.schemas.validator_for.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from reference.wire_validator import put
from spine.schemas import validator_for

EXAMPLES = Path(__file__).resolve().parents[2] / "tests" / "data" / "wire_examples"
Doc = dict[str, Any]


def example(schema_id: str) -> Doc:
    loaded: Doc = json.loads((EXAMPLES / f"{schema_id}.json").read_text(encoding="utf-8"))
    return loaded


def valid(schema_id: str, document: Doc) -> bool:
    return validator_for(schema_id).is_valid(document)


# The pinned grammars, each on a field of svc.quote_tick: (texts accepted, texts refused).
GRAMMARS: dict[str, tuple[list[str], list[str]]] = {
    "bid_price": (
        ["0", "1", "-1.5", "10.00", "0.000", "-0.5"],
        ["-0", "-0.0", "-0.00", "01", "1.", ".5", "1e5", "+1", " 1", "1 ", "1\n", "", "NaN"],
    ),
    "ts_event": (
        ["0", "1700000000000000000", "18446744073709551615"],
        ["01", "-1", "1.0", "", "1e9", "1\n", "123456789012345678901"],
    ),
    "instrument_id": (
        ["BTCUSDT.SIM", "BTC/USD.SIM", "BTC-28JUN24-60000-C.DERIBIT", "ES.FUT.GLBX"],
        ["BTCUSDT", ".SIM", "BTC USDT.SIM", "BTCUSDT.sim", "BTCUSDT.", "BTCUSDT.SIM\n"],
    ),
}


@pytest.mark.parametrize(
    ("field", "text", "ok"),
    [
        pytest.param(field, text, ok, id=f"{field}-{text!r}")
        for field, (accepted, refused) in GRAMMARS.items()
        for texts, ok in ((accepted, True), (refused, False))
        for text in texts
    ],
)
def test_value_grammar(field: str, text: str, ok: bool) -> None:
    tick = example("svc.quote_tick")
    assert valid("svc.quote_tick", {**tick, field: text}) is ok


def test_floats_never_stand_in_for_strings_or_counters() -> None:
    tick = example("svc.quote_tick")
    assert not valid("svc.quote_tick", {**tick, "bid_price": 36960.0})
    assert not valid("svc.quote_tick", {**tick, "ts_event": 1700000220000000000})
    status = example("svc.engine_status")
    status["counters"]["fills"] = 0.0
    assert not valid("svc.engine_status", status)


Edit = Callable[[Doc], None]


# (schema id, edit, should stay valid): each rule is shown holding and broken.
RULES: list[tuple[str, str, list[Edit], bool]] = [
    ("history_terminal follows exhausted", "svc.series_coverage", [put("exhausted", True)], False),
    (
        "history_terminal true when exhausted",
        "svc.series_coverage",
        [put("exhausted", True), put("history_terminal", True)],
        True,
    ),
    (
        "history_terminal true when unretained",
        "svc.series_coverage",
        [put("retention_state", "unretained"), put("history_terminal", True)],
        True,
    ),
    ("retained and not exhausted is not terminal", "svc.series_coverage", [put("history_terminal", True)], False),
    ("sparse_ok only on INTERNAL", "svc.series_coverage", [put("sparse_ok", True)], False),
    ("INTERNAL is sparse", "svc.series_coverage", [put("channel", "INTERNAL")], False),
    ("INTERNAL with sparse_ok", "svc.series_coverage", [put("channel", "INTERNAL"), put("sparse_ok", True)], True),
    ("bar_type names the channel", "svc.bar_envelope", [put("channel", "INTERNAL")], False),
    ("derived resolution name", "svc.bar_envelope", [put("resolution", "5m")], True),
    ("resolution grammar", "svc.bar_envelope", [put("resolution", "5 minutes")], False),
    (
        "withheld reason enum",
        "svc.bar_envelope",
        [put("withheld", [{"start": "0", "end": "60000000000", "reason": "PARTIAL"}])],
        False,
    ),
    ("embedded coverage is a full document", "svc.bar_envelope", [put("coverage.schema_id", "svc.quote_tick")], False),
    ("payload follows kind", "svc.projection_frame", [put("kind", "funding_rate")], False),
    ("index price shares the price payload", "svc.projection_frame", [put("kind", "index_price")], True),
    ("payload is closed", "svc.projection_frame", [put("payload.extra", "1")], False),
    ("facts items match the page kind", "svc.facts_page", [put("kind", "index_price")], False),
    ("NO_HISTORY is READY on the wire", "svc.hydration_state", [put("items.0.internal_state", "NO_HISTORY")], True),
    (
        "NO_HISTORY is not EMPTY",
        "svc.hydration_state",
        [put("items.0.internal_state", "NO_HISTORY"), put("items.0.state", "EMPTY")],
        False,
    ),
    ("RETRY_WAIT needs next_retry_ts", "svc.hydration_state", [put("items.1.next_retry_ts", None)], False),
    ("only RETRY_WAIT has next_retry_ts", "svc.hydration_state", [put("items.0.next_retry_ts", "1")], False),
    (
        "FAILED carries last_error",
        "svc.hydration_state",
        [put("items.0.internal_state", "FAILED"), put("items.0.state", "FAILED")],
        False,
    ),
    (
        "ineligible channel has no subscription",
        "svc.coverage_ledger",
        [put("items.1.channels.1.subscription", "planned")],
        False,
    ),
    (
        "eligible channel has a subscription",
        "svc.coverage_ledger",
        [put("items.0.channels.0.subscription", None), put("items.0.channels.0.flow", None)],
        False,
    ),
    ("flow only once subscribed", "svc.coverage_ledger", [put("items.1.channels.0.flow", "quiet")], False),
    ("status grammar", "svc.coverage_ledger", [put("items.1.status", "INACTIVE")], False),
    ("degraded names a reason", "svc.health", [put("degraded_reasons", [])], False),
    ("not degraded, no reasons", "svc.health", [put("degraded", False)], False),
    ("engine status may be absent", "svc.health", [put("engine_status", None)], True),
    ("live is always true", "svc.health", [put("live", False)], False),
    ("a resolution is not durable and derived", "svc.resolutions", [put("resolutions.1.derived", True)], False),
    ("calendar aligned", "svc.resolutions", [put("calendar_aligned", False)], False),
    ("FAILED engine names its error", "svc.engine_status", [put("lifecycle", "FAILED")], False),
    ("FAILED engine with error", "svc.engine_status", [put("lifecycle", "FAILED"), put("last_error", "boom")], True),
    ("option needs strike and kind", "svc.instrument_ref", [put("instrument_class", "OPTION")], False),
    ("availability enum", "svc.capability_registry", [put("operations.0.availability", "MAYBE")], False),
    ("operation id is dotted", "svc.capability_registry", [put("operations.0.id", "bars")], False),
    ("a managed row has a manifest flag", "svc.selection_row", [put("manifest", None)], False),
    ("an unmanaged row has none", "svc.selection_row", [put("retention_state", "unmanaged")], False),
    ("unmanaged row", "svc.selection_row", [put("retention_state", "unmanaged"), put("manifest", None)], True),
    ("a pending removal", "svc.selection_row", [put("manifest", False)], True),
    ("unretained is not ingested", "svc.selection_row", [put("retention_state", "unretained")], False),
    ("not selected, no channels", "svc.selection_row", [put("selected", False)], False),
    (
        "not selected, empty",
        "svc.selection_row",
        [put("selected", False), put("channels", []), put("second_tier", False)],
        True,
    ),
    ("selected has channels", "svc.selection_row", [put("channels", []), put("second_tier", False)], False),
    ("second tier means bars_second", "svc.selection_row", [put("second_tier", False)], False),
    ("bars_second means second tier", "svc.selection_row", [put("channels", ["quotes"])], False),
    ("channels are ledger channels", "svc.selection_row", [put("channels.0", "candles")], False),
    ("search limit at most 1000", "svc.search_query", [put("limit", 1001)], False),
    ("search limit at least 1", "svc.search_query", [put("limit", 0)], False),
    ("search text at most 64", "svc.search_query", [put("text", "x" * 65)], False),
    ("search classes are distinct", "svc.search_query", [put("instrument_classes", ["SPOT", "SPOT"])], False),
    ("search classes may be null", "svc.search_query", [put("instrument_classes", None)], True),
    ("search classes are instrument classes", "svc.search_query", [put("instrument_classes", ["X"])], False),
    ("search id is 64 hex", "svc.search_result", [put("search_id", "ABC")], False),
    ("connected needs connected clients", "svc.connection_state", [put("data_clients.0.connected", False)], False),
    ("connected needs a client", "svc.connection_state", [put("data_clients", [])], False),
    ("disconnected names a client down", "svc.connection_state", [put("state", "DISCONNECTED")], False),
    (
        "disconnected",
        "svc.connection_state",
        [put("state", "DISCONNECTED"), put("data_clients.0.connected", False)],
        True,
    ),
    (
        "connecting without clients",
        "svc.connection_state",
        [put("state", "CONNECTING"), put("data_clients", []), put("since", None)],
        True,
    ),
    ("error detail starts with a symbol", "svc.error_envelope", [put("error.detail", "deferred")], False),
    ("error code is 4xx/5xx", "svc.error_envelope", [put("error.code", 200)], False),
    # The documents whose fields the spec does not show (docs/contract.md, "Schema set").
    ("a limit order has a price", "svc.order_command", [put("price", None)], False),
    ("a market order has none", "svc.order_command", [put("order_type", "MARKET")], False),
    ("a market order", "svc.order_command", [put("order_type", "MARKET"), put("price", None)], True),
    ("order commands are paper only", "svc.order_command", [put("paper", False)], False),
    ("cancel commands are confirmed", "svc.cancel_command", [put("confirmed", False)], False),
    ("a rejected command says why", "svc.command_result", [put("state", "REJECTED")], False),
    ("a rejected command", "svc.command_result", [put("state", "REJECTED"), put("detail", "no such order")], True),
    ("a failed sandbox says why", "svc.sandbox_status", [put("state", "FAILED")], False),
    ("a running sandbox names its revision", "svc.sandbox_status", [put("revision_id", None)], False),
    (
        "a stopped sandbox",
        "svc.sandbox_status",
        [put("state", "STOPPED"), put("strategy_id", None), put("revision_id", None), put("instrument_id", None)],
        True,
    ),
    ("a flat position is closed", "svc.position_summary", [put("side", "FLAT")], False),
    ("a completed job names its run", "svc.backtest_job_detail", [put("run_id", None)], False),
    (
        "a queued job has no execution yet",
        "svc.backtest_job_detail",
        [put("state", "QUEUED"), put("run_id", None), put("execution", None)],
        True,
    ),
    ("the execution block is closed", "svc.backtest_job_detail", [put("execution.leverage", "1")], False),
    ("a seed is an integer", "svc.execution_config", [put("seed", "42")], False),
    ("job events are STATE or LOG", "svc.backtest_job_event", [put("type", "PROGRESS")], False),
    ("a LOG event has no state", "svc.backtest_job_event", [put("state", "RUNNING")], False),
    (
        "a STATE event",
        "svc.backtest_job_event",
        [put("type", "STATE"), put("state", "RUNNING"), put("level", None), put("message", None)],
        True,
    ),
    ("no percentage on a job", "svc.backtest_job_summary", [put("progress", "50")], False),
    ("valid means no ERROR", "svc.validation_receipt", [put("valid", True)], False),
    ("invalid means an ERROR", "svc.validation_receipt", [put("diagnostics.0.severity", "WARNING")], False),
    (
        "valid with warnings",
        "svc.validation_receipt",
        [put("valid", True), put("diagnostics.0.severity", "WARNING")],
        True,
    ),
    ("file paths stay inside the project", "svc.strategy_file", [put("path", "../secrets.py")], False),
    ("file paths are relative", "svc.strategy_file", [put("path", "/etc/passwd")], False),
    ("nested file paths", "svc.strategy_file", [put("path", "lib/signals.py")], True),
    ("trial parameters are decimal strings", "svc.optuna_trial", [put("params.0.value", "1e3")], False),
    ("a failed study says why", "svc.optuna_study", [put("state", "FAILED")], False),
    ("report pages hold their kind", "svc.execution_report_page", [put("kind", "orders")], False),
    ("an empty report page", "svc.execution_report_page", [put("kind", "orders"), put("items", [])], True),
]


@pytest.mark.parametrize(("rule", "schema_id", "edits", "ok"), RULES, ids=[r[0] for r in RULES])
def test_cross_field_rules(rule: str, schema_id: str, edits: list[Edit], ok: bool) -> None:
    document = copy.deepcopy(example(schema_id))
    for edit in edits:
        edit(document)
    assert valid(schema_id, document) is ok, rule
