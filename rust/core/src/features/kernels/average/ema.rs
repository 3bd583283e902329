//! Exponential moving average of the close: `alpha = 2 / (period + 1)`, seeded with the first
//! close (as NautilusTrader and pandas `ewm(adjust=False)` do). Warm-up: `period` bars.

use crate::bars::BarsView;
use crate::features::error::FeatureError;
use crate::features::primitives::block::Inputs;
use crate::features::primitives::define::{Declared, Define, Params, PRICE};
use crate::features::primitives::input::BarInput;
use crate::features::primitives::kernel::{one, real, Kernel, Outputs};
use crate::features::primitives::packed::{tagged, untag, Packed};
use crate::features::primitives::recurrence::{self, Recurrence, Step};
use crate::features::spec::ValueType;

/// The EMA recurrence on its own, shared with MACD.
#[derive(Debug, Clone, Copy)]
pub struct EmaCore {
    alpha: f64,
    value: f64,
    seeded: bool,
}

impl EmaCore {
    /// A fresh average over `period` (at least 1).
    #[must_use]
    pub fn new(period: u64) -> Self {
        Self {
            alpha: 2.0 / (period.max(1) as f64 + 1.0),
            value: f64::NAN,
            seeded: false,
        }
    }

    /// Take one value: the first seeds, later ones blend `alpha * x + (1 - alpha) * prev`.
    pub fn push(&mut self, x: f64) {
        match self.stepper() {
            Some(mut step) => {
                step.push(x);
                self.value = step.value;
            }
            None => {
                self.value = x;
                self.seeded = true;
            }
        }
    }

    /// The recurrence once seeded.
    #[must_use]
    pub(crate) fn stepper(&self) -> Option<EmaStep> {
        self.seeded.then_some(EmaStep {
            alpha: self.alpha,
            keep: 1.0 - self.alpha,
            value: self.value,
        })
    }

    /// The current average (NaN before the first value).
    #[must_use]
    pub fn value(&self) -> f64 {
        self.value
    }

    /// This average's smoothing with `value`, seeded or not (a packed state read back).
    pub(crate) fn restored(&self, value: f64, seeded: bool) -> Self {
        Self {
            alpha: self.alpha,
            value,
            seeded,
        }
    }

    /// Whether the first value was taken.
    pub(crate) fn seeded(&self) -> bool {
        self.seeded
    }

    /// Forget the average.
    pub fn clear(&mut self) {
        self.value = f64::NAN;
        self.seeded = false;
    }
}

/// A seeded EMA: `alpha * x + (1 - alpha) * prev`, with `1 - alpha` computed once.
#[derive(Debug, Clone, Copy)]
pub(crate) struct EmaStep {
    alpha: f64,
    keep: f64,
    value: f64,
}

impl EmaStep {
    /// Take one value.
    #[inline]
    pub(crate) fn push(&mut self, x: f64) {
        self.value = self.alpha * x + self.keep * self.value;
    }

    /// The average.
    #[inline]
    pub(crate) fn value(&self) -> f64 {
        self.value
    }

    /// Store the average back into a seeded `core`.
    pub(crate) fn resume(self, core: &mut EmaCore) {
        core.value = self.value;
    }
}

impl Step for EmaStep {
    #[inline]
    fn step(&mut self, _high: f64, _low: f64, close: f64) {
        self.push(close);
    }
}

/// EMA(period) of closes.
#[derive(Debug, Clone, Copy)]
pub struct Ema {
    period: u64,
    core: EmaCore,
    seen: u64,
}

impl Ema {
    /// A fresh EMA; `period` is at least 1.
    #[must_use]
    pub fn new(period: u64) -> Self {
        Self {
            period: period.max(1),
            core: EmaCore::new(period),
            seen: 0,
        }
    }
}

impl Recurrence for Ema {
    type Step = EmaStep;

    fn bars_to_seed(&self) -> u64 {
        u64::from(self.seen == 0)
    }

    fn stepper(&self) -> Option<EmaStep> {
        self.core.stepper()
    }

    fn resume(&mut self, step: EmaStep, taken: usize) {
        step.resume(&mut self.core);
        self.seen += taken as u64;
    }
}

impl Kernel for Ema {
    #[inline(always)]
    fn update(&mut self, _slots: &mut [f64], bar: &BarInput) {
        self.core.push(bar.close);
        self.seen += 1;
    }

    fn warm_block(&mut self, _slots: &mut [f64], block: &BarsView<'_, f64>) {
        recurrence::warm_alone(self, block);
    }

    fn inputs(&self) -> Inputs {
        Inputs::CLOSE
    }

    fn values(&self, _slots: &[f64]) -> Outputs {
        one(real(self.core.value()))
    }

    fn warmup_bars(&self) -> u64 {
        self.period
    }

    fn bars_seen(&self) -> u64 {
        self.seen
    }

    fn reset(&mut self) {
        self.core.clear();
        self.seen = 0;
    }
}

impl Packed for Ema {
    const WORDS: usize = 2;

    fn pack(&self, words: &mut [f64]) {
        words[0] = self.core.value;
        words[1] = tagged(self.seen, [self.core.seeded, false, false]);
    }

    fn unpack(template: &Self, words: &[f64]) -> Self {
        let (seen, [seeded, ..]) = untag(words[1]);
        Self {
            period: template.period,
            core: template.core.restored(words[0], seeded),
            seen,
        }
    }
}

impl Define for Ema {
    const DECLARED: Declared = Declared::new("spine_core.features.ema", &["period"])
        .outputs(&[("value", ValueType::Decimal, PRICE)])
        .defaults(&[("ema_20", &[("period", "20")])]);

    fn build(params: &Params<'_>) -> Result<Self, FeatureError> {
        Ok(Self::new(params.integer("period", 1)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::features::primitives::kernel::Owned;
    use crate::features::primitives::testing::{batch_equals_incremental, first, flat, series};

    #[test]
    fn seeded_with_the_first_close() {
        let mut ema = Owned::new(Ema::new(3));
        ema.update(&flat(1, 10.0, 1.0));
        assert_eq!(first(&ema), 10.0);
        ema.update(&flat(2, 20.0, 1.0));
        assert!((first(&ema) - 15.0).abs() < 1e-12);
        ema.update(&flat(3, 20.0, 1.0));
        assert!((first(&ema) - 17.5).abs() < 1e-12);
    }

    #[test]
    fn batch_path() {
        batch_equals_incremental(Ema::new(20), &series(300));
    }
}
