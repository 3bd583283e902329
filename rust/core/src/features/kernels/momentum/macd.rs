//! MACD: `line` = EMA(fast) - EMA(slow) of the close (both seeded with the first close, as
//! NautilusTrader), `signal` = EMA(signal) of the line fed from the bar the line is warm
//! (bar `slow`, seeded with that line value), `histogram` = line - signal.
//! Warm-up: `slow + signal - 1` bars for every output (the same count as TA-Lib's first value).

use crate::bars::BarsView;
use crate::features::error::FeatureError;
use crate::features::kernels::average::ema::{EmaCore, EmaStep};
use crate::features::primitives::block::Inputs;
use crate::features::primitives::define::{Declared, Define, Params, PRICE};
use crate::features::primitives::input::BarInput;
use crate::features::primitives::kernel::{real, Kernel, Outputs};
use crate::features::primitives::packed::{tagged, untag, Packed};
use crate::features::primitives::recurrence::{self, Recurrence, Step};
use crate::features::spec::ValueType;
use crate::features::value::Raw;

/// MACD(fast, slow, signal): outputs line, signal, histogram.
#[derive(Debug, Clone, Copy)]
pub struct Macd {
    fast_period: u64,
    slow_period: u64,
    signal_period: u64,
    fast: EmaCore,
    slow: EmaCore,
    signal: EmaCore,
    seen: u64,
}

impl Macd {
    /// A fresh MACD; periods at least 1 and `fast < slow` (validated by the registry).
    #[must_use]
    pub fn new(fast: u64, slow: u64, signal: u64) -> Self {
        Self {
            fast_period: fast.max(1),
            slow_period: slow.max(1),
            signal_period: signal.max(1),
            fast: EmaCore::new(fast),
            slow: EmaCore::new(slow),
            signal: EmaCore::new(signal),
            seen: 0,
        }
    }

    fn line(&self) -> f64 {
        self.fast.value() - self.slow.value()
    }
}

/// MACD once its signal is seeded (bar `slow`): three EMA recurrences, the signal's fed the
/// line.
#[derive(Debug, Clone, Copy)]
pub(crate) struct MacdStep {
    fast: EmaStep,
    slow: EmaStep,
    signal: EmaStep,
}

impl Step for MacdStep {
    #[inline]
    fn step(&mut self, _high: f64, _low: f64, close: f64) {
        self.fast.push(close);
        self.slow.push(close);
        self.signal.push(self.fast.value() - self.slow.value());
    }
}

impl Recurrence for Macd {
    type Step = MacdStep;

    fn bars_to_seed(&self) -> u64 {
        self.slow_period.saturating_sub(self.seen)
    }

    fn stepper(&self) -> Option<MacdStep> {
        Some(MacdStep {
            fast: self.fast.stepper()?,
            slow: self.slow.stepper()?,
            signal: self.signal.stepper()?,
        })
    }

    fn resume(&mut self, step: MacdStep, taken: usize) {
        step.fast.resume(&mut self.fast);
        step.slow.resume(&mut self.slow);
        step.signal.resume(&mut self.signal);
        self.seen += taken as u64;
    }
}

impl Kernel for Macd {
    #[inline(always)]
    fn update(&mut self, _slots: &mut [f64], bar: &BarInput) {
        if recurrence::update_seeded(self, bar) {
            return;
        }
        self.fast.push(bar.close);
        self.slow.push(bar.close);
        self.seen += 1;
        if self.seen >= self.slow_period {
            let line = self.line();
            self.signal.push(line);
        }
    }

    fn warm_block(&mut self, _slots: &mut [f64], block: &BarsView<'_, f64>) {
        recurrence::warm_alone(self, block);
    }

    fn inputs(&self) -> Inputs {
        Inputs::CLOSE
    }

    fn values(&self, _slots: &[f64]) -> Outputs {
        let line = self.line();
        let signal = self.signal.value();
        [
            real(line),
            real(signal),
            real(line - signal),
            Raw::Undefined,
        ]
    }

    fn warmup_bars(&self) -> u64 {
        self.slow_period + self.signal_period - 1
    }

    fn bars_seen(&self) -> u64 {
        self.seen
    }

    fn reset(&mut self) {
        *self = Self::new(self.fast_period, self.slow_period, self.signal_period);
    }
}

impl Packed for Macd {
    const WORDS: usize = 4;

    fn pack(&self, words: &mut [f64]) {
        let words = &mut words[..Self::WORDS];
        words[0] = self.fast.value();
        words[1] = self.slow.value();
        words[2] = self.signal.value();
        let seeded = [&self.fast, &self.slow, &self.signal].map(EmaCore::seeded);
        words[3] = tagged(self.seen, seeded);
    }

    fn unpack(template: &Self, words: &[f64]) -> Self {
        let words = &words[..Self::WORDS];
        let (seen, [fast, slow, signal]) = untag(words[3]);
        Self {
            fast: template.fast.restored(words[0], fast),
            slow: template.slow.restored(words[1], slow),
            signal: template.signal.restored(words[2], signal),
            seen,
            ..*template
        }
    }
}

impl Define for Macd {
    const DECLARED: Declared =
        Declared::new("spine_core.features.macd", &["fast", "signal", "slow"])
            .outputs(&[
                ("line", ValueType::Decimal, PRICE),
                ("signal", ValueType::Decimal, PRICE),
                ("histogram", ValueType::Decimal, PRICE),
            ])
            .defaults(&[(
                "macd_12_26_9",
                &[("fast", "12"), ("slow", "26"), ("signal", "9")],
            )]);

    fn build(params: &Params<'_>) -> Result<Self, FeatureError> {
        let (fast, slow) = (params.integer("fast", 1)?, params.integer("slow", 2)?);
        if fast >= slow {
            let text = params.get("fast")?;
            return Err(params.bad("fast", text, format!("less than slow ({slow})")));
        }
        Ok(Self::new(fast, slow, params.integer("signal", 1)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::features::kernels::average::ema::Ema;
    use crate::features::primitives::kernel::Owned;
    use crate::features::primitives::testing::{batch_equals_incremental, first, nth, series};

    #[test]
    fn line_is_the_difference_of_two_emas() {
        let bars = series(100);
        let (mut macd, mut fast, mut slow) = (
            Owned::new(Macd::new(12, 26, 9)),
            Owned::new(Ema::new(12)),
            Owned::new(Ema::new(26)),
        );
        let mut signal = EmaCore::new(9);
        for (i, bar) in bars.iter().enumerate() {
            macd.update(bar);
            fast.update(bar);
            slow.update(bar);
            if i + 1 >= 26 {
                signal.push(first(&fast) - first(&slow));
            }
        }
        assert_eq!(nth(&macd, 0), first(&fast) - first(&slow));
        assert_eq!(nth(&macd, 1), signal.value());
        assert_eq!(nth(&macd, 2), nth(&macd, 0) - nth(&macd, 1));
        assert_eq!(macd.warmup_bars(), 34);
        batch_equals_incremental(Macd::new(12, 26, 9), &bars);
    }
}
