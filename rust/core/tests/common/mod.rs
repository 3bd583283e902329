//! Times and bars shared by the bars integration tests: minute `k` of a day far from the
//! epoch, and a bar closing there whose prices are set by one number.
#![allow(dead_code)]

use spine_core::bars::{Bar, MINUTE_NS};

pub const M: u64 = MINUTE_NS;
pub const DAY: u64 = 1_440 * M;
pub const T0: u64 = 19_000 * DAY;

/// The bar closing at minute `minute`: open `price`, high `price + 2`, low `price - 1`, close
/// `price + 1`, volume 10.
pub fn bar(minute: u64, price: i64) -> Bar {
    Bar {
        ts_event: T0 + minute * M,
        open: price,
        high: price + 2,
        low: price - 1,
        close: price + 1,
        volume: 10,
    }
}
