//! Rolling volume-weighted average price over the last `period` bars, using the typical price
//! `(high + low + close) / 3`: `sum(tp * volume) / sum(volume)`. A window with no volume is
//! undefined (ABSENT `INPUT_UNAVAILABLE`), detected exactly by counting non-zero volumes
//! rather than by testing a float sum against zero. Warm-up: `period` bars.

use super::window::RollingSum;
use super::{len_of, one, real, BarInput, Inputs, Kernel, Outputs, Raw};

/// Vwap(period).
#[derive(Debug, Clone)]
pub struct Vwap {
    period: u64,
    price_volume: RollingSum,
    volume: RollingSum,
    nonzero: Vec<bool>,
    nonzero_count: usize,
    cursor: usize,
    seen: u64,
}

impl Vwap {
    /// A fresh kernel; `period` is at least 1.
    #[must_use]
    pub fn new(period: u64) -> Self {
        let period = period.max(1);
        let len = len_of(period);
        Self {
            period,
            price_volume: RollingSum::new(len),
            volume: RollingSum::new(len),
            nonzero: vec![false; len.max(1)],
            nonzero_count: 0,
            cursor: 0,
            seen: 0,
        }
    }
}

impl Kernel for Vwap {
    fn update(&mut self, bar: &BarInput) {
        let typical = (bar.high + bar.low + bar.close) / 3.0;
        self.price_volume.push(typical * bar.volume);
        self.volume.push(bar.volume);
        let slot = &mut self.nonzero[self.cursor];
        self.nonzero_count -= usize::from(*slot);
        *slot = bar.volume != 0.0;
        self.nonzero_count += usize::from(*slot);
        self.cursor = (self.cursor + 1) % self.nonzero.len();
        self.seen += 1;
    }

    fn inputs(&self) -> Inputs {
        Inputs {
            volume: true,
            ..Inputs::HIGH_LOW_CLOSE
        }
    }

    fn values(&self) -> Outputs {
        let volume = self.volume.sum();
        if self.nonzero_count == 0 || volume <= 0.0 {
            return one(Raw::Undefined);
        }
        one(real(self.price_volume.sum() / volume))
    }

    fn warmup_bars(&self) -> u64 {
        self.period
    }

    fn bars_seen(&self) -> u64 {
        self.seen
    }

    fn reset(&mut self) {
        self.price_volume.clear();
        self.volume.clear();
        self.nonzero.fill(false);
        self.nonzero_count = 0;
        self.cursor = 0;
        self.seen = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{batch_equals_incremental, first, flat, series};
    use super::*;

    #[test]
    fn weights_typical_price_by_volume() {
        let mut vwap = Vwap::new(2);
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
        let mut vwap = Vwap::new(2);
        vwap.warm(&[flat(1, 5.0, 2.0), flat(2, 5.0, 0.0), flat(3, 5.0, 0.0)]);
        assert_eq!(vwap.values()[0], Raw::Undefined);
        vwap.update(&flat(4, 6.0, 1.0));
        assert_eq!(first(&vwap), 6.0);
        batch_equals_incremental(&Vwap::new(20), &series(300));
    }
}
