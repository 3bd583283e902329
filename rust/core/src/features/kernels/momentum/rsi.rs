//! Relative strength index with Wilder smoothing, 0..100, as TA-Lib computes it: the first
//! average gain and loss are the simple means of the first `period` changes, then
//! `avg = (avg * (period - 1) + x) / period`. Warm-up: `period + 1` bars (`period` changes).
//!
//! RSI = `100 * avg_gain / (avg_gain + avg_loss)`; with no movement at all in the smoothed
//! window (both averages zero) it is undefined and reported ABSENT `INPUT_UNAVAILABLE`.

use crate::bars::BarsView;
use crate::features::error::FeatureError;
use crate::features::primitives::block::Inputs;
use crate::features::primitives::define::{Declared, Define, Params};
use crate::features::primitives::input::BarInput;
use crate::features::primitives::kernel::{one, real, Kernel, Outputs};
use crate::features::primitives::packed::{int, tagged, untag, word, Packed};
use crate::features::primitives::recurrence::{self, Recurrence, Step};
use crate::features::spec::ValueType;
use crate::features::value::Raw;

/// RSI(period), Wilder.
#[derive(Debug, Clone, Copy)]
pub struct Rsi {
    period: u64,
    prev_close: Option<f64>,
    changes: u64,
    avg_gain: f64,
    avg_loss: f64,
    seen: u64,
}

impl Rsi {
    /// A fresh RSI; `period` is at least 1.
    #[must_use]
    pub fn new(period: u64) -> Self {
        Self {
            period: period.max(1),
            prev_close: None,
            changes: 0,
            avg_gain: 0.0,
            avg_loss: 0.0,
            seen: 0,
        }
    }
}

/// A change split into (gain, loss), both non-negative. Selects rather than branches: the
/// sign of a price change is a coin flip a branch predictor would miss half the time.
#[inline]
fn gain_loss(change: f64) -> (f64, f64) {
    let up = change > 0.0;
    (
        if up { change } else { 0.0 },
        if up { 0.0 } else { -change },
    )
}

/// RSI once seeded: Wilder's smoothing of gains and losses.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RsiStep {
    prev_close: f64,
    avg_gain: f64,
    avg_loss: f64,
    n: f64,
}

impl Step for RsiStep {
    #[inline]
    fn step(&mut self, _high: f64, _low: f64, close: f64) {
        let (gain, loss) = gain_loss(close - self.prev_close);
        self.prev_close = close;
        let n = self.n;
        self.avg_gain = (self.avg_gain * (n - 1.0) + gain) / n;
        self.avg_loss = (self.avg_loss * (n - 1.0) + loss) / n;
    }
}

impl Recurrence for Rsi {
    type Step = RsiStep;

    fn bars_to_seed(&self) -> u64 {
        (self.period + 1).saturating_sub(self.seen)
    }

    fn stepper(&self) -> Option<RsiStep> {
        let prev_close = self.prev_close.filter(|_| self.changes >= self.period)?;
        Some(RsiStep {
            prev_close,
            avg_gain: self.avg_gain,
            avg_loss: self.avg_loss,
            n: self.period as f64,
        })
    }

    fn resume(&mut self, step: RsiStep, taken: usize) {
        self.prev_close = Some(step.prev_close);
        (self.avg_gain, self.avg_loss) = (step.avg_gain, step.avg_loss);
        self.changes += taken as u64;
        self.seen += taken as u64;
    }
}

impl Kernel for Rsi {
    #[inline(always)]
    fn update(&mut self, _slots: &mut [f64], bar: &BarInput) {
        if recurrence::update_seeded(self, bar) {
            return;
        }
        // Seeding: sum the first `period` changes, divide once they are all in.
        self.seen += 1;
        let close = bar.close;
        let Some(prev) = self.prev_close.replace(close) else {
            return;
        };
        let (gain, loss) = gain_loss(close - prev);
        self.changes += 1;
        self.avg_gain += gain;
        self.avg_loss += loss;
        if self.changes == self.period {
            let n = self.period as f64;
            self.avg_gain /= n;
            self.avg_loss /= n;
        }
    }

    fn warm_block(&mut self, _slots: &mut [f64], block: &BarsView<'_, f64>) {
        recurrence::warm_alone(self, block);
    }

    fn inputs(&self) -> Inputs {
        Inputs::CLOSE
    }

    fn values(&self, _slots: &[f64]) -> Outputs {
        let total = self.avg_gain + self.avg_loss;
        if total > 0.0 {
            one(real(100.0 * self.avg_gain / total))
        } else {
            one(Raw::Undefined)
        }
    }

    fn warmup_bars(&self) -> u64 {
        self.period + 1
    }

    fn bars_seen(&self) -> u64 {
        self.seen
    }

    fn reset(&mut self) {
        *self = Self::new(self.period);
    }
}

impl Packed for Rsi {
    const WORDS: usize = 5;

    fn pack(&self, words: &mut [f64]) {
        let words = &mut words[..Self::WORDS];
        words[0] = self.prev_close.unwrap_or(0.0);
        words[1] = word(self.changes);
        words[2] = self.avg_gain;
        words[3] = self.avg_loss;
        words[4] = tagged(self.seen, [self.prev_close.is_some(), false, false]);
    }

    fn unpack(template: &Self, words: &[f64]) -> Self {
        let words = &words[..Self::WORDS];
        let (seen, [has_prev, ..]) = untag(words[4]);
        Self {
            period: template.period,
            prev_close: has_prev.then_some(words[0]),
            changes: int(words[1]),
            avg_gain: words[2],
            avg_loss: words[3],
            seen,
        }
    }
}

impl Define for Rsi {
    const DECLARED: Declared = Declared::new("spine_core.features.rsi", &["period"])
        .outputs(&[("value", ValueType::Decimal, 4)])
        .defaults(&[("rsi_14", &[("period", "14"), ("threshold", "70")])]);

    fn build(params: &Params<'_>) -> Result<Self, FeatureError> {
        Ok(Self::new(params.integer("period", 1)?))
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
    fn wilder_seed_then_smoothing() {
        // Changes: +1, -1, +2 (seed over period 2: gain 0.5, loss 0.5), then +2.
        let mut rsi = after_closes(Rsi::new(2), &[10.0, 11.0, 10.0]);
        assert_eq!(rsi.warmup_bars(), 3);
        assert!((first(&rsi) - 50.0).abs() < 1e-12);
        rsi.update(&flat(3, 12.0, 1.0));
        // gain = (0.5 + 2) / 2 = 1.25, loss = 0.25 -> 100 * 1.25 / 1.5.
        assert!((first(&rsi) - 100.0 * 1.25 / 1.5).abs() < 1e-12);
    }

    #[test]
    fn all_up_is_100_and_flat_is_undefined() {
        let mut up = Owned::new(Rsi::new(3));
        let mut flat_rsi = Owned::new(Rsi::new(3));
        for i in 0..10 {
            up.update(&flat(i, 1.0 + i as f64, 1.0));
            flat_rsi.update(&flat(i, 5.0, 1.0));
        }
        assert_eq!(first(&up), 100.0);
        assert_eq!(flat_rsi.values()[0], Raw::Undefined);
        batch_equals_incremental(Rsi::new(14), &series(200));
    }
}
