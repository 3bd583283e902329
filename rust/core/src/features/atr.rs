//! Average true range with Wilder smoothing, as TA-Lib computes it. The true range needs the
//! previous close: `max(high - low, |high - prev_close|, |low - prev_close|)`, so the first
//! bar yields none. The first ATR is the simple mean of the first `period` true ranges, then
//! `atr = (atr * (period - 1) + tr) / period`. Warm-up: `period + 1` bars.

use super::{one, real, BarInput, Kernel, Outputs};

/// ATR(period), Wilder.
#[derive(Debug, Clone)]
pub struct Atr {
    period: u64,
    prev_close: Option<f64>,
    ranges: u64,
    atr: f64,
    seen: u64,
}

impl Atr {
    /// A fresh ATR; `period` is at least 1.
    #[must_use]
    pub fn new(period: u64) -> Self {
        Self {
            period: period.max(1),
            prev_close: None,
            ranges: 0,
            atr: 0.0,
            seen: 0,
        }
    }
}

impl Kernel for Atr {
    fn update(&mut self, bar: &BarInput) {
        self.seen += 1;
        let Some(prev) = self.prev_close.replace(bar.close) else {
            return;
        };
        let tr = (bar.high - bar.low)
            .max((bar.high - prev).abs())
            .max((bar.low - prev).abs());
        let n = self.period as f64;
        self.ranges += 1;
        if self.ranges <= self.period {
            self.atr += tr;
            if self.ranges == self.period {
                self.atr /= n;
            }
        } else {
            self.atr = (self.atr * (n - 1.0) + tr) / n;
        }
    }

    fn values(&self) -> Outputs {
        one(real(self.atr))
    }

    fn warmup_bars(&self) -> u64 {
        self.period + 1
    }

    fn bars_seen(&self) -> u64 {
        self.seen
    }

    fn reset(&mut self) {
        *self = Self::new(self.period);
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{batch_equals_incremental, first, series};
    use super::*;

    fn bar(ts: u64, high: f64, low: f64, close: f64) -> BarInput {
        BarInput {
            ts_event: ts,
            open: close,
            high,
            low,
            close,
            volume: 1.0,
        }
    }

    #[test]
    fn true_range_uses_the_previous_close() {
        let mut atr = Atr::new(2);
        atr.update(&bar(1, 10.0, 9.0, 9.5));
        atr.update(&bar(2, 12.0, 11.0, 11.5)); // gap up: tr = 12 - 9.5 = 2.5
        atr.update(&bar(3, 11.6, 11.0, 11.2)); // tr = 0.6
        assert!((first(&atr) - 1.55).abs() < 1e-12);
        atr.update(&bar(4, 11.2, 10.2, 10.5)); // tr = 1.0
        assert!((first(&atr) - (1.55 + 1.0) / 2.0).abs() < 1e-12);
        assert_eq!(atr.warmup_bars(), 3);
        batch_equals_incremental(&Atr::new(14), &series(200));
    }
}
