"""A ``spine node`` killed with SIGKILL and restarted on its data directory: every bar its
catalogs hold keeps the sequence it was served with, no number served before the kill names
another minute afterwards, and bars taken after the restart are numbered above every number
served before (a client's ``after_sequence`` cursor never hides them)."""

from __future__ import annotations

from pathlib import Path

from nautilus_trader.persistence.catalog import ParquetDataCatalog
from nodes import START, free_port, get, node_env, spawn, stop, wait_for

MINUTE = 60 * 10**9
BAR_TYPES = [
    f"{instrument_id}-1-MINUTE-LAST-{channel}"
    for instrument_id in ("BTCUSDT.SIM", "ETHUSDT.SIM")
    for channel in ("INTERNAL", "EXTERNAL")
]
Numbers = dict[str, dict[int, int]]  # bar type -> close -> sequence


def config(path: Path, port: int, start_ns: int) -> Path:
    path.write_text(
        f"flush_secs = 0.3\nhydrate_minutes = 30\nport = {port}\n[sim]\nstart_ns = {start_ns}\nspeed = 600\n"
    )
    return path


def served(url: str) -> Numbers:
    """Each bar type's 1-minute bars as the node serves them now."""
    out = {}
    for bar_type in BAR_TYPES:
        status, page = get(f"{url}/v2/bars?bar_type={bar_type}&limit=5000")
        assert status == 200, page
        out[bar_type] = {int(bar["ts_event"]): int(bar["sequence"]) for bar in page["bars"]}
    return out


def durable(data_dir: Path) -> dict[str, set[int]]:
    """Each bar type's closes in its catalog."""
    out = {}
    for bar_type in BAR_TYPES:
        root = data_dir / "catalog" / bar_type.rsplit("-", 1)[1].lower()
        out[bar_type] = {int(bar.ts_event) for bar in ParquetDataCatalog(str(root)).bars(bar_types=[bar_type])}
    return out


def test_a_sigkill_keeps_durable_numbers_and_never_reuses_a_served_one(tmp_path: Path) -> None:
    data = tmp_path / "data"
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    first = spawn(config(tmp_path / "first.toml", port, START), node_env(data))
    seen: Numbers = {bar_type: {} for bar_type in BAR_TYPES}

    def record() -> Numbers:
        for bar_type, rows in served(url).items():
            seen[bar_type].update(rows)
        return seen

    try:
        wait_for(first, lambda: bool(get(url + "/v2/health")[1]["ready"]), "ready")
        # Periodic flushes make bars durable while the venue runs on; the kill comes once every
        # bar type has some in its catalog, right after one more look at what is served.
        wait_for(
            first,
            lambda: all(len(record()[t]) >= 10 and durable(data)[t] for t in BAR_TYPES),
            "durable on every bar type",
            seconds=30,
        )
        record()
    finally:
        first.kill()
        first.communicate(timeout=10)
    assert first.returncode == -9
    on_disk = durable(data)
    highest = {bar_type: max(rows.values()) for bar_type, rows in seen.items()}
    newest = max(max(rows) for rows in seen.values())

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    second = spawn(config(tmp_path / "second.toml", port, newest + MINUTE), node_env(data))
    try:
        wait_for(second, lambda: bool(get(url + "/v2/health")[1]["ready"]), "ready after the kill")
        wait_for(
            second,
            lambda: all(max(rows, default=0) > newest for rows in served(url).values()),
            "taking new bars on every bar type",
            seconds=30,
        )
        after = served(url)
    finally:
        stop(second)

    for bar_type in BAR_TYPES:
        kept = on_disk[bar_type] & seen[bar_type].keys()
        assert kept, f"{bar_type}: no served bar in the catalog to check"
        renumbered = {
            ts: (seen[bar_type][ts], after[bar_type].get(ts))
            for ts in kept
            if after[bar_type].get(ts) != seen[bar_type][ts]
        }
        assert not renumbered, f"{bar_type}: durable bars renumbered (close: before, after): {renumbered}"
        named = {sequence: ts for ts, sequence in seen[bar_type].items()}
        reused = {
            sequence: (named[sequence], ts)
            for ts, sequence in after[bar_type].items()
            if sequence in named and named[sequence] != ts
        }
        assert not reused, f"{bar_type}: served numbers naming another minute (number: before, after): {reused}"
        fresh = {ts: sequence for ts, sequence in after[bar_type].items() if ts not in on_disk[bar_type]}
        assert fresh and min(fresh.values()) > highest[bar_type], (
            f"{bar_type}: bars after the restart at or below {highest[bar_type]}, the highest served: {fresh}"
        )
