//! Donchian channel: the highest high and lowest low of the last `period` bars, the current
//! bar included, kept with monotonic deques (O(1) amortised). Warm-up: `period` bars.

use super::window::MonotonicDeque;
use super::{len_of, real, BarInput, Inputs, Kernel, Outputs, Raw};

/// Donchian(period): outputs high, low.
#[derive(Debug, Clone)]
pub struct Donchian {
    period: u64,
    highs: MonotonicDeque,
    lows: MonotonicDeque,
    seen: u64,
}

impl Donchian {
    /// A fresh channel; `period` is at least 1.
    #[must_use]
    pub fn new(period: u64) -> Self {
        let period = period.max(1);
        Self {
            period,
            highs: MonotonicDeque::new(len_of(period), true),
            lows: MonotonicDeque::new(len_of(period), false),
            seen: 0,
        }
    }
}

impl Kernel for Donchian {
    fn update(&mut self, bar: &BarInput) {
        self.highs.push(bar.high);
        self.lows.push(bar.low);
        self.seen += 1;
    }

    fn inputs(&self) -> Inputs {
        Inputs {
            high: true,
            low: true,
            ..Inputs::default()
        }
    }

    fn values(&self) -> Outputs {
        let or_undefined = |x: Option<f64>| x.map_or(Raw::Undefined, real);
        [
            or_undefined(self.highs.extreme()),
            or_undefined(self.lows.extreme()),
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

#[cfg(test)]
mod tests {
    use super::super::testing::{batch_equals_incremental, nth, series};
    use super::*;

    #[test]
    fn extremes_of_the_window() {
        let bars = series(200);
        let mut channel = Donchian::new(20);
        for (i, bar) in bars.iter().enumerate() {
            channel.update(bar);
            let window = &bars[i.saturating_sub(19)..=i];
            let high = window.iter().map(|b| b.high).fold(f64::MIN, f64::max);
            let low = window.iter().map(|b| b.low).fold(f64::MAX, f64::min);
            assert_eq!(nth(&channel, 0), high);
            assert_eq!(nth(&channel, 1), low);
        }
        batch_equals_incremental(&Donchian::new(20), &bars);
    }
}
