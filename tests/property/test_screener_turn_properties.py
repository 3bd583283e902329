"""Property tests: the screener's live turn in one Rust call (``NodeFeed._take``, raw payloads
in) against the per-event path it replaces (``NodeFeed._take_decoded``: each payload decoded,
then the closes folded through ``Rows.close_many``).

Two screeners, alike (rows warmed on the same bars, a ``RowStream`` with one subscriber, an
``Observer`` and its store), take the same random turns of a node's ``svc.bar_envelope``
events: closes in and out of instrument order, repeated (folded already), ahead of their
sequence (a catch-up from the node's pages), two bars in one event, an instrument of another
node or of none, and malformed payloads (not JSON, not an object, members missing or of the
wrong type, a price not exact at the precision, a sequence given as a string, a float where
nothing reads it, a key given twice, a bar the close refuses). After every turn both raised
the same error (class and message) or none, and hold the same rows, counts, sequences, close
offered, subscriber bytes (ids included), observations and checkpoint.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import msgspec
import numpy as np
from hypothesis import example, given
from hypothesis import strategies as st

from spine._core import bar_row
from spine.fanout import Subscription
from spine.screener.feed import NodeFeed
from spine.screener.node_client import Bars
from spine.screener.observations import Observations, Observer
from spine.screener.rows import RESOLUTIONS, Rows
from spine.screener.stream import RowStream
from spine.wire.projection import envelope

M = 60 * 10**9
WARM = 60
BASE = 20_000 * 1440 * M - (WARM + 6) * M  # the live minutes cross a midnight
NODE, OTHER = "http://node-1", "http://node-2"
#: I0, I1 and I3 are the node's, I2 another node's; NOPE is nobody's.
IDS = ["I0.SIM", "I1.SIM", "I2.SIM", "I3.SIM"]
OURS = (0, 1, 3)
PRICE, SIZE = 2, 1
#: Events the node never sends as they are, and closes the node does send but not to this feed.
ODD = [
    "two_bars",
    "bars_empty",
    "bars_null",
    "no_bars",
    "no_id",
    "id_number",
    "array",
    "truncated",
    "bad_price",
    "fine_price",
    "seq_str",
    "seq_neg",
    "seq_float",
    "float_elsewhere",
    "dup_id",
    "dup_open",
    "inconsistent",
    "unaligned",
    "ts_tiny",
    "nope",
    "other",
]


def truth(k: int, sequence: int) -> tuple[int, int, int, int, int, int]:
    """Instrument ``k``'s bar of node sequence ``sequence``: ts, open, high, low, close, volume.
    I1 has no candle for 12 minutes after its sequence WARM + 3 (the node numbers bars, not
    minutes), so its coarser buckets close empty there; I3 has one every 7 minutes and no
    history, so a row of it changes with no bar yet."""
    minute = 7 * sequence if k == 3 else sequence + (12 if k == 1 and sequence > WARM + 3 else 0)
    rng = np.random.default_rng(k * 1_000 + sequence)
    close = 10_000 + 40 * int(np.sin(sequence / 3) * 10) + int(rng.integers(-60, 60)) + 30 * k
    return BASE + minute * M, close - 5, close + 40, close - 40, close, int(rng.integers(0, 5_000))


def columns(k: int, sequences: list[int]) -> Bars:
    rows = [truth(k, s) for s in sequences]
    out = {
        name: np.array([r[c] for r in rows], dtype="<u8" if c == 0 else "<i8")
        for c, name in enumerate(("ts_event", "open", "high", "low", "close", "volume"))
    }
    return {**out, "sequence": np.array(sequences, dtype="<u8")}


class Node:
    """The node's pages: each instrument's bars up to the newest sequence it has published."""

    base_url = NODE
    name = "node-1"

    def __init__(self) -> None:
        self.now = WARM

    async def bar_pages(
        self, instrument: dict[str, Any], channel: str, after_sequence: int | None = None, end: int | None = None
    ) -> AsyncIterator[tuple[Bars, dict[str, Any]]]:
        k = IDS.index(instrument["instrument_id"])
        sequences = [s for s in range(1, self.now + 1) if after_sequence is None or s > after_sequence]
        yield columns(k, sequences), {"observed": []}


class Screener:
    """Rows over the instruments (but I3) warmed on sequences 1..WARM, their stream with one
    subscriber, their observer, and the node's feed."""

    def __init__(self) -> None:
        self.rows = Rows()
        stream = RowStream(self.rows)
        self.subscriber: Subscription = stream.fanout.subscribe(capacity=1_000_000)
        self.store = Observations()
        Observer(self.rows, self.store)
        self.node = Node()
        self.feed = NodeFeed(
            self.node,
            self.rows,
            channel="EXTERNAL",
            concurrency=1,  # type: ignore[arg-type]
            backoff=(1.0, 1.0),
        )
        for k, iid in enumerate(IDS):
            instrument = {"instrument_id": iid, "price_precision": PRICE, "size_precision": SIZE}
            if k in OURS:
                self.feed.instruments[iid] = instrument
                self.feed._warmed.add(iid)
            self.rows.add(instrument, "EXTERNAL", NODE if k in OURS else OTHER)
            if k == 3:
                continue
            bars = columns(k, list(range(1, WARM + 1)))
            self.rows.warm(iid, bars, {"observed": [{"start": str(BASE), "end": str(int(bars["ts_event"][-1]))}]})

    def state(self) -> dict[str, Any]:
        rows, feed = self.rows, self.feed
        return {
            "counts": (rows.version, rows.processed, rows.newest, feed.offered, feed.catch_ups),
            "sequence": dict(rows.sequence),
            "rows": [(rows.row(iid, r), rows.state(iid, r)) for iid in IDS for r in RESOLUTIONS],
            "events": self.subscriber.drain(),
            "observations": list(self.store._kept),
            "held": [
                (h.instrument_id, h.sequence, h.spans, {c: v.tolist() for c, v in h.bars.items()}) for h in feed.held()
            ],
            "stale": sorted(rows._stale),
        }


def decimal(mantissa: int, scale: int) -> str:
    sign, digits = ("-" if mantissa < 0 else ""), str(abs(mantissa)).rjust(scale + 1, "0")
    return f"{sign}{digits[:-scale]}.{digits[-scale:]}" if scale else f"{sign}{digits}"


def payload(k: int, sequence: int, variant: str) -> bytes:
    """The node's event for instrument ``k``'s close of ``sequence``, made ``variant``."""
    iid = "NOPE.SIM" if variant == "nope" else IDS[2 if variant == "other" else k]
    sequences = [sequence, sequence + 1] if variant == "two_bars" else [sequence]
    bars = []
    for s in sequences:
        ts, o, h, lo, c, v = truth(k, s)
        bars += msgspec.json.decode(bar_row(s, ts, o, h, lo, c, v, price_precision=PRICE, size_precision=SIZE))
    bar = bars[0]
    match variant:
        case "bad_price":
            bar["open"] = "1O.5"
        case "fine_price":
            bar["open"] = bar["open"] + "01"
        case "seq_str":
            bar["sequence"] = str(bar["sequence"])
        case "seq_neg":
            bar["sequence"] = -1
        case "seq_float":
            bar["sequence"] = float(bar["sequence"])
        case "inconsistent":
            bar["high"] = decimal(truth(k, sequence)[3] - 100, PRICE)
        case "unaligned":
            bar["ts_event"] = str(int(bar["ts_event"]) + 1)
        case "ts_tiny":
            bar["ts_event"] = "1000"
    document = envelope(
        instrument_id=iid,
        bar_type=f"{iid}-1-MINUTE-LAST-EXTERNAL",
        resolution="1m",
        channel="EXTERNAL",
        bars=bars,
        coverage={"observed": [], "bar_count": sequence},
        withheld=[],
        next_cursor=None,
    )
    match variant:
        case "bars_empty":
            document["bars"] = []
        case "bars_null":
            document["bars"] = None
        case "no_bars":
            del document["bars"]
        case "no_id":
            del document["instrument_id"]
        case "id_number":
            document["instrument_id"] = 7
        case "float_elsewhere":
            document["coverage"]["ratio"] = 0.5
    text = msgspec.json.encode(document)
    match variant:
        case "array":
            text = b"[" + text + b"]"
        case "truncated":
            text = text[:-2]
        case "dup_id":
            text = text[:-1] + b',"instrument_id":"' + IDS[1 - k].encode() + b'"}'
        case "dup_open":
            text = text.replace(b'"open":', b'"open":"1.00","open":', 1)
    return text


async def take(feed: NodeFeed, payloads: list[bytes], per_event: bool) -> tuple[type, str] | None:
    try:
        await (feed._take_decoded(payloads) if per_event else feed._take(payloads))
    except Exception as error:  # noqa: BLE001 - the error is what is compared
        return type(error), str(error)
    return None


@st.composite
def scripts(draw: st.DrawFn) -> list[list[tuple[int, int, str]]]:
    """Turns of (instrument, sequence, variant): mostly each of the node's instruments' next
    close in some order, sometimes one folded already or one ahead (a jump), and in some
    turns one odd event."""
    turns, at = [], WARM
    for _ in range(draw(st.integers(1, 8))):
        at += draw(st.sampled_from([1, 1, 1, 0, 2]))
        turn = [(k, at + draw(st.sampled_from([0, 0, 0, 0, 0, -1, -3, 1])), "ok") for k in draw(st.permutations(OURS))]
        turn += draw(st.lists(st.tuples(st.sampled_from(OURS), st.integers(at - 2, at + 1), st.just("ok")), max_size=2))
        odd = draw(st.sampled_from([None, None, None, *ODD]))
        if odd is not None:
            k, sequence, _ = turn[draw(st.integers(0, len(turn) - 1))]
            turn.insert(draw(st.integers(0, len(turn))), (k, sequence, odd))
        turns.append(turn)
    return turns


@given(scripts())
@example([[(0, WARM + 1, "ok"), (1, WARM + 1, "ok"), (0, WARM + 2, "ok"), (1, WARM + 2, "inconsistent")]])
@example([[(1, WARM + 1, "ok"), (0, WARM + 1, "unaligned"), (3, WARM + 1, "ok")], [(0, WARM + 3, "ok")]])
def test_a_turn_in_one_call_equals_the_per_event_path(turns: list[list[tuple[int, int, str]]]) -> None:
    ours, theirs = Screener(), Screener()

    async def run() -> None:
        for turn in turns:
            payloads = [payload(k, sequence, variant) for k, sequence, variant in turn]
            # What the node has published: its pages serve a catch-up up to there.
            ours.node.now = theirs.node.now = max([ours.node.now] + [s + 1 for _, s, _ in turn])
            outcome = await take(ours.feed, payloads, per_event=False)
            assert outcome == await take(theirs.feed, payloads, per_event=True), (turn, outcome)
            assert ours.state() == theirs.state(), turn

    asyncio.run(run())


def test_a_well_formed_turn_takes_one_call() -> None:
    """The ordinary minute: every close in sequence, one call, one version step, its events
    published."""
    ours = Screener()
    ours.subscriber.drain()
    calls = []
    turn = ours.rows.turn

    def counted(feed: str, payloads: list[bytes]) -> Any:
        calls.append(len(payloads))
        return turn(feed, payloads)

    ours.rows.turn = counted  # type: ignore[method-assign]
    version = ours.rows.version
    asyncio.run(ours.feed._take([payload(k, WARM + 1, "ok") for k in (1, 0)]))
    assert calls == [2] and ours.rows.version == version + 1
    assert ours.rows.sequence == {"I0.SIM": WARM + 1, "I1.SIM": WARM + 1, "I2.SIM": WARM}
    events = [event for event in ours.subscriber.drain().split(b"\n\n") if event]
    assert events and all(event.startswith(b"id: %d\nevent: delta\n" % (version + 1)) for event in events)
