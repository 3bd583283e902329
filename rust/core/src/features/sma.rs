//! Simple moving average of the close over `period` bars. Warm-up: `period` bars.

use super::packed::{int, word, Packed};
use super::window::RollingSum;
use super::{len_of, one, real, BarBlock, BarInput, Inputs, Kernel, Outputs};

/// SMA(period) of closes; its window is its `period` slots.
#[derive(Debug, Clone, Copy)]
pub struct Sma {
    sum: RollingSum,
    seen: u64,
}

impl Sma {
    /// A fresh SMA; `period` is at least 1 (validated by the registry).
    #[must_use]
    pub fn new(period: u64) -> Self {
        Self {
            sum: RollingSum::new(len_of(period.max(1))),
            seen: 0,
        }
    }

    /// The current mean of the window (of the bars seen, before warm).
    #[must_use]
    pub fn mean(&self) -> f64 {
        if self.sum.is_empty() {
            return f64::NAN;
        }
        self.sum.sum() / self.sum.len() as f64
    }
}

impl Kernel for Sma {
    fn slots(&self) -> usize {
        self.sum.slots()
    }

    #[inline(always)]
    fn update(&mut self, slots: &mut [f64], bar: &BarInput) {
        self.sum.push(slots, bar.close);
        self.seen += 1;
    }

    fn warm_block(&mut self, slots: &mut [f64], block: &BarBlock<'_>) {
        self.sum.push_slice(slots, block.close);
        self.seen += block.len() as u64;
    }

    fn inputs(&self) -> Inputs {
        Inputs::CLOSE
    }

    fn values(&self, _slots: &[f64]) -> Outputs {
        one(real(self.mean()))
    }

    fn warmup_bars(&self) -> u64 {
        self.sum.slots() as u64
    }

    fn bars_seen(&self) -> u64 {
        self.seen
    }

    fn reset(&mut self) {
        self.sum.clear();
        self.seen = 0;
    }
}

impl Packed for Sma {
    const WORDS: usize = RollingSum::WORDS + 1;

    fn pack(&self, words: &mut [f64]) {
        self.sum.pack(words);
        words[RollingSum::WORDS] = word(self.seen);
    }

    fn unpack(template: &Self, words: &[f64]) -> Self {
        Self {
            sum: Packed::unpack(&template.sum, words),
            seen: int(words[RollingSum::WORDS]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{batch_equals_incremental, first, flat, series};
    use super::super::Owned;
    use super::*;

    #[test]
    fn mean_of_the_last_period_closes() {
        let mut sma = Owned::new(Sma::new(3));
        for (i, c) in [1.0, 2.0, 3.0, 4.0, 10.0].into_iter().enumerate() {
            sma.update(&flat(i as u64, c, 1.0));
        }
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
