//! Simple moving average of the close over `period` bars. Warm-up: `period` bars.
//!
//! A window kernel ([`Windowed`]): the mean is summed from the window's closes, oldest
//! first, when a row is read.

use crate::features::error::FeatureError;
use crate::features::kernels::windowed::{OfPeriod, Statistic, Windowed};
use crate::features::primitives::define::{Declared, Params, PRICE};
use crate::features::primitives::kernel::{one, real, Outputs};
use crate::features::primitives::ring::Ring;
use crate::features::spec::ValueType;

/// SMA(period) of closes.
pub type Sma = Windowed<Mean>;

/// The mean of the window.
#[derive(Debug, Clone, Copy, Default)]
pub struct Mean;

impl OfPeriod for Mean {}

impl Statistic for Mean {
    type Entries = Ring;
    const DECLARED: Declared = Declared::new("spine_core.features.sma", &["period"])
        .outputs(&[("value", ValueType::Decimal, PRICE)])
        .defaults(&[("sma_20", &[("period", "20")])]);

    fn build(params: &Params<'_>) -> Result<Sma, FeatureError> {
        Ok(Sma::new(params.integer("period", 1)?))
    }

    fn values(&self, closes: &Ring, slots: &[f64], len: usize) -> Outputs {
        let (older, newer) = closes.newest(slots, len);
        let n = older.len() + newer.len();
        if n == 0 {
            return one(real(f64::NAN));
        }
        let sum = newer
            .iter()
            .fold(older.iter().sum::<f64>(), |sum, x| sum + x);
        one(real(sum / n as f64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::features::primitives::kernel::Owned;
    use crate::features::primitives::testing::{
        after_closes, batch_equals_incremental, first, series,
    };

    #[test]
    fn mean_of_the_last_period_closes() {
        let sma = after_closes(Sma::new(3), &[1.0, 2.0, 3.0, 4.0, 10.0]);
        assert!((first(&sma) - 17.0 / 3.0).abs() < 1e-12);
        assert_eq!(sma.warmup_bars(), 3);
        assert_eq!(sma.bars_seen(), 5);
    }

    #[test]
    fn long_series_matches_direct_mean() {
        let bars = series(1000);
        let mut sma = Owned::new(Sma::new(20));
        sma.warm(&bars);
        let direct: f64 = bars[980..].iter().map(|b| b.close).sum::<f64>() / 20.0;
        assert!((first(&sma) - direct).abs() < 1e-10);
        batch_equals_incremental(Sma::new(20), &bars);
    }
}
