//! One closed bar converted once to `f64` ([`BarInput`]), as the kernels see it (a batch comes
//! as a [`crate::bars::BarsView`] of mantissas, converted block by block into one of `f64`).

use crate::bars::Bar;

/// `10^k` as `f64` for `k` in `0..=18`; every entry is exact (5^18 < 2^53).
const POW10_F64: [f64; 19] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18,
];

/// One closed bar as the kernels see it: prices and volume as `f64`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct BarInput {
    /// Close time, nanoseconds since the UNIX epoch.
    pub ts_event: u64,
    /// Open price.
    pub open: f64,
    /// High price.
    pub high: f64,
    /// Low price.
    pub low: f64,
    /// Close price.
    pub close: f64,
    /// Volume.
    pub volume: f64,
}

impl BarInput {
    /// Convert fixed-point mantissas once: `raw / 10^scale`, a single correctly rounded division
    /// (exact decimal-to-binary for mantissas below 2^53). Scales above 18 are clamped to 18;
    /// callers validate scales first ([`crate::features::FeatureState::warm_columns`] does).
    #[must_use]
    pub fn from_raw(bar: &Bar, price_scale: u8, size_scale: u8) -> Self {
        let (p, s) = (pow10(price_scale), pow10(size_scale));
        Self {
            ts_event: bar.ts_event,
            open: bar.open as f64 / p,
            high: bar.high as f64 / p,
            low: bar.low as f64 / p,
            close: bar.close as f64 / p,
            volume: bar.volume as f64 / s,
        }
    }
}

/// `10^scale` as `f64`, the divisor that converts a mantissa (scales above 18 clamp to 18).
#[must_use]
pub(crate) fn pow10(scale: u8) -> f64 {
    POW10_F64[usize::from(scale.min(18))]
}
