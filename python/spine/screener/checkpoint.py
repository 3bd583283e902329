"""The screener's checkpoint: what lets a restart skip paging every instrument's whole history
from its node again. Per instrument: the node's base URL, its ``svc.instrument_ref`` (for the
precisions), the channel, the newest node sequence folded (the watermark), and the universe's
durable 1-minute series (its bars and observed spans: the folding input). A restart re-folds
those locally and asks its node only for the bars above the watermark.

One Arrow IPC file, ``<data_dir>/screener/checkpoint.arrow``, one row per instrument. Its schema
metadata carries the format version, the feature registry's identity and a digest of the
columns: a file of another version or registry, or one that does not match its digest (or
cannot be read at all), is ignored with a warning, never misread. It is replaced whole (a
temporary file beside it, fsynced, renamed over it, the directory fsynced), so a crash leaves
the previous file or the new one. :class:`Checkpointer` writes on a worker thread, one write
at a time.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa  # type: ignore[import-untyped]

from spine._core import feature_specs, identity
from spine.screener.node_client import Bars

__all__ = ["FORMAT_VERSION", "Checkpointer", "Held", "checkpoint_path", "read", "registry_identity", "write"]

log = logging.getLogger("spine.screener")

#: Bumped whenever the file's layout or meaning changes: another version is not read.
FORMAT_VERSION = 1
_PRICES = ("open", "high", "low", "close", "volume")
_SCHEMA = pa.schema(
    [
        ("node", pa.string()),
        ("instrument", pa.string()),
        ("channel", pa.string()),
        ("sequence", pa.uint64()),
        ("span_start", pa.large_list(pa.uint64())),
        ("span_end", pa.large_list(pa.uint64())),
        ("ts_event", pa.large_list(pa.uint64())),
        *((name, pa.large_list(pa.int64())) for name in _PRICES),
    ]
)


@dataclass(frozen=True)
class Held:
    """One instrument as checkpointed: ``sequence`` is the newest node sequence folded (0:
    none), ``spans`` the observed ``(start, end)`` pairs, ``bars`` the 1-minute series'
    columns (``ts_event`` uint64, open..volume int64 mantissas), oldest first."""

    node: str
    instrument: dict[str, Any]
    channel: str
    sequence: int
    spans: list[tuple[int, int]]
    bars: Bars

    @property
    def instrument_id(self) -> str:
        return str(self.instrument["instrument_id"])


def checkpoint_path(data_dir: str | Path) -> Path:
    return Path(data_dir) / "screener" / "checkpoint.arrow"


def registry_identity(feature_ids: list[str] | None) -> str:
    """What the folded state depends on besides the bars: the registry (ids, versions,
    parameters, config hashes) and the selection of it."""
    return identity("screener_checkpoint_registry", {"specs": feature_specs(), "selected": feature_ids})


# the table


def _lists(parts: list[np.ndarray], dtype: str) -> pa.Array:
    offsets = np.zeros(len(parts) + 1, dtype=np.int64)
    np.cumsum([len(p) for p in parts], out=offsets[1:])
    values = np.concatenate(parts).astype(dtype, copy=False) if parts else np.empty(0, dtype)
    return pa.LargeListArray.from_arrays(pa.array(offsets), pa.array(values))


def to_table(held: list[Held], registry: str) -> pa.Table:
    """The checkpoint's table (digest and identities in its schema metadata)."""
    spans = [np.array(h.spans, dtype=np.uint64).reshape(-1, 2) for h in held]
    columns = [
        pa.array([h.node for h in held], pa.string()),
        pa.array([json.dumps(h.instrument, sort_keys=True) for h in held], pa.string()),
        pa.array([h.channel for h in held], pa.string()),
        pa.array([h.sequence for h in held], pa.uint64()),
        _lists([s[:, 0] for s in spans], "<u8"),
        _lists([s[:, 1] for s in spans], "<u8"),
        _lists([h.bars["ts_event"] for h in held], "<u8"),
        *(_lists([h.bars[name] for h in held], "<i8") for name in _PRICES),
    ]
    table = pa.Table.from_arrays(columns, schema=_SCHEMA)
    return table.replace_schema_metadata(_metadata(registry, _digest(table)))


def _metadata(registry: str, digest: str) -> dict[str, str]:
    return {"spine.format_version": str(FORMAT_VERSION), "spine.registry": registry, "spine.digest": digest}


def _digest(table: pa.Table) -> str:
    """SHA-256 over every column's values (list columns: their lengths, then their values)."""
    h = hashlib.sha256()
    for name in table.column_names:
        column = table.column(name).combine_chunks()
        if isinstance(column, pa.LargeListArray):
            h.update(np.diff(column.offsets.to_numpy()).astype("<i8").tobytes())
            h.update(column.flatten().to_numpy().tobytes())
        elif pa.types.is_string(column.type):
            h.update(json.dumps(column.to_pylist()).encode())
        else:
            h.update(column.to_numpy().tobytes())
    return h.hexdigest()


def from_table(table: pa.Table, registry: str) -> list[Held]:
    """The instruments of a checkpoint's table. ``ValueError`` naming the mismatch for another
    format version, registry, schema or digest."""
    metadata = {k.decode(): v.decode() for k, v in (table.schema.metadata or {}).items()}
    if metadata.get("spine.format_version") != str(FORMAT_VERSION):
        raise ValueError(f"format version {metadata.get('spine.format_version')!r}, expected {FORMAT_VERSION}")
    if metadata.get("spine.registry") != registry:
        raise ValueError("written for another feature registry")
    if not table.schema.remove_metadata().equals(_SCHEMA):
        raise ValueError("unexpected columns")
    if metadata.get("spine.digest") != _digest(table):
        raise ValueError("its columns do not match their digest")
    columns = {name: table.column(name).combine_chunks() for name in table.column_names}
    lists = {name: _split(columns[name]) for name in ("span_start", "span_end", "ts_event", *_PRICES)}
    return [
        Held(
            node=str(node),
            instrument=json.loads(str(instrument)),
            channel=str(channel),
            sequence=int(sequence),
            spans=list(zip(lists["span_start"][k].tolist(), lists["span_end"][k].tolist(), strict=True)),
            bars={name: lists[name][k] for name in ("ts_event", *_PRICES)},
        )
        for k, (node, instrument, channel, sequence) in enumerate(
            zip(
                columns["node"].to_pylist(),
                columns["instrument"].to_pylist(),
                columns["channel"].to_pylist(),
                columns["sequence"].to_pylist(),
                strict=True,
            )
        )
    ]


def _split(column: pa.LargeListArray) -> list[np.ndarray]:
    offsets, values = column.offsets.to_numpy(), column.flatten().to_numpy()
    return [values[offsets[k] : offsets[k + 1]] for k in range(len(column))]


# the file


def write(path: Path, held: list[Held], registry: str) -> None:
    """Replace ``path`` with the checkpoint of ``held`` (atomically; see the module docs)."""
    table = to_table(held, registry)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    try:
        with temporary.open("wb") as handle:
            _write_table(handle, table)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    directory = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(directory)  # the rename itself survives a power loss
    finally:
        os.close(directory)


def _write_table(handle: Any, table: pa.Table) -> None:
    with pa.ipc.new_file(handle, table.schema) as writer:
        writer.write_table(table)


def read(path: Path, registry: str) -> list[Held]:
    """The checkpoint at ``path``; empty when there is none, or (with a warning) when it is
    unreadable, corrupt, or of another version or registry."""
    if not path.exists():
        return []
    try:
        with pa.OSFile(str(path), "rb") as source:
            table = pa.ipc.open_file(source).read_all()
        return from_table(table, registry)
    except (OSError, ValueError, KeyError, TypeError, pa.ArrowException) as error:
        log.warning("checkpoint %s is ignored (%s): every instrument warms in full", path, error)
        return []


class Checkpointer:
    """Writes checkpoints on a worker thread, never two at once (a write cancelled while its
    thread runs is still waited for by the next), and knows when the last one succeeded."""

    def __init__(self, path: Path, registry: str) -> None:
        self.path, self.registry = path, registry
        #: ``time.monotonic_ns()`` of the last successful write (None before the first).
        self.written: int | None = None
        self._writing: asyncio.Future[None] | None = None

    def age(self) -> int | None:
        """Nanoseconds since the last successful write; None before the first."""
        return None if self.written is None else time.monotonic_ns() - self.written

    async def save(self, held: list[Held]) -> bool:
        """Write ``held`` (taken on the loop; the file is written on a thread); whether it was
        written. A failure is logged and leaves the previous file."""
        while self._writing is not None and not self._writing.done():
            await asyncio.wait({self._writing})
        writing = self._writing = asyncio.ensure_future(asyncio.to_thread(write, self.path, held, self.registry))
        writing.add_done_callback(self._done)
        await asyncio.wait({writing})  # a cancelled caller leaves the write to finish
        return self.written is not None and not writing.cancelled() and writing.exception() is None

    def _done(self, writing: asyncio.Future[None]) -> None:
        if writing.cancelled():
            return
        error = writing.exception()
        if error is None:
            self.written = time.monotonic_ns()
        else:
            log.warning(
                "checkpoint %s not written (%s: %s); the previous one stands", self.path, type(error).__name__, error
            )
