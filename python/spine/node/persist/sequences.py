"""The node-wide reservation of sequence numbers: a restarted node never hands out a number a
client may already hold.

The series' state file records the sequences of the last flush, not the numbers served since,
so it cannot say where a crashed run stopped numbering. Every series therefore asks the
reservation before it hands out a number above the highest granted (``Series(reserve=...)``),
and the reservation moves a block ahead and is made durable first: written to a temporary
name, fsynced, renamed, the directory fsynced. Every number ever served is at most the
reservation on disk, ``<data_dir>/series/reserved.json``.

At start, after a crash every series continues above the reservation (the floor). After a
clean stop the state files hold every number the run served, so each series continues from
its own saved last sequence; the stop marked the file clean, and the start marks it in use
again before any number is handed out, so a crash of the new run is never taken for a clean
stop. A block costs one small synchronous write; a number below the grant costs one
comparison in the series.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

__all__ = ["BLOCK", "Reservation"]

#: How far ahead a reservation reaches: the most numbers a crash can skip in a series.
BLOCK = 1_000

log = logging.getLogger("spine.node")


class Reservation:
    """The reservation of one data directory (see the module docs); called as a series'
    ``reserve``."""

    def __init__(self, data_dir: Path, *, block: int = BLOCK) -> None:
        self.path = data_dir / "series" / "reserved.json"
        self.block = block
        reserved, clean = self._read()
        #: Above every number an earlier run may have handed out.
        self.floor = reserved
        #: Whether the earlier run stopped cleanly (its state files hold every number it served).
        self.clean = clean
        self.reserved = reserved
        if clean:
            self._persist(reserved, clean=False)

    def __call__(self, top: int) -> int:
        """Grant numbers up to at least ``top``: past the reservation, move it a block ahead
        and make it durable before answering (an OSError refuses the number)."""
        if top > self.reserved:
            self._persist(top + self.block, clean=False)
        return self.reserved

    def close(self, highest: int) -> None:
        """The run stopped and its state files were written after its last number: keep the
        reservation at what was handed out (``highest``, at least the floor) and mark it clean."""
        self._persist(max(self.floor, highest), clean=True)

    def _read(self) -> tuple[int, bool]:
        if not self.path.exists():
            return 0, False
        try:
            document = json.loads(self.path.read_bytes())
            return int(document["reserved"]), document["clean"] is True
        except (OSError, ValueError, KeyError, TypeError) as error:
            log.warning(
                "sequence reservation %s is unreadable (%s): series continue from their state files", self.path, error
            )
            return 0, False

    def _persist(self, reserved: int, *, clean: bool) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_suffix(".json.tmp")
        with temporary.open("wb") as handle:
            handle.write(json.dumps({"reserved": reserved, "clean": clean}).encode())
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, self.path)
        directory = os.open(self.path.parent, os.O_RDONLY)
        try:
            os.fsync(directory)  # the rename itself survives a power loss
        finally:
            os.close(directory)
        self.reserved = reserved
