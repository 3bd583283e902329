"""Medians of repeated runs, ratios against the named rivals, the issue's targets, and the
printed table."""

from __future__ import annotations

import statistics
from collections import defaultdict
from typing import Any

HTTP_METRICS = ("rps", "p50_ms", "p99_ms")
SSE_METRICS = ("deliveries_per_s", "p50_ms", "p99_ms", "delivered", "expected")


def medians(records: list[dict[str, Any]], key: str, metrics: tuple[str, ...]) -> dict[tuple[str, str], dict]:
    """(record[key], server) -> the median of each metric over the repeats."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        groups[(record[key], record["server"])].append(record)
    return {
        group: {m: _median([r[m] for r in runs]) for m in metrics} | {"runs": len(runs)}
        for group, runs in groups.items()
    }


def _median(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def _ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or not b else a / b


def targets(http: dict, sse: dict) -> list[dict[str, Any]]:
    """The issue's targets, each with its measured value and whether it is met."""

    def vs(results: dict, case: str, metric: str, rival: str) -> float | None:
        return _ratio(_get(results, case, "spine", metric), _get(results, case, rival, metric))

    rows = [
        ("bars_1m_500 req/s vs starlette+orjson", vs(http, "bars_1m_500", "rps", "starlette+orjson"), ">=", 3.0),
        ("bars_1m_500 p99 vs starlette+orjson", vs(http, "bars_1m_500", "p99_ms", "starlette+orjson"), "<", 1.0),
        ("bars_1m_500 req/s vs fastapi", vs(http, "bars_1m_500", "rps", "fastapi"), ">=", 15.0),
        ("health req/s vs granian-const", vs(http, "health", "rps", "granian-const"), ">=", 0.8),
        (
            "SSE deliveries/s vs starlette-granian (1/turn)",
            vs(sse, "flat", "deliveries_per_s", "starlette-granian"),
            ">=",
            2.5,
        ),
        (
            "SSE deliveries/s vs starlette-granian (bursts)",
            vs(sse, "burst", "deliveries_per_s", "starlette-granian"),
            ">=",
            2.5,
        ),
        ("SSE p99 ms at 10,000 deliveries/s", _get(sse, "paced", "spine", "p99_ms"), "<", 20.0),
    ]
    return [
        {
            "target": label,
            "value": value,
            "want": f"{op} {bound:g}",
            "met": value is not None and (value >= bound if op == ">=" else value < bound),
        }
        for label, value, op, bound in rows
    ]


def _get(results: dict, case: str, server: str, metric: str) -> float | None:
    return results.get((case, server), {}).get(metric)


def table(http: dict, sse: dict, goals: list[dict[str, Any]], setup: dict[str, Any]) -> str:
    lines = [
        f"HTTP: wrk -t1 -c{setup['connections']} -d{setup['wrk_seconds']:g}s on loopback, one worker per server, "
        f"median of {setup['repeats']}",
        f"{'case':<13} {'server':<18} {'req/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'spine x':>8}",
    ]
    for case in dict.fromkeys(c for c, _ in http):
        spine = http.get((case, "spine"), {}).get("rps")
        for (c, server), m in http.items():
            if c == case:
                ratio = "" if server == "spine" else _fmt(_ratio(spine, m["rps"]), 2)
                lines.append(
                    f"{case:<13} {server:<18} {_fmt(m['rps'], 0):>9} {_fmt(m['p50_ms'], 2):>8} "
                    f"{_fmt(m['p99_ms'], 2):>8} {ratio:>8}"
                )
    lines += [
        "",
        f"SSE: {setup['subscribers']:,} subscribers over {setup['clients']} client processes, "
        f"median of {setup['repeats']}; flat out, one event per loop turn and bursts of {setup['burst']} "
        f"(deliveries/s over the span of receipts; share of the expected deliveries that arrived; delay of "
        f"the first event per read), and paced at {setup['rate']:g} events/s",
        f"{'server':<18} {'flat deliv/s':>12} {'spine x':>8} {'got':>5} {'burst deliv/s':>13} {'spine x':>8} "
        f"{'paced deliv/s':>13} {'paced p50':>9} {'paced p99':>9}",
    ]
    for (mode, server), flat in sse.items():
        if mode == "flat":
            burst, paced = sse.get(("burst", server), {}), sse.get(("paced", server), {})
            ratios = [
                ""
                if server == "spine"
                else _fmt(
                    _ratio(_get(sse, m, "spine", "deliveries_per_s"), _get(sse, m, server, "deliveries_per_s")), 2
                )
                for m in ("flat", "burst")
            ]
            got = _ratio(flat.get("delivered"), flat.get("expected"))
            lines.append(
                f"{server:<18} {_fmt(flat['deliveries_per_s'], 0):>12} {ratios[0]:>8} "
                f"{'-' if got is None else f'{got:.0%}':>5} "
                f"{_fmt(burst.get('deliveries_per_s'), 0):>13} {ratios[1]:>8} "
                f"{_fmt(paced.get('deliveries_per_s'), 0):>13} "
                f"{_fmt(paced.get('p50_ms'), 1):>9} {_fmt(paced.get('p99_ms'), 1):>9}"
            )
    lines += ["", "Targets (issue 5):"]
    lines += [
        f"  {'met ' if g['met'] else 'MISS'} {g['target']:<48} {_fmt(g['value'], 2):>8}  (want {g['want']})"
        for g in goals
    ]
    return "\n".join(lines)


def _fmt(value: float | None, digits: int) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"
