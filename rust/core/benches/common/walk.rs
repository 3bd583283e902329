//! The deterministic bars the universe bench and the midnight example share (no RNG
//! dependency for a throughput measurement): a walk per instrument, minute by minute.

use spine_core::bars::{Bar, MINUTE_NS};

/// One UTC day in nanoseconds.
pub const DAY: u64 = 1_440 * MINUTE_NS;

/// Instrument `instrument`'s bar closing `minute` minutes after a midnight.
pub fn bar(instrument: u64, minute: u64) -> Bar {
    let price = 1_000_000 + ((minute * 7_919 + instrument * 104_729) % 2_003) as i64;
    Bar {
        ts_event: 19_000 * DAY + minute * MINUTE_NS,
        open: price,
        high: price + 40,
        low: price - 40,
        close: price + ((minute % 7) as i64 - 3) * 5,
        volume: 1_000 + ((minute * 31) % 977) as i64,
    }
}
