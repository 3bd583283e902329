"""What a submit refuses of the run it would queue, known before any worker starts it: an
instrument no node lists and no import catalog holds (404 NOT_FOUND), a span with no bars at
the run's resolution and channel (400 NO_BARS), a quantity finer than an instrument's size
step (400 INVALID_QUANTITY, the run's own rule: :func:`spine.strategies.values.size_step_problem`).

An instrument an import catalog holds is judged by the catalog alone (the files a run reads;
a node serving it is a catalog venue, whose copy is the newest of those bars). Any other is
asked of the node of its venue: its instrument list and size precisions as the upstream look
last read them, and one ``GET /v2/bars?bar_type=...&start=&end=&limit=1`` (the node folds a
derived resolution with the run's rules), bounded by the upstream timeout. A node serves its
newest minutes while its catalog keeps weeks (its retention): an empty page refuses only a span
within the minutes it has observed, or wholly older than the longest retention a node keeps. What cannot be
known now (a node out of reach, files mid-rename) is never refused: the run says what it
lacks. The instruments are looked at concurrently."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlencode

import msgspec

from spine.gateway.catalogs import Holding, holding
from spine.gateway.upstream_table import MISS_REFRESH_SECS, Upstream, Upstreams
from spine.http.errors import HttpError
from spine.http.times import iso_utc
from spine.strategies.values import size_step_problem
from spine.upstream_errors import UpstreamError
from spine.wire.bar_types import bar_type_of

__all__ = ["Run", "RunChecks"]

#: The longest retention a node's catalogs keep below the minutes it serves (``retention_days``
#: at most 3,650): the gateway does not know each node's own.
RETENTION_MAX_NS = 3_650 * 86_400 * 10**9


@dataclass(frozen=True)
class Run:
    """What the checks need of a run: its instruments, resolution, channel, span (closes,
    both inclusive) and fixed order quantity (None: sized at the signal, by fraction or notional)."""

    instruments: Sequence[str]
    resolution: str
    channel: str
    start: int
    end: int
    quantity: str | None


@dataclass(frozen=True)
class _Look:
    """One instrument: listed or held (None: cannot be told now), bars in the span (None:
    unknown), why none, its size precision (None: unknown), and whether the bar type the run
    reads is absent altogether."""

    instrument_id: str
    known: bool | None
    bars: bool | None = None
    reason: str = ""
    size_precision: int | None = None
    absent: bool = False


class RunChecks:
    """The submit's checks over one gateway's upstreams and import catalogs."""

    def __init__(self, upstreams: Upstreams, catalogs: Sequence[str]) -> None:
        self.upstreams = upstreams
        self.catalogs = tuple(catalogs)

    async def check(self, run: Run, where: str = "POST /v2/backtests") -> None:
        """Refuse ``run`` (:class:`HttpError`, its text opening with the route ``where``) when
        it positively lacks what it reads."""
        looks = await asyncio.gather(*(self._look(iid, run) for iid in run.instruments))
        for look in looks:
            if look.known is False:
                raise HttpError("NOT_FOUND", f"{where}: {look.reason}")
        # As the run: it fails on an instrument whose bar type is absent, and when no
        # instrument has a bar in the span.
        empty = [look for look in looks if look.absent] or (
            looks if looks and all(look.bars is False for look in looks) else []
        )
        if empty:
            raise HttpError(
                "NO_BARS",
                f"{where}: no {run.resolution} {run.channel} bars to run on: "
                + "; ".join(look.reason for look in empty)
                + "; give a span, resolution or channel that holds bars",
            )
        for look in looks:
            if (
                look.size_precision is not None
                and run.quantity is not None
                and (problem := size_step_problem(run.quantity, look.instrument_id, look.size_precision)) is not None
            ):
                raise HttpError("INVALID_QUANTITY", f"{where}: {problem}")

    async def _look(self, iid: str, run: Run) -> _Look:
        held: Holding | None = None
        if self.catalogs:
            held = await asyncio.to_thread(holding, self.catalogs, iid, run.resolution, run.channel, run.start, run.end)
        if held is not None:
            return _Look(iid, True, held.bars, held.reason, held.size_precision, held.absent)
        node = await self._listing(iid)
        if not isinstance(node, Upstream):
            return _Look(iid, node, reason=self._unknown(iid) if node is False else "")
        bars, reason = await self._node_bars(node, iid, run)
        return _Look(iid, True, bars, reason, node.size_precisions.get(iid))

    async def _listing(self, iid: str) -> Upstream | bool | None:
        """The node listing ``iid`` (the upstreams read again on a miss, rate-limited), False
        when none does and every node that could was asked, None when one could not be."""
        venue = iid.rsplit(".", 1)[-1]
        node = self.upstreams.node_of(venue)
        if node is None or iid not in node.instruments:
            await self.upstreams.refresh(within=MISS_REFRESH_SECS)
            node = self.upstreams.node_of(venue)
        if node is not None:
            return node if iid in node.instruments else (False if node.reachable else None)
        return False if all(n.reachable for n in self.upstreams.nodes) else None

    def _unknown(self, iid: str) -> str:
        venue = iid.rsplit(".", 1)[-1]
        imports = "no import catalog holds it" if self.catalogs else "this gateway knows no import catalog"
        if self.upstreams.node_of(venue) is not None:
            return (
                f"instrument {iid}: the node of venue {venue} does not list it and {imports}; "
                "GET /v2/instruments lists what the nodes serve (spine import adds your own, known here through "
                "the gateway's catalogs)"
            )
        venues = sorted({v for n in self.upstreams.nodes for v in n.venues})
        return (
            f"instrument {iid}: no node behind this gateway serves venue {venue!r} (venues: "
            f"{', '.join(venues) or 'none'}) and {imports}; GET /v2/instruments lists what the nodes serve "
            "(spine import adds your own, known here through the gateway's catalogs)"
        )

    async def _node_bars(self, node: Upstream, iid: str, run: Run) -> tuple[bool | None, str]:
        """Whether the node holds a bar of the run's bar type closing in its span (None: it
        could not say now), and why not in words."""
        bar_type = bar_type_of(iid, run.resolution, run.channel)
        query = urlencode({"bar_type": bar_type, "start": run.start, "end": run.end, "limit": 1})
        try:
            status, body = await self.upstreams.request(node, "GET", "/v2/bars", query)
            page = msgspec.json.decode(body) if status == 200 else None
        except (UpstreamError, msgspec.DecodeError):
            return None, ""
        if not isinstance(page, dict) or not isinstance(page.get("bars"), list):
            return None, ""
        if page["bars"]:
            return True, ""
        observed = (page.get("coverage") or {}).get("observed") or []
        if (
            observed
            and run.end >= int(observed[0]["start"]) - RETENTION_MAX_NS
            and run.start < int(observed[0]["start"])
        ):
            return None, ""  # the span reaches below the served window, into what a catalog may keep
        return False, (
            f"{iid}: its node holds no {bar_type} closing in [{iso_utc(run.start)}, {iso_utc(run.end)}] "
            f"(GET /v2/bars?bar_type={bar_type} shows what it holds)"
        )
