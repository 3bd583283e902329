//! Realised volatility: the sample standard deviation (n - 1 denominator) of the last
//! `period` log returns `ln(close / prev_close)`, times `sqrt(annualization)` (1 = not
//! annualised; the default specs leave it at 1 because one spec serves every resolution).
//! A return is undefined when either close is not positive; while one is in the window the
//! value is ABSENT `INPUT_UNAVAILABLE`. Warm-up: `period + 1` bars (`period` returns).
//!
//! Like Bollinger's, the kernel keeps only the window's `period + 1` closes: the returns,
//! their mean and variance (two passes) are computed when a row is read, so a bar's update
//! is a ring write, and with a long enough ring of closes in the layout (the trend's) it
//! keeps nothing and reads that one (`layout.rs`). The logarithms move from every bar to
//! every read: a close updates each state once, and a screener reads a row at most as
//! often, mostly far less.

use crate::features::engine::packed::{int, word, Packed};
use crate::features::engine::ring::{reads_closes, Ring};
use crate::features::{len_of, one, real, BarBlock, BarInput, Inputs, Kernel, Outputs, Raw};

/// RealizedVol(period, annualization); its window is its `period + 1` slots (or, viewing,
/// another kernel's ring of at least `period + 1` closes).
#[derive(Debug, Clone, Copy)]
pub struct RealizedVol {
    scale: f64,
    closes: Ring,
    /// Returns in the window.
    period: usize,
    seen: u64,
}

impl RealizedVol {
    /// A fresh kernel; `period` at least 2, `annualization` at least 1 (validated by the
    /// registry).
    #[must_use]
    pub fn new(period: u64, annualization: u64) -> Self {
        let period = len_of(period.max(2));
        Self {
            scale: (annualization.max(1) as f64).sqrt(),
            closes: Ring::new(period.saturating_add(1)),
            period,
            seen: 0,
        }
    }

    /// The window's log returns, oldest first; `None` until it holds `period` of them or
    /// while one is undefined.
    fn returns(&self, slots: &[f64]) -> Option<Vec<f64>> {
        let (older, newer) = self.closes.newest(slots, self.period + 1);
        if older.len() + newer.len() <= self.period {
            return None;
        }
        let mut closes = older.iter().chain(newer).copied();
        let mut prev = closes.next()?;
        let mut returns = Vec::with_capacity(self.period);
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

reads_closes!(RealizedVol);

impl Kernel for RealizedVol {
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
        let Some(returns) = self.returns(slots) else {
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

    fn warmup_bars(&self) -> u64 {
        self.period as u64 + 1
    }

    fn bars_seen(&self) -> u64 {
        self.seen
    }

    fn reset(&mut self) {
        self.closes.clear();
        self.seen = 0;
    }
}

impl Packed for RealizedVol {
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
    fn sample_std_of_log_returns() {
        let closes = [100.0, 101.0, 99.0, 102.0];
        let mut rv = Owned::new(RealizedVol::new(3, 1));
        for (i, c) in closes.into_iter().enumerate() {
            rv.update(&flat(i as u64, c, 1.0));
        }
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
