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
- Retention holds on disk: when a bar type would pass ``capacity`` bars it is rewritten from
  the in-memory series, keeping the newest ``capacity - slack`` (so rewrites are rare). The
  series keeps up to ``capacity``, so at a stop :meth:`CatalogStore.complete` rewrites each bar
  type its files hold less of than its series: a restart reloads every bar the series held.
- Writes are admission-gated on free inodes, a file-count ceiling and free bytes; a refused
  write is counted under its reason and its bars stay pending in memory, retried next flush.
"""

from __future__ import annotations

import os
import shutil
import threading
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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
        capacity: int = 5_000,
        slack: int = 250,
        expect_mount: Path | None = None,
    ) -> None:
        self.root = root
        self.floors = floors
        self.capacity = capacity
        self.slack = min(slack, capacity - 1)
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
        self._count: dict[str, int] = {}

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
        """Finish or roll back a rewrite cut short: a trashed bar type whose directory holds no
        file gets its old files back; otherwise the trash is dropped. Staging is discarded."""
        shutil.rmtree(self.root / ".staging", ignore_errors=True)
        trash = self.root / ".trash"
        if not trash.exists():
            return
        for batch in trash.iterdir():
            self._restore(batch)

    def _restore(self, batch: Path) -> None:
        """Put a trashed rewrite's old files back where no new file took their place, then
        drop the batch."""
        for old in batch.rglob("*.parquet"):
            target = self.root / old.relative_to(batch)
            if not any(target.parent.glob("*.parquet")):
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
        staging = self.root / ".staging" / uuid.uuid4().hex
        try:
            ParquetDataCatalog(str(staging)).write_data(data)
            placed = []
            for staged in sorted(staging.rglob("*.parquet")):
                target = self.root / staged.relative_to(staging)
                target.parent.mkdir(parents=True, exist_ok=True)
                os.replace(staged, target)
                placed.append(target)
            self.counters.files_written += len(placed)
            return placed
        finally:
            shutil.rmtree(staging, ignore_errors=True)

    def append(self, bar: Bar) -> None:
        """Queue one closed bar for the next flush."""
        with self._queueing:
            self._pending.setdefault(str(bar.bar_type), []).append(bar)

    def last_close(self, bar_type: str) -> int | None:
        if bar_type not in self._last:
            last = self.catalog.query_last_timestamp(Bar, bar_type)
            self._last[bar_type] = -1 if last is None else int(last.value)
            self._count[bar_type] = len(self.load(bar_type)) if last is not None else 0
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
        each. ``series_bars(bar_type)`` gives the series' retained bars, used when retention
        forces a rewrite. A refusal puts the bars not written back in front of those appended
        meanwhile and re-raises. Safe off the event loop."""
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
                self.rewrite(bar_type, series_bars(bar_type))
                pending.pop(bar_type)
                continue
            # One bar per close: history and the live feed can both deliver a minute (the
            # series keeps the first; so does the store).
            first: dict[int, Bar] = {}
            for b in bars:
                if b.ts_init > last:
                    first.setdefault(b.ts_init, b)
            fresh = [first[ts] for ts in sorted(first)]
            if not fresh:
                pending.pop(bar_type)
                continue
            if self._count[bar_type] + len(fresh) > self.capacity and series_bars is not None:
                self.rewrite(bar_type, series_bars(bar_type))
                pending.pop(bar_type)
                continue
            self.admit()
            self._staged(fresh)
            pending.pop(bar_type)
            self._last[bar_type] = fresh[-1].ts_init
            self._count[bar_type] += len(fresh)
            self.counters.bars_written += len(fresh)

    def rewrite(self, bar_type: str, bars: list[Bar]) -> None:
        """Replace a bar type's files with the newest ``capacity - slack`` of ``bars`` (the
        series, which includes late bars): retention, repairs and consolidation in one file."""
        with self._writing:
            self._rewrite(bar_type, bars)

    def _rewrite(self, bar_type: str, bars: list[Bar], *, keep_all: bool = False) -> None:
        keep = sorted(bars, key=lambda b: b.ts_init)[-(self.capacity if keep_all else self.capacity - self.slack) :]
        self.admit()
        # The catalog resolves its root (absolute, symlinks followed): its files are named
        # under that path, not under the root as configured (the default is relative).
        base = Path(self.catalog.path)
        directory = Path(self.catalog._make_path(Bar, bar_type))
        batch = self.root / ".trash" / uuid.uuid4().hex
        old = sorted(directory.glob("*.parquet")) if directory.exists() else []
        for path in old:
            target = batch / path.relative_to(base)
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(path, target)
        try:
            staging_written = self._staged(keep) if keep else []
        except BaseException:
            # The new file never reached the catalog: the old files go back now, not at the
            # next start, so the catalog never reads empty meanwhile.
            self._restore(batch)
            raise
        shutil.rmtree(batch, ignore_errors=True)
        self._last[bar_type] = keep[-1].ts_init if keep else -1
        self._count[bar_type] = len(keep)
        self.counters.rewrites += 1
        self.counters.bars_written += len(keep) if staging_written else 0

    def consolidate(self, series_bars: Callable[[str], list[Bar]]) -> int:
        """Merge each bar type with more than one file (or with late bars waiting) into one
        file rewritten from its series; returns the bar types rewritten."""
        rewritten = 0
        with self._writing:
            for bar_type in self.bar_types():
                directory = self.root / "data" / "bar" / bar_type
                if len(list(directory.glob("*.parquet"))) > 1:
                    self._rewrite(bar_type, series_bars(bar_type))
                    rewritten += 1
        return rewritten

    def complete(self, series_bars: Callable[[str], list[Bar]], series_len: Callable[[str], int]) -> int:
        """At a stop, after the last flush: rewrite each bar type whose files hold fewer bars
        than its series (``series_len``; a retention rewrite keeps ``capacity - slack``, late
        bars wait for a rewrite) from the whole series, at most ``capacity`` bars; returns the
        bar types rewritten. A restart then reloads exactly what the series held."""
        rewritten = 0
        with self._writing:
            for bar_type in self.bar_types():
                self.last_close(bar_type)  # loads the durable count once
                if self._count[bar_type] < series_len(bar_type):
                    self._rewrite(bar_type, series_bars(bar_type), keep_all=True)
                    rewritten += 1
        return rewritten

    # reading

    def load(self, bar_type: str) -> list[Bar]:
        """The durable bars of a bar type, oldest first (restart reload)."""
        bars: list[Bar] = self.catalog.bars(bar_types=[bar_type])
        return bars

    def bar_types(self) -> list[str]:
        directory = self.root / "data" / "bar"
        return sorted(p.name for p in directory.iterdir()) if directory.exists() else []

    def venues(self) -> set[str]:
        """The venues the stored bar types name (``BTCUSDT.SIM-1-MINUTE-...`` -> ``SIM``, any
        step: ``SPY.XNYS-1-DAY-LAST-EXTERNAL`` -> ``XNYS``)."""
        return {instrument_of(bar_type).rpartition(".")[2] for bar_type in self.bar_types()}

    def instruments(self, ids: Iterable[str] | None = None) -> list[Any]:
        return list(self.catalog.instruments(instrument_ids=None if ids is None else list(ids)))
