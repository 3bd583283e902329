"""What a universe's feature state has taken, from the rules alone (never imports ``spine``).

For one instrument and resolution, given the final 1-minute bars, the observed coverage, the
channel and the instant through which buckets have closed: the inputs the state took, in
order, cut into runs where it restarted, and whether it restarted after its newest input.
The rules (docs/contract.md, "A state restarts"):

* 1m takes every bar; 5m..1d take each closed bucket served as a bar (the page fold's rules,
  :func:`reference.folding.withholding`);
* a state restarts at a withheld closed bucket (GAP_IN_INPUT, UNOBSERVED) after its first
  input, and between consecutive inputs more than one step apart unless the skipped buckets
  were quiet (EXTERNAL: never; INTERNAL: when one observed span covers them).

A caller feeds each run to a fresh feature state with a gap marked between runs (and after
the last when the state restarted after it) and compares rows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from reference.folding import MINUTE_NS, normalise_coverage, step_ns, withholding

__all__ = ["Bar", "state_runs"]

# (ts_event, open, high, low, close, volume): mantissas, ts_event the bar's close.
Bar = tuple[int, int, int, int, int, int]


def _covered(spans: Sequence[tuple[int, int]], start: int, end: int) -> bool:
    return any(s <= start and end <= e for s, e in spans)


def _is_gap(spans: Sequence[tuple[int, int]], channel: str, step: int, prev: int, nxt: int) -> bool:
    return nxt - prev > step and (channel == "EXTERNAL" or not _covered(spans, prev, nxt - step))


def _aggregate(bars: Sequence[Bar], end: int) -> Bar:
    return (end, bars[0][1], max(b[2] for b in bars), min(b[3] for b in bars), bars[-1][4], sum(b[5] for b in bars))


def state_runs(
    bars: Mapping[int, tuple[int, int, int, int, int]],
    coverage: Sequence[tuple[int, int]],
    channel: str,
    resolution: str,
    closed_through: int,
) -> tuple[list[list[Bar]], bool]:
    """The runs of inputs the ``resolution`` state took (a restart between runs) and whether
    it restarted after the newest. ``bars`` maps ``ts_event`` to (open, high, low, close,
    volume); ``coverage`` includes the bars' own minutes."""
    spans = normalise_coverage(coverage)
    ts = sorted(bars)
    rows: list[Bar] = [(t, *bars[t]) for t in ts]
    runs: list[list[Bar]] = [[]]
    if resolution == "1m":
        for k, bar in enumerate(rows):
            if k and _is_gap(spans, channel, MINUTE_NS, rows[k - 1][0], bar[0]):
                runs.append([])
            runs[-1].append(bar)
        return runs, False
    step = step_ns(resolution)
    verdict = withholding(ts, spans, channel, resolution)
    last: int | None = None
    restarted = False
    for end in sorted(verdict.buckets):
        outcome = verdict.buckets[end]
        if end > closed_through or outcome in ("none", "NOT_CLOSED"):
            continue
        if outcome != "bar":
            restarted = restarted or last is not None
            continue
        if last is not None and (restarted or _is_gap(spans, channel, step, last, end)):
            runs.append([])
        restarted = False
        members = [row for row in rows if end - step < row[0] <= end]
        runs[-1].append(_aggregate(members, end))
        last = end
    return runs, restarted
