//! Rate of change of the close over `period` bars, in percent:
//! `100 * (close - close[period bars ago]) / close[period bars ago]`. A zero base close is
//! undefined (ABSENT `INPUT_UNAVAILABLE`). Warm-up: `period + 1` bars.

use crate::features::engine::packed::{int, word, Packed};
use crate::features::engine::ring::{reads_closes, Ring};
use crate::features::{len_of, one, real, BarBlock, BarInput, Inputs, Kernel, Outputs, Raw};

/// ROC(period), percent; its window is its `period + 1` slots (or, viewing, another
/// kernel's ring of at least `period + 1` closes).
#[derive(Debug, Clone, Copy)]
pub struct Roc {
    closes: Ring,
    period: usize,
    seen: u64,
}

impl Roc {
    /// A fresh ROC; `period` is at least 1.
    #[must_use]
    pub fn new(period: u64) -> Self {
        let period = len_of(period.max(1));
        Self {
            closes: Ring::new(period.saturating_add(1)),
            period,
            seen: 0,
        }
    }
}

reads_closes!(Roc);

impl Kernel for Roc {
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
        let close = self.closes.nth_newest(slots, 0);
        let base = self.closes.nth_newest(slots, self.period);
        match (close, base) {
            (Some(close), Some(base)) if base != 0.0 => one(real(100.0 * (close - base) / base)),
            _ => one(Raw::Undefined),
        }
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

impl Packed for Roc {
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
    fn percent_change_over_period() {
        let mut roc = Owned::new(Roc::new(2));
        for (i, c) in [50.0, 80.0, 55.0, 60.0].into_iter().enumerate() {
            roc.update(&flat(i as u64, c, 1.0));
        }
        // 60 against 80 (two bars earlier).
        assert!((first(&roc) + 25.0).abs() < 1e-12);
        assert_eq!(roc.warmup_bars(), 3);
        let mut zero = Owned::new(Roc::new(1));
        zero.update(&flat(0, 0.0, 1.0));
        zero.update(&flat(1, 1.0, 1.0));
        assert_eq!(zero.values()[0], Raw::Undefined);
        batch_equals_incremental(Roc::new(10), &series(100));
    }
}
