# Hand-written stub for the extension module; checked by mypy.stubtest in CI.
from collections.abc import Callable, Sequence
from typing import Any, Final, Literal, TypeAlias, final

from spine.errors import StrategyRuleError as StrategyRuleError

__all__ = [
    "MAX_JSON_DEPTH",
    "MAX_DECIMAL_SCALE",
    "WIRE_VERSION",
    "canonical_json",
    "canonicalize",
    "identity",
    "parse_decimal",
    "format_decimal",
    "quantize_decimal",
    "parse_timestamp",
    "parse_decimal_column",
    "parse_timestamp_column",
    "bar_row",
    "fold_columns",
    "fold_columns_many",
    "resolution_bars",
    "Series",
    "FoldResult",
    "feature_specs",
    "FeatureState",
    "FeatureUniverse",
    "DeltaWriter",
    "ObservationWriter",
    "LiveBook",
    "Turn",
    "TurnRun",
    "Frames",
    "Hub",
    "ScreenTable",
    "StrategyKernel",
    "StrategyRuleError",
    "feature_kinds",
]

# A bar column argument (``ts_event, open, high, low, close, volume`` and ``sequence``): a
# contiguous, native-order 1-D buffer (numpy array, Arrow buffer, bytes) of uint64 times and
# int64 mantissas; its layout is checked when it is read.
_Column: TypeAlias = Any
# A closed derived bucket's values: open, high, low, close, volume mantissas and its sequence.
_BarValues: TypeAlias = tuple[int, int, int, int, int, int]
# Derived buckets closed by a call: ``(resolution, "bar", start, end, values)`` or
# ``(resolution, reason, start, end, None)`` for a withheld one.
_Closed: TypeAlias = list[tuple[str, str, int, int, _BarValues | None]]

MAX_JSON_DEPTH: Final[int]
MAX_DECIMAL_SCALE: Final[int]
WIRE_VERSION: Final[str]

def canonical_json(value: object) -> bytes:
    """Canonical JSON bytes of a dict/list/tuple/str/int/bool/None value.

    Raises CanonicalJsonError naming the JSON path of the first refusal.
    """

def canonicalize(text: str | bytes) -> bytes:
    """Parse JSON text strictly and return its canonical bytes."""

def identity(name: str, value: object) -> str:
    """SHA-256 identity `spine.v2/<name>` of a value's canonical JSON, as lowercase hex."""

def parse_decimal(text: str, scale: int) -> int:
    """The integer mantissa of a decimal string at `scale` (exact; never rounds)."""

def format_decimal(raw: int, scale: int) -> str:
    """The canonical decimal string of mantissa `raw` at `scale`."""

def quantize_decimal(text: str, scale: int) -> str:
    """A decimal string rounded half-even to `scale`."""

def parse_timestamp(text: str) -> int:
    """The value of a nanosecond-epoch string."""

def parse_decimal_column(values: list[str], scale: int) -> bytes:
    """Decimal strings as little-endian int64 mantissas at `scale` (exact; a row that does not
    fit is refused, naming the row)."""

def parse_timestamp_column(values: list[str]) -> bytes:
    """Nanosecond-epoch strings as little-endian uint64 values (a bad row is refused, named)."""

@final
class FoldResult:
    """Derived bars (column buffers) and withheld spans from one fold."""

    @property
    def resolution(self) -> str: ...
    def __len__(self) -> int: ...
    def columns(self) -> dict[str, bytes]:
        """Little-endian buffers: ts_event and sequence uint64; open..volume int64 mantissas."""

    def page(
        self,
        *,
        price_precision: int,
        size_precision: int,
        start: int | None = ...,
        end: int | None = ...,
        after_sequence: int | None = ...,
        offset: int = ...,
        limit: int,
    ) -> tuple[bytes, bool]:
        """The JSON array of bar rows a page query selects (see ``Series.page``), and whether more
        match after them."""

    def withheld(self) -> list[tuple[int, int, str]]:
        """Withheld spans (start, end, reason), oldest first."""

def bar_row(
    sequence: int,
    ts_event: int,
    open: int,
    high: int,
    low: int,
    close: int,
    volume: int,
    *,
    price_precision: int,
    size_precision: int,
) -> bytes:
    """One bar as the JSON array a stream event's ``bars`` holds: the row a page holds."""

def fold_columns(
    ts_event: _Column,
    open: _Column,
    high: _Column,
    low: _Column,
    close: _Column,
    volume: _Column,
    *,
    resolution: str,
    channel: str,
    coverage: list[tuple[int, int]] | None = None,
    sequence: _Column | None = None,
) -> FoldResult:
    """Fold contiguous uint64/int64 columns of 1-minute bars to one resolution."""

def fold_columns_many(
    ts_event: _Column,
    open: _Column,
    high: _Column,
    low: _Column,
    close: _Column,
    volume: _Column,
    *,
    resolutions: list[str],
    channel: str,
    coverage: list[tuple[int, int]] | None = None,
    sequence: _Column | None = None,
) -> list[FoldResult]:
    """Fold to several resolutions, each from the next finer one requested; results in request order."""

def resolution_bars(
    ts_event: _Column,
    open: _Column,
    high: _Column,
    low: _Column,
    close: _Column,
    volume: _Column,
    *,
    resolution: str,
    sequence: _Column | None = None,
) -> FoldResult:
    """Bars already at ``resolution`` (an import's daily bars) as a ``FoldResult``: checked as a
    fold's input is, served as a fold's output is, nothing withheld."""

@final
class Series:
    """The durable 1-minute series of one instrument and channel. With ``reserve``, a number
    above the highest it granted is handed out only after ``reserve(top)`` granted ``top``."""

    def __new__(
        cls,
        *,
        channel: str,
        price_precision: int,
        size_precision: int,
        capacity: int = ...,
        reserve: Callable[[int], int] | None = ...,
    ) -> Series: ...
    def __len__(self) -> int: ...
    @property
    def channel(self) -> str: ...
    @property
    def price_precision(self) -> int: ...
    @property
    def size_precision(self) -> int: ...
    @property
    def last_sequence(self) -> int: ...
    @property
    def revision(self) -> int:
        """Bumped by every call that may change the series (bars, coverage, counters)."""

    def page(
        self,
        *,
        start: int | None = ...,
        end: int | None = ...,
        after_sequence: int | None = ...,
        offset: int = ...,
        limit: int,
    ) -> tuple[bytes, bool]:
        """The JSON array of bar rows ``ts_event`` in [start, end], sequence above
        ``after_sequence``, ``limit`` rows from ``offset``; and whether more match after them."""

    def push(self, ts_event: int, open: int, high: int, low: int, close: int, volume: int) -> tuple[str, _Closed]:
        """Take one closed bar; returns its outcome and the derived buckets it closed."""

    def advance(self, watermark: int) -> _Closed:
        """Close the buckets ending at or before the watermark."""

    def extend(
        self, ts_event: _Column, open: _Column, high: _Column, low: _Column, close: _Column, volume: _Column
    ) -> int:
        """Bulk load columns through the arrival rule; returns the number accepted."""

    def resequence(self, sequence: _Column, last_sequence: int) -> None:
        """Give the held bars their sequences from before a restart (uint64, oldest first) and
        continue numbering above ``last_sequence``."""

    def observe(self, start: int, end: int) -> None: ...
    def confirm_empty(self, start: int, end: int) -> _Closed:
        """Confirm empty the minutes of [start, end) holding no bar (the venue's history
        answered without a candle); the closed derived buckets complete now."""
    def confirmed_empty(self) -> list[tuple[int, int]]: ...
    def unresolved(self) -> list[tuple[int, int]]:
        """Gaps unresolved now: unobserved time inside the series, and on EXTERNAL observed
        minutes without a candle not confirmed empty."""
    def has_unresolved(self) -> bool: ...
    def fold(self, resolution: str) -> FoldResult: ...
    def fold_many(self, resolutions: list[str]) -> list[FoldResult]: ...
    def columns(self) -> dict[str, bytes]: ...
    def coverage(self) -> list[tuple[int, int]]: ...
    def jumps(self) -> list[tuple[int, int]]: ...
    def counters(self) -> dict[str, int]: ...
    def resume_hint(self) -> dict[str, int | None]: ...

def feature_specs() -> list[dict[str, Any]]:
    """The default feature registry as svc.feature_spec documents, in registry order."""

@final
class FeatureState:
    """Incremental feature state of one instrument and resolution."""

    def __new__(cls, *, price_scale: int, size_scale: int, feature_ids: list[str] | None = None) -> FeatureState: ...
    @property
    def feature_ids(self) -> list[str]: ...
    @property
    def keys(self) -> list[str]: ...
    @property
    def price_scale(self) -> int: ...
    @property
    def size_scale(self) -> int: ...
    @property
    def last_ts_event(self) -> int | None: ...
    def warm(
        self, ts_event: _Column, open: _Column, high: _Column, low: _Column, close: _Column, volume: _Column
    ) -> int:
        """Warm from contiguous uint64/int64 columns in one call; returns the bars taken."""

    def update(self, ts_event: int, open: int, high: int, low: int, close: int, volume: int) -> None:
        """Take one closed bar (mantissas at the state's scales)."""

    def mark_gap(self) -> None: ...
    def reset(self) -> None: ...
    def row(self) -> dict[str, dict[str, str | int]]:
        """`<feature_id>.<output_name>` -> wire-shaped value dict, in key order."""

@final
class FeatureUniverse:
    """Per instrument: the durable 1-minute series, its incremental fold, and feature state at
    all seven resolutions. Changed rows come back as little-endian uint32 pairs
    ``(instrument, resolution index into 1m, 5m, 15m, 30m, 1h, 4h, 1d)``."""

    def __new__(cls, *, feature_ids: list[str] | None = None) -> FeatureUniverse: ...
    def __len__(self) -> int: ...
    def copy(self) -> FeatureUniverse: ...
    def add(self, *, channel: str, price_precision: int, size_precision: int, capacity: int = ...) -> int: ...
    def observe(self, instrument: int, start: int, end: int) -> None: ...
    def warm(
        self,
        instrument: int,
        ts_event: _Column,
        open: _Column,
        high: _Column,
        low: _Column,
        close: _Column,
        volume: _Column,
    ) -> int: ...
    def close_minute(
        self,
        instrument: _Column,
        ts_event: _Column,
        open: _Column,
        high: _Column,
        low: _Column,
        close: _Column,
        volume: _Column,
    ) -> bytes: ...
    def advance(self, watermark: int) -> bytes: ...
    def row(self, instrument: int, resolution: str) -> dict[str, dict[str, str | int]]: ...
    def last_ts_event(self, instrument: int, resolution: str) -> int | None: ...
    def bars_taken(self, instrument: int, resolution: str) -> int:
        """Bars the instrument's state at ``resolution`` has taken since it started."""
    def series_columns(self, instrument: int) -> dict[str, bytes]:
        """The instrument's durable 1-minute series as little-endian column buffers (a copy):
        ``ts_event`` and ``sequence`` (the universe's own numbering) uint64, the others int64."""
    def coverage(self, instrument: int) -> list[tuple[int, int]]:
        """The instrument's observed spans ``[(start, end), ...]``."""

@final
class DeltaWriter:
    """Per (instrument, resolution), the values last published. Each call returns the
    documents' rows as little-endian uint32 pairs ``(instrument, resolution index into 1m, 5m,
    15m, 30m, 1h, 4h, 1d)`` and the ``svc.feature_row_delta`` documents (canonical JSON), one
    ``bytes`` each, in the same order; a row whose values did not change has none."""

    def __new__(cls) -> DeltaWriter: ...
    def register(self, instrument: int, instrument_id: str) -> None: ...
    def deltas(self, universe: FeatureUniverse, changed: bytes) -> tuple[bytes, list[bytes]]:
        """The deltas of the rows a ``close_minute`` or ``advance`` of ``universe`` changed
        (``changed``: what that call returned)."""

    def refresh(self, universe: FeatureUniverse) -> tuple[bytes, list[bytes]]: ...

@final
class ObservationWriter:
    """Per (instrument, resolution), the values the patterns read at the row's newest bar.
    ``observe`` returns the ``svc.pattern_observation`` documents (canonical JSON), one ``bytes``
    each, of the patterns the changed rows made, in row order then pattern order."""

    def __new__(cls) -> ObservationWriter: ...
    def register(self, instrument: int, instrument_id: str) -> None: ...
    def prime(self, universe: FeatureUniverse, instrument: int | None = None) -> None:
        """Take the rows of ``universe`` (or of one instrument) as they are, seeing nothing:
        call it after a ``warm`` so history makes no observation."""

    def observe(self, universe: FeatureUniverse, changed: bytes) -> list[bytes]:
        """The observations the rows a ``close_minute`` or ``advance`` of ``universe`` changed
        made (``changed``: what that call returned)."""

@final
class LiveBook:
    """The screener's instruments as a live turn reads them: each one's id, the feed (its
    node's base URL) that serves it and the newest node sequence folded. Indexes are the
    universe's: add each instrument here as it is added there."""

    def __new__(cls) -> LiveBook: ...
    def __len__(self) -> int: ...
    def add(self, instrument_id: str, feed: str) -> int: ...
    def sequence(self, index: int) -> int | None: ...
    def set_sequence(self, index: int, sequence: int | None) -> None: ...
    def raise_sequences(self, indexes: list[int], sequences: list[int]) -> None:
        """Raise each instrument's newest sequence to the matching one, as ``max(held, sequence)``."""
    def turn(
        self,
        universe: FeatureUniverse,
        feed: str,
        payloads: Sequence[bytes],
        version: int,
        *,
        deltas: DeltaWriter | None = None,
        observations: ObservationWriter | None = None,
    ) -> Turn:
        """Take one loop turn of ``feed``'s ``svc.bar_envelope`` event payloads (the stream's
        ``data``, UTF-8), the rows at ``version``: each close in sequence folds (in runs in which
        no instrument comes twice, each closing ``universe`` once), and with ``deltas`` /
        ``observations`` (every instrument registered) each run's stream events are framed
        (``id: <version>``) and its observations written. Stops at a close that jumps its
        instrument's sequence (``JUMP``: the closes before it are folded) or, folding nothing,
        at a payload the strict reader leaves to the per-event path (``REFUSED``)."""

@final
class Turn:
    """What ``LiveBook.turn`` did."""

    @property
    def runs(self) -> list[TurnRun]:
        """One per version step, in order."""
    @property
    def offered(self) -> int | None:
        """The newest close time among the closes walked."""
    @property
    def stop(self) -> Literal["END", "JUMP", "REFUSED"]: ...
    @property
    def event(self) -> int | None:
        """The payload the turn stopped at (``JUMP``, ``REFUSED``)."""
    @property
    def instrument(self) -> int | None:
        """The instrument whose sequence jumped (``JUMP``)."""
    @property
    def error(self) -> BaseException | None:
        """The close's (or a writer's) refusal that ended the turn, after ``runs``."""

@final
class TurnRun:
    """One run of a turn: one version step of the rows."""

    @property
    def changed(self) -> bytes:
        """The changed rows, as ``FeatureUniverse.close_minute`` returns them."""
    @property
    def frames(self) -> Frames: ...
    @property
    def observations(self) -> list[bytes]:
        """The ``svc.pattern_observation`` documents, as ``ObservationWriter.observe`` gives them."""
    @property
    def bars(self) -> int: ...
    @property
    def newest(self) -> int: ...

@final
class Frames:
    """A turn's stream events (``delta``, or ``row`` for a row with no bar yet), framed for
    ``Hub.publish_frames``."""

    def __len__(self) -> int: ...
    def events(self) -> list[tuple[str, str, bytes]]:
        """Each event as ``(kind, instrument_id, bytes)``, in order."""

@final
class ScreenTable:
    """The rows a screener ranks, kept as columns: per row key an exact fixed-point value at the
    key's scale or ABSENT, per row its instrument and resolution. ``keys=None``: every output
    of the default registry at its declared scale."""

    def __new__(cls, keys: list[tuple[str, int]] | None = None) -> ScreenTable: ...
    @property
    def keys(self) -> list[tuple[str, int]]:
        """``(row key, scale)`` pairs, in declaration order."""

    def __len__(self) -> int: ...
    def upsert(self, instrument_id: str, resolution: str, values: dict[str, dict[str, str | int]]) -> None:
        """Replace (or add) a row from ``FeatureUniverse.row``-shaped values (every key, no other)."""

    def upsert_universe(self, universe: FeatureUniverse, instrument: int, instrument_id: str, resolution: str) -> None:
        """Replace (or add) a row straight from a universe's instrument, without value dicts."""

    def remove(self, instrument_id: str, resolution: str) -> bool:
        """Drop a retired row; whether it was held."""

    def screen(self, definition: bytes | str | dict[str, Any]) -> tuple[list[tuple[str, str, int]], int, int]:
        """Evaluate an ``svc.screen_definition``: ``([(instrument_id, resolution, rank)],
        evaluated, matched)``, rows in rank order, at most ``limit``."""

@final
class Hub:
    """Subscribers, each with one bounded queue (oldest dropped first) and a keep-predicate
    applied at enqueue. Events are published encoded, once."""

    def __new__(cls) -> Hub: ...
    def __len__(self) -> int: ...
    def subscribe(
        self, *, instruments: list[str] | None = None, kinds: list[str] | None = None, capacity: int = ...
    ) -> int: ...
    def unsubscribe(self, id: int) -> None: ...
    def publish(self, kind: str, instrument_id: str, payload: bytes) -> list[int]:
        """Returns the subscribers whose queue was empty (a consumer may be waiting)."""

    def publish_frames(self, frames: Frames) -> list[int]:
        """``publish`` each event in order; the subscribers whose queue was empty at their
        first, each once."""

    def drain(self, id: int, max_events: int = ...) -> bytes: ...
    def stats(self, id: int) -> tuple[int, int, int]:
        """(pending, dropped, enqueued)."""

def feature_kinds() -> list[dict[str, Any]]:
    """The kernels a strategy feature may be declared with, in registry order: ``{"kind": "ema",
    "implementation": "spine_core.features.ema", "parameters": ["period"], "optional":
    ["threshold"]}`` (``parameters``: the required names, sorted)."""

@final
class StrategyKernel:
    """A strategy's features and rules over one instrument's closed bars.

    ``features``: ``(feature_id, implementation, parameters)``, built by the registry's kernels
    (parameters as exact strings). ``rules``: ``(name, condition JSON text)``; a condition is
    the screen filter grammar plus ``{"key", "op": LT..NE, "ref": <row key>}`` and
    ``{"key", "op": "CROSSES_ABOVE" | "CROSSES_BELOW", "ref" | "value"}``. A rule may also read
    a default-registry feature by key (``rsi_14.value``) when no declared feature has its id.
    Refusals raise :class:`~spine.errors.StrategyRuleError` naming the feature and parameter, or
    the rule and JSON path, and what is allowed.
    """

    def __new__(
        cls,
        *,
        features: list[tuple[str, str, dict[str, str]]],
        rules: list[tuple[str, str]],
        price_scale: int,
        size_scale: int,
    ) -> StrategyKernel: ...
    @property
    def keys(self) -> list[str]:
        """Readable row keys: ``bar.open``, ``bar.high``, ``bar.low``, ``bar.close``,
        ``bar.volume``, then each feature's outputs in feature order."""

    def update(self, ts_event: int, open: int, high: int, low: int, close: int, volume: int) -> int:
        """Take one closed bar (mantissas at the kernel's scales); bit ``i`` of the answer is set
        when ``rules[i]`` fires. A refused bar raises FeatureError and changes nothing."""

    def value(self, key: str) -> str | None:
        """The current value of ``key`` as exact text; None when ABSENT (or before a bar)."""

    def mark_gap(self) -> None:
        """The input had a gap: the features restart and the next bar crosses nothing."""
