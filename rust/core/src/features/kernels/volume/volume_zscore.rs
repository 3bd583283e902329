//! Volume z-score: `(volume - mean) / std` over the last `period` volumes including the
//! current bar, with the population standard deviation. A window of equal volumes is
//! undefined (ABSENT `INPUT_UNAVAILABLE`). Warm-up: `period` bars.
//!
//! Like Bollinger's, the kernel keeps only the window (a [`BarRing`], the bars' fields VWAP
//! and Donchian read too) and computes mean and variance from it when a row is read (two
//! passes), so a bar's update is one entry written. With a long enough ring in its layout
//! it keeps nothing and reads that one (`layout.rs`): the same values in the same order,
//! the same bits.

use crate::features::engine::bar_ring::{reads_bars, BarRing, INPUTS, VOLUME};
use crate::features::engine::packed::{int, word, Packed};
use crate::features::{len_of, one, real, BarBlock, BarInput, Inputs, Kernel, Outputs, Raw};

/// VolumeZscore(period); its window is a ring of `period` bars (or, viewing, another
/// kernel's ring of at least `period`).
#[derive(Debug, Clone, Copy)]
pub struct VolumeZscore {
    bars: BarRing,
    period: usize,
    seen: u64,
}

impl VolumeZscore {
    /// A fresh kernel; `period` is at least 1.
    #[must_use]
    pub fn new(period: u64) -> Self {
        let period = len_of(period.max(1));
        Self {
            bars: BarRing::new(period),
            period,
            seen: 0,
        }
    }
}

reads_bars!(VolumeZscore);

impl Kernel for VolumeZscore {
    fn slots(&self) -> usize {
        self.bars.slots()
    }

    #[inline(always)]
    fn update(&mut self, slots: &mut [f64], bar: &BarInput) {
        self.bars.push(slots, bar);
        self.seen += 1;
    }

    fn warm_block(&mut self, slots: &mut [f64], block: &BarBlock<'_>) {
        self.bars.push_block(slots, block);
        self.seen += block.len() as u64;
    }

    fn inputs(&self) -> Inputs {
        INPUTS
    }

    fn values(&self, slots: &[f64]) -> Outputs {
        let window = || self.bars.newest(slots, self.period).map(|bar| bar[VOLUME]);
        let (Some(first), Some(volume)) = (window().next(), window().last()) else {
            return one(Raw::Undefined);
        };
        if window().all(|x| x == first) {
            return one(Raw::Undefined);
        }
        let n = window().count() as f64;
        let mean = window().sum::<f64>() / n;
        let variance = window().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n;
        if variance > 0.0 {
            one(real((volume - mean) / variance.sqrt()))
        } else {
            one(Raw::Undefined)
        }
    }

    fn warmup_bars(&self) -> u64 {
        self.period as u64
    }

    fn bars_seen(&self) -> u64 {
        self.seen
    }

    fn reset(&mut self) {
        self.bars.clear();
        self.seen = 0;
    }
}

impl Packed for VolumeZscore {
    const WORDS: usize = BarRing::WORDS + 1;

    fn pack(&self, words: &mut [f64]) {
        self.bars.pack(words);
        words[BarRing::WORDS] = word(self.seen);
    }

    fn unpack(template: &Self, words: &[f64]) -> Self {
        Self {
            bars: Packed::unpack(&template.bars, words),
            seen: int(words[BarRing::WORDS]),
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
    fn z_of_the_current_volume() {
        let mut z = Owned::new(VolumeZscore::new(4));
        for (i, v) in [1.0, 2.0, 3.0, 6.0].into_iter().enumerate() {
            z.update(&flat(i as u64, 1.0, v));
        }
        // mean 3, population variance (4 + 1 + 0 + 9) / 4 = 3.5.
        assert!((first(&z) - 3.0 / 3.5f64.sqrt()).abs() < 1e-12);
        let mut same = Owned::new(VolumeZscore::new(2));
        same.warm(&[flat(0, 1.0, 5.0), flat(1, 1.0, 5.0)]);
        assert_eq!(same.values()[0], Raw::Undefined);
        batch_equals_incremental(VolumeZscore::new(20), &series(300));
    }
}
