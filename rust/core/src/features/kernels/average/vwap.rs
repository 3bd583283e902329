//! Rolling volume-weighted average price over the last `period` bars, using the typical price
//! `(high + low + close) / 3`: `sum(tp * volume) / sum(volume)`, summed oldest first. A
//! window with no volume is undefined (ABSENT `INPUT_UNAVAILABLE`), detected exactly by
//! finding no non-zero volume rather than by testing a float sum against zero. Warm-up:
//! `period` bars.
//!
//! A window kernel ([`Windowed`]) over a `BarRing`: the sums are computed when a row is
//! read.

use crate::features::error::FeatureError;
use crate::features::kernels::windowed::{OfPeriod, Statistic, Windowed};
use crate::features::primitives::bar_ring::{BarRing, CLOSE, HIGH, LOW, VOLUME};
use crate::features::primitives::define::{Declared, Params, PRICE};
use crate::features::primitives::kernel::{one, real, Outputs};
use crate::features::spec::ValueType;
use crate::features::value::Raw;

/// Vwap(period).
pub type Vwap = Windowed<VolumeWeighted>;

/// The window's typical prices weighted by volume.
#[derive(Debug, Clone, Copy, Default)]
pub struct VolumeWeighted;

impl OfPeriod for VolumeWeighted {}

impl Statistic for VolumeWeighted {
    type Entries = BarRing;
    const DECLARED: Declared = Declared::new("spine_core.features.vwap", &["period"])
        .outputs(&[("value", ValueType::Decimal, PRICE)])
        .defaults(&[("vwap_20", &[("period", "20")])]);

    fn build(params: &Params<'_>) -> Result<Vwap, FeatureError> {
        Ok(Vwap::new(params.integer("period", 1)?))
    }

    fn values(&self, bars: &BarRing, slots: &[f64], len: usize) -> Outputs {
        let window = bars.newest(slots, len);
        if window.clone().all(|bar| bar[VOLUME] == 0.0) {
            return one(Raw::Undefined);
        }
        let (mut price_volume, mut volume) = (-0.0, -0.0);
        for bar in window {
            let typical = (bar[HIGH] + bar[LOW] + bar[CLOSE]) / 3.0;
            price_volume += typical * bar[VOLUME];
            volume += bar[VOLUME];
        }
        if volume <= 0.0 {
            return one(Raw::Undefined);
        }
        one(real(price_volume / volume))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::features::primitives::input::BarInput;
    use crate::features::primitives::kernel::Owned;
    use crate::features::primitives::testing::{batch_equals_incremental, first, flat, series};

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

    /// The sums are those of the window summed oldest first, bit for bit.
    #[test]
    fn the_sums_are_the_window_summed_in_order() {
        let bars = series(200);
        for period in [1usize, 2, 7, 20] {
            let mut vwap = Owned::new(Vwap::new(period as u64));
            for (i, bar) in bars.iter().enumerate() {
                vwap.update(bar);
                let window = &bars[(i + 1).saturating_sub(period)..=i];
                let typical = |b: &BarInput| (b.high + b.low + b.close) / 3.0;
                let pv: f64 = window.iter().map(|b| typical(b) * b.volume).sum();
                let v: f64 = window.iter().map(|b| b.volume).sum();
                assert_eq!(first(&vwap).to_bits(), (pv / v).to_bits());
            }
        }
    }
}
