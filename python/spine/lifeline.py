"""A supervised process ends with its supervisor.

``spine up`` starts each child with :data:`PARENT_VARIABLE` set to its own pid. The child
asks the kernel for a signal when its parent dies (``PR_SET_PDEATHSIG``; SIGTERM, so a node
still flushes its bars), and exits at once when that parent is already gone (it died before
the request took effect). A SIGKILL (or the OOM killer) on the supervisor therefore leaves no
process behind holding its ports and data directories.

Signals a supervisor sends while a child is still importing are not lost either:
:func:`hold_stop_signals` blocks SIGINT and SIGTERM around the spawn (a signal mask survives
``exec``), and the child's entry point calls :func:`release_stop_signals` once its handlers are
installed, so a stop asked during its imports reaches the handler instead of the default
action.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["PARENT_VARIABLE", "STOP_SIGNALS", "die_with_parent", "hold_stop_signals", "release_stop_signals"]

#: The environment variable naming the supervisor's pid.
PARENT_VARIABLE = "SPINE_PARENT_PID"
STOP_SIGNALS = frozenset({signal.SIGINT, signal.SIGTERM})
_PR_SET_PDEATHSIG = 1


def die_with_parent(signum: int = signal.SIGTERM) -> None:
    """When :data:`PARENT_VARIABLE` names a pid: take ``signum`` when that process dies, and
    exit now (code 70) if it already has. Nothing without the variable, which is removed from
    the environment (this process's own children do not inherit it)."""
    text = os.environ.pop(PARENT_VARIABLE, None)  # its own children have another parent
    if not text or not text.isdigit():
        return
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, int(signum), 0, 0, 0)
        except (OSError, AttributeError):
            pass
    if os.getppid() != int(text):
        os._exit(70)


@contextmanager
def hold_stop_signals() -> Iterator[None]:
    """Block SIGINT and SIGTERM in this thread for the block: a process spawned inside it
    starts with them blocked (pending until it releases them)."""
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def release_stop_signals() -> None:
    """Unblock SIGINT and SIGTERM (after installing their handlers): one that arrived while
    they were blocked is delivered now."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
