//! Integer arguments of the bindings. PyO3 refuses an int its Rust type cannot hold with a bare
//! `OverflowError`, and takes `True` for 1; these extractors refuse both as the package does (a
//! `BarsError`, `FeatureError` or `HubError` naming the value and the range allowed). A non-int
//! stays PyO3's `TypeError`, named by its argument.

use pyo3::exceptions::PyOverflowError;
use pyo3::prelude::*;
use pyo3::types::PyBool;

use crate::errors::{bars_refusal, feature_refusal, hub_refusal};

/// Builds the package's exception for a refused argument.
type Refuse = fn(Python<'_>, String) -> PyErr;

/// `value` as `T`, or the refusal naming `allowed` (a bool is refused: it is no count, time or
/// mantissa, whatever `int` says).
fn narrow_with<T: TryFrom<i128>>(
    value: &Bound<'_, PyAny>,
    allowed: &str,
    refuse: Refuse,
) -> PyResult<T> {
    if value.is_instance_of::<PyBool>() {
        return Err(refuse(
            value.py(),
            format!("INVALID_INTEGER: {value} is a bool; allowed: {allowed}"),
        ));
    }
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
        refuse(
            value.py(),
            format!("INVALID_INTEGER: {shown} is out of range; allowed: {allowed}"),
        )
    })
}

/// `read(value)`, or `None` for Python's None.
fn or_none<'py, T>(
    value: &Bound<'py, PyAny>,
    read: impl FnOnce(&Bound<'py, PyAny>) -> PyResult<T>,
) -> PyResult<Option<T>> {
    if value.is_none() {
        Ok(None)
    } else {
        read(value).map(Some)
    }
}

fn narrow<T: TryFrom<i128>>(value: &Bound<'_, PyAny>, allowed: &str) -> PyResult<T> {
    narrow_with(value, allowed, bars_refusal)
}

/// A nanosecond instant.
pub fn nanos(value: &Bound<'_, PyAny>) -> PyResult<u64> {
    narrow(value, "a nanosecond timestamp, an integer 0..2^64-1")
}

/// A bar's sequence number.
pub fn sequence(value: &Bound<'_, PyAny>) -> PyResult<u64> {
    narrow(value, "a sequence number, an integer 0..2^64-1")
}

/// An optional sequence number (None stays None).
pub fn sequence_or_none(value: &Bound<'_, PyAny>) -> PyResult<Option<u64>> {
    or_none(value, sequence)
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
    or_none(value, nanos)
}

/// Optional coverage spans (None stays None).
pub fn spans_or_none(value: &Bound<'_, PyAny>) -> PyResult<Option<Vec<(u64, u64)>>> {
    or_none(value, spans)
}

/// Coverage spans `[(start, end), ...]` of nanosecond instants.
fn spans(value: &Bound<'_, PyAny>) -> PyResult<Vec<(u64, u64)>> {
    let pairs: Vec<(Bound<'_, PyAny>, Bound<'_, PyAny>)> = value.extract()?;
    pairs
        .iter()
        .map(|(start, end)| Ok((nanos(start)?, nanos(end)?)))
        .collect()
}

/// A feature argument: a nanosecond instant.
pub fn feature_nanos(value: &Bound<'_, PyAny>) -> PyResult<u64> {
    narrow_with(
        value,
        "a nanosecond timestamp, an integer 0..2^64-1",
        feature_refusal,
    )
}

/// A feature argument: an instrument index.
pub fn instrument_index(value: &Bound<'_, PyAny>) -> PyResult<u32> {
    narrow_with(
        value,
        "an instrument index, an integer 0..2^32-1",
        feature_refusal,
    )
}

/// An optional instrument index (None stays None).
pub fn optional_instrument_index(value: &Bound<'_, PyAny>) -> PyResult<Option<u32>> {
    or_none(value, instrument_index)
}

/// A hub argument: a count (a queue bound, a number of events).
pub fn hub_count(value: &Bound<'_, PyAny>) -> PyResult<usize> {
    narrow_with(value, "a count, an integer 0..2^64-1", hub_refusal)
}

/// A hub argument: a subscriber id.
pub fn hub_id(value: &Bound<'_, PyAny>) -> PyResult<u64> {
    narrow_with(value, "a subscriber id, an integer 0..2^64-1", hub_refusal)
}
