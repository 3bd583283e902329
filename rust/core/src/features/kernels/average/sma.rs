//! Simple moving average of the close over `period` bars. Warm-up: `period` bars.
//!
//! The kernel keeps only the window's closes; the mean is summed from them when a row is
//! read (oldest first), so a bar's update is a ring write. The same sum serves a kernel that
//! reads another kernel's ring of closes instead of keeping one (see [`Sma::viewing`] and
//! `layout.rs`): both give the same bits.

use crate::features::engine::packed::{int, word, Packed};
use crate::features::engine::ring::{reads_closes, Ring};
use crate::features::{len_of, one, real, BarBlock, BarInput, Inputs, Kernel, Outputs};

/// SMA(period) of closes; its window is its `period` slots (or, viewing, another kernel's
/// ring of at least `period` closes).
#[derive(Debug, Clone, Copy)]
pub struct Sma {
    closes: Ring,
    period: usize,
    seen: u64,
}

impl Sma {
    /// A fresh SMA; `period` is at least 1 (validated by the registry).
    #[must_use]
    pub fn new(period: u64) -> Self {
        let period = len_of(period.max(1));
        Self {
            closes: Ring::new(period),
            period,
            seen: 0,
        }
    }

    /// The current mean of the window (of the bars seen, before warm): the newest closes
    /// summed oldest first.
    #[must_use]
    pub fn mean(&self, slots: &[f64]) -> f64 {
        let (older, newer) = self.closes.newest(slots, self.period);
        let n = older.len() + newer.len();
        if n == 0 {
            return f64::NAN;
        }
        let sum = newer
            .iter()
            .fold(older.iter().sum::<f64>(), |sum, x| sum + x);
        sum / n as f64
    }
}

reads_closes!(Sma);

impl Kernel for Sma {
    fn slots(&self) -> usize {
        self.closes.slots()
    }

    #[inline(always)]
    fn update(&mut self, slots: &mut [f64], bar: &BarInput) {
        self.closes.push(slots, bar.close);
        self.seen += 1;
    }

    fn warm_block(&mut self, slots: &mut [f64], block: &BarBlock<'_>) {
        self.closes.push_slice(slots, block.close);
        self.seen += block.len() as u64;
    }

    fn inputs(&self) -> Inputs {
        Inputs::CLOSE
    }

    fn values(&self, slots: &[f64]) -> Outputs {
        one(real(self.mean(slots)))
    }

    fn warmup_bars(&self) -> u64 {
        self.period as u64
    }

    fn bars_seen(&self) -> u64 {
        self.seen
    }

    fn reset(&mut self) {
        self.closes.clear();
        self.seen = 0;
    }
}

impl Packed for Sma {
    const WORDS: usize = Ring::WORDS + 1;

    fn pack(&self, words: &mut [f64]) {
        self.closes.pack(words);
        words[Ring::WORDS] = word(self.seen);
    }

    fn unpack(template: &Self, words: &[f64]) -> Self {
        Self {
            closes: Packed::unpack(&template.closes, words),
            seen: int(words[Ring::WORDS]),
            ..*template
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::features::testing::{batch_equals_incremental, first, flat, series};
    use crate::features::Owned;

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
