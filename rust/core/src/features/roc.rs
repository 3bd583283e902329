//! Rate of change of the close over `period` bars, in percent:
//! `100 * (close - close[period bars ago]) / close[period bars ago]`. A zero base close is
//! undefined (ABSENT `INPUT_UNAVAILABLE`). Warm-up: `period + 1` bars.

use super::window::Ring;
use super::{len_of, one, real, BarInput, Inputs, Kernel, Outputs, Raw};

/// ROC(period), percent.
#[derive(Debug, Clone)]
pub struct Roc {
    period: u64,
    closes: Ring,
    close: f64,
    seen: u64,
}

impl Roc {
    /// A fresh ROC; `period` is at least 1.
    #[must_use]
    pub fn new(period: u64) -> Self {
        let period = period.max(1);
        Self {
            period,
            closes: Ring::new(len_of(period).saturating_add(1)),
            close: f64::NAN,
            seen: 0,
        }
    }
}

impl Kernel for Roc {
    fn update(&mut self, bar: &BarInput) {
        self.closes.push(bar.close);
        self.close = bar.close;
        self.seen += 1;
    }

    fn inputs(&self) -> Inputs {
        Inputs::CLOSE
    }

    fn values(&self) -> Outputs {
        match self.closes.oldest() {
            Some(base) if base != 0.0 => one(real(100.0 * (self.close - base) / base)),
            _ => one(Raw::Undefined),
        }
    }

    fn warmup_bars(&self) -> u64 {
        self.period + 1
    }

    fn bars_seen(&self) -> u64 {
        self.seen
    }

    fn reset(&mut self) {
        self.closes.clear();
        self.close = f64::NAN;
        self.seen = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{batch_equals_incremental, first, flat, series};
    use super::*;

    #[test]
    fn percent_change_over_period() {
        let mut roc = Roc::new(2);
        for (i, c) in [50.0, 80.0, 55.0, 60.0].into_iter().enumerate() {
            roc.update(&flat(i as u64, c, 1.0));
        }
        // 60 against 80 (two bars earlier).
        assert!((first(&roc) + 25.0).abs() < 1e-12);
        let mut zero = Roc::new(1);
        zero.update(&flat(0, 0.0, 1.0));
        zero.update(&flat(1, 1.0, 1.0));
        assert_eq!(zero.values()[0], Raw::Undefined);
        batch_equals_incremental(&Roc::new(10), &series(100));
    }
}
