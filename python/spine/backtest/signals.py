"""A run's signals as documents: ``svc.signal_event`` per action the rules took, a
``svc.chart_marker`` per signal and per fill, and a ``svc.signal_retirement`` per entry
signal once it no longer holds.

Identities (each ``spine._core.identity`` over canonical JSON):

- ``signal_key = identity("signal_key", {strategy_id, instrument_id, resolution, direction,
  ts_event, run_id})`` (``ts_event``: the bar close, a nanosecond string);
- ``event_id = identity("event_id", {"schema_id": "svc.signal_event", "signal_key"})``;
- ``marker_id = identity("marker_id", {run_id, kind, source_id})``.

Markers: SIGNAL (UP for a long entry, DOWN for a short entry, NEUTRAL for an exit; price =
the bar close; source = the signal_key) and FILL (UP buy, DOWN sell; price = the fill price;
source = the trade id). An entry is retired by the exit that closes its position (reason
``EXITED``, ``STOP_LOSS`` or ``TAKE_PROFIT``, at the exit's close) or, still open when the
run ends, ``RUN_ENDED`` at the instrument's last bar close.
"""

from __future__ import annotations

from typing import Any

from spine._core import format_decimal, identity

__all__ = ["signal_documents"]

Document = dict[str, Any]
_V1 = {"version": "spine.v2", "schema_version": 1}
_MARKER_DIRECTION = {"LONG": "UP", "SHORT": "DOWN", "FLAT": "NEUTRAL"}


def signal_documents(
    signals: list[tuple[str, int, str, int, str | None]],
    fills: list[dict[str, Any]],
    *,
    run_id: str,
    strategy_id: str,
    resolution: str,
    precisions: dict[str, int],
    last_close: dict[str, int],
) -> tuple[list[Document], list[Document], list[Document]]:
    """``(signals, markers, retirements)`` in time order from the runtime's recorded actions
    and the run's fill documents."""
    events: list[dict[str, Any]] = []
    markers: list[dict[str, Any]] = []
    retirements: list[dict[str, Any]] = []
    open_entry: dict[str, str] = {}
    for instrument_id, ts, direction, close, reason in signals:
        key = identity(
            "signal_key",
            {
                "strategy_id": strategy_id,
                "instrument_id": instrument_id,
                "resolution": resolution,
                "direction": direction,
                "ts_event": str(ts),
                "run_id": run_id,
            },
        )
        events.append(
            {
                **_V1,
                "schema_id": "svc.signal_event",
                "event_id": identity("event_id", {"schema_id": "svc.signal_event", "signal_key": key}),
                "signal_key": key,
                "strategy_id": strategy_id,
                "instrument_id": instrument_id,
                "resolution": resolution,
                "direction": direction,
                "ts_event": str(ts),
            }
        )
        markers.append(
            _marker(
                run_id,
                instrument_id,
                ts,
                "SIGNAL",
                key,
                _MARKER_DIRECTION[direction],
                format_decimal(close, precisions[instrument_id]),
            )
        )
        if direction == "FLAT":
            entry = open_entry.pop(instrument_id, None)
            if entry is not None:
                retirements.append(_retirement(entry, strategy_id, instrument_id, reason or "EXITED", ts))
        else:
            open_entry[instrument_id] = key
    for instrument_id, key in sorted(open_entry.items()):
        retirements.append(_retirement(key, strategy_id, instrument_id, "RUN_ENDED", last_close[instrument_id]))
    for fill in fills:
        markers.append(
            _marker(
                run_id,
                fill["instrument_id"],
                int(fill["ts_event"]),
                "FILL",
                fill["trade_id"],
                "UP" if fill["side"] == "BUY" else "DOWN",
                fill["last_px"],
            )
        )
    markers.sort(key=lambda m: (int(m["ts_event"]), m["kind"] != "SIGNAL", m["instrument_id"], m["source_id"]))
    retirements.sort(key=lambda r: (int(r["ts_event"]), r["instrument_id"]))
    return events, markers, retirements


def _marker(
    run_id: str, instrument_id: str, ts: int, kind: str, source: str, direction: str, price: str | None
) -> dict[str, Any]:
    return {
        **_V1,
        "schema_id": "svc.chart_marker",
        "marker_id": identity("marker_id", {"run_id": run_id, "kind": kind, "source_id": source}),
        "instrument_id": instrument_id,
        "ts_event": str(ts),
        "kind": kind,
        "source_id": source,
        "direction": direction,
        "price": price,
    }


def _retirement(key: str, strategy_id: str, instrument_id: str, reason: str, ts: int) -> dict[str, Any]:
    return {
        **_V1,
        "schema_id": "svc.signal_retirement",
        "signal_key": key,
        "strategy_id": strategy_id,
        "instrument_id": instrument_id,
        "reason": reason,
        "ts_event": str(ts),
    }
