"""Which instruments finished hydrating, kept across restarts: ``<data_dir>/hydration.json``.

The spec lets only a READY series resume with the gap above its newest close. Without this
file a restart could not tell a series that finished hydrating from one that held a few live
bars when the node stopped (EMPTY, HYDRATING, RETRY_WAIT): both reload with bars, and the
second would never get the history older than its first live bar. An instrument is written
here only once the bars its history answer held are durable in the catalog, so a crash never
leaves a record of history the catalog lacks. The file is replaced atomically (a temporary
name, fsync, rename): a crash leaves the previous one.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import NamedTuple

from spine.node.persist.atomic import read_json, write_json

__all__ = ["Finished", "HydrationState"]

FILE = "hydration.json"
_VERSION = 1

log = logging.getLogger("spine.node")


class Finished(NamedTuple):
    """One instrument that finished hydrating: READY or NO_HISTORY, the window its history
    covers (the earliest start and the latest end asked), and the newest bar the answers held
    (None without bars): the record is durable once the catalog holds that bar."""

    state: str
    start: int
    end: int
    newest: int | None = None


class HydrationState:
    """The file under ``data_dir``: :attr:`finished` as loaded, :meth:`save` to replace it."""

    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / FILE
        self.finished = self._load()
        self._saved = dict(self.finished)

    def _load(self) -> dict[str, Finished]:
        try:
            document = read_json(self.path, _VERSION)
            if document is None:
                return {}
            return {
                iid: Finished(
                    str(r["state"]),
                    int(r["start"]),
                    int(r["end"]),
                    None if r.get("newest") is None else int(r["newest"]),
                )
                for iid, r in document["instruments"].items()
            }
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
            # Unreadable: every series hydrates its whole window again (duplicates are
            # dropped), the safe side of losing history for ever.
            log.warning("hydration state %s is unreadable (%s): every series hydrates in full", self.path, error)
            return {}

    def save(self, finished: dict[str, Finished]) -> bool:
        """Replace the file with ``finished`` unless nothing changed; whether it wrote."""
        if finished == self._saved:
            return False
        document = {
            "version": _VERSION,
            "instruments": {
                iid: {
                    "state": r.state,
                    "start": str(r.start),
                    "end": str(r.end),
                    "newest": None if r.newest is None else str(r.newest),
                }
                for iid, r in sorted(finished.items())
            },
        }
        write_json(self.path, document)
        self._saved = dict(finished)
        return True
