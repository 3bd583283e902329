//! Exact decimal strings and fixed-point values (pinned decision 4).
//!
//! A [`Fixed`] is an integer mantissa with a declared scale: `raw = value * 10^scale`. Prices,
//! quantities and feature values are carried this way so sums and comparisons are exact; the
//! wire form is always the decimal string at the declared scale.

use std::cmp::Ordering;
use std::fmt;

use crate::error::DecimalError;

/// The largest scale supported. 18 fractional digits cover every venue precision (nautilus
/// tops out at 16) and leave 20 integer digits in the i128 mantissa.
pub const MAX_SCALE: u8 = 18;

const POW10: [i128; 19] = {
    let mut table = [1i128; 19];
    let mut i = 1;
    while i < 19 {
        table[i] = table[i - 1] * 10;
        i += 1;
    }
    table
};

/// A fixed-point decimal: `raw / 10^scale`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Fixed {
    /// The mantissa.
    pub raw: i128,
    /// Fractional digits, `0..=MAX_SCALE`.
    pub scale: u8,
}

/// The parts of a syntactically valid decimal string.
struct Parts<'a> {
    negative: bool,
    integer: &'a str,
    fraction: &'a str,
}

fn split(text: &str) -> Result<Parts<'_>, DecimalError> {
    let bad = || DecimalError::Syntax {
        value: text.to_owned(),
    };
    let (negative, body) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (integer, fraction) = match body.split_once('.') {
        Some((i, f)) if !f.is_empty() => (i, f),
        Some(_) => return Err(bad()),
        None => (body, ""),
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(integer) || (integer.len() > 1 && integer.starts_with('0')) {
        return Err(bad());
    }
    if !fraction.is_empty() && !digits(fraction) {
        return Err(bad());
    }
    if negative && integer == "0" && fraction.bytes().all(|b| b == b'0') {
        return Err(DecimalError::NegativeZero {
            value: text.to_owned(),
        });
    }
    Ok(Parts {
        negative,
        integer,
        fraction,
    })
}

fn check_scale(scale: u32) -> Result<u8, DecimalError> {
    checked_scale(i128::from(scale))
}

/// Check a scale given as any integer (a binding may receive a negative or huge one).
///
/// # Errors
/// [`DecimalError::BadScale`] outside `0..=MAX_SCALE`.
pub fn checked_scale(scale: i128) -> Result<u8, DecimalError> {
    u8::try_from(scale)
        .ok()
        .filter(|s| *s <= MAX_SCALE)
        .ok_or(DecimalError::BadScale {
            scale: scale.to_string(),
            max: MAX_SCALE,
        })
}

impl Fixed {
    /// Zero at `scale`.
    #[must_use]
    pub const fn zero(scale: u8) -> Self {
        Self { raw: 0, scale }
    }

    /// Parse a decimal string exactly at `scale`: fewer fractional digits are padded, more are
    /// refused (never rounded silently).
    ///
    /// # Errors
    /// [`DecimalError`] naming the value: bad syntax, negative zero, too many digits, bad
    /// scale, or out of range.
    pub fn parse(text: &str, scale: u32) -> Result<Self, DecimalError> {
        let scale = check_scale(scale)?;
        let parts = split(text)?;
        if parts.fraction.len() > scale as usize {
            return Err(DecimalError::ScaleExceeded {
                value: text.to_owned(),
                digits: parts.fraction.len(),
                scale,
            });
        }
        let out_of_range = || DecimalError::OutOfRange {
            value: text.to_owned(),
            scale,
        };
        // Accumulate toward the sign, so the most negative mantissa (-2^127) parses too.
        let mut raw: i128 = 0;
        for digit in parts.integer.bytes().chain(parts.fraction.bytes()) {
            let d = i128::from(digit - b'0');
            raw = raw
                .checked_mul(10)
                .and_then(|r| {
                    if parts.negative {
                        r.checked_sub(d)
                    } else {
                        r.checked_add(d)
                    }
                })
                .ok_or_else(out_of_range)?;
        }
        let pad = POW10[scale as usize - parts.fraction.len()];
        raw = raw.checked_mul(pad).ok_or_else(out_of_range)?;
        Ok(Self { raw, scale })
    }

    /// Parse a decimal string at its own scale (its count of fractional digits).
    ///
    /// # Errors
    /// As [`Self::parse`]; more than [`MAX_SCALE`] fractional digits is `ScaleExceeded`.
    pub fn parse_natural(text: &str) -> Result<Self, DecimalError> {
        let digits = split(text)?.fraction.len();
        let scale = u32::try_from(digits.min(usize::from(MAX_SCALE) + 1)).unwrap_or(u32::MAX);
        if scale > u32::from(MAX_SCALE) {
            return Err(DecimalError::ScaleExceeded {
                value: text.to_owned(),
                digits,
                scale: MAX_SCALE,
            });
        }
        Self::parse(text, scale)
    }

    /// This value at `scale`, rounding half to even when digits are dropped.
    ///
    /// # Errors
    /// [`DecimalError::BadScale`], or `OutOfRange` when widening overflows.
    pub fn rescale_half_even(self, scale: u32) -> Result<Self, DecimalError> {
        let scale = check_scale(scale)?;
        match scale.cmp(&self.scale) {
            Ordering::Equal => Ok(self),
            Ordering::Greater => {
                let factor = POW10[(scale - self.scale) as usize];
                self.raw
                    .checked_mul(factor)
                    .map(|raw| Self { raw, scale })
                    .ok_or_else(|| DecimalError::OutOfRange {
                        value: self.to_string(),
                        scale,
                    })
            }
            Ordering::Less => {
                let divisor = POW10[(self.scale - scale) as usize];
                let (quotient, remainder) = (self.raw / divisor, self.raw % divisor);
                let twice = remainder.abs() * 2;
                let round_away = twice > divisor || (twice == divisor && quotient % 2 != 0);
                let raw = if round_away {
                    quotient + self.raw.signum()
                } else {
                    quotient
                };
                Ok(Self { raw, scale })
            }
        }
    }

    /// Exact sum of two values at the same scale.
    ///
    /// # Errors
    /// `OutOfRange` on overflow. Scales must match (checked: a mismatch is `OutOfRange` too,
    /// since silently aligning would hide a precision bug).
    pub fn checked_add(self, other: Self) -> Result<Self, DecimalError> {
        let overflow = || DecimalError::OutOfRange {
            value: format!("{self} + {other}"),
            scale: self.scale,
        };
        if self.scale != other.scale {
            return Err(overflow());
        }
        self.raw
            .checked_add(other.raw)
            .map(|raw| Self {
                raw,
                scale: self.scale,
            })
            .ok_or_else(overflow)
    }
}

impl fmt::Display for Fixed {
    /// The canonical decimal string: exactly `scale` fractional digits, no sign on zero.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let magnitude = self.raw.unsigned_abs();
        let divisor = POW10[self.scale as usize].unsigned_abs();
        let sign = if self.raw < 0 { "-" } else { "" };
        let (integer, fraction) = (magnitude / divisor, magnitude % divisor);
        if self.scale == 0 {
            write!(f, "{sign}{integer}")
        } else {
            write!(
                f,
                "{sign}{integer}.{fraction:0width$}",
                width = self.scale as usize
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(text: &str, scale: u32) -> Result<String, DecimalError> {
        Fixed::parse(text, scale).map(|d| d.to_string())
    }

    #[test]
    fn parses_and_formats_at_scale() {
        assert_eq!(p("1.5", 3), Ok("1.500".into()));
        assert_eq!(p("-0.25", 2), Ok("-0.25".into()));
        assert_eq!(p("0", 0), Ok("0".into()));
        assert_eq!(
            p("0.000", 2)
                .err()
                .map(|e| e.to_string().starts_with("DECIMAL_SCALE_EXCEEDED")),
            Some(true)
        );
    }

    #[test]
    fn refuses_bad_syntax_and_negative_zero() {
        for bad in [
            "", "-", "1.", ".5", "01", "+1", "1e5", "1.2.3", " 1", "NaN", "١",
        ] {
            assert!(
                matches!(Fixed::parse(bad, 4), Err(DecimalError::Syntax { .. })),
                "{bad:?}"
            );
        }
        for bad in ["-0", "-0.0", "-0.000"] {
            assert!(
                matches!(Fixed::parse(bad, 4), Err(DecimalError::NegativeZero { .. })),
                "{bad:?}"
            );
        }
        assert!(matches!(
            Fixed::parse("1", 19),
            Err(DecimalError::BadScale { .. })
        ));
        assert!(matches!(
            Fixed::parse(&"9".repeat(40), 0),
            Err(DecimalError::OutOfRange { .. })
        ));
    }

    #[test]
    fn rounds_half_even() {
        let r = |t: &str, s: u32| {
            Fixed::parse_natural(t)
                .and_then(|d| d.rescale_half_even(s))
                .map(|d| d.to_string())
        };
        assert_eq!(r("2.5", 0), Ok("2".into()));
        assert_eq!(r("3.5", 0), Ok("4".into()));
        assert_eq!(r("-2.5", 0), Ok("-2".into()));
        assert_eq!(r("-0.004", 2), Ok("0.00".into()));
        assert_eq!(r("1.2345", 3), Ok("1.234".into()));
        assert_eq!(r("1.23451", 3), Ok("1.235".into()));
        assert_eq!(r("7", 2), Ok("7.00".into()));
    }
}
