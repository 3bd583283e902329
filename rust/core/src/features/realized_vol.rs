//! Realised volatility: the sample standard deviation (n - 1 denominator) of the last
//! `period` log returns `ln(close / prev_close)`, times `sqrt(annualization)` (1 = not
//! annualised; the default specs leave it at 1 because one spec serves every resolution).
//! A return is undefined when either close is not positive; while one is in the window the
//! value is ABSENT `INPUT_UNAVAILABLE`. Warm-up: `period + 1` bars (`period` returns).

use super::packed::{int, tagged, untag, word, Packed};
use super::window::RollingMoments;
use super::{len_of, one, real, BarInput, Inputs, Kernel, Outputs, Raw};

/// RealizedVol(period, annualization); its window is its `period` slots.
#[derive(Debug, Clone, Copy)]
pub struct RealizedVol {
    scale: f64,
    moments: RollingMoments,
    prev_close: Option<f64>,
    returns: u64,
    /// Index (1-based count of returns) of the newest undefined return, 0 for none.
    last_invalid: u64,
    seen: u64,
}

impl RealizedVol {
    /// A fresh kernel; `period` at least 2, `annualization` at least 1 (validated by the
    /// registry).
    #[must_use]
    pub fn new(period: u64, annualization: u64) -> Self {
        Self {
            scale: (annualization.max(1) as f64).sqrt(),
            moments: RollingMoments::new(len_of(period.max(2))),
            prev_close: None,
            returns: 0,
            last_invalid: 0,
            seen: 0,
        }
    }

    fn period(&self) -> u64 {
        self.moments.slots() as u64
    }
}

impl Kernel for RealizedVol {
    fn slots(&self) -> usize {
        self.moments.slots()
    }

    #[inline(always)]
    fn update(&mut self, slots: &mut [f64], bar: &BarInput) {
        self.seen += 1;
        let close = bar.close;
        let Some(prev) = self.prev_close.replace(close) else {
            return;
        };
        self.returns += 1;
        if close > 0.0 && prev > 0.0 {
            self.moments.push(slots, (close / prev).ln());
        } else {
            self.last_invalid = self.returns;
            self.moments.push(slots, 0.0);
        }
    }

    fn inputs(&self) -> Inputs {
        Inputs::CLOSE
    }

    fn values(&self, _slots: &[f64]) -> Outputs {
        let invalid_in_window =
            self.last_invalid > 0 && self.last_invalid + self.period() > self.returns;
        match self.moments.variance(1) {
            Some(variance) if !invalid_in_window => one(real(variance.sqrt() * self.scale)),
            _ => one(Raw::Undefined),
        }
    }

    fn warmup_bars(&self) -> u64 {
        self.period() + 1
    }

    fn bars_seen(&self) -> u64 {
        self.seen
    }

    fn reset(&mut self) {
        self.moments.clear();
        self.prev_close = None;
        self.returns = 0;
        self.last_invalid = 0;
        self.seen = 0;
    }
}

impl Packed for RealizedVol {
    const WORDS: usize = RollingMoments::WORDS + 4;

    fn pack(&self, words: &mut [f64]) {
        const M: usize = RollingMoments::WORDS;
        let words = &mut words[..Self::WORDS];
        self.moments.pack(words);
        words[M] = self.prev_close.unwrap_or(0.0);
        words[M + 1] = word(self.returns);
        words[M + 2] = word(self.last_invalid);
        words[M + 3] = tagged(self.seen, [self.prev_close.is_some(), false, false]);
    }

    fn unpack(template: &Self, words: &[f64]) -> Self {
        const M: usize = RollingMoments::WORDS;
        let words = &words[..Self::WORDS];
        let (seen, [has_prev, ..]) = untag(words[M + 3]);
        Self {
            scale: template.scale,
            moments: Packed::unpack(&template.moments, words),
            prev_close: has_prev.then_some(words[M]),
            returns: int(words[M + 1]),
            last_invalid: int(words[M + 2]),
            seen,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{batch_equals_incremental, first, flat, series};
    use super::super::Owned;
    use super::*;

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
