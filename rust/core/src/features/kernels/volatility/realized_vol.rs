//! Realised volatility: the sample standard deviation (n - 1 denominator) of the last
//! `period` log returns `ln(close / prev_close)`, times `sqrt(annualization)` (1 = not
//! annualised; the default specs leave it at 1 because one spec serves every resolution).
//! A return is undefined when either close is not positive; while one is in the window the
//! value is ABSENT `INPUT_UNAVAILABLE`. Warm-up: `period + 1` bars (`period` returns).
//!
//! A window kernel ([`Windowed`]) over `period + 1` closes: the returns, their mean and
//! variance (two passes) are computed when a row is read. The logarithms move from every bar
//! to every read: a close updates each state once, and a screener reads a row at most as
//! often, mostly far less.

use crate::features::error::FeatureError;
use crate::features::kernels::windowed::{Statistic, Windowed};
use crate::features::primitives::define::{Declared, Params};
use crate::features::primitives::kernel::{len_of, one, real, Outputs};
use crate::features::primitives::ring::Ring;
use crate::features::spec::ValueType;
use crate::features::value::Raw;

/// RealizedVol(period, annualization).
pub type RealizedVol = Windowed<LogReturns>;

impl RealizedVol {
    /// A fresh kernel; `period` at least 2, `annualization` at least 1 (validated by the
    /// registry).
    #[must_use]
    pub fn new(period: u64, annualization: u64) -> Self {
        let scale = (annualization.max(1) as f64).sqrt();
        Self::with(
            LogReturns { scale },
            len_of(period.max(2)).saturating_add(1),
        )
    }
}

/// The scaled sample standard deviation of the window's log returns.
#[derive(Debug, Clone, Copy)]
pub struct LogReturns {
    scale: f64,
}

impl LogReturns {
    /// The log returns of the newest `len` closes, oldest first; `None` until there are
    /// `len - 1` of them or while one is undefined.
    fn returns(closes: &Ring, slots: &[f64], len: usize) -> Option<Vec<f64>> {
        let (older, newer) = closes.newest(slots, len);
        if older.len() + newer.len() < len {
            return None;
        }
        let mut closes = older.iter().chain(newer).copied();
        let mut prev = closes.next()?;
        let mut returns = Vec::with_capacity(len - 1);
        for close in closes {
            if !(close > 0.0 && prev > 0.0) {
                return None;
            }
            returns.push((close / prev).ln());
            prev = close;
        }
        Some(returns)
    }
}

impl Statistic for LogReturns {
    type Entries = Ring;
    const DECLARED: Declared = Declared::new(
        "spine_core.features.realized_vol",
        &["annualization", "period"],
    )
    .outputs(&[("value", ValueType::Decimal, 8)])
    .defaults(&[("rvol_20", &[("period", "20"), ("annualization", "1")])]);

    fn build(params: &Params<'_>) -> Result<RealizedVol, FeatureError> {
        let period = params.integer("period", 2)?;
        Ok(RealizedVol::new(
            period,
            params.integer("annualization", 1)?,
        ))
    }

    fn values(&self, closes: &Ring, slots: &[f64], len: usize) -> Outputs {
        let Some(returns) = Self::returns(closes, slots, len) else {
            return one(Raw::Undefined);
        };
        let first = returns[0];
        if returns.iter().all(|&r| r == first) {
            // Exactly zero, not a rounding residue of the mean.
            return one(real(0.0));
        }
        let n = returns.len() as f64;
        let mean = returns.iter().sum::<f64>() / n;
        let variance = returns.iter().map(|r| (r - mean) * (r - mean)).sum::<f64>() / (n - 1.0);
        one(real(variance.sqrt() * self.scale))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::features::primitives::kernel::Owned;
    use crate::features::primitives::testing::{
        after_closes, batch_equals_incremental, first, flat, series,
    };

    #[test]
    fn sample_std_of_log_returns() {
        let closes = [100.0, 101.0, 99.0, 102.0];
        let rv = after_closes(RealizedVol::new(3, 1), &closes);
        let r: Vec<f64> = closes.windows(2).map(|w| (w[1] / w[0]).ln()).collect();
        let mean = r.iter().sum::<f64>() / 3.0;
        let var = r.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / 2.0;
        assert!((first(&rv) - var.sqrt()).abs() < 1e-12);
        let mut annual = Owned::new(RealizedVol::new(3, 4));
        annual.warm(&closes.map(|c| flat(0, c, 1.0)));
        assert!((first(&annual) - 2.0 * var.sqrt()).abs() < 1e-12);
    }

    #[test]
    fn non_positive_close_blanks_the_window() {
        let mut rv = Owned::new(RealizedVol::new(2, 1));
        for (i, c) in [1.0, 0.0, 2.0, 3.0, 4.0].into_iter().enumerate() {
            rv.update(&flat(i as u64, c, 1.0));
            if i < 4 {
                assert_eq!(rv.values()[0], Raw::Undefined, "bar {i}");
            }
        }
        // Returns 3/2 and 4/3 are both defined again.
        assert!(first(&rv) > 0.0);
        batch_equals_incremental(RealizedVol::new(20, 1), &series(300));
    }
}
