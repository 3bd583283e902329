"""The minutes the venue confirmed empty, per EXTERNAL series, kept across restarts:
``<data_dir>/confirmed_empty.json``.

A confirmed minute is one the venue's history answered for without a candle (see
:mod:`spine.node.repair`). The catalogs hold bars only and the series state file holds
observed spans, so without this a restart would turn every confirmed minute back into a gap
and ask the venue again. The file is replaced atomically (a temporary name, fsync, rename); an
unreadable one is logged and ignored (the minutes are asked for again: the safe side).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from spine.node.persist.atomic import read_json, write_json

__all__ = ["ConfirmedState"]

FILE = "confirmed_empty.json"
_VERSION = 1

log = logging.getLogger("spine.node")

Spans = dict[str, list[tuple[int, int]]]


class ConfirmedState:
    """The file under ``data_dir``."""

    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / FILE
        self.loaded = self._load()
        self._saved = dict(self.loaded)

    def _load(self) -> Spans:
        try:
            document = read_json(self.path, _VERSION)
            if document is None:
                return {}
            return {str(iid): [(int(s), int(e)) for s, e in spans] for iid, spans in document["series"].items()}
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
            log.warning("confirmed-empty minutes %s are unreadable (%s): they are asked for again", self.path, error)
            return {}

    def apply(self, book: Any) -> None:
        """Confirm the loaded spans on the reloaded EXTERNAL series (after their bars)."""
        for instrument_id, spans in self.loaded.items():
            if instrument_id not in book:
                continue
            series = book.series(instrument_id, "EXTERNAL")
            for start, end in spans:
                try:
                    series.confirm_empty(start, end)
                except ValueError as error:  # a damaged span: that one is asked for again
                    log.warning("confirmed span of %s not applied: %s", instrument_id, error)

    def changed(self, spans: Spans) -> bool:
        return spans != self._saved

    def save(self, spans: Spans) -> None:
        """Replace the file with ``spans`` (safe off the event loop: ``spans`` is a copy)."""
        document = {
            "version": _VERSION,
            "series": {iid: [[str(s), str(e)] for s, e in found] for iid, found in sorted(spans.items())},
        }
        write_json(self.path, document)
        self._saved = dict(spans)
