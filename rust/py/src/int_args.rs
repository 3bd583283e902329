//! Integer arguments of the series binding. PyO3 refuses an int its Rust type cannot hold with a
//! bare `OverflowError`; these extractors refuse it as the package does (a `BarsError` naming the
//! value and the range allowed). A non-int stays PyO3's `TypeError`, named by its argument.

use pyo3::exceptions::PyOverflowError;
use pyo3::prelude::*;

use crate::errors::bars_refusal;

/// `value` as `T`, or the refusal naming `allowed`.
fn narrow<T: TryFrom<i128>>(value: &Bound<'_, PyAny>, allowed: &str) -> PyResult<T> {
    let wide = match value.extract::<i128>() {
        Ok(wide) => Some(wide),
        Err(error) if error.is_instance_of::<PyOverflowError>(value.py()) => None,
        Err(error) => return Err(error),
    };
    wide.and_then(|wide| T::try_from(wide).ok()).ok_or_else(|| {
        let shown = value
            .repr()
            .map_or_else(|_| "?".to_owned(), |r| r.to_string());
        let shown = if shown.len() > 48 {
            format!("{}... ({} digits)", &shown[..48], shown.len())
        } else {
            shown
        };
        bars_refusal(
            value.py(),
            format!("INVALID_INTEGER: {shown} is out of range; allowed: {allowed}"),
        )
    })
}

/// A nanosecond instant.
pub fn nanos(value: &Bound<'_, PyAny>) -> PyResult<u64> {
    narrow(value, "a nanosecond timestamp, an integer 0..2^64-1")
}

/// A fixed-point mantissa (a price or a volume at its precision).
pub fn mantissa(value: &Bound<'_, PyAny>) -> PyResult<i64> {
    narrow(value, "a mantissa, an integer -2^63..2^63-1")
}

/// A count (a capacity, an offset, a limit).
pub fn count(value: &Bound<'_, PyAny>) -> PyResult<usize> {
    narrow(value, "a count, an integer 0..2^64-1")
}

/// A decimal precision (checked against 0..18 by the core once it fits).
pub fn precision(value: &Bound<'_, PyAny>) -> PyResult<i64> {
    narrow(value, "a precision, an integer 0..18")
}

/// An optional nanosecond instant (None stays None).
pub fn nanos_or_none(value: &Bound<'_, PyAny>) -> PyResult<Option<u64>> {
    if value.is_none() {
        Ok(None)
    } else {
        nanos(value).map(Some)
    }
}
