"""The progress line of a long import: one stderr line rewritten in place (``\\r``), rows
done of the total with the rate, at most five times a second. Shown when stderr is a TTY or
the file holds more than 100,000 rows (a compressed CSV, whose size is unknown up front, once
it passes that). No dependency beyond the standard library."""

from __future__ import annotations

import sys
import time
from typing import TextIO

__all__ = ["LONG_FILE_ROWS", "Progress"]

LONG_FILE_ROWS = 100_000


class Progress:
    def __init__(self, total: int | None, *, enabled: bool | None = None, stream: TextIO | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.total = total
        self.forced = enabled
        self._start = time.monotonic()
        self._shown = 0.0
        self._width = 0

    def _enabled(self, done: int) -> bool:
        if self.forced is not None:
            return self.forced
        return self.stream.isatty() or (self.total or done) > LONG_FILE_ROWS

    def update(self, phase: str, done: int, *, final: bool = False) -> None:
        now = time.monotonic()
        if not self._enabled(done) or (not final and now - self._shown < 0.2):
            return
        self._shown = now
        rate = done / max(now - self._start, 1e-9)
        of = f"/{self.total:,}" if self.total is not None else ""
        text = f"spine import: {phase} {done:,}{of} rows ({rate:,.0f} rows/s)"
        self.stream.write("\r" + text.ljust(self._width))
        self._width = len(text)
        self.stream.flush()

    def phase(self, phase: str) -> None:
        """Start timing a new phase (the rate is per phase)."""
        self._start = time.monotonic()
        self._shown = 0.0

    def close(self) -> None:
        if self._width:
            self.stream.write("\n")
            self.stream.flush()
            self._width = 0
