"""The serving process's heap after start-up.

Everything start-up built (the framework, instruments, modules, the app) lives as long as the
process. Moved out of the collector's generations once, it is never walked again by a full
collection, which would otherwise hold streams and requests back while it walks them
(docs/performance.md has the figure).
"""

from __future__ import annotations

import gc

__all__ = ["settle_heap"]


def settle_heap() -> None:
    """Collect once, then freeze what survives (call when start-up is done)."""
    gc.collect()
    gc.freeze()
