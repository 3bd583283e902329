//! Rate of change of the close over `period` bars, in percent:
//! `100 * (close - close[period bars ago]) / close[period bars ago]`. A zero base close is
//! undefined (ABSENT `INPUT_UNAVAILABLE`). Warm-up: `period + 1` bars.
//!
//! A window kernel ([`Windowed`]) over `period + 1` closes.

use crate::features::error::FeatureError;
use crate::features::kernels::windowed::{Statistic, Windowed};
use crate::features::primitives::define::{Declared, Params};
use crate::features::primitives::kernel::{len_of, one, real, Outputs};
use crate::features::primitives::ring::Ring;
use crate::features::spec::ValueType;
use crate::features::value::Raw;

/// ROC(period), percent.
pub type Roc = Windowed<Change>;

impl Roc {
    /// A fresh ROC; `period` is at least 1.
    #[must_use]
    pub fn new(period: u64) -> Self {
        Self::with(Change, len_of(period.max(1)).saturating_add(1))
    }
}

/// The change from the oldest close of the window to the newest, in percent.
#[derive(Debug, Clone, Copy)]
pub struct Change;

impl Statistic for Change {
    type Entries = Ring;
    const DECLARED: Declared = Declared::new("spine_core.features.roc", &["period"])
        .outputs(&[("value", ValueType::Decimal, 4)])
        .defaults(&[("roc_10", &[("period", "10")])]);

    fn build(params: &Params<'_>) -> Result<Roc, FeatureError> {
        Ok(Roc::new(params.integer("period", 1)?))
    }

    fn values(&self, closes: &Ring, slots: &[f64], len: usize) -> Outputs {
        let close = closes.nth_newest(slots, 0);
        let base = closes.nth_newest(slots, len - 1);
        match (close, base) {
            (Some(close), Some(base)) if base != 0.0 => one(real(100.0 * (close - base) / base)),
            _ => one(Raw::Undefined),
        }
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
    fn percent_change_over_period() {
        let roc = after_closes(Roc::new(2), &[50.0, 80.0, 55.0, 60.0]);
        // 60 against 80 (two bars earlier).
        assert!((first(&roc) + 25.0).abs() < 1e-12);
        assert_eq!(roc.warmup_bars(), 3);
        let mut zero = Owned::new(Roc::new(1));
        zero.update(&flat(0, 0.0, 1.0));
        zero.update(&flat(1, 1.0, 1.0));
        assert_eq!(zero.values()[0], Raw::Undefined);
        batch_equals_incremental(Roc::new(10), &series(100));
    }
}
