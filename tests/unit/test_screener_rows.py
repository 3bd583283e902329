"""``Rows.close_many`` against ``Rows.close`` called for each bar in turn, with a ``RowStream``
listening to each: the same rows, sequences, counts and newest close, and the same stream
events apart from their ids (the rows' version, which moves once per fold call). Minutes
cross a midnight (every resolution closes), instruments at two precisions arrive out of
instrument order, some miss a minute and bring it with the next one (an instrument twice in
one call)."""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from spine.fanout import Subscription
from spine.screener.rows import RESOLUTIONS, Rows
from spine.screener.stream import RowStream

M = 60 * 10**9
MIDNIGHT = 20_000 * 1440 * M
WARM = 1_430  # warmed up to ten minutes before midnight; the rest arrives live
IDS = [f"SYM{k}.SIM" for k in range(6)]
PRECISION = {iid: (2, 0) if k % 2 else (4, 3) for k, iid in enumerate(IDS)}


def _bars(k: int, n: int) -> dict[str, np.ndarray]:
    """Instrument ``k``'s first ``n`` minutes (ending at minute ``n`` after the warm start)."""
    rng = np.random.default_rng(k)
    close = 1_000_000 + np.cumsum(rng.integers(-500, 501, n))
    minute = np.arange(1, n + 1, dtype=np.uint64)
    return {
        "ts_event": MIDNIGHT - (WARM + 10) * M + minute * M,
        "open": close,
        "high": close + 300,
        "low": close - 300,
        "close": close + 7,
        "volume": rng.integers(1, 10_000, n).astype(np.int64),
        "sequence": minute.copy(),
    }


def _warmed() -> tuple[Rows, Subscription]:
    rows = Rows()
    stream = RowStream(rows)
    subscription = stream.fanout.subscribe(capacity=100_000)
    for k, iid in enumerate(IDS):
        price, size = PRECISION[iid]
        rows.add({"instrument_id": iid, "price_precision": price, "size_precision": size}, "EXTERNAL")
        bars = {c: np.ascontiguousarray(v[:WARM]) for c, v in _bars(k, WARM + 20).items()}
        rows.warm(
            iid, bars, {"observed": [{"start": str(MIDNIGHT - (WARM + 10) * M), "end": str(int(bars["ts_event"][-1]))}]}
        )
    subscription.drain()
    return rows, subscription


def _script() -> list[list[tuple[str, int]]]:
    """Calls of (instrument, live minute): each minute in a shuffled instrument order; SYM1 and
    SYM4 miss some minutes and bring them with the next."""
    rng = np.random.default_rng(99)
    calls, owed = [], defaultdict(list)
    for minute in range(WARM, WARM + 20):
        call = []
        for k in rng.permutation(len(IDS)).tolist():
            iid = IDS[k]
            if iid in ("SYM1.SIM", "SYM4.SIM") and minute % 4 == k % 3:
                owed[iid].append(minute)
                continue
            call += [(iid, m) for m in owed.pop(iid, [])] + [(iid, minute)]
        calls.append(call)
    calls.append([(iid, m) for iid, minutes in owed.items() for m in minutes])
    return calls


def _events(queued: bytes) -> dict[tuple[bytes, bytes], list[bytes]]:
    """Each row's events in order, without their ``id:`` lines."""
    out: dict[tuple[bytes, bytes], list[bytes]] = defaultdict(list)
    for event in filter(None, queued.split(b"\n\n")):
        body = event.split(b"\n", 1)[1]
        iid = body.split(b'"instrument_id":"', 1)[1].split(b'"', 1)[0]
        resolution = body.split(b'"resolution":"', 1)[1].split(b'"', 1)[0]
        out[(iid, resolution)].append(body)
    return out


def test_close_many_equals_one_close_per_bar() -> None:
    batched, batched_events = _warmed()
    each, each_events = _warmed()
    live = {iid: _bars(k, WARM + 20) for k, iid in enumerate(IDS)}
    versions = []
    for call in _script():
        ids = [iid for iid, _ in call]
        bars = {c: np.array([live[iid][c][m] for iid, m in call], dtype=live[IDS[0]][c].dtype) for c in live[IDS[0]]}
        before = batched.version
        batched.close_many(ids, bars)
        versions.append(batched.version - before)
        for iid, m in call:
            each.close(iid, {c: v[m : m + 1] for c, v in live[iid].items()})
    assert min(versions) == 1 < max(versions)  # one step per run of distinct instruments
    assert batched.sequence == each.sequence == {iid: WARM + 20 for iid in IDS}
    assert batched.processed == each.processed == 20 * len(IDS)
    assert batched.newest == each.newest == MIDNIGHT + 10 * M
    for iid in IDS:
        for resolution in RESOLUTIONS:
            assert batched.row(iid, resolution) == each.row(iid, resolution), (iid, resolution)
    ours, theirs = _events(batched_events.drain()), _events(each_events.drain())
    assert ours == theirs
    assert len(ours) == len(IDS) * len(RESOLUTIONS)  # midnight closed every resolution
    definition = {
        "version": "spine.v2",
        "schema_id": "svc.screen_definition",
        "schema_version": 1,
        "resolutions": list(RESOLUTIONS),
        "instrument_ids": None,
        "filter": None,
        "sort": [{"key": "rsi_14.value", "direction": "DESC"}],
        "limit": 50,
        "as_of": None,
    }
    assert batched.table().screen(definition) == each.table().screen(definition)
