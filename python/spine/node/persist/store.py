"""The durable store of one channel root: a NautilusTrader ``ParquetDataCatalog`` holding the
instruments and the closed 1-minute bars of that channel (EXTERNAL and INTERNAL live in
physically separate roots and never meet).

What the 1.221 catalog does not guard, this writer does:

- Overlaps never reach it: the catalog raises on an overlapping interval only after writing
  the file, and its consolidation assumes contiguous files. Appends therefore carry only bars
  newer than the bar type's last durable close; a flush holding a late bar rewrites the bar
  type from the series it took instead.
- No partial file is ever visible: every file is written into ``.staging`` on the same volume
  and renamed into place; a rewrite moves the old files to ``.trash`` first and restores them
  if the process died in between (see ``_recover``).
- The files hold more than the series: every bar the node took, back to ``retention_ns`` before
  the bar type's newest close, plus the older history a backfill wrote
  (:meth:`CatalogStore.write_older`). A rewrite replaces only the files that reach into its
  series' span; the older part of a file straddling the series' oldest bar is kept as a file
  of its own. :meth:`CatalogStore.trim` deletes files wholly older than the retention (and
  than the series).
- Writes are admission-gated on free inodes, a file-count ceiling and free bytes; a refused
  write is counted under its reason and its bars stay pending in memory, retried next flush.
"""

from __future__ import annotations

import calendar
import os
import re
import shutil
import threading
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq  # type: ignore[import-untyped]
from nautilus_trader.model.data import Bar
from nautilus_trader.persistence.catalog import ParquetDataCatalog

from spine.wire.bar_types import instrument_of

__all__ = ["AdmissionRefused", "CatalogStore", "Floors", "VolumeNotReady"]


class VolumeNotReady(RuntimeError):
    """The catalog volume is not mounted or not writable: the node refuses to start."""


class AdmissionRefused(RuntimeError):
    """A write refused by a floor; ``reason`` is the floor's name."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason


@dataclass(frozen=True)
class Floors:
    """Admission floors: below ``min_free_inodes`` / ``min_free_bytes`` free, or at
    ``max_files`` files under the root, writes are refused."""

    min_free_inodes: int = 1_000
    max_files: int = 100_000
    min_free_bytes: int = 64 * 2**20


#: A catalog file's name: its first and last ``ts_init``, ``2024-01-01T00-01-00-000000000Z``.
_STAMP = r"(\d{4})-(\d{2})-(\d{2})T(\d{2})-(\d{2})-(\d{2})-(\d{9})Z"
_FILE = re.compile(rf"^{_STAMP}_{_STAMP}\.parquet$")
#: A rewrite's trash batch: where its new files go, and that they all went.
_PLACING, _DONE = "placing", "done"


def file_span(path: Path) -> tuple[int, int] | None:
    """The first and last ``ts_init`` a catalog file's name states (None: not such a name)."""
    match = _FILE.match(path.name)
    if match is None:
        return None
    parts = [int(g) for g in match.groups()]

    def ns(y: int, mo: int, d: int, h: int, mi: int, sec: int, nanos: int) -> int:
        return calendar.timegm((y, mo, d, h, mi, sec)) * 10**9 + nanos

    return ns(*parts[:7]), ns(*parts[7:])


@dataclass
class StoreCounters:
    files_written: int = 0
    bars_written: int = 0
    rewrites: int = 0
    refused: dict[str, int] = field(default_factory=dict)


class CatalogStore:
    """One channel root (see the module docs)."""

    def __init__(
        self,
        root: Path,
        *,
        floors: Floors = Floors(),
        retention_ns: int | None = None,
        expect_mount: Path | None = None,
    ) -> None:
        self.root = root
        self.floors = floors
        #: How far before a bar type's newest close its files reach (None: no limit).
        self.retention_ns = retention_ns
        self.counters = StoreCounters()
        self._check_volume(expect_mount)
        self._recover()
        self.catalog = ParquetDataCatalog(str(root))
        self._pending: dict[str, list[Bar]] = {}
        # Flushes run off the event loop (see VenueNode): one writer at a time, and the pending
        # bars are swapped out under a lock the loop's appends take only for an instant.
        self._writing = threading.RLock()
        self._queueing = threading.Lock()
        self._last: dict[str, int] = {}

    # start-up

    def _check_volume(self, expect_mount: Path | None) -> None:
        if expect_mount is not None and not os.path.ismount(expect_mount):
            raise VolumeNotReady(f"catalog volume {expect_mount} is not mounted")
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            probe = self.root / f".probe-{uuid.uuid4().hex}"
            probe.write_bytes(b"ok")
            probe.unlink()
        except OSError as error:
            raise VolumeNotReady(f"catalog root {self.root} is not writable: {error}") from error

    def _recover(self) -> None:
        """Finish or roll back a rewrite cut short (:meth:`_settle`). Staging is discarded."""
        shutil.rmtree(self.root / ".staging", ignore_errors=True)
        trash = self.root / ".trash"
        if not trash.exists():
            return
        for batch in trash.iterdir():
            self._settle(batch)

    def _settle(self, batch: Path) -> None:
        """A rewrite's trash batch after the fact (see :meth:`_replace`): once it is marked done
        its old files go; otherwise the new files it placed are removed and its old files put
        back. Then the batch is dropped."""
        if not (batch / _DONE).exists():
            listed = batch / _PLACING
            for line in listed.read_text().splitlines() if listed.exists() else []:
                (self.root / line).unlink(missing_ok=True)
            for old in batch.rglob("*.parquet"):
                target = self.root / old.relative_to(batch)
                target.parent.mkdir(parents=True, exist_ok=True)
                os.replace(old, target)
        shutil.rmtree(batch, ignore_errors=True)

    # admission

    def _files(self) -> int:
        return sum(len(files) for _, _, files in os.walk(self.root / "data")) if (self.root / "data").exists() else 0

    def admit(self, new_files: int = 1) -> None:
        """Raise :class:`AdmissionRefused` (counted) unless every floor holds."""
        stats = os.statvfs(self.root)
        checks = (
            (
                "min_free_inodes",
                stats.f_favail < self.floors.min_free_inodes,
                f"{stats.f_favail} inodes free, floor {self.floors.min_free_inodes}",
            ),
            (
                "max_files",
                self._files() + new_files > self.floors.max_files,
                f"{self._files()} files, ceiling {self.floors.max_files}",
            ),
            (
                "min_free_bytes",
                stats.f_bavail * stats.f_frsize < self.floors.min_free_bytes,
                f"{stats.f_bavail * stats.f_frsize} bytes free, floor {self.floors.min_free_bytes}",
            ),
        )
        for reason, refused, detail in checks:
            if refused:
                self.counters.refused[reason] = self.counters.refused.get(reason, 0) + 1
                raise AdmissionRefused(reason, detail)

    # writing

    def write_instruments(self, instruments: list[Any]) -> None:
        self.admit(len(instruments))
        self._staged(instruments)

    def _staged(self, data: list[Any]) -> list[Path]:
        """Write through a staging catalog, then rename each finished file into place."""
        return self._replace([], [data])

    def _replace(self, old: list[Path], parts: list[list[Any]]) -> list[Path]:
        """Replace the files ``old`` by one file per non-empty part of ``parts``; the files
        placed. Every new file is finished in staging first; then the old files move to a
        trash batch, the batch lists the new files' places, the new files are renamed into
        place and the batch is marked done and dropped. A failure in between (or a crash,
        settled at the next start) removes what was placed and puts the old files back."""
        staging = self.root / ".staging" / uuid.uuid4().hex
        batch = self.root / ".trash" / uuid.uuid4().hex
        # The catalog resolves its root (absolute, symlinks followed): its files are named
        # under that path, not under the root as configured (the default is relative).
        base = Path(self.catalog.path)
        try:
            writer = ParquetDataCatalog(str(staging))
            for part in parts:
                if part:
                    writer.write_data(part)
            staged = sorted(staging.rglob("*.parquet"))
            targets = [self.root / path.relative_to(staging) for path in staged]
            if old:
                for path in old:
                    moved = batch / path.relative_to(base)
                    moved.parent.mkdir(parents=True, exist_ok=True)
                    os.replace(path, moved)
                (batch / _PLACING).write_text("".join(f"{t.relative_to(self.root)}\n" for t in targets))
            for path, target in zip(staged, targets, strict=True):
                target.parent.mkdir(parents=True, exist_ok=True)
                os.replace(path, target)
            if old:
                (batch / _DONE).touch()
        except BaseException:
            if batch.exists():
                self._settle(batch)
            raise
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        shutil.rmtree(batch, ignore_errors=True)
        self.counters.files_written += len(targets)
        return targets

    def append(self, bar: Bar) -> None:
        """Queue one closed bar for the next flush."""
        with self._queueing:
            self._pending.setdefault(str(bar.bar_type), []).append(bar)

    def last_close(self, bar_type: str) -> int | None:
        if bar_type not in self._last:
            last = self.catalog.query_last_timestamp(Bar, bar_type)
            self._last[bar_type] = -1 if last is None else int(last.value)
        return None if self._last[bar_type] < 0 else self._last[bar_type]

    def flush(self, series_bars: Callable[[str], list[Bar]] | None = None) -> None:
        """Write every pending bar: :meth:`write` of :meth:`take`."""
        self.write(self.take(), series_bars)

    def take(self) -> dict[str, list[Bar]]:
        """The pending bars by bar type, no longer pending: the caller writes them (the node
        takes them on the loop, with its copy of the series, and writes on a worker thread)."""
        with self._queueing:
            pending, self._pending = self._pending, {}
        return pending

    def write(self, pending: dict[str, list[Bar]], series_bars: Callable[[str], list[Bar]] | None = None) -> None:
        """Write each bar type's ``pending`` bars newer than its last durable close, one file
        each. ``series_bars(bar_type)`` gives the series' bars, used when a late bar forces a
        rewrite. A refusal puts the bars not written back in front of those appended meanwhile
        and re-raises. Safe off the event loop."""
        with self._writing:
            try:
                self._write(pending, series_bars)
            finally:
                if pending:  # not written (a refusal): back in front of what came meanwhile
                    with self._queueing:
                        for bar_type, bars in pending.items():
                            self._pending[bar_type] = bars + self._pending.get(bar_type, [])

    def _write(self, pending: dict[str, list[Bar]], series_bars: Callable[[str], list[Bar]] | None) -> None:
        """Write ``pending`` bar type by bar type, removing each once it is durable."""
        for bar_type, bars in list(pending.items()):
            last = self.last_close(bar_type) or -1
            if series_bars is not None and last >= 0 and any(b.ts_init <= last for b in bars):
                # Late bars (a history answer older than what is durable, a late candle): the
                # files are rewritten from the series this flush took, which holds them, so
                # they are durable with the same flush that saves their numbers.
                self._rewrite(bar_type, series_bars(bar_type))
                pending.pop(bar_type)
                continue
            # One bar per close: history and the live feed can both deliver a minute (the
            # series keeps the first; so does the store).
            first: dict[int, Bar] = {}
            for b in bars:
                if b.ts_init > last:
                    first.setdefault(b.ts_init, b)
            fresh = [first[ts] for ts in sorted(first)]
            if fresh:
                self.admit()
                self._staged(fresh)
                self._last[bar_type] = fresh[-1].ts_init
                self.counters.bars_written += len(fresh)
            pending.pop(bar_type)

    def write_older(self, bar_type: str, bars: list[Bar]) -> int:
        """Write history older than the bar type's oldest durable bar (a backfill) as a file
        of its own; bars at or after that bar are dropped (the files already hold that span).
        Returns the bars written."""
        with self._writing:
            oldest = self.oldest_close(bar_type)
            first: dict[int, Bar] = {}
            for b in bars:
                if oldest is None or b.ts_init < oldest:
                    first.setdefault(b.ts_init, b)
            older = [first[ts] for ts in sorted(first)]
            if older:
                self.admit()
                self._staged(older)
                self.counters.bars_written += len(older)
                if oldest is None:
                    self._last[bar_type] = older[-1].ts_init
            return len(older)

    def rewrite(self, bar_type: str, bars: list[Bar]) -> None:
        """Replace the bar type's files from ``bars`` (its series, which includes late bars):
        repairs and consolidation in one file; what the files hold older than the series is
        kept."""
        with self._writing:
            self._rewrite(bar_type, bars)

    def _rewrite(self, bar_type: str, bars: list[Bar]) -> None:
        keep = sorted(bars, key=lambda b: b.ts_init)
        if not keep:
            return  # no series: the files stand as they are
        self.admit()
        directory = Path(self.catalog._make_path(Bar, bar_type))
        spans = self._spans(directory)
        cut = keep[0].ts_init
        old = [path for path, (_, last) in spans if last >= cut]
        # What a file straddling the series' oldest bar holds before it stays, in a file of
        # its own (the spans are disjoint: only that file holds closes in [its first, cut)).
        straddling = [first for _, (first, last) in spans if first < cut <= last]
        older: list[Bar] = (
            self.catalog.bars(bar_types=[bar_type], start=straddling[0], end=cut - 1) if straddling else []
        )
        self._replace(old, [older, keep])
        self._last[bar_type] = max(keep[-1].ts_init, self._last.get(bar_type, -1))
        self.counters.rewrites += 1
        self.counters.bars_written += len(keep)

    def _spans(self, directory: Path) -> list[tuple[Path, tuple[int, int]]]:
        """The bar type's files with the spans their names state, oldest first."""
        found = []
        for path in directory.glob("*.parquet") if directory.exists() else []:
            span = file_span(path)
            if span is None:  # not the catalog's name: read what it holds
                ts = pq.read_table(path, columns=["ts_init"]).column("ts_init").to_numpy()
                span = (int(ts.min()), int(ts.max())) if len(ts) else (0, 0)
            found.append((path, span))
        return sorted(found, key=lambda item: item[1])

    def trim(self, series_oldest: Callable[[str], int | None]) -> int:
        """Delete each bar type's files wholly older than the retention before its newest
        close, never one holding a bar of its series (``series_oldest(bar_type)``: the series'
        oldest close, None without one: a sparse series may reach back further than the
        retention); returns the files deleted."""
        if self.retention_ns is None:
            return 0
        deleted = 0
        with self._writing:
            for bar_type in self.bar_types():
                last = self.last_close(bar_type)
                if last is None:
                    continue
                floor = last - self.retention_ns
                oldest = series_oldest(bar_type)
                if oldest is not None:
                    floor = min(floor, oldest)
                for path, (_, newest) in self._spans(self.root / "data" / "bar" / bar_type):
                    if newest < floor:
                        path.unlink(missing_ok=True)
                        deleted += 1
        return deleted

    def consolidate(
        self, series_bars: Callable[[str], list[Bar]], series_oldest: Callable[[str], int | None] | None = None
    ) -> int:
        """Merge the files of each bar type that reach into its series' span, when there are
        several (or late bars wait), into one rewritten from its series; returns the bar types
        rewritten. ``series_oldest(bar_type)`` (the series' oldest close) spares building the
        bars of a series that needs no rewrite."""
        rewritten = 0
        with self._writing:
            for bar_type in self.bar_types():
                if series_oldest is not None:
                    cut = series_oldest(bar_type)
                else:
                    cut = min((b.ts_init for b in series_bars(bar_type)), default=None)
                spans = self._spans(self.root / "data" / "bar" / bar_type)
                if cut is not None and len([1 for _, (_, last) in spans if last >= cut]) > 1:
                    self._rewrite(bar_type, series_bars(bar_type))
                    rewritten += 1
        return rewritten

    # reading

    def load(self, bar_type: str, newest: int | None = None, since: int | None = None) -> list[Bar]:
        """The durable bars of a bar type, oldest first; with ``newest``, only that many of the
        newest (a restart's series) and none closing before ``since``, read from the newest
        files that hold them."""
        if newest is None:
            bars: list[Bar] = self.catalog.bars(bar_types=[bar_type])
            return bars
        held, start = 0, None
        for path, (first, _) in reversed(self._spans(self.root / "data" / "bar" / bar_type)):
            held += pq.read_metadata(path).num_rows
            start = first
            if held >= newest or (since is not None and first <= since):
                break
        if start is None:
            return []
        found: list[Bar] = self.catalog.bars(bar_types=[bar_type], start=max(start, since or 0))
        return found[-newest:]

    def oldest_close(self, bar_type: str) -> int | None:
        """The oldest durable close of a bar type (None: no file)."""
        spans = self._spans(self.root / "data" / "bar" / bar_type)
        return spans[0][1][0] if spans else None

    def bar_types(self) -> list[str]:
        directory = self.root / "data" / "bar"
        return sorted(p.name for p in directory.iterdir()) if directory.exists() else []

    def venues(self) -> set[str]:
        """The venues the stored bar types name (``BTCUSDT.SIM-1-MINUTE-...`` -> ``SIM``, any
        step: ``SPY.XNYS-1-DAY-LAST-EXTERNAL`` -> ``XNYS``)."""
        return {instrument_of(bar_type).rpartition(".")[2] for bar_type in self.bar_types()}

    def instruments(self, ids: Iterable[str] | None = None) -> list[Any]:
        return list(self.catalog.instruments(instrument_ids=None if ids is None else list(ids)))
