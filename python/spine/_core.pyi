# Hand-written stub for the extension module; checked by mypy.stubtest in CI.
from typing import Final

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
]

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
