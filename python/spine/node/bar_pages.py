"""``GET /v2/bars``: the page a bar query selects, as finished response bytes.

The bar rows are written by ``spine._core`` straight from the series (no per-bar Python
object); derived resolutions are folded on read, except where an import holds the instrument's
bars at that resolution (a catalog venue's daily import): those are served as imported. The
finished bytes are cached per query and per series revision: a repeated request for an
unchanged series is a dictionary lookup, and a new bar, a coverage change or a new observed
watermark makes the next read rebuild it.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from typing import NamedTuple

import msgspec

from spine.http.errors import HttpError
from spine.http.request import Query, memoizable
from spine.http.routes import BAR_PAGE_DEFAULT, BAR_PAGE_MAX
from spine.node.view import NodeView
from spine.wire.bar_types import RESOLUTION_SPECS, bar_type_of
from spine.wire.cursors import InvalidCursor, decode_cursor, encode_cursor
from spine.wire.projection import envelope, unretained_coverage

__all__ = ["BarPages", "BarRequest", "Rows"]

#: Pages kept; the oldest-used goes first. A page is at most ~700 kB (5,000 rows).
CACHE_ENTRIES = 256
BAR_TYPE = re.compile(
    r"^(?P<iid>[!-~]+\.[A-Z][A-Z0-9_]*)-(?P<step>[1-9][0-9]*)-(?P<unit>SECOND|MINUTE|HOUR|DAY)"
    r"-LAST-(?P<channel>EXTERNAL|INTERNAL)$"
)
SPEC_TO_RESOLUTION = {spec: name for name, spec in RESOLUTION_SPECS.items() if name != "1s"}
_encode = msgspec.json.Encoder().encode


class BarRequest(NamedTuple):
    """Everything a page depends on besides the series' state."""

    instrument_id: str
    channel: str
    resolution: str
    bar_type: str
    start: int | None
    end: int | None
    after_sequence: int | None
    offset: int
    limit: int
    #: The route the page's cursors are bound to (``/v2/bars`` or v1's ``/bars``).
    route: str


class Rows(NamedTuple):
    rows: bytes  # the JSON array
    withheld: list[tuple[int, int, str]]
    next_cursor: str | None


class BarPages:
    """Bar pages of one node, with the byte cache."""

    def __init__(self, node: NodeView) -> None:
        self.node = node
        self._cache: OrderedDict[BarRequest, tuple[int, object, bytes]] = OrderedDict()
        #: Raw query string -> its checked request: a repeated query skips parsing (its checks
        #: cannot change: instruments are only ever added, cursors stay valid for the process).
        self._requests: dict[str, BarRequest] = {}

    def get(self, query: Query) -> bytes:
        """The v2 response body: a ``svc.bar_envelope`` page, from the cache when fresh."""
        request = self._requests.get(query.raw)
        if request is None:
            request = self.request(query)
            if memoizable(query.raw):
                if len(self._requests) >= CACHE_ENTRIES:
                    self._requests.clear()
                self._requests[query.raw] = request
        if not self.node.holds(request.instrument_id):
            return self._unretained(request)
        series = self.node.series(request.instrument_id, request.channel)
        # The coverage document is the same object while the series and the observed
        # watermark are unchanged.
        coverage = self.node.series_coverage(request.instrument_id, request.channel)
        hit = self._cache.get(request)
        if hit is not None and hit[0] == series.revision and hit[1] is coverage:
            self._cache.move_to_end(request)
            return hit[2]
        page = self.rows(request)
        body = _encode(
            envelope(
                instrument_id=request.instrument_id,
                bar_type=request.bar_type,
                resolution=request.resolution,
                channel=request.channel,
                bars=msgspec.Raw(page.rows),
                coverage=coverage,
                withheld=page.withheld,
                next_cursor=page.next_cursor,
            )
        )
        self._cache[request] = (series.revision, coverage, body)
        if len(self._cache) > CACHE_ENTRIES:
            self._cache.popitem(last=False)
        return body

    def _unretained(self, r: BarRequest) -> bytes:
        """The page of an instrument outside the retained-ingestion manifest: no bars, and the
        coverage that tells a client its history is terminal."""
        coverage = unretained_coverage(r.instrument_id, r.channel)
        return _encode(
            envelope(
                instrument_id=r.instrument_id,
                bar_type=r.bar_type,
                resolution=r.resolution,
                channel=r.channel,
                bars=[],
                coverage=coverage,
                withheld=[],
                next_cursor=None,
            )
        )

    def rows(self, r: BarRequest) -> Rows:
        """The JSON bar rows ``r`` selects, the withheld buckets intersecting its range (first
        page only) and the next cursor."""
        if not self.node.holds(r.instrument_id):
            return Rows(b"[]", [], None)  # unretained: nothing is ingested
        series = self.node.series(r.instrument_id, r.channel)
        window = {"start": r.start, "end": r.end, "after_sequence": r.after_sequence}
        withheld: list[tuple[int, int, str]] = []
        if r.resolution == "1m":
            rows, more = series.page(**window, offset=r.offset, limit=r.limit)
        else:
            imported = self.node.imported(r.instrument_id, r.resolution, r.channel)
            folded = series.fold(r.resolution) if imported is None else imported
            p = self.node.precision(r.instrument_id)
            rows, more = folded.page(
                price_precision=p.price, size_precision=p.size, **window, offset=r.offset, limit=r.limit
            )
            if r.offset == 0:
                step = STEP_NS[r.resolution]
                withheld = [
                    (s, e, why) for s, e, why in folded.withheld() if _closes_within(s, e, step, r.start, r.end)
                ]
        cursor = encode_cursor(_bound(r.route, r.bar_type), r.offset + r.limit) if more else None
        return Rows(rows, withheld, cursor)

    def request(self, query: Query, route: str = "/v2/bars") -> BarRequest:
        """The checked bar query (its instrument discovered here) on ``route``."""
        iid, resolution, channel, bar_type = self._target(query)
        (start, end), after = query.span(), query.sequence("after_sequence")
        limit = query.limit(BAR_PAGE_DEFAULT, BAR_PAGE_MAX)
        if not self.node.discovered(iid):
            raise HttpError("NOT_FOUND", f"{iid} is not discovered on this node (see /v2/instruments)")
        return BarRequest(
            iid,
            channel,
            resolution,
            bar_type,
            start,
            end,
            after,
            _offset(_bound(route, bar_type), query.text("cursor")),
            limit,
            route,
        )

    def _target(self, query: Query) -> tuple[str, str, str, str]:
        iid = query.instrument_id()
        text = query.text("bar_type")
        if text is None:
            if iid is None:
                raise HttpError(
                    "INVALID_PARAMETER", "give instrument_id or bar_type (e.g. BTCUSDT.SIM-1-MINUTE-LAST-EXTERNAL)"
                )
            channel = self.node.live_channel
            return iid, "1m", channel, bar_type_of(iid, "1m", channel)
        match = BAR_TYPE.match(text)
        spec = f"{match['step']}-{match['unit']}" if match else None
        if match is None or spec not in SPEC_TO_RESOLUTION or len(match["iid"]) > 128:
            allowed = ", ".join(SPEC_TO_RESOLUTION)
            shown = text if len(text) <= 160 else text[:160] + "..."
            raise HttpError(
                "INVALID_BAR_TYPE",
                f"bar_type={shown!r}; expected SYMBOL.VENUE-<step>-<unit>-LAST-"
                f"EXTERNAL|INTERNAL (SYMBOL.VENUE at most 128 characters) with "
                f"step-unit one of {allowed}",
            )
        if iid is not None and iid != match["iid"]:
            raise HttpError("INVALID_PARAMETER", f"instrument_id={iid} does not match bar_type {text}")
        return match["iid"], SPEC_TO_RESOLUTION[spec], match["channel"], text


#: A derived resolution's bucket length.
STEP_NS = {
    "5m": 5 * 60 * 10**9,
    "15m": 15 * 60 * 10**9,
    "30m": 30 * 60 * 10**9,
    "1h": 3_600 * 10**9,
    "4h": 4 * 3_600 * 10**9,
    "1d": 86_400 * 10**9,
}


def _closes_within(start: int, end: int, step: int, low: int | None, high: int | None) -> bool:
    """Whether a withheld span ``[start, end)`` of ``step`` buckets holds a bucket whose close time
    lies in ``[low, high]``: a page selects withheld buckets as it selects bars, by close time."""
    first = start + step  # the span's first close
    if low is not None and low > first:
        first = start + -(-(low - start) // step) * step  # the first close at or above low
    return first <= end and (high is None or first <= high)


def _bound(route: str, bar_type: str) -> str:
    """What a bar cursor is bound to: the route and the bar type."""
    return f"{route}?{bar_type}"


def _offset(route: str, cursor: str | None) -> int:
    if cursor is None:
        return 0
    try:
        return decode_cursor(route, cursor)
    except InvalidCursor as error:
        raise HttpError("INVALID_CURSOR", str(error).split(": ", 1)[-1]) from None
