"""Framework objects to wire documents, field for field: the node computes nothing here. Prices
and sizes come out as the framework's own exact strings (at the instrument's precision),
timestamps as nanosecond strings. Each function returns the document as a dict; ``frame``
encodes a document once as a Server-Sent-Events frame for the fan-out hub.
"""

from __future__ import annotations

from typing import Any

import msgspec

from spine.wire.head import head

__all__ = [
    "CUSTOM_KINDS",
    "coverage_doc",
    "envelope",
    "frame",
    "projection_frame",
    "quote_doc",
    "trade_doc",
]

CUSTOM_KINDS = ("mark_price", "index_price", "funding_rate", "option_greeks", "instrument_status", "liquidation")
_encode = msgspec.json.Encoder().encode


def frame(event: str, document: dict[str, Any]) -> bytes:
    """One SSE message: ``event: <name>`` and the document as one ``data`` line."""
    return b"event: " + event.encode() + b"\ndata: " + _encode(document) + b"\n\n"


def quote_doc(tick: Any) -> dict[str, Any]:
    return {
        **head("svc.quote_tick"),
        "instrument_id": str(tick.instrument_id),
        "bid_price": str(tick.bid_price),
        "ask_price": str(tick.ask_price),
        "bid_size": str(tick.bid_size),
        "ask_size": str(tick.ask_size),
        "ts_event": str(tick.ts_event),
        "ts_init": str(tick.ts_init),
    }


def trade_doc(tick: Any) -> dict[str, Any]:
    return {
        **head("svc.trade_tick"),
        "instrument_id": str(tick.instrument_id),
        "price": str(tick.price),
        "size": str(tick.size),
        "aggressor_side": tick.aggressor_side.name,
        "trade_id": str(tick.trade_id),
        "ts_event": str(tick.ts_event),
        "ts_init": str(tick.ts_init),
    }


def projection_frame(kind: str, data: Any) -> dict[str, Any]:
    """A custom-kind observation (mark/index price, funding, greeks, status, liquidation)."""
    if kind in ("mark_price", "index_price"):
        payload: dict[str, Any] = {"value": str(data.value)}
    elif kind == "funding_rate":
        nxt = data.next_funding_ns
        payload = {"rate": format(data.rate, "f"), "next_funding_ts": None if nxt is None else str(nxt)}
    elif kind == "option_greeks":
        payload = {k: getattr(data, k) for k in ("delta", "gamma", "vega", "theta", "rho", "iv", "underlying_price")}
    elif kind == "instrument_status":
        payload = {"action": data.action.name, "reason": data.reason, "is_trading": data.is_trading}
    elif kind == "liquidation":
        payload = {"side": data.side, "price": data.price, "quantity": data.quantity}
    else:
        raise ValueError(f"unknown custom kind {kind!r}; allowed: {', '.join(CUSTOM_KINDS)}")
    return {
        **head("svc.projection_frame"),
        "kind": kind,
        "instrument_id": str(data.instrument_id),
        "ts_event": str(data.ts_event),
        "ts_init": str(data.ts_init),
        "payload": payload,
    }


def coverage_doc(series: Any, *, instrument_id: str, retention_state: str, exhausted: bool) -> dict[str, Any]:
    """``svc.series_coverage`` of a ``spine._core.Series``: observed spans, the gaps unresolved
    now (unobserved stretches inside the series; on EXTERNAL also the minutes without a candle
    the venue has not confirmed empty), the minutes it confirmed empty, the newest close and
    the resume hint."""
    spans = series.coverage()
    hint = series.resume_hint()
    return {
        **head("svc.series_coverage"),
        "instrument_id": instrument_id,
        "channel": series.channel,
        "retention_state": retention_state,
        "exhausted": exhausted,
        "history_terminal": exhausted or retention_state == "unretained",
        "sparse_ok": series.channel == "INTERNAL",
        "bar_count": len(series),
        "observed": [{"start": str(s), "end": str(e)} for s, e in spans],
        "gaps": [{"start": str(s), "end": str(e), "resolved": False} for s, e in series.unresolved()],
        "confirmed_empty": [{"start": str(s), "end": str(e)} for s, e in series.confirmed_empty()],
        "newest_close": None if hint["newest_ts_event"] is None else str(hint["newest_ts_event"]),
        "resume_from": None if hint["resume_from"] is None else str(hint["resume_from"]),
    }


def unretained_coverage(instrument_id: str, channel: str) -> dict[str, Any]:
    """``svc.series_coverage`` of an instrument outside the retained-ingestion manifest: zero
    ingestion demand, so nothing observed, no bars, and history terminal."""
    return {
        **head("svc.series_coverage"),
        "instrument_id": instrument_id,
        "channel": channel,
        "retention_state": "unretained",
        "exhausted": False,
        "history_terminal": True,
        "sparse_ok": channel == "INTERNAL",
        "bar_count": 0,
        "observed": [],
        "gaps": [],
        "confirmed_empty": [],
        "newest_close": None,
        "resume_from": None,
    }


def envelope(
    *,
    instrument_id: str,
    bar_type: str,
    resolution: str,
    channel: str,
    bars: list[dict[str, Any]] | msgspec.Raw,
    coverage: dict[str, Any],
    withheld: list[tuple[int, int, str]],
    next_cursor: str | None,
) -> dict[str, Any]:
    """``svc.bar_envelope``: a page of bars, or one bar for a stream event."""
    return {
        **head("svc.bar_envelope"),
        "instrument_id": instrument_id,
        "bar_type": bar_type,
        "resolution": resolution,
        "channel": channel,
        "bars": bars,
        "coverage": coverage,
        "withheld": [{"start": str(s), "end": str(e), "reason": r} for s, e, r in withheld],
        "next_cursor": next_cursor,
    }


def _decimal_or_none(value: Any) -> str | None:
    return None if value is None else format(value.as_decimal(), "f") if hasattr(value, "as_decimal") else str(value)


def instrument_doc(instrument: Any) -> dict[str, Any]:
    """``svc.instrument_ref`` of a framework instrument, field for field."""
    from nautilus_trader.model.enums import instrument_class_to_str, option_kind_to_str

    option_kind = getattr(instrument, "option_kind", None)
    strike = getattr(instrument, "strike_price", None)
    underlying = getattr(instrument, "underlying", None)
    base = getattr(instrument, "base_currency", None)
    activation = getattr(instrument, "activation_ns", None)
    expiration = getattr(instrument, "expiration_ns", None)
    return {
        **head("svc.instrument_ref"),
        "instrument_id": str(instrument.id),
        "symbol": instrument.id.symbol.value,
        "venue": instrument.id.venue.value,
        "instrument_class": instrument_class_to_str(instrument.instrument_class),
        "base_currency": None if base is None else base.code,
        "quote_currency": instrument.quote_currency.code,
        "settlement_currency": instrument.get_settlement_currency().code,
        "is_inverse": bool(instrument.is_inverse),
        "price_precision": instrument.price_precision,
        "size_precision": instrument.size_precision,
        "price_increment": str(instrument.price_increment),
        "size_increment": str(instrument.size_increment),
        "multiplier": str(instrument.multiplier),
        "lot_size": _decimal_or_none(instrument.lot_size),
        "min_quantity": _decimal_or_none(instrument.min_quantity),
        "max_quantity": _decimal_or_none(instrument.max_quantity),
        "min_notional": None if instrument.min_notional is None else format(instrument.min_notional.as_decimal(), "f"),
        "underlying": None if underlying is None else getattr(underlying, "code", str(underlying)),
        "option_kind": None if option_kind is None else option_kind_to_str(option_kind),
        "strike_price": None if strike is None else str(strike),
        "activation_ts": None if not activation else str(activation),
        "expiration_ts": None if not expiration else str(expiration),
        "ts_event": str(instrument.ts_event),
        "ts_init": str(instrument.ts_init),
    }
