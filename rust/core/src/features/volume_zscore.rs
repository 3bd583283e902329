//! Volume z-score: `(volume - mean) / std` over the last `period` volumes including the
//! current bar, with the population standard deviation. A window of equal volumes is
//! undefined (ABSENT `INPUT_UNAVAILABLE`). Warm-up: `period` bars.
//!
//! Like Bollinger's, the kernel keeps only the window and computes mean and variance from
//! it when a row is read (two passes), so a bar's update is a ring write. With a VWAP of at
//! least as long a window in the layout, it keeps nothing and reads the volumes of VWAP's
//! ring instead (`layout.rs`): the same values in the same order, the same bits.

use super::packed::{int, word, Packed};
use super::window::Ring;
use super::{len_of, one, real, BarBlock, BarInput, Inputs, Kernel, Outputs, Raw};

/// Where a ring's volumes sit: entry `i` at slot `stride * i + offset`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Strided {
    pub(crate) stride: usize,
    pub(crate) offset: usize,
}

impl Strided {
    /// A ring of the values alone.
    pub(crate) const PLAIN: Self = Self {
        stride: 1,
        offset: 0,
    };
}

/// VolumeZscore(period); its window is its `period` slots (or, viewing, the volumes of
/// another kernel's ring of at least `period` entries).
#[derive(Debug, Clone, Copy)]
pub struct VolumeZscore {
    volumes: Ring,
    at: Strided,
    period: usize,
    seen: u64,
}

impl VolumeZscore {
    /// A fresh kernel; `period` is at least 1.
    #[must_use]
    pub fn new(period: u64) -> Self {
        let period = len_of(period.max(1));
        Self {
            volumes: Ring::new(period),
            at: Strided::PLAIN,
            period,
            seen: 0,
        }
    }

    /// The ring of every volume taken (the window), where they sit, for a kernel that
    /// reads it.
    pub(crate) fn volumes(&self) -> (Ring, Strided) {
        (self.volumes, self.at)
    }

    /// This kernel reading the volumes of another kernel's ring of every bar it took (at
    /// least `period` entries), after `seen` bars.
    #[must_use]
    pub(crate) fn viewing(&self, (volumes, at): (Ring, Strided), seen: u64) -> Self {
        Self {
            volumes,
            at,
            seen,
            ..*self
        }
    }
}

impl Kernel for VolumeZscore {
    fn slots(&self) -> usize {
        self.volumes.slots()
    }

    #[inline(always)]
    fn update(&mut self, slots: &mut [f64], bar: &BarInput) {
        self.volumes.push(slots, bar.volume);
        self.seen += 1;
    }

    fn warm_block(&mut self, slots: &mut [f64], block: &BarBlock<'_>) {
        self.volumes.push_slice(slots, block.volume);
        self.seen += block.len() as u64;
    }

    fn inputs(&self) -> Inputs {
        Inputs {
            volume: true,
            ..Inputs::default()
        }
    }

    fn values(&self, slots: &[f64]) -> Outputs {
        let Strided { stride, offset } = self.at;
        let window = || {
            self.volumes
                .newest_at(self.period)
                .map(move |i| slots.get(stride * i + offset).copied().unwrap_or(f64::NAN))
        };
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
        self.volumes.clear();
        self.seen = 0;
    }
}

impl Packed for VolumeZscore {
    const WORDS: usize = Ring::WORDS + 1;

    fn pack(&self, words: &mut [f64]) {
        self.volumes.pack(words);
        words[Ring::WORDS] = word(self.seen);
    }

    fn unpack(template: &Self, words: &[f64]) -> Self {
        Self {
            volumes: Packed::unpack(&template.volumes, words),
            seen: int(words[Ring::WORDS]),
            ..*template
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
