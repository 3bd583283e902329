//! Volume z-score: `(volume - mean) / std` over the last `period` volumes including the
//! current bar, with the population standard deviation. A window of equal volumes is
//! undefined (ABSENT `INPUT_UNAVAILABLE`). Warm-up: `period` bars.
//!
//! A window kernel ([`Windowed`]) over a `BarRing` (the bars' fields VWAP and Donchian
//! read too): mean and variance are computed from it when a row is read (two passes).

use crate::features::error::FeatureError;
use crate::features::kernels::windowed::{OfPeriod, Statistic, Windowed};
use crate::features::primitives::bar_ring::{BarRing, VOLUME};
use crate::features::primitives::define::{Declared, Params};
use crate::features::primitives::kernel::{one, real, Outputs};
use crate::features::spec::ValueType;
use crate::features::value::Raw;

/// VolumeZscore(period).
pub type VolumeZscore = Windowed<Zscore>;

/// The z-score of the newest volume in the window's.
#[derive(Debug, Clone, Copy, Default)]
pub struct Zscore;

impl OfPeriod for Zscore {}

impl Statistic for Zscore {
    type Entries = BarRing;
    const DECLARED: Declared = Declared::new("spine_core.features.volume_zscore", &["period"])
        .outputs(&[("value", ValueType::Decimal, 4)])
        .defaults(&[("vol_z_20", &[("period", "20"), ("threshold", "2")])]);

    fn build(params: &Params<'_>) -> Result<VolumeZscore, FeatureError> {
        Ok(VolumeZscore::new(params.integer("period", 1)?))
    }

    fn values(&self, bars: &BarRing, slots: &[f64], len: usize) -> Outputs {
        let window = || bars.newest(slots, len).map(|bar| bar[VOLUME]);
        let (Some(first), Some(volume)) = (window().next(), window().last()) else {
            return one(Raw::Undefined);
        };
        if window().all(|x| x == first) {
            return one(Raw::Undefined);
        }
        let n = window().count() as f64;
        let mean = window().sum::<f64>() / n;
        let variance = window().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n;
        if variance > 0.0 {
            one(real((volume - mean) / variance.sqrt()))
        } else {
            one(Raw::Undefined)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::features::primitives::kernel::Owned;
    use crate::features::primitives::testing::{batch_equals_incremental, first, flat, series};

    #[test]
    fn z_of_the_current_volume() {
        let mut z = Owned::new(VolumeZscore::new(4));
        for (i, v) in [1.0, 2.0, 3.0, 6.0].into_iter().enumerate() {
            z.update(&flat(i as u64, 1.0, v));
        }
        // mean 3, population variance (4 + 1 + 0 + 9) / 4 = 3.5.
        assert!((first(&z) - 3.0 / 3.5f64.sqrt()).abs() < 1e-12);
        let mut same = Owned::new(VolumeZscore::new(2));
        same.warm(&[flat(0, 1.0, 5.0), flat(1, 1.0, 5.0)]);
        assert_eq!(same.values()[0], Raw::Undefined);
        batch_equals_incremental(VolumeZscore::new(20), &series(300));
    }
}
