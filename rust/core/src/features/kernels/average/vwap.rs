//! Rolling volume-weighted average price over the last `period` bars, using the typical price
//! `(high + low + close) / 3`: `sum(tp * volume) / sum(volume)`, summed oldest first. A
//! window with no volume is undefined (ABSENT `INPUT_UNAVAILABLE`), detected exactly by
//! finding no non-zero volume rather than by testing a float sum against zero. Warm-up:
//! `period` bars.
//!
//! The kernel keeps only the window's bars ([`BarRing`]); the sums are computed when a row
//! is read, so a bar's update is one entry written, and with a long enough ring in its
//! layout it keeps nothing and reads that one (`layout.rs`).

use crate::features::engine::bar_ring::{reads_bars, BarRing, CLOSE, HIGH, INPUTS, LOW, VOLUME};
use crate::features::engine::packed::{int, word, Packed};
use crate::features::{len_of, one, real, BarBlock, BarInput, Inputs, Kernel, Outputs, Raw};

/// Vwap(period); its window is a ring of `period` bars (or, viewing, another kernel's ring of
/// at least `period`).
#[derive(Debug, Clone, Copy)]
pub struct Vwap {
    bars: BarRing,
    period: usize,
    seen: u64,
}

impl Vwap {
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

reads_bars!(Vwap);

impl Kernel for Vwap {
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
        let window = self.bars.newest(slots, self.period);
        if window.clone().all(|bar| bar[VOLUME] == 0.0) {
            return one(Raw::Undefined);
        }
        let (mut price_volume, mut volume) = (-0.0, -0.0);
        for bar in window {
            let typical = (bar[HIGH] + bar[LOW] + bar[CLOSE]) / 3.0;
            price_volume += typical * bar[VOLUME];
            volume += bar[VOLUME];
        }
        if volume <= 0.0 {
            return one(Raw::Undefined);
        }
        one(real(price_volume / volume))
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

impl Packed for Vwap {
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
    fn weights_typical_price_by_volume() {
        let mut vwap = Owned::new(Vwap::new(2));
        let bar = |ts, h: f64, l: f64, c: f64, v| BarInput {
            ts_event: ts,
            open: c,
            high: h,
            low: l,
            close: c,
            volume: v,
        };
        vwap.update(&bar(1, 100.0, 100.0, 100.0, 50.0));
        vwap.update(&bar(2, 12.0, 9.0, 9.0, 1.0)); // tp 10
        vwap.update(&bar(3, 21.0, 19.0, 20.0, 3.0)); // tp 20
        assert!((first(&vwap) - 70.0 / 4.0).abs() < 1e-12);
    }

    #[test]
    fn no_volume_is_undefined_and_recovers() {
        let mut vwap = Owned::new(Vwap::new(2));
        vwap.warm(&[flat(1, 5.0, 2.0), flat(2, 5.0, 0.0), flat(3, 5.0, 0.0)]);
        assert_eq!(vwap.values()[0], Raw::Undefined);
        vwap.update(&flat(4, 6.0, 1.0));
        assert_eq!(first(&vwap), 6.0);
        batch_equals_incremental(Vwap::new(20), &series(300));
    }

    /// The sums are those of the window summed oldest first, bit for bit.
    #[test]
    fn the_sums_are_the_window_summed_in_order() {
        let bars = series(200);
        for period in [1usize, 2, 7, 20] {
            let mut vwap = Owned::new(Vwap::new(period as u64));
            for (i, bar) in bars.iter().enumerate() {
                vwap.update(bar);
                let window = &bars[(i + 1).saturating_sub(period)..=i];
                let typical = |b: &BarInput| (b.high + b.low + b.close) / 3.0;
                let pv: f64 = window.iter().map(|b| typical(b) * b.volume).sum();
                let v: f64 = window.iter().map(|b| b.volume).sum();
                assert_eq!(first(&vwap).to_bits(), (pv / v).to_bits());
            }
        }
    }
}
