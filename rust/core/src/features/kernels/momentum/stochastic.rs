//! Stochastic oscillator, 0..100 (Lane's slow-free "fast" stochastic with a smoothed %D):
//! `k = 100 * (close - lowest low) / (highest high - lowest low)` over the last `period` bars,
//! and `d` = the mean of the last `smoothing` values of `k`, summed oldest first. A window
//! whose highest high equals its lowest low has no range: its `k` is ABSENT
//! `INPUT_UNAVAILABLE`, and so is every `d` it enters. Warm-up: `period + smoothing - 1` bars.
//!
//! A window kernel ([`Windowed`]) over a `BarRing` of `period + smoothing - 1` bars: each
//! `k` of the `d` window is computed from the ring when a row is read.

use crate::features::error::FeatureError;
use crate::features::kernels::windowed::{Statistic, Windowed};
use crate::features::primitives::bar_ring::{BarRing, CLOSE, HIGH, LOW};
use crate::features::primitives::define::{Declared, Params};
use crate::features::primitives::kernel::{len_of, real, Outputs};
use crate::features::spec::ValueType;
use crate::features::value::Raw;

/// Stochastic(period, smoothing): outputs k, d.
pub type Stochastic = Windowed<Oscillator>;

impl Stochastic {
    /// A fresh oscillator; `period` and `smoothing` are at least 1 (validated by the
    /// registry).
    #[must_use]
    pub fn new(period: u64, smoothing: u64) -> Self {
        let period = len_of(period.max(1));
        let len = period.saturating_add(len_of(smoothing.max(1)) - 1);
        Self::with(Oscillator { period }, len)
    }
}

/// Where the newest close sits between the window's extremes, and its mean over the last
/// few windows.
#[derive(Debug, Clone, Copy)]
pub struct Oscillator {
    /// Bars of one `k` window.
    period: usize,
}

impl Statistic for Oscillator {
    type Entries = BarRing;
    const DECLARED: Declared =
        Declared::new("spine_core.features.stochastic", &["period", "smoothing"])
            .outputs(&[("k", ValueType::Decimal, 4), ("d", ValueType::Decimal, 4)]);

    fn build(params: &Params<'_>) -> Result<Stochastic, FeatureError> {
        let period = params.integer("period", 1)?;
        Ok(Stochastic::new(period, params.integer("smoothing", 1)?))
    }

    fn values(&self, bars: &BarRing, slots: &[f64], len: usize) -> Outputs {
        let window: Vec<&[f64]> = bars.newest(slots, len).collect();
        if window.len() < len {
            return [Raw::Undefined; 4];
        }
        // `k` of the window of `period` bars ending at each of the last `smoothing` bars.
        let k = |end: usize| {
            let bars = &window[end + 1 - self.period..=end];
            let (high, low) = bars.iter().fold((f64::MIN, f64::MAX), |(high, low), bar| {
                (high.max(bar[HIGH]), low.min(bar[LOW]))
            });
            (high > low).then(|| 100.0 * (bars[bars.len() - 1][CLOSE] - low) / (high - low))
        };
        let ks: Option<Vec<f64>> = (self.period - 1..len).map(k).collect();
        let newest = k(len - 1);
        let d = ks.map(|ks| ks.iter().sum::<f64>() / ks.len() as f64);
        [
            newest.map_or(Raw::Undefined, real),
            d.map_or(Raw::Undefined, real),
            Raw::Undefined,
            Raw::Undefined,
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::features::primitives::input::BarInput;
    use crate::features::primitives::kernel::Owned;
    use crate::features::primitives::testing::{batch_equals_incremental, flat, nth, series};

    fn bar(high: f64, low: f64, close: f64) -> BarInput {
        BarInput {
            high,
            low,
            close,
            ..BarInput::default()
        }
    }

    #[test]
    fn k_and_its_mean_by_hand() {
        let mut stoch = Owned::new(Stochastic::new(3, 2));
        assert_eq!(stoch.warmup_bars(), 4);
        for b in [
            bar(10.0, 8.0, 9.0),
            bar(12.0, 9.0, 11.0),
            bar(11.0, 7.0, 8.0),
        ] {
            stoch.update(&b);
        }
        assert_eq!(stoch.values()[0], Raw::Undefined, "warming");
        stoch.update(&bar(13.0, 10.0, 12.0));
        // k over bars 1..=3: (12 - 7) / (13 - 7); over bars 0..=2: (8 - 7) / (12 - 7).
        let (k, before) = (100.0 * 5.0 / 6.0, 100.0 * 1.0 / 5.0);
        assert_eq!(nth(&stoch, 0), k);
        assert_eq!(nth(&stoch, 1), (before + k) / 2.0);
    }

    #[test]
    fn no_range_is_undefined_and_blanks_d() {
        let mut stoch = Owned::new(Stochastic::new(2, 2));
        for c in [5.0, 5.0, 5.0] {
            stoch.update(&flat(0, c, 1.0));
        }
        assert_eq!(stoch.values()[0], Raw::Undefined);
        assert_eq!(stoch.values()[1], Raw::Undefined);
        stoch.update(&bar(6.0, 5.0, 6.0));
        assert_eq!(nth(&stoch, 0), 100.0);
        // The older k of the d window had no range.
        assert_eq!(stoch.values()[1], Raw::Undefined);
        stoch.update(&bar(6.0, 4.0, 4.0));
        assert_eq!(nth(&stoch, 0), 0.0);
        assert_eq!(nth(&stoch, 1), 50.0);
    }

    #[test]
    fn batches_equal_updates() {
        batch_equals_incremental(Stochastic::new(14, 3), &series(300));
        batch_equals_incremental(Stochastic::new(1, 1), &series(50));
    }
}

#[cfg(test)]
mod property_tests {
    use proptest::prelude::*;

    use super::*;
    use crate::features::primitives::input::BarInput;
    use crate::features::primitives::kernel::{Kernel, Owned};

    /// `k` and `d` as a plain scan of the bars seen would compute them.
    fn direct(bars: &[BarInput], period: usize, smoothing: usize) -> (Option<f64>, Option<f64>) {
        let k = |end: usize| {
            let window = &bars[end + 1 - period..=end];
            let high = window.iter().map(|b| b.high).fold(f64::MIN, f64::max);
            let low = window.iter().map(|b| b.low).fold(f64::MAX, f64::min);
            (high > low).then(|| 100.0 * (bars[end].close - low) / (high - low))
        };
        let last = bars.len() - 1;
        let ks: Option<Vec<f64>> = (last + 1 - smoothing..=last).map(k).collect();
        let d = ks.map(|ks| ks.iter().sum::<f64>() / smoothing as f64);
        (k(last), d)
    }

    proptest! {
        #[test]
        fn equals_a_direct_scan(
            prices in prop::collection::vec((0u32..50, 0u32..10, 0u32..=100), 1..80),
            period in 1usize..12,
            smoothing in 1usize..5,
        ) {
            let bars: Vec<BarInput> = prices
                .iter()
                .map(|&(low, spread, at)| {
                    let (low, high) = (f64::from(low), f64::from(low + spread));
                    let close = low + (high - low) * f64::from(at) / 100.0;
                    BarInput { high, low, close, ..BarInput::default() }
                })
                .collect();
            let mut stoch = Owned::new(Stochastic::new(period as u64, smoothing as u64));
            for (i, bar) in bars.iter().enumerate() {
                stoch.update(bar);
                if (i as u64) + 1 < stoch.warmup_bars() {
                    continue;
                }
                let (k, d) = direct(&bars[..=i], period, smoothing);
                let got = stoch.values();
                prop_assert_eq!(got[0], k.map_or(Raw::Undefined, Raw::Real));
                prop_assert_eq!(got[1], d.map_or(Raw::Undefined, Raw::Real));
            }
            prop_assert_eq!(stoch.kernel().bars_seen(), bars.len() as u64);
        }
    }
}
