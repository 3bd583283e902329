//! Bollinger bands over the close: `mid` = SMA(period), `upper`/`lower` = mid ± k × the
//! population standard deviation of the window (as TA-Lib), and `percent_b` =
//! `(close - lower) / (upper - lower)`. A window of equal closes has zero width: the bands
//! equal the mid and `percent_b` is ABSENT `INPUT_UNAVAILABLE`. Warm-up: `period` bars.
//!
//! A window kernel ([`Windowed`]): mean and variance are computed from the window's closes
//! when a row is read, in two passes (the mean, then the squared deviations from it), so no
//! running sum drifts, and the mid equals the SMA of the same period bit for bit.

use crate::features::error::FeatureError;
use crate::features::kernels::windowed::{Statistic, Windowed};
use crate::features::primitives::define::{to_f64, Bound, Declared, Params, PRICE};
use crate::features::primitives::kernel::{len_of, real, Outputs};
use crate::features::primitives::ring::Ring;
use crate::features::spec::ValueType;
use crate::features::value::Raw;

/// Bollinger(period, k): outputs mid, upper, lower, percent_b.
pub type Bollinger = Windowed<Bands>;

impl Bollinger {
    /// Fresh bands; `period` is at least 1, `k` positive (validated by the registry).
    #[must_use]
    pub fn new(period: u64, k: f64) -> Self {
        Self::with(Bands { k }, len_of(period.max(1)))
    }
}

/// The bands `k` standard deviations around the mean of the window.
#[derive(Debug, Clone, Copy)]
pub struct Bands {
    k: f64,
}

impl Statistic for Bands {
    type Entries = Ring;
    const DECLARED: Declared = Declared::new("spine_core.features.bollinger", &["k", "period"])
        .outputs(&[
            ("mid", ValueType::Decimal, PRICE),
            ("upper", ValueType::Decimal, PRICE),
            ("lower", ValueType::Decimal, PRICE),
            ("percent_b", ValueType::Decimal, 6),
        ])
        .defaults(&[("bb_20_2", &[("period", "20"), ("k", "2")])]);

    fn build(params: &Params<'_>) -> Result<Bollinger, FeatureError> {
        let k = params.decimal("k", params.get("k")?, Bound::Positive)?;
        Ok(Bollinger::new(params.integer("period", 1)?, to_f64(k)))
    }

    fn values(&self, closes: &Ring, slots: &[f64], len: usize) -> Outputs {
        let (older, newer) = closes.newest(slots, len);
        let window = || older.iter().chain(newer).copied();
        let (Some(first), Some(close)) = (window().next(), window().last()) else {
            return [Raw::Undefined; 4];
        };
        let n = (older.len() + newer.len()) as f64;
        // Summed oldest first from -0.0, as the SMA sums: the same mid.
        let mid = window().sum::<f64>() / n;
        if window().all(|x| x == first) {
            // Exactly zero width, not a rounding residue of the mean.
            return [real(mid), real(mid), real(mid), Raw::Undefined];
        }
        let variance = window().map(|x| (x - mid) * (x - mid)).sum::<f64>() / n;
        let width = self.k * variance.sqrt();
        let (upper, lower) = (mid + width, mid - width);
        let percent_b = if width > 0.0 {
            real((close - lower) / (upper - lower))
        } else {
            Raw::Undefined
        };
        [real(mid), real(upper), real(lower), percent_b]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::features::primitives::testing::{
        after_closes, batch_equals_incremental, nth, series,
    };

    #[test]
    fn bands_and_percent_b() {
        let bb = after_closes(Bollinger::new(4, 2.0), &[1.0, 2.0, 3.0, 4.0]);
        let std = 1.25f64.sqrt();
        assert!((nth(&bb, 0) - 2.5).abs() < 1e-12);
        assert!((nth(&bb, 1) - (2.5 + 2.0 * std)).abs() < 1e-12);
        assert!((nth(&bb, 2) - (2.5 - 2.0 * std)).abs() < 1e-12);
        assert!((nth(&bb, 3) - (4.0 - (2.5 - 2.0 * std)) / (4.0 * std)).abs() < 1e-12);
    }

    #[test]
    fn flat_window_has_no_percent_b() {
        let bb = after_closes(Bollinger::new(3, 2.0), &[9.0, 1.0, 2.0, 2.0, 2.0]);
        let values = bb.values();
        assert_eq!(values[0], Raw::Real(2.0));
        assert_eq!(values[1], Raw::Real(2.0));
        assert_eq!(values[2], Raw::Real(2.0));
        assert_eq!(values[3], Raw::Undefined);
        batch_equals_incremental(Bollinger::new(20, 2.0), &series(300));
    }
}
