"""The engine status producer: the process's own lifecycle and real counters as a
``svc.engine_status`` document, which the gateway serves verbatim and readiness reads (the
gateway never concludes health from anything else, e.g. file existence).

Lifecycle, exactly the spec's table (one method per row):

    STARTING --begin--> RUNNING --checkpoint--> CHECKPOINTED --resume--> RUNNING
    RUNNING --finish--> COMPLETED (terminal)    RUNNING --fail(error)--> FAILED (terminal)

Anything else raises :class:`IllegalTransition`. Counters only grow: they count events since
the run began, so a decrease would be a bug upstream and is refused rather than served.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final, Literal, get_args

from spine._core import WIRE_VERSION
from spine.node.hydration import IllegalTransition, check_nanos

__all__ = [
    "AUTHORITY_COUNTERS",
    "COUNTERS",
    "AuthorityCounter",
    "Counter",
    "EngineStatusProducer",
    "IllegalTransition",
    "Lifecycle",
]

Lifecycle = Literal["STARTING", "RUNNING", "CHECKPOINTED", "COMPLETED", "FAILED"]
Counter = Literal["bars_accepted", "bars_rejected", "signals_emitted", "orders_submitted", "fills", "errors"]
AuthorityCounter = Literal["gaps", "duplicates", "out_of_order"]
COUNTERS: Final[tuple[Counter, ...]] = get_args(Counter)
AUTHORITY_COUNTERS: Final[tuple[AuthorityCounter, ...]] = get_args(AuthorityCounter)
_I64_MAX: Final = 2**63 - 1


def _grown(name: str, old: int, new: int) -> int:
    if isinstance(new, bool) or not isinstance(new, int) or not old <= new <= _I64_MAX:
        raise ValueError(f"counter {name} only grows within signed 64 bit: {old} -> {new!r}")
    return new


class EngineStatusProducer:
    """See the module docs. ``authorities`` are reported (with zeros) from the start, so
    readiness never mistakes a missing authority for a clean one."""

    def __init__(self, run_id: str | None, authorities: Iterable[str] = ()) -> None:
        self.run_id = run_id
        self._lifecycle: Lifecycle = "STARTING"
        self._last_error: str | None = None
        self._counters: dict[str, int] = dict.fromkeys(COUNTERS, 0)
        self._authorities: dict[str, dict[str, int]] = {}
        for authority in authorities:
            self._authority(authority)

    @property
    def lifecycle(self) -> Lifecycle:
        return self._lifecycle

    @property
    def last_error(self) -> str | None:
        return self._last_error

    # lifecycle

    def _move(self, from_state: Lifecycle, to: Lifecycle) -> None:
        # Each method is one row of the table, so it checks its own from-state: ``resume`` is
        # not a second ``begin`` although both lead to RUNNING.
        if self._lifecycle != from_state:
            raise IllegalTransition(f"engine {self.run_id}", self._lifecycle, to)
        self._lifecycle = to

    def begin(self) -> None:
        """STARTING -> RUNNING: the run begins."""
        self._move("STARTING", "RUNNING")

    def checkpoint(self) -> None:
        """RUNNING -> CHECKPOINTED: a checkpoint was written."""
        self._move("RUNNING", "CHECKPOINTED")

    def resume(self) -> None:
        """CHECKPOINTED -> RUNNING: the run resumes."""
        self._move("CHECKPOINTED", "RUNNING")

    def finish(self) -> None:
        """RUNNING -> COMPLETED (terminal): the run finished."""
        self._move("RUNNING", "COMPLETED")

    def fail(self, error: str) -> None:
        """RUNNING -> FAILED (terminal): the run failed; ``error`` is served as last_error."""
        if not error:
            raise ValueError("FAILED needs a non-empty last_error")
        self._move("RUNNING", "FAILED")
        self._last_error = error

    # counters

    def add(self, counter: Counter, n: int = 1) -> None:
        """Count ``n`` more events."""
        self.set_counter(counter, self._counter(counter) + n)

    def set_counter(self, counter: Counter, value: int) -> None:
        """Take an absolute count (e.g. from the ingestion actor's counters)."""
        self._counters[counter] = _grown(counter, self._counter(counter), value)

    def record_error(self, error: str) -> None:
        """Count an error the run survived and keep it as last_error."""
        if not error:
            raise ValueError("an error needs a non-empty text")
        self.add("errors")
        self._last_error = error

    def add_authority(self, authority: str, counter: AuthorityCounter, n: int = 1) -> None:
        """Count ``n`` more gaps, duplicates or out-of-order bars of ``authority``."""
        counts = self._authority(authority, counter)
        counts[counter] = _grown(f"{authority}.{counter}", counts[counter], counts[counter] + n)

    def set_authority(self, authority: str, counter: AuthorityCounter, value: int) -> None:
        """Take an absolute per-authority count."""
        counts = self._authority(authority, counter)
        counts[counter] = _grown(f"{authority}.{counter}", counts[counter], value)

    def counter(self, counter: Counter) -> int:
        return self._counter(counter)

    def _counter(self, counter: str) -> int:
        if counter not in self._counters:
            raise ValueError(f"not an engine counter: {counter!r}; one of {', '.join(COUNTERS)}")
        return self._counters[counter]

    def _authority(self, authority: str, counter: str = "gaps") -> dict[str, int]:
        if not isinstance(authority, str) or not authority:
            raise ValueError(f"an authority is a non-empty name, got {authority!r}")
        if counter not in AUTHORITY_COUNTERS:
            raise ValueError(f"not an authority counter: {counter!r}; one of {', '.join(AUTHORITY_COUNTERS)}")
        return self._authorities.setdefault(authority, dict.fromkeys(AUTHORITY_COUNTERS, 0))

    # the document

    def document(self, ts_ns: int) -> dict[str, Any]:
        """The ``svc.engine_status`` document as of ``ts_ns`` (authorities sorted by name)."""
        return {
            "version": WIRE_VERSION,
            "schema_id": "svc.engine_status",
            "schema_version": 1,
            "run_id": self.run_id,
            "lifecycle": self._lifecycle,
            "ts_event": str(check_nanos(ts_ns)),
            "counters": dict(self._counters),
            "authorities": [{"authority": name, **counts} for name, counts in sorted(self._authorities.items())],
            "last_error": self._last_error,
        }
