"""The library benchmarks' sizes: 5,000 one-minute bars per instrument and a universe of
1,000 instruments, which ``SPINE_BENCH_INSTRUMENTS`` shrinks for smoke runs."""

from __future__ import annotations

import os

BARS = 5_000
INSTRUMENTS = int(os.environ.get("SPINE_BENCH_INSTRUMENTS", "1000"))
