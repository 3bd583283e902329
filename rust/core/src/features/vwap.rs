//! Rolling volume-weighted average price over the last `period` bars, using the typical price
//! `(high + low + close) / 3`: `sum(tp * volume) / sum(volume)`. A window with no volume is
//! undefined (ABSENT `INPUT_UNAVAILABLE`), detected exactly by counting non-zero volumes
//! rather than by testing a float sum against zero. Warm-up: `period` bars.
//!
//! The two rolling sums (as [`super::window::RollingSum`]: reset at each wrap to a fresh sum
//! of the turn's values, the bits of summing the window) and the non-zero flags advance together, so one ring of `(tp * volume, volume,
//! flag)` triples holds all three: a bar's update touches one entry, not three windows.

use super::packed::{int, pair, unpair, word, Packed};
use super::volume_zscore::Strided;
use super::window::{Ring, FRESH};
use super::{len_of, one, real, BarInput, Inputs, Kernel, Outputs, Raw};

/// Vwap(period); its window is `3 * period` slots.
#[derive(Debug, Clone, Copy)]
pub struct Vwap {
    period: u32,
    len: u32,
    head: u32,
    nonzero: u32,
    price_volume: f64,
    volume: f64,
    /// The sums of the values pushed since the last wrap (see [`super::window`]).
    fresh: [f64; 2],
    seen: u64,
}

impl Vwap {
    /// A fresh kernel; `period` is at least 1.
    #[must_use]
    pub fn new(period: u64) -> Self {
        Self {
            period: u32::try_from(len_of(period.max(1))).unwrap_or(u32::MAX / 3),
            len: 0,
            head: 0,
            nonzero: 0,
            price_volume: 0.0,
            volume: 0.0,
            fresh: [FRESH; 2],
            seen: 0,
        }
    }
}

impl Vwap {
    /// The ring of every bar's entry (the window) and where its volumes sit, for a kernel
    /// that reads them.
    pub(crate) fn volumes(&self) -> (Ring, Strided) {
        (
            Ring::from_parts(self.period, self.len, self.head),
            Strided {
                stride: 3,
                offset: 1,
            },
        )
    }
}

impl Kernel for Vwap {
    fn slots(&self) -> usize {
        3 * self.period as usize
    }

    #[inline(always)]
    fn update(&mut self, slots: &mut [f64], bar: &BarInput) {
        let typical = (bar.high + bar.low + bar.close) / 3.0;
        let (price_volume, volume) = (typical * bar.volume, bar.volume);
        let flag = u32::from(volume != 0.0);
        self.seen += 1;
        if self.len < self.period {
            let at = 3 * self.len as usize;
            slots[at..at + 3].copy_from_slice(&[price_volume, volume, f64::from(flag)]);
            self.len += 1;
            self.price_volume += price_volume;
            self.volume += volume;
            self.nonzero += flag;
            return;
        }
        let at = 3 * self.head as usize;
        let entry = &mut slots[at..at + 3];
        let (old_price_volume, old_volume, old_flag) = (entry[0], entry[1], entry[2]);
        entry.copy_from_slice(&[price_volume, volume, f64::from(flag)]);
        self.nonzero = self.nonzero - u32::from(old_flag != 0.0) + flag;
        self.head += 1;
        let [fresh_price_volume, fresh_volume] = self.fresh;
        if self.head == self.period {
            self.head = 0;
            self.price_volume = fresh_price_volume + price_volume;
            self.volume = fresh_volume + volume;
            self.fresh = [FRESH; 2];
        } else {
            self.price_volume += price_volume - old_price_volume;
            self.volume += volume - old_volume;
            self.fresh = [fresh_price_volume + price_volume, fresh_volume + volume];
        }
    }

    fn inputs(&self) -> Inputs {
        Inputs {
            volume: true,
            ..Inputs::HIGH_LOW_CLOSE
        }
    }

    fn values(&self, _slots: &[f64]) -> Outputs {
        let volume = self.volume;
        if self.nonzero == 0 || volume <= 0.0 {
            return one(Raw::Undefined);
        }
        one(real(self.price_volume / volume))
    }

    fn warmup_bars(&self) -> u64 {
        u64::from(self.period)
    }

    fn bars_seen(&self) -> u64 {
        self.seen
    }

    fn reset(&mut self) {
        *self = Self {
            period: self.period,
            ..Self::new(1)
        };
    }
}

impl Packed for Vwap {
    const WORDS: usize = 7;

    fn pack(&self, words: &mut [f64]) {
        let words = &mut words[..Self::WORDS];
        words[0] = pair(self.len, self.head);
        words[1] = word(u64::from(self.nonzero));
        words[2] = self.price_volume;
        words[3] = self.volume;
        words[4] = word(self.seen);
        words[5..].copy_from_slice(&self.fresh);
    }

    fn unpack(template: &Self, words: &[f64]) -> Self {
        let words = &words[..Self::WORDS];
        let (len, head) = unpair(words[0]);
        Self {
            period: template.period,
            len,
            head,
            nonzero: int(words[1]) as u32,
            price_volume: words[2],
            volume: words[3],
            seen: int(words[4]),
            fresh: [words[5], words[6]],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{batch_equals_incremental, first, flat, series};
    use super::super::window::RollingSum;
    use super::super::Owned;
    use super::*;

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

    #[test]
    fn the_sums_are_those_of_two_rolling_sums() {
        for period in [1usize, 2, 7, 20] {
            let mut vwap = Owned::new(Vwap::new(period as u64));
            let (mut pv, mut v) = (RollingSum::new(period), RollingSum::new(period));
            let (mut pv_slots, mut v_slots) = (vec![0.0; period], vec![0.0; period]);
            for bar in series(200) {
                vwap.update(&bar);
                let typical = (bar.high + bar.low + bar.close) / 3.0;
                pv.push(&mut pv_slots, typical * bar.volume);
                v.push(&mut v_slots, bar.volume);
                assert_eq!(first(&vwap).to_bits(), (pv.sum() / v.sum()).to_bits());
            }
        }
    }
}
