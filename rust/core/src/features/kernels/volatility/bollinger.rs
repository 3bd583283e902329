//! Bollinger bands over the close: `mid` = SMA(period), `upper`/`lower` = mid ± k × the
//! population standard deviation of the window (as TA-Lib), and `percent_b` =
//! `(close - lower) / (upper - lower)`. A window of equal closes has zero width: the bands
//! equal the mid and `percent_b` is ABSENT `INPUT_UNAVAILABLE`. Warm-up: `period` bars.
//!
//! The kernel keeps only the window's closes; mean and variance are computed from them
//! when a row is read, in two passes (the mean, then the squared deviations from it), so a
//! bar's update is a ring write and no running sum drifts. As with the SMA, a kernel
//! viewing another's ring of closes (`layout.rs`) reads the same values in the same order:
//! the same bits, and the mid equals the SMA of the same period bit for bit.

use crate::features::engine::packed::{int, word, Packed};
use crate::features::engine::ring::{reads_closes, Ring};
use crate::features::{len_of, real, BarBlock, BarInput, Inputs, Kernel, Outputs, Raw};

/// Bollinger(period, k): outputs mid, upper, lower, percent_b; its window is its `period`
/// slots (or, viewing, another kernel's ring of at least `period` closes).
#[derive(Debug, Clone, Copy)]
pub struct Bollinger {
    k: f64,
    closes: Ring,
    period: usize,
    seen: u64,
}

impl Bollinger {
    /// Fresh bands; `period` is at least 1, `k` positive (validated by the registry).
    #[must_use]
    pub fn new(period: u64, k: f64) -> Self {
        let period = len_of(period.max(1));
        Self {
            k,
            closes: Ring::new(period),
            period,
            seen: 0,
        }
    }
}

reads_closes!(Bollinger);

impl Kernel for Bollinger {
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
        let (older, newer) = self.closes.newest(slots, self.period);
        let window = || older.iter().chain(newer).copied();
        let (Some(first), Some(close)) = (window().next(), window().last()) else {
            return [Raw::Undefined; 4];
        };
        let n = (older.len() + newer.len()) as f64;
        // Summed oldest first from -0.0, as the SMA sums: the same mid.
        let mid = window().sum::<f64>() / n;
        if window().all(|x| x == first) {
            // Exactly zero width, not a rounding residue of the mean.
            return [real(mid), real(mid), real(mid), Raw::Undefined];
        }
        let variance = window().map(|x| (x - mid) * (x - mid)).sum::<f64>() / n;
        let width = self.k * variance.sqrt();
        let (upper, lower) = (mid + width, mid - width);
        let percent_b = if width > 0.0 {
            real((close - lower) / (upper - lower))
        } else {
            Raw::Undefined
        };
        [real(mid), real(upper), real(lower), percent_b]
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

impl Packed for Bollinger {
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
    use crate::features::testing::{batch_equals_incremental, flat, nth, series};
    use crate::features::Owned;

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
