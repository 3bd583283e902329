//! Volume z-score: `(volume - mean) / std` over the last `period` volumes including the
//! current bar, with the population standard deviation. A window of equal volumes is
//! undefined (ABSENT `INPUT_UNAVAILABLE`). Warm-up: `period` bars.

use super::packed::{int, word, Packed};
use super::window::RollingMoments;
use super::{len_of, one, real, BarBlock, BarInput, Inputs, Kernel, Outputs, Raw};

/// VolumeZscore(period); its window is its `period` slots.
#[derive(Debug, Clone, Copy)]
pub struct VolumeZscore {
    moments: RollingMoments,
    volume: f64,
    seen: u64,
}

impl VolumeZscore {
    /// A fresh kernel; `period` is at least 1.
    #[must_use]
    pub fn new(period: u64) -> Self {
        Self {
            moments: RollingMoments::new(len_of(period.max(1))),
            volume: f64::NAN,
            seen: 0,
        }
    }
}

impl Kernel for VolumeZscore {
    fn slots(&self) -> usize {
        self.moments.slots()
    }

    #[inline(always)]
    fn update(&mut self, slots: &mut [f64], bar: &BarInput) {
        self.moments.push(slots, bar.volume);
        self.volume = bar.volume;
        self.seen += 1;
    }

    fn warm_block(&mut self, slots: &mut [f64], block: &BarBlock<'_>) {
        self.moments.push_slice(slots, block.volume);
        if let Some(&volume) = block.volume.last() {
            self.volume = volume;
        }
        self.seen += block.len() as u64;
    }

    fn inputs(&self) -> Inputs {
        Inputs {
            volume: true,
            ..Inputs::default()
        }
    }

    fn values(&self, _slots: &[f64]) -> Outputs {
        match self.moments.variance(0) {
            Some(variance) if variance > 0.0 => {
                one(real((self.volume - self.moments.mean()) / variance.sqrt()))
            }
            _ => one(Raw::Undefined),
        }
    }

    fn warmup_bars(&self) -> u64 {
        self.moments.slots() as u64
    }

    fn bars_seen(&self) -> u64 {
        self.seen
    }

    fn reset(&mut self) {
        self.moments.clear();
        self.volume = f64::NAN;
        self.seen = 0;
    }
}

impl Packed for VolumeZscore {
    const WORDS: usize = RollingMoments::WORDS + 2;

    fn pack(&self, words: &mut [f64]) {
        const M: usize = RollingMoments::WORDS;
        let words = &mut words[..Self::WORDS];
        self.moments.pack(words);
        words[M] = self.volume;
        words[M + 1] = word(self.seen);
    }

    fn unpack(template: &Self, words: &[f64]) -> Self {
        const M: usize = RollingMoments::WORDS;
        let words = &words[..Self::WORDS];
        Self {
            moments: Packed::unpack(&template.moments, words),
            volume: words[M],
            seen: int(words[M + 1]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{batch_equals_incremental, first, flat, series};
    use super::super::Owned;
    use super::*;

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
