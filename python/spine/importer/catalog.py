"""What the EXTERNAL root already holds, and writing an import into it all at once.

Nothing is half-written: the instrument and the bars are written by a ``ParquetDataCatalog``
into a staging directory beside the root (``DIR/.external.import-<hex>``, same volume), and
their files are renamed into the root only after every row passed. A bar type is kept in one
file (an append streams the stored file and the new bars into a new one; a node consolidating
a bar type of several files would rewrite it from its in-memory series, a few thousand bars,
none at 1-DAY): the bar type's old files (and,
for ``--replace``, the instrument's) are first moved into that directory, and put back if
placing the new ones fails. The directory is removed in every case. One import at a time per
catalog directory: placing holds an exclusive ``flock`` on ``DIR``, and the root's last close
is read again under it (a concurrent import in between is refused, not merged).

The same checks as ``spine.node.persist.store.CatalogStore`` (never hand the 1.221 catalog an
overlapping interval; rename whole files into place), with a staging area outside the root
since an import writes into a root a node may be serving.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq  # type: ignore[import-untyped]
from nautilus_trader.model.data import Bar
from nautilus_trader.persistence.catalog import ParquetDataCatalog

from spine.importer.refusal import ImportRefused

__all__ = ["Existing", "inspect", "place", "stored_bars"]


@dataclass(frozen=True)
class Existing:
    """The root's state for one instrument: its definition (None: absent), the last close of
    the bar type being imported (None: no bars) and the instrument's other bar types."""

    instrument: Any
    last_close: int | None
    other_bar_types: list[str]


def _bar_types(root: Path, instrument_id: str) -> list[str]:
    directory = root / "data" / "bar"
    if not directory.is_dir():
        return []
    return sorted(
        p.name for p in directory.iterdir() if p.name.startswith(f"{instrument_id}-") and any(p.glob("*.parquet"))
    )


def inspect(root: Path, instrument_id: str, bar_type: str) -> Existing:
    """Read the root (never creating it)."""
    if not (root / "data").is_dir():
        return Existing(None, None, [])
    catalog = ParquetDataCatalog(str(root))
    found = catalog.instruments(instrument_ids=[instrument_id])
    last = catalog.query_last_timestamp(Bar, bar_type) if bar_type in _bar_types(root, instrument_id) else None
    others = [b for b in _bar_types(root, instrument_id) if b != bar_type]
    return Existing(found[0] if found else None, None if last is None else int(last.value), others)


def stored_bars(root: Path, bar_type: str, start: int | None = None, end: int | None = None) -> list[Bar]:
    """The root's bars of ``bar_type`` closing in [start, end], oldest first."""
    bars: list[Bar] = ParquetDataCatalog(str(root)).bars(bar_types=[bar_type], start=start, end=end)
    return bars


def _instrument_dirs(root: Path, instrument_id: str) -> list[Path]:
    data = root / "data"
    if not data.is_dir():
        return []
    return [d / instrument_id for d in data.iterdir() if d.name != "bar" and (d / instrument_id).is_dir()]


@contextmanager
def _locked(directory: Path) -> Iterator[None]:
    handle = os.open(directory, os.O_RDONLY)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(handle, fcntl.LOCK_UN)
        os.close(handle)


def place(
    root: Path,
    instrument: Any | None,
    parts: Iterable[list[Bar]],
    *,
    bar_type: str,
    instrument_id: str,
    keep_stored: bool,
    replace_definition: bool,
    expect_last: int | None,
) -> int:
    """Write ``instrument`` (when given) and the bars of ``parts`` (lists of bars, oldest
    first, each newer than the last) into ``root`` as the bar type's one file, after its
    stored bars when ``keep_stored``; the bar type's old files (and, with
    ``replace_definition``, the instrument's) are retired. Returns the bars written.
    Raises :class:`ImportRefused` when the root's last close moved since ``expect_last``
    was read."""
    created = [p for p in (root.parent, *root.parent.parents) if not p.exists()]
    root.parent.mkdir(parents=True, exist_ok=True)
    staging = root.parent / f".{root.name}.import-{uuid.uuid4().hex}"
    try:
        if instrument is not None:
            ParquetDataCatalog(str(staging / "new")).write_data([instrument])
        # Parts bound the memory (Bar objects and the catalog's Arrow copy of them): each is
        # written as the catalog's own file, then the files are streamed into one.
        pieces = ParquetDataCatalog(str(staging / "parts"))
        for bars in parts:
            pieces.write_data(bars)
        files = sorted((staging / "parts" / "data" / "bar" / bar_type).glob("*.parquet"))
        stored = root / "data" / "bar" / bar_type
        if files and keep_stored and stored.is_dir():
            files = sorted(stored.glob("*.parquet")) + files
        written = _merge(files, staging / "new" / "data" / "bar" / bar_type) if files else 0
        with _locked(root.parent):
            if inspect(root, instrument_id, bar_type).last_close != expect_last:
                raise ImportRefused(
                    f"{bar_type} changed in {root} while this import ran (another import?); "
                    "nothing was written: run it again"
                )
            old = [stored] if files else []
            old += _instrument_dirs(root, instrument_id) if replace_definition else []
            _swap(root, staging, old)
        return written
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        for path in created:  # a failed first import leaves no empty directories behind
            if path.exists() and not any(path.iterdir()):
                path.rmdir()


def _merge(files: list[Path], directory: Path) -> int:
    """Stream the catalog files ``files`` (one bar type, one schema, oldest first, disjoint)
    into one file named, as the catalog names its files, by the first and last close;
    returns its rows."""
    start, end = files[0].stem.split("_")[0], files[-1].stem.split("_")[1]
    directory.mkdir(parents=True, exist_ok=True)
    schema = pq.read_schema(files[0])
    rows = 0
    with pq.ParquetWriter(directory / f"{start}_{end}.parquet", schema) as writer:
        for path in files:
            source = pq.ParquetFile(path)
            for group in range(source.num_row_groups):
                table = source.read_row_group(group).replace_schema_metadata(schema.metadata)
                writer.write_table(table)
                rows += table.num_rows
    return rows


def _swap(root: Path, staging: Path, old_dirs: list[Path]) -> None:
    """Move the files of ``old_dirs`` aside, then rename the staged files into the root; on
    any failure undo both."""
    trash, new = staging / "old", staging / "new"
    moved: list[tuple[Path, Path]] = []  # (from, to), undone in reverse
    try:
        for directory in old_dirs:
            for path in sorted(directory.glob("*.parquet")) if directory.is_dir() else []:
                _move(path, trash / path.relative_to(root), moved)
        for path in sorted(new.rglob("*.parquet")):
            _move(path, root / path.relative_to(new), moved)
    except BaseException:
        for source, target in reversed(moved):
            os.replace(target, source)
        raise


def _move(source: Path, target: Path, moved: list[tuple[Path, Path]]) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    os.replace(source, target)
    moved.append((source, target))
