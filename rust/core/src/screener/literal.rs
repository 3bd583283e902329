//! A definition's decimal literal placed exactly on a column's integer grid.
//!
//! A column holds mantissas `m` at its key's scale `s`; a literal `x` may carry more fractional
//! digits than `s`. Comparing `m` with `X = x * 10^s` never needs `X` itself, only its floor
//! and ceiling: `m < X` iff `m < ceil(X)`, `m <= X` iff `m <= floor(X)`, `m > X` iff
//! `m > floor(X)`, `m >= X` iff `m >= ceil(X)`, and `m == X` only when `X` is an integer. So a
//! literal with any number of digits is compared exactly, never rounded. The kept digits go
//! through the core's decimal parser; the dropped ones only decide whether `X` is an integer.

use std::cmp::Ordering;

use crate::decimal::{Fixed, MAX_SCALE};

/// A literal on a scale-`s` grid: `floor(X)` and whether `X` is an integer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Grid {
    /// `floor(x * 10^s)`.
    pub floor: i128,
    /// `x * 10^s` is an integer (then it equals `floor`).
    pub exact: bool,
}

impl Grid {
    /// `ceil(x * 10^s)`; `None` past the mantissa range.
    #[must_use]
    pub fn ceil(self) -> Option<i128> {
        if self.exact {
            Some(self.floor)
        } else {
            self.floor.checked_add(1)
        }
    }
}

/// Why a literal was refused (the caller names the path).
fn syntax(text: &str) -> String {
    format!("{text:?} is not a decimal string; allowed: -?(0|[1-9][0-9]*)(.[0-9]+)? with no exponent and no negative zero")
}

/// Place `text` on the grid of `scale` (at most [`MAX_SCALE`]).
///
/// # Errors
/// The refusal's text: bad syntax, a negative zero, or a magnitude past the signed 128-bit
/// mantissa at `scale`.
pub fn place(text: &str, scale: u8) -> Result<Grid, String> {
    let (negative, body) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (integer, fraction) = match body.split_once('.') {
        Some((i, f)) => (i, f),
        None => (body, ""),
    };
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    let bad_integer = integer.is_empty() || (integer.len() > 1 && integer.starts_with('0'));
    if bad_integer
        || !digits(integer)
        || !digits(fraction)
        || (body.contains('.') && fraction.is_empty())
    {
        return Err(syntax(text));
    }
    let zero = |s: &str| s.bytes().all(|b| b == b'0');
    if negative && zero(integer) && zero(fraction) {
        return Err(syntax(text));
    }
    let keep = fraction.len().min(usize::from(scale.min(MAX_SCALE)));
    let (kept, dropped) = fraction.split_at(keep);
    // The magnitude's kept digits, through the core parser (unsigned, so "-0.00|1" parses).
    let magnitude = if kept.is_empty() {
        Fixed::parse(integer, u32::from(scale))
    } else {
        Fixed::parse(&format!("{integer}.{kept}"), u32::from(scale))
    }
    .map_err(|_| format!("{text:?} is out of range at scale {scale}"))?
    .raw;
    let exact = zero(dropped);
    // Truncation toward zero: for a negative inexact value the floor is one further down.
    let floor = match (negative, exact) {
        (false, _) => Some(magnitude),
        (true, true) => Some(-magnitude),
        (true, false) => (-magnitude).checked_sub(1),
    }
    .ok_or_else(|| format!("{text:?} is out of range at scale {scale}"))?;
    Ok(Grid { floor, exact })
}

/// Exact order of two decimal literals already accepted by [`place`], by their digits (any
/// number of them): sign, then the integer part, then the fraction padded with zeros.
#[must_use]
pub fn compare(a: &str, b: &str) -> Ordering {
    fn parts(t: &str) -> (bool, &str, &str) {
        let (negative, body) = t.strip_prefix('-').map_or((false, t), |rest| (true, rest));
        let (integer, fraction) = body.split_once('.').unwrap_or((body, ""));
        (negative, integer, fraction.trim_end_matches('0'))
    }
    let ((na, ia, fa), (nb, ib, fb)) = (parts(a), parts(b));
    let magnitude = ia
        .len()
        .cmp(&ib.len())
        .then_with(|| ia.cmp(ib))
        .then_with(|| fa.cmp(fb));
    match (na, nb) {
        (false, false) => magnitude,
        (true, true) => magnitude.reverse(),
        // Negative zero is refused, so a negative literal is below every other one.
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
    }
}
