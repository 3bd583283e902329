"""What a series knows beyond its bars, kept across restarts: each held bar's sequence, the
highest sequence handed out, and the observed spans.

The catalogs hold bars only. Without this, a reload numbered the bars afresh (a client paging
by ``after_sequence`` missed every bar until the new numbers passed its own) and rebuilt
coverage from the bars alone (a minute the venue's candle feed skipped, a gap inside observed
time, became unobserved time). Each flush writes one file per channel, beside the catalogs:
``<data_dir>/series/<channel>.npz``, written whole to a temporary name and then renamed, so a
crash leaves the previous file. The file and the catalog files of one flush are written from
one copy of the series (``spine.node.persist.checkpoint``), so they describe the same bars. A reload
gives every bar found in it its saved sequence; a bar the file does not know (written by a
flush whose state file was lost) gets a new one above every saved number and above the
reservation's floor (``spine.node.persist.sequences``), so it surfaces as new rather than hiding below
a client's cursor or taking a number already served.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

__all__ = ["Saved", "apply", "load", "saved", "snapshot", "write"]

MINUTE_NS = 60_000_000_000

log = logging.getLogger("spine.node")


class Saved(NamedTuple):
    """One series' state: held closes and their sequences (oldest first), the last sequence
    handed out, and the observed spans as an (n, 2) array."""

    ts_event: np.ndarray
    sequence: np.ndarray
    last_sequence: int
    observed: np.ndarray


def saved(columns: dict[str, bytes], last_sequence: int, coverage: list[tuple[int, int]]) -> Saved:
    """One series' state from a copy of it (``Series.columns``, ``last_sequence``, ``coverage``)."""
    return Saved(
        np.frombuffer(columns["ts_event"], "<u8"),
        np.frombuffer(columns["sequence"], "<u8"),
        last_sequence,
        np.array(coverage, dtype=np.uint64).reshape(-1, 2),
    )


def snapshot(book: Any, channel: str) -> dict[str, Saved]:
    """The state of every series of ``channel`` now, keyed by instrument id (copies: the
    file may be written on another thread while the series moves on)."""
    return {
        instrument_id: saved(series.columns(), series.last_sequence, series.coverage())
        for instrument_id, held_channel, series in book.held()
        if held_channel == channel
    }


def path(data_dir: Path, channel: str) -> Path:
    return data_dir / "series" / f"{channel.lower()}.npz"


def write(data_dir: Path, channel: str, state: dict[str, Saved]) -> None:
    """Replace the channel's file with ``state`` (atomically)."""
    target = path(data_dir, channel)
    target.parent.mkdir(parents=True, exist_ok=True)
    arrays: dict[str, Any] = {}
    for k, (instrument_id, saved) in enumerate(sorted(state.items())):
        arrays[f"id{k}"] = np.array(instrument_id)
        arrays[f"ts{k}"], arrays[f"seq{k}"] = saved.ts_event, saved.sequence
        arrays[f"last{k}"], arrays[f"observed{k}"] = np.array(saved.last_sequence, np.uint64), saved.observed
    temporary = target.with_suffix(".npz.tmp")
    with temporary.open("wb") as handle:
        np.savez(handle, **arrays)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, target)


def load(data_dir: Path, channel: str) -> dict[str, Saved]:
    """The channel's saved state; empty when there is none or it cannot be read (logged)."""
    source = path(data_dir, channel)
    if not source.exists():
        return {}
    try:
        with np.load(source, allow_pickle=False) as file:
            count = sum(1 for name in file.files if name.startswith("id"))
            return {
                str(file[f"id{k}"]): Saved(
                    file[f"ts{k}"].astype(np.uint64),
                    file[f"seq{k}"].astype(np.uint64),
                    int(file[f"last{k}"]),
                    file[f"observed{k}"].astype(np.uint64),
                )
                for k in range(count)
            }
    except (OSError, ValueError, KeyError) as error:
        log.warning(
            "series state %s is unreadable (%s): sequences restart above none, coverage from bars", source, error
        )
        return {}


def apply(series: Any, saved: Saved | None, *, floor: int = 0) -> None:
    """Give a freshly reloaded ``series`` its saved sequences and observed spans; bars the
    state does not know (all of them without one) are numbered above ``floor`` too."""
    held = np.frombuffer(series.columns()["ts_event"], "<u8")
    if len(held) == 0 or (saved is None and not floor):
        return
    if saved is None:
        saved = Saved(np.empty(0, np.uint64), np.empty(0, np.uint64), 0, np.empty((0, 2), np.uint64))
    # When saved bars older than the oldest reloaded one are missing (the catalog may keep
    # fewer bars than the series did), the time before it is no longer held: not observed
    # now, as after an eviction, rather than observed minutes without their bars (false gaps
    # on EXTERNAL, false no-trade minutes on INTERNAL).
    lost = len(saved.ts_event) and int(saved.ts_event[0]) < int(held[0])
    since = int(held[0]) - MINUTE_NS if lost else 0
    for start, end in saved.observed.tolist():
        if end > since:
            series.observe(max(start, since), end)
    position = np.searchsorted(saved.ts_event, held)
    found = position < len(saved.ts_event)
    found[found] = saved.ts_event[position[found]] == held[found]
    sequence = np.zeros(len(held), np.uint64)
    sequence[found] = saved.sequence[position[found]]
    last = max(saved.last_sequence, series.last_sequence, floor)
    unknown = int((~found).sum())
    sequence[~found] = np.arange(last + 1, last + 1 + unknown, dtype=np.uint64)
    series.resequence(np.ascontiguousarray(sequence), last + unknown)
