//! Donchian channel: the highest high and lowest low of the last `period` bars, the current
//! bar included. Warm-up: `period` bars.
//!
//! A window kernel ([`Windowed`]) over a `BarRing`, scanned for the extremes when a row is
//! read. Keeping the extremes as bars arrive (a rescan when the entry holding one left, or
//! monotonic deques) cost every update a branch on the window and more state in cache, at
//! midnight when every resolution of every instrument closes with its state out of cache.

use crate::features::error::FeatureError;
use crate::features::kernels::windowed::{OfPeriod, Statistic, Windowed};
use crate::features::primitives::bar_ring::{BarRing, HIGH, LOW};
use crate::features::primitives::define::{Declared, Params, PRICE};
use crate::features::primitives::kernel::{real, Outputs};
use crate::features::spec::ValueType;
use crate::features::value::Raw;

/// Donchian(period): outputs high, low.
pub type Donchian = Windowed<Extremes>;

/// The highest high and lowest low of the window.
#[derive(Debug, Clone, Copy, Default)]
pub struct Extremes;

impl OfPeriod for Extremes {}

impl Statistic for Extremes {
    type Entries = BarRing;
    const DECLARED: Declared = Declared::new("spine_core.features.donchian", &["period"])
        .outputs(&[
            ("high", ValueType::Decimal, PRICE),
            ("low", ValueType::Decimal, PRICE),
        ])
        .defaults(&[("donchian_20", &[("period", "20")])]);

    fn build(params: &Params<'_>) -> Result<Donchian, FeatureError> {
        Ok(Donchian::new(params.integer("period", 1)?))
    }

    fn values(&self, bars: &BarRing, slots: &[f64], len: usize) -> Outputs {
        let mut window = bars.newest(slots, len);
        let Some(oldest) = window.next() else {
            return [Raw::Undefined; 4];
        };
        let (high, low) = window.fold((oldest[HIGH], oldest[LOW]), |(high, low), bar| {
            (high.max(bar[HIGH]), low.min(bar[LOW]))
        });
        [real(high), real(low), Raw::Undefined, Raw::Undefined]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::features::primitives::input::BarInput;
    use crate::features::primitives::kernel::Kernel;
    use crate::features::primitives::kernel::Owned;
    use crate::features::primitives::packed::Packed;
    use crate::features::primitives::testing::{batch_equals_incremental, nth, series};

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
