//! Average true range with Wilder smoothing, as TA-Lib computes it. The true range needs the
//! previous close: `max(high - low, |high - prev_close|, |low - prev_close|)`, so the first
//! bar yields none. The first ATR is the simple mean of the first `period` true ranges, then
//! `atr = (atr * (period - 1) + tr) / period`. Warm-up: `period + 1` bars.

use crate::bars::BarsView;
use crate::features::error::FeatureError;
use crate::features::primitives::block::Inputs;
use crate::features::primitives::define::{Declared, Define, Params, PRICE};
use crate::features::primitives::input::BarInput;
use crate::features::primitives::kernel::{one, real, Kernel, Outputs};
use crate::features::primitives::packed::{int, tagged, untag, word, Packed};
use crate::features::primitives::recurrence::{self, Recurrence, Step};
use crate::features::spec::ValueType;

/// ATR(period), Wilder.
#[derive(Debug, Clone, Copy)]
pub struct Atr {
    period: u64,
    prev_close: Option<f64>,
    ranges: u64,
    atr: f64,
    seen: u64,
}

impl Atr {
    /// A fresh ATR; `period` is at least 1.
    #[must_use]
    pub fn new(period: u64) -> Self {
        Self {
            period: period.max(1),
            prev_close: None,
            ranges: 0,
            atr: 0.0,
            seen: 0,
        }
    }
}

/// The true range of a bar after a close of `prev`.
#[inline]
fn true_range(high: f64, low: f64, prev: f64) -> f64 {
    (high - low)
        .max((high - prev).abs())
        .max((low - prev).abs())
}

/// ATR once seeded: Wilder's smoothing of true ranges.
#[derive(Debug, Clone, Copy)]
pub(crate) struct AtrStep {
    prev_close: f64,
    atr: f64,
    n: f64,
}

impl Step for AtrStep {
    #[inline]
    fn step(&mut self, high: f64, low: f64, close: f64) {
        let tr = true_range(high, low, self.prev_close);
        self.prev_close = close;
        let n = self.n;
        self.atr = (self.atr * (n - 1.0) + tr) / n;
    }
}

impl Recurrence for Atr {
    type Step = AtrStep;

    fn bars_to_seed(&self) -> u64 {
        (self.period + 1).saturating_sub(self.seen)
    }

    fn stepper(&self) -> Option<AtrStep> {
        let prev_close = self.prev_close.filter(|_| self.ranges >= self.period)?;
        Some(AtrStep {
            prev_close,
            atr: self.atr,
            n: self.period as f64,
        })
    }

    fn resume(&mut self, step: AtrStep, taken: usize) {
        self.prev_close = Some(step.prev_close);
        self.atr = step.atr;
        self.ranges += taken as u64;
        self.seen += taken as u64;
    }
}

impl Kernel for Atr {
    #[inline(always)]
    fn update(&mut self, _slots: &mut [f64], bar: &BarInput) {
        if recurrence::update_seeded(self, bar) {
            return;
        }
        // Seeding: sum the first `period` true ranges, divide once they are all in.
        self.seen += 1;
        let Some(prev) = self.prev_close.replace(bar.close) else {
            return;
        };
        self.ranges += 1;
        self.atr += true_range(bar.high, bar.low, prev);
        if self.ranges == self.period {
            self.atr /= self.period as f64;
        }
    }

    fn warm_block(&mut self, _slots: &mut [f64], block: &BarsView<'_, f64>) {
        recurrence::warm_alone(self, block);
    }

    fn inputs(&self) -> Inputs {
        Inputs::HIGH_LOW_CLOSE
    }

    fn values(&self, _slots: &[f64]) -> Outputs {
        one(real(self.atr))
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

impl Packed for Atr {
    const WORDS: usize = 4;

    fn pack(&self, words: &mut [f64]) {
        let words = &mut words[..Self::WORDS];
        words[0] = self.prev_close.unwrap_or(0.0);
        words[1] = word(self.ranges);
        words[2] = self.atr;
        words[3] = tagged(self.seen, [self.prev_close.is_some(), false, false]);
    }

    fn unpack(template: &Self, words: &[f64]) -> Self {
        let words = &words[..Self::WORDS];
        let (seen, [has_prev, ..]) = untag(words[3]);
        Self {
            period: template.period,
            prev_close: has_prev.then_some(words[0]),
            ranges: int(words[1]),
            atr: words[2],
            seen,
        }
    }
}

impl Define for Atr {
    const DECLARED: Declared = Declared::new("spine_core.features.atr", &["period"])
        .outputs(&[("value", ValueType::Decimal, PRICE)])
        .defaults(&[("atr_14", &[("period", "14")])]);

    fn build(params: &Params<'_>) -> Result<Self, FeatureError> {
        Ok(Self::new(params.integer("period", 1)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::features::primitives::kernel::Owned;
    use crate::features::primitives::testing::{batch_equals_incremental, first, series};

    fn bar(ts: u64, high: f64, low: f64, close: f64) -> BarInput {
        BarInput {
            ts_event: ts,
            open: close,
            high,
            low,
            close,
            volume: 1.0,
        }
    }

    #[test]
    fn true_range_uses_the_previous_close() {
        let mut atr = Owned::new(Atr::new(2));
        atr.update(&bar(1, 10.0, 9.0, 9.5));
        atr.update(&bar(2, 12.0, 11.0, 11.5)); // gap up: tr = 12 - 9.5 = 2.5
        atr.update(&bar(3, 11.6, 11.0, 11.2)); // tr = 0.6
        assert!((first(&atr) - 1.55).abs() < 1e-12);
        atr.update(&bar(4, 11.2, 10.2, 10.5)); // tr = 1.0
        assert!((first(&atr) - (1.55 + 1.0) / 2.0).abs() < 1e-12);
        assert_eq!(atr.warmup_bars(), 3);
        batch_equals_incremental(Atr::new(14), &series(200));
    }
}
