//! The typed value of one feature output, and the exact f64 -> decimal conversion.
//!
//! Kernels compute in `f64`; a value reaches the wire as a [`FeatureValue`]: a decimal at the
//! output's declared scale (rounded half to even), an integer, a nanosecond timestamp, or
//! ABSENT with a reason. NaN and infinities never leave a kernel: an undefined computation is
//! ABSENT `INPUT_UNAVAILABLE`, never zero, null or a missing key.

use crate::decimal::{Fixed, MAX_SCALE};

/// Why a registered output has no value right now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AbsentReason {
    /// The kernel has seen fewer closed bars than its `warmupBars`.
    WarmingUp {
        /// Closed bars seen so far (since creation, reset or the last gap).
        bars_seen: u64,
        /// Closed bars needed before the first value (`warmupBars`).
        bars_needed: u64,
    },
    /// The computation is undefined on the current window (zero variance, zero volume, a
    /// non-positive price under a logarithm, a zero divisor) or out of the decimal range.
    InputUnavailable,
    /// The input series had a gap; the kernel restarted and is not warm again yet.
    GapInInput,
}

impl AbsentReason {
    /// The wire name of the reason.
    #[must_use]
    pub const fn symbol(self) -> &'static str {
        match self {
            Self::WarmingUp { .. } => "WARMING_UP",
            Self::InputUnavailable => "INPUT_UNAVAILABLE",
            Self::GapInInput => "GAP_IN_INPUT",
        }
    }
}

/// One output's value, as served in a feature row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FeatureValue {
    /// A decimal at the output's declared scale.
    Decimal(Fixed),
    /// A signed integer (e.g. a trend sign -1/0/+1).
    Integer(i64),
    /// A nanosecond UNIX timestamp.
    UnixNanos(u64),
    /// Registered but currently untrustworthy.
    Absent(AbsentReason),
}

impl FeatureValue {
    /// The wire kind: `DECIMAL`, `INTEGER`, `UNIX_NANOS` or `ABSENT`.
    #[must_use]
    pub const fn kind(&self) -> &'static str {
        match self {
            Self::Decimal(_) => "DECIMAL",
            Self::Integer(_) => "INTEGER",
            Self::UnixNanos(_) => "UNIX_NANOS",
            Self::Absent(_) => "ABSENT",
        }
    }

    /// Whether the value is ABSENT.
    #[must_use]
    pub const fn is_absent(&self) -> bool {
        matches!(self, Self::Absent(_))
    }
}

/// A kernel's raw output before it is typed at its declared scale.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Raw {
    /// A real number; converted to a decimal at the declared scale (non-finite -> ABSENT).
    Real(f64),
    /// An integer output.
    Int(i64),
    /// Undefined on the current window: ABSENT `INPUT_UNAVAILABLE`.
    Undefined,
}

/// Convert a finite `f64` to the nearest decimal at `scale`, ties to even, exactly.
///
/// The approach: an `f64` is exactly `m * 2^e` with `m < 2^53`. Multiplying by `10^scale`
/// (`< 2^60` for scale 18) gives the integer `m * 10^scale < 2^113`, exact in `u128`; the
/// result is that integer shifted by `e`, and for a negative `e` the dropped bits decide the
/// rounding exactly (below half, half, above half). No intermediate is rounded, so the result
/// is the correctly rounded decimal of the binary value the kernel computed: unlike
/// `x * 10^scale` in floating point (one extra rounding that can cross a half boundary) or
/// formatting with a few guard digits (a double rounding). No allocation.
///
/// Returns `None` for NaN, infinities, a scale above [`MAX_SCALE`], or a result outside the
/// signed 128-bit mantissa range.
#[must_use]
pub fn fixed_from_f64(x: f64, scale: u8) -> Option<Fixed> {
    if !x.is_finite() || scale > MAX_SCALE {
        return None;
    }
    let bits = x.to_bits();
    let negative = bits >> 63 == 1;
    let exponent_bits = i32::try_from((bits >> 52) & 0x7ff).ok()?;
    let fraction = bits & ((1u64 << 52) - 1);
    // Subnormals have no implicit bit and the minimum exponent.
    let (mantissa, exponent) = if exponent_bits == 0 {
        (fraction, -1074)
    } else {
        (fraction | (1u64 << 52), exponent_bits - 1075)
    };
    let product = u128::from(mantissa) * 10u128.pow(u32::from(scale));
    let magnitude = if exponent >= 0 {
        // An integer already; refuse anything that leaves the i128 range.
        let shift = u32::try_from(exponent).ok()?;
        if shift >= 128 || product.leading_zeros() <= shift {
            return None;
        }
        product << shift
    } else {
        let shift = exponent.unsigned_abs();
        if shift >= 128 {
            // product < 2^113 <= 2^(shift - 1): strictly below one half, rounds to zero.
            0
        } else {
            let quotient = product >> shift;
            let remainder = product & ((1u128 << shift) - 1);
            let half = 1u128 << (shift - 1);
            let round_up = remainder > half || (remainder == half && quotient & 1 == 1);
            quotient + u128::from(round_up)
        }
    };
    let magnitude = i128::try_from(magnitude).ok()?;
    let raw = if negative { -magnitude } else { magnitude };
    Some(Fixed { raw, scale })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: f64, scale: u8) -> Option<String> {
        fixed_from_f64(x, scale).map(|f| f.to_string())
    }

    #[test]
    fn exact_values_round_trip() {
        assert_eq!(s(0.0, 4), Some("0.0000".into()));
        assert_eq!(s(-0.0, 2), Some("0.00".into()));
        assert_eq!(s(1.5, 0), Some("2".into()));
        assert_eq!(s(2.5, 0), Some("2".into()));
        assert_eq!(s(-2.5, 0), Some("-2".into()));
        assert_eq!(s(-3.5, 0), Some("-4".into()));
        assert_eq!(s(0.125, 2), Some("0.12".into()));
        assert_eq!(s(0.375, 2), Some("0.38".into()));
        assert_eq!(s(37005.25, 8), Some("37005.25000000".into()));
        assert_eq!(s(1e20, 0), Some("100000000000000000000".into()));
    }

    #[test]
    fn uses_the_exact_binary_value_not_its_shortest_string() {
        // 0.125 + 2^-40 is above the tie: it must round up although "0.12500000000090949"
        // printed with few digits looks like a tie.
        assert_eq!(s(0.125 + 2f64.powi(-40), 2), Some("0.13".into()));
        // 2.675 is 2.67499999999999982236431605997495353221893310546875 in binary.
        assert_eq!(s(2.675, 2), Some("2.67".into()));
        // 1.005 is below 1.005 in binary; x * 100.0 in floating point gives exactly 100.5.
        assert_eq!(s(1.005, 2), Some("1.00".into()));
    }

    #[test]
    fn tiny_and_huge() {
        assert_eq!(
            s(f64::MIN_POSITIVE, 18),
            Some("0.000000000000000000".into())
        );
        assert_eq!(s(5e-324, 18), Some("0.000000000000000000".into()));
        assert_eq!(s(4e-19, 18), Some("0.000000000000000000".into()));
        assert_eq!(s(6e-19, 18), Some("0.000000000000000001".into()));
        assert_eq!(s(1e31, 8), None);
        assert_eq!(s(f64::MAX, 0), None);
        assert_eq!(s(f64::NAN, 2), None);
        assert_eq!(s(f64::INFINITY, 2), None);
        assert_eq!(s(1.0, 19), None);
        assert!(fixed_from_f64(1.6e38, 0).is_some());
        assert!(fixed_from_f64(1.8e38, 0).is_none());
    }

    #[test]
    fn reason_symbols() {
        let warming = AbsentReason::WarmingUp {
            bars_seen: 1,
            bars_needed: 2,
        };
        assert_eq!(warming.symbol(), "WARMING_UP");
        assert_eq!(AbsentReason::GapInInput.symbol(), "GAP_IN_INPUT");
        assert_eq!(FeatureValue::Absent(warming).kind(), "ABSENT");
        assert_eq!(FeatureValue::UnixNanos(1).kind(), "UNIX_NANOS");
        assert!(!FeatureValue::Integer(0).is_absent());
    }

    mod property_tests {
        use super::super::*;
        use proptest::prelude::*;

        proptest! {
            #[test]
            fn within_half_a_unit(x in -1e12f64..1e12, scale in 0u8..=6) {
                let fixed = fixed_from_f64(x, scale);
                prop_assert!(fixed.is_some());
                if let Some(f) = fixed {
                    let back = f.raw as f64 / 10f64.powi(i32::from(scale));
                    let unit = 10f64.powi(-i32::from(scale));
                    prop_assert!((back - x).abs() <= unit * 0.5 + x.abs() * 1e-15);
                }
            }
        }
    }
}
