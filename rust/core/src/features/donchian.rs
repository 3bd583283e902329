//! Donchian channel: the highest high and lowest low of the last `period` bars, the current
//! bar included. Warm-up: `period` bars.
//!
//! The window is a ring of `(high, low)` pairs, and the state keeps each extreme with the
//! ring entry holding it. A bar writes one entry; an extreme is rescanned from the ring only
//! when the entry holding it is overwritten by a bar that does not reach it. A rescan reads
//! the whole ring (O(period)), but on price walks the extreme sits at the oldest entry on
//! few bars. Monotonic deques (O(1) amortised) touched a front and a back entry of two
//! deques per bar: up to four cache lines where this touches one. That matters at midnight,
//! when every resolution of every instrument closes with its state out of cache: the close
//! of 1,000 instruments measured 8% faster (`docs/performance.md`).

use super::packed::{int, pair, unpair, word, Packed};
use super::{len_of, real, BarInput, Inputs, Kernel, Outputs, Raw};

/// Donchian(period): outputs high, low; its window is `2 * period` slots, a `(high, low)`
/// pair per bar.
#[derive(Debug, Clone, Copy)]
pub struct Donchian {
    period: u32,
    /// Entries held (up to `period`), and the next entry overwritten once full.
    len: u32,
    head: u32,
    /// The window's extremes (meaningful once an entry is held) and the entries holding them.
    high: f64,
    low: f64,
    high_at: u32,
    low_at: u32,
    seen: u64,
}

impl Donchian {
    /// A fresh channel; `period` is at least 1.
    #[must_use]
    pub fn new(period: u64) -> Self {
        Self {
            period: u32::try_from(len_of(period.max(1))).unwrap_or(u32::MAX / 2),
            len: 0,
            head: 0,
            high: 0.0,
            low: 0.0,
            high_at: 0,
            low_at: 0,
            seen: 0,
        }
    }

    /// The extreme of the held entries' `field` (0: high, 1: low) and its entry, newest of
    /// equals (it stays longest). Called only on a full ring, oldest entry at `head`.
    fn rescan(&self, slots: &[f64], field: usize, max: bool) -> (f64, u32) {
        let mut best = (if max { f64::MIN } else { f64::MAX }, self.head);
        // Oldest first: the entries from the head, then those before it, in two plain loops
        // over pairs (a chain of index ranges took 14% more of the kernel at midnight).
        let (before_head, from_head) =
            slots[..2 * self.period as usize].split_at(2 * self.head as usize);
        let mut scan = |pairs: &[f64], first: u32| {
            for (entry, pair) in (first..).zip(pairs.chunks_exact(2)) {
                let x = pair[field];
                if (max && x >= best.0) || (!max && x <= best.0) {
                    best = (x, entry);
                }
            }
        };
        scan(from_head, self.head);
        scan(before_head, 0);
        best
    }
}

impl Kernel for Donchian {
    fn slots(&self) -> usize {
        2 * self.period as usize
    }

    #[inline(always)]
    fn update(&mut self, slots: &mut [f64], bar: &BarInput) {
        let full = self.len == self.period;
        let at = if full { self.head } else { self.len };
        slots[2 * at as usize] = bar.high;
        slots[2 * at as usize + 1] = bar.low;
        if full {
            self.head = if self.head + 1 == self.period {
                0
            } else {
                self.head + 1
            };
        } else {
            self.len += 1;
        }
        self.seen += 1;
        let first = self.len == 1 && !full;
        if first || bar.high >= self.high {
            (self.high, self.high_at) = (bar.high, at);
        } else if self.high_at == at {
            (self.high, self.high_at) = self.rescan(slots, 0, true);
        }
        if first || bar.low <= self.low {
            (self.low, self.low_at) = (bar.low, at);
        } else if self.low_at == at {
            (self.low, self.low_at) = self.rescan(slots, 1, false);
        }
    }

    fn inputs(&self) -> Inputs {
        Inputs {
            high: true,
            low: true,
            ..Inputs::default()
        }
    }

    fn values(&self, _slots: &[f64]) -> Outputs {
        if self.len == 0 {
            return [Raw::Undefined; 4];
        }
        [
            real(self.high),
            real(self.low),
            Raw::Undefined,
            Raw::Undefined,
        ]
    }

    fn warmup_bars(&self) -> u64 {
        u64::from(self.period)
    }

    fn bars_seen(&self) -> u64 {
        self.seen
    }

    fn reset(&mut self) {
        (self.len, self.head, self.seen) = (0, 0, 0);
    }
}

impl Packed for Donchian {
    const WORDS: usize = 5;

    fn pack(&self, words: &mut [f64]) {
        let words = &mut words[..Self::WORDS];
        words[0] = pair(self.len, self.head);
        words[1] = self.high;
        words[2] = self.low;
        words[3] = pair(self.high_at, self.low_at);
        words[4] = word(self.seen);
    }

    fn unpack(template: &Self, words: &[f64]) -> Self {
        let words = &words[..Self::WORDS];
        let ((len, head), (high_at, low_at)) = (unpair(words[0]), unpair(words[3]));
        Self {
            period: template.period,
            len,
            head,
            high: words[1],
            low: words[2],
            high_at,
            low_at,
            seen: int(words[4]),
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

    /// Extremes at every kind of place in the window: runs up and down (the extreme leaves
    /// on every bar), ties, a constant stretch, a new extreme each bar. Every period from 1,
    /// the state packed and unpacked between bars as a universe keeps it, a reset midway.
    #[test]
    fn every_pattern_matches_the_window_scanned() {
        let highs: Vec<f64> = (0..400u32)
            .map(|i| match i / 50 {
                0 => f64::from(i),                 // up: a new high every bar
                1 => f64::from(100 - i),           // down: the high expires every bar
                2 => 7.0,                          // constant
                3 => f64::from(i % 3),             // ties, repeating
                _ => f64::from((i * 7_919) % 101), // scattered
            })
            .collect();
        for period in [1usize, 2, 3, 5, 20, 64] {
            let template = Donchian::new(period as u64);
            let mut words = [0.0; Donchian::WORDS];
            template.pack(&mut words);
            let mut slots = vec![0.0; template.slots()];
            let mut start = 0;
            for (i, &high) in highs.iter().enumerate() {
                if i == 260 {
                    let mut k = Donchian::unpack(&template, &words);
                    k.reset();
                    k.pack(&mut words);
                    start = i;
                }
                let low = -high * 0.5 + f64::from(u32::try_from(i % 4).unwrap_or(0));
                let bar = BarInput {
                    high,
                    low,
                    ..BarInput::default()
                };
                let mut k = Donchian::unpack(&template, &words);
                k.update(&mut slots, &bar);
                k.pack(&mut words);
                let from = start.max((i + 1).saturating_sub(period));
                let window = from..=i;
                let want_high = window.clone().map(|j| highs[j]).fold(f64::MIN, f64::max);
                let want_low = window
                    .map(|j| -highs[j] * 0.5 + f64::from(u32::try_from(j % 4).unwrap_or(0)))
                    .fold(f64::MAX, f64::min);
                let got = Donchian::unpack(&template, &words).values(&slots);
                let want = [Raw::Real(want_high), Raw::Real(want_low)];
                assert_eq!(got[..2], want, "period {period}, bar {i}");
            }
        }
    }
}
