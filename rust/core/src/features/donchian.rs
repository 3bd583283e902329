//! Donchian channel: the highest high and lowest low of the last `period` bars, the current
//! bar included, kept with monotonic deques (O(1) amortised). Warm-up: `period` bars.

use super::packed::{int, word, Packed};
use super::window::MonotonicDeque;
use super::{len_of, real, BarInput, Inputs, Kernel, Outputs, Raw};

/// Donchian(period): outputs high, low; its window is the two deques' slots, highs first.
#[derive(Debug, Clone, Copy)]
pub struct Donchian {
    period: u64,
    highs: MonotonicDeque<true>,
    lows: MonotonicDeque<false>,
    seen: u64,
}

impl Donchian {
    /// A fresh channel; `period` is at least 1.
    #[must_use]
    pub fn new(period: u64) -> Self {
        let period = period.max(1);
        Self {
            period,
            highs: MonotonicDeque::new(len_of(period)),
            lows: MonotonicDeque::new(len_of(period)),
            seen: 0,
        }
    }
}

impl Kernel for Donchian {
    fn slots(&self) -> usize {
        self.highs.slots() + self.lows.slots()
    }

    #[inline(always)]
    fn update(&mut self, slots: &mut [f64], bar: &BarInput) {
        let (highs, lows) = slots.split_at_mut(self.highs.slots());
        self.highs.push(highs, bar.high);
        self.lows.push(lows, bar.low);
        self.seen += 1;
    }

    fn inputs(&self) -> Inputs {
        Inputs {
            high: true,
            low: true,
            ..Inputs::default()
        }
    }

    fn values(&self, slots: &[f64]) -> Outputs {
        let or_undefined = |x: Option<f64>| x.map_or(Raw::Undefined, real);
        let (highs, lows) = slots.split_at(self.highs.slots());
        [
            or_undefined(self.highs.extreme(highs)),
            or_undefined(self.lows.extreme(lows)),
            Raw::Undefined,
            Raw::Undefined,
        ]
    }

    fn warmup_bars(&self) -> u64 {
        self.period
    }

    fn bars_seen(&self) -> u64 {
        self.seen
    }

    fn reset(&mut self) {
        self.highs.clear();
        self.lows.clear();
        self.seen = 0;
    }
}

impl Packed for Donchian {
    const WORDS: usize = 2 * MonotonicDeque::<true>::WORDS + 1;

    fn pack(&self, words: &mut [f64]) {
        let words = &mut words[..Self::WORDS];
        let (highs, rest) = words.split_at_mut(MonotonicDeque::<true>::WORDS);
        self.highs.pack(highs);
        self.lows.pack(rest);
        words[Self::WORDS - 1] = word(self.seen);
    }

    fn unpack(template: &Self, words: &[f64]) -> Self {
        let words = &words[..Self::WORDS];
        let (highs, lows) = words.split_at(MonotonicDeque::<true>::WORDS);
        Self {
            period: template.period,
            highs: Packed::unpack(&template.highs, highs),
            lows: Packed::unpack(&template.lows, lows),
            seen: int(words[Self::WORDS - 1]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{batch_equals_incremental, nth, series};
    use super::super::Owned;
    use super::*;

    #[test]
    fn extremes_of_the_window() {
        let bars = series(200);
        let mut channel = Owned::new(Donchian::new(20));
        for (i, bar) in bars.iter().enumerate() {
            channel.update(bar);
            let window = &bars[i.saturating_sub(19)..=i];
            let high = window.iter().map(|b| b.high).fold(f64::MIN, f64::max);
            let low = window.iter().map(|b| b.low).fold(f64::MAX, f64::min);
            assert_eq!(nth(&channel, 0), high);
            assert_eq!(nth(&channel, 1), low);
        }
        batch_equals_incremental(Donchian::new(20), &bars);
    }
}
