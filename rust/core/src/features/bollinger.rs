//! Bollinger bands over the close: `mid` = SMA(period), `upper`/`lower` = mid ± k × the
//! population standard deviation of the window (as TA-Lib), and `percent_b` =
//! `(close - lower) / (upper - lower)`. A window of equal closes has zero width: the bands
//! equal the mid and `percent_b` is ABSENT `INPUT_UNAVAILABLE`. Warm-up: `period` bars.

use super::packed::{int, word, Packed};
use super::window::RollingMoments;
use super::{len_of, real, BarBlock, BarInput, Inputs, Kernel, Outputs, Raw};

/// Bollinger(period, k): outputs mid, upper, lower, percent_b; its window is its `period`
/// slots.
#[derive(Debug, Clone, Copy)]
pub struct Bollinger {
    k: f64,
    moments: RollingMoments,
    close: f64,
    seen: u64,
}

impl Bollinger {
    /// Fresh bands; `period` is at least 1, `k` positive (validated by the registry).
    #[must_use]
    pub fn new(period: u64, k: f64) -> Self {
        Self {
            k,
            moments: RollingMoments::new(len_of(period.max(1))),
            close: f64::NAN,
            seen: 0,
        }
    }

    /// The ring of every close taken (the window), for a kernel that reads it.
    pub(crate) fn closes(&self) -> super::window::Ring {
        self.moments.ring()
    }
}

impl Kernel for Bollinger {
    fn slots(&self) -> usize {
        self.moments.slots()
    }

    #[inline(always)]
    fn update(&mut self, slots: &mut [f64], bar: &BarInput) {
        self.moments.push(slots, bar.close);
        self.close = bar.close;
        self.seen += 1;
    }

    fn warm_block(&mut self, slots: &mut [f64], block: &BarBlock<'_>) {
        self.moments.push_slice(slots, block.close);
        if let Some(&close) = block.close.last() {
            self.close = close;
        }
        self.seen += block.len() as u64;
    }

    fn inputs(&self) -> Inputs {
        Inputs::CLOSE
    }

    fn values(&self, _slots: &[f64]) -> Outputs {
        let Some(variance) = self.moments.variance(0) else {
            return [Raw::Undefined; 4];
        };
        let mid = self.moments.mean();
        let width = self.k * variance.sqrt();
        let (upper, lower) = (mid + width, mid - width);
        let percent_b = if width > 0.0 {
            real((self.close - lower) / (upper - lower))
        } else {
            Raw::Undefined
        };
        [real(mid), real(upper), real(lower), percent_b]
    }

    fn warmup_bars(&self) -> u64 {
        self.moments.slots() as u64
    }

    fn bars_seen(&self) -> u64 {
        self.seen
    }

    fn reset(&mut self) {
        self.moments.clear();
        self.close = f64::NAN;
        self.seen = 0;
    }
}

impl Packed for Bollinger {
    const WORDS: usize = RollingMoments::WORDS + 2;

    fn pack(&self, words: &mut [f64]) {
        const M: usize = RollingMoments::WORDS;
        let words = &mut words[..Self::WORDS];
        self.moments.pack(words);
        words[M] = self.close;
        words[M + 1] = word(self.seen);
    }

    fn unpack(template: &Self, words: &[f64]) -> Self {
        const M: usize = RollingMoments::WORDS;
        let words = &words[..Self::WORDS];
        Self {
            k: template.k,
            moments: Packed::unpack(&template.moments, words),
            close: words[M],
            seen: int(words[M + 1]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{batch_equals_incremental, flat, nth, series};
    use super::super::Owned;
    use super::*;

    #[test]
    fn bands_and_percent_b() {
        let mut bb = Owned::new(Bollinger::new(4, 2.0));
        for (i, c) in [1.0, 2.0, 3.0, 4.0].into_iter().enumerate() {
            bb.update(&flat(i as u64, c, 1.0));
        }
        let std = 1.25f64.sqrt();
        assert!((nth(&bb, 0) - 2.5).abs() < 1e-12);
        assert!((nth(&bb, 1) - (2.5 + 2.0 * std)).abs() < 1e-12);
        assert!((nth(&bb, 2) - (2.5 - 2.0 * std)).abs() < 1e-12);
        assert!((nth(&bb, 3) - (4.0 - (2.5 - 2.0 * std)) / (4.0 * std)).abs() < 1e-12);
    }

    #[test]
    fn flat_window_has_no_percent_b() {
        let mut bb = Owned::new(Bollinger::new(3, 2.0));
        for (i, c) in [9.0, 1.0, 2.0, 2.0, 2.0].into_iter().enumerate() {
            bb.update(&flat(i as u64, c, 1.0));
        }
        let values = bb.values();
        assert_eq!(values[0], Raw::Real(2.0));
        assert_eq!(values[1], Raw::Real(2.0));
        assert_eq!(values[2], Raw::Real(2.0));
        assert_eq!(values[3], Raw::Undefined);
        batch_equals_incremental(Bollinger::new(20, 2.0), &series(300));
    }
}
