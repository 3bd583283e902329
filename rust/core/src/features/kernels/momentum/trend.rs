//! Price versus a long moving average, the trend input of the confluence vote:
//! `ratio = close / SMA(period) - 1` (a decimal) and `sign` in {-1, 0, +1} (an integer).
//!
//! The sign is taken from the published ratio, i.e. after rounding to the ratio's declared
//! scale, against the `threshold` parameter (default 0): +1 when `ratio > threshold`, -1
//! when `ratio < -threshold`, else 0. A row therefore never shows a ratio of `0.000000`
//! beside a sign of +1. A non-positive average (no price level to compare against) makes
//! both outputs ABSENT `INPUT_UNAVAILABLE`. Warm-up: `period` bars.

use crate::bars::BarsView;
use crate::decimal::Fixed;
use crate::features::error::FeatureError;
use crate::features::primitives::block::Inputs;
use crate::features::primitives::define::{Bound, Declared, Define, Params};
use crate::features::primitives::input::BarInput;
use crate::features::primitives::kernel::{len_of, Kernel, Outputs};
use crate::features::primitives::packed::{int, word, Packed};
use crate::features::primitives::ring::RollingSum;
use crate::features::primitives::window::Window;
use crate::features::spec::ValueType;
use crate::features::value::fixed_from_f64;
use crate::features::value::Raw;

/// Trend(period, threshold): outputs ratio (decimal), sign (integer); its window is its
/// average's `period` slots. The average is a rolling sum (O(1) to read: a long window).
#[derive(Debug, Clone, Copy)]
pub struct Trend {
    sum: RollingSum,
    seen: u64,
    close: f64,
    ratio_scale: u8,
    threshold: Fixed,
}

impl Trend {
    /// A fresh kernel; `threshold` is a non-negative decimal (validated by the registry)
    /// and `ratio_scale` the declared scale of the ratio output.
    #[must_use]
    pub fn new(period: u64, threshold: Fixed, ratio_scale: u8) -> Self {
        Self {
            sum: RollingSum::new(len_of(period.max(1))),
            seen: 0,
            close: f64::NAN,
            ratio_scale,
            threshold,
        }
    }

    /// The mean of the window (of the bars seen, before warm).
    fn mean(&self) -> f64 {
        if self.sum.is_empty() {
            return f64::NAN;
        }
        self.sum.sum() / self.sum.len() as f64
    }

    fn sign(&self, ratio: f64) -> Raw {
        let Some(published) = fixed_from_f64(ratio, self.ratio_scale) else {
            return Raw::Undefined;
        };
        // Compare at the finer of the two scales; both fit far below the i128 range.
        let scale = published.scale.max(self.threshold.scale);
        let (Ok(value), Ok(band)) = (
            published.rescale_half_even(u32::from(scale)),
            self.threshold.rescale_half_even(u32::from(scale)),
        ) else {
            return Raw::Undefined;
        };
        Raw::Int(if value.raw > band.raw {
            1
        } else if value.raw < -band.raw {
            -1
        } else {
            0
        })
    }
}

impl Kernel for Trend {
    fn slots(&self) -> usize {
        self.sum.slots()
    }

    #[inline(always)]
    fn update(&mut self, slots: &mut [f64], bar: &BarInput) {
        self.sum.push(slots, bar.close);
        self.seen += 1;
        self.close = bar.close;
    }

    fn warm_block(&mut self, slots: &mut [f64], block: &BarsView<'_, f64>) {
        self.sum.push_slice(slots, block.close);
        self.seen += block.len() as u64;
        if let Some(&close) = block.close.last() {
            self.close = close;
        }
    }

    fn inputs(&self) -> Inputs {
        Inputs::CLOSE
    }

    fn values(&self, _slots: &[f64]) -> Outputs {
        let average = self.mean();
        // NaN (no bar yet) and non-positive averages both fail this test.
        if average.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
            return [Raw::Undefined; 4];
        }
        let ratio = self.close / average - 1.0;
        if !ratio.is_finite() {
            return [Raw::Undefined; 4];
        }
        [
            Raw::Real(ratio),
            self.sign(ratio),
            Raw::Undefined,
            Raw::Undefined,
        ]
    }

    fn warmup_bars(&self) -> u64 {
        self.sum.slots() as u64
    }

    fn bars_seen(&self) -> u64 {
        self.seen
    }

    fn reset(&mut self) {
        self.sum.clear();
        self.seen = 0;
        self.close = f64::NAN;
    }
}

impl Packed for Trend {
    const WORDS: usize = RollingSum::WORDS + 2;

    fn pack(&self, words: &mut [f64]) {
        self.sum.pack(words);
        words[RollingSum::WORDS] = word(self.seen);
        words[RollingSum::WORDS + 1] = self.close;
    }

    fn unpack(template: &Self, words: &[f64]) -> Self {
        Self {
            sum: Packed::unpack(&template.sum, words),
            seen: int(words[RollingSum::WORDS]),
            close: words[RollingSum::WORDS + 1],
            ..*template
        }
    }
}

impl Define for Trend {
    const DECLARED: Declared = Declared::new("spine_core.features.trend", &["period"])
        .outputs(&[
            ("ratio", ValueType::Decimal, 6),
            ("sign", ValueType::Integer, 0),
        ])
        .threshold(Bound::NonNegative)
        .defaults(&[("trend_200", &[("period", "200"), ("threshold", "0")])]);

    fn build(params: &Params<'_>) -> Result<Self, FeatureError> {
        let period = params.integer("period", 1)?;
        let threshold = params.threshold.unwrap_or(Fixed::zero(0));
        Ok(Self::new(period, threshold, Self::DECLARED.outputs[0].2))
    }

    /// Its ring of closes, for views; it keeps a running sum besides, so it reads no other's.
    fn window(&self) -> Option<Window> {
        Some(Window::Closes(self.sum.ring()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::features::primitives::kernel::Owned;
    use crate::features::primitives::testing::{batch_equals_incremental, flat, nth, series};

    fn zero() -> Fixed {
        Fixed::zero(0)
    }

    #[test]
    fn ratio_and_sign() {
        let mut trend = Owned::new(Trend::new(2, zero(), 6));
        trend.warm(&[flat(1, 10.0, 1.0), flat(2, 30.0, 1.0)]);
        assert!((nth(&trend, 0) - 0.5).abs() < 1e-12);
        assert_eq!(trend.values()[1], Raw::Int(1));
        trend.update(&flat(3, 10.0, 1.0));
        assert_eq!(trend.values()[1], Raw::Int(-1));
        trend.update(&flat(4, 10.0, 1.0));
        assert_eq!(trend.values()[1], Raw::Int(0));
    }

    #[test]
    fn sign_follows_the_published_ratio_and_threshold() {
        // ratio = 1e-7 rounds to 0.000000 at scale 6: sign 0, not +1.
        let mut tiny = Owned::new(Trend::new(1, zero(), 6));
        tiny.update(&flat(1, 1.0, 1.0));
        assert_eq!(tiny.kernel().sign(1e-7), Raw::Int(0));
        assert_eq!(tiny.kernel().sign(6e-7), Raw::Int(1));
        let band = Fixed { raw: 5, scale: 3 }; // 0.005
        let banded = Trend::new(1, band, 6);
        assert_eq!(banded.sign(0.004), Raw::Int(0));
        assert_eq!(banded.sign(-0.005), Raw::Int(0));
        assert_eq!(banded.sign(-0.0051), Raw::Int(-1));
        let mut negative = Owned::new(Trend::new(1, zero(), 6));
        negative.update(&flat(1, -1.0, 1.0));
        assert_eq!(negative.values()[0], Raw::Undefined);
        batch_equals_incremental(Trend::new(200, zero(), 6), &series(500));
    }
}
