//! Decimal strings and nanosecond timestamps: parse, format, quantize.
//!
//! Scales and mantissas arrive as Python ints of any size; out-of-range ones are
//! `DecimalError`s naming the value, not `OverflowError`s from argument conversion.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyInt, PyList, PyString};
use spine_core::decimal::checked_scale;
use spine_core::{parse_timestamp as core_parse_timestamp, DecimalError, Fixed};

use crate::columns::le_bytes;
use crate::errors::{decimal_error, decimal_error_at, timestamp_error, timestamp_error_at};

/// A scale argument, checked against `0..=MAX_SCALE` whatever its size.
fn scale_arg(py: Python<'_>, scale: &Bound<'_, PyInt>) -> PyResult<u32> {
    let checked = match scale.extract::<i128>() {
        Ok(value) => checked_scale(value),
        Err(_) => Err(DecimalError::BadScale {
            scale: scale.to_string(),
            max: spine_core::MAX_SCALE,
        }),
    };
    checked.map(u32::from).map_err(|e| decimal_error(py, &e))
}

/// A text argument; one that is not valid Unicode is decoded lossily (U+FFFD), which every
/// decimal and timestamp rule refuses, so it fails as a bad value rather than an encode error.
fn text_arg(text: &Bound<'_, PyString>) -> String {
    text.to_string_lossy().into_owned()
}

/// Parse a decimal string exactly at `scale`; returns the integer mantissa.
#[pyfunction]
pub fn parse_decimal(
    py: Python<'_>,
    text: &Bound<'_, PyString>,
    scale: &Bound<'_, PyInt>,
) -> PyResult<i128> {
    let scale = scale_arg(py, scale)?;
    Fixed::parse(&text_arg(text), scale)
        .map(|d| d.raw)
        .map_err(|e| decimal_error(py, &e))
}

/// Format an integer mantissa at `scale` as the canonical decimal string.
#[pyfunction]
pub fn format_decimal(
    py: Python<'_>,
    raw: &Bound<'_, PyInt>,
    scale: &Bound<'_, PyInt>,
) -> PyResult<String> {
    let scale = scale_arg(py, scale)?;
    let raw = raw.extract::<i128>().map_err(|_| {
        let error = DecimalError::OutOfRange {
            value: raw.to_string(),
            scale: scale as u8,
        };
        decimal_error(py, &error)
    })?;
    Ok(Fixed {
        raw,
        scale: scale as u8,
    }
    .to_string())
}

/// Round a decimal string to `scale` (half to even) and format it canonically.
#[pyfunction]
pub fn quantize_decimal(
    py: Python<'_>,
    text: &Bound<'_, PyString>,
    scale: &Bound<'_, PyInt>,
) -> PyResult<String> {
    let scale = scale_arg(py, scale)?;
    Fixed::parse_natural(&text_arg(text))
        .and_then(|d| d.rescale_half_even(scale))
        .map(|d| d.to_string())
        .map_err(|e| decimal_error(py, &e))
}

/// Validate a nanosecond-epoch string; returns its integer value.
#[pyfunction]
pub fn parse_timestamp(py: Python<'_>, text: &Bound<'_, PyString>) -> PyResult<u64> {
    core_parse_timestamp(&text_arg(text)).map_err(|e| timestamp_error(py, &e))
}

/// The strings of a column, each handed to `parse` with its row; the first refusal, named
/// by its row, ends the column.
fn parse_column<T>(
    values: &Bound<'_, PyList>,
    mut parse: impl FnMut(usize, &str) -> PyResult<T>,
) -> PyResult<Vec<T>> {
    let mut out = Vec::with_capacity(values.len());
    for (row, item) in values.iter().enumerate() {
        let Ok(text) = item.cast::<PyString>() else {
            let type_name = item.get_type().name()?;
            return Err(PyTypeError::new_err(format!(
                "row {row}: a {type_name} is not a decimal or timestamp string; allowed: str"
            )));
        };
        out.push(parse(row, &text_arg(text))?);
    }
    Ok(out)
}

/// A column of decimal strings as little-endian `i64` mantissas at `scale` (each exact, never
/// rounded; a mantissa beyond `i64` is refused).
#[pyfunction]
pub fn parse_decimal_column<'py>(
    py: Python<'py>,
    values: &Bound<'py, PyList>,
    scale: &Bound<'py, PyInt>,
) -> PyResult<Bound<'py, PyBytes>> {
    let scale = scale_arg(py, scale)?;
    let mantissas = parse_column(values, |row, text| {
        let error = |e: DecimalError| decimal_error_at(py, &e, row);
        let raw = Fixed::parse(text, scale).map_err(error)?.raw;
        i64::try_from(raw).map_err(|_| {
            error(DecimalError::OutOfRange {
                value: text.to_owned(),
                scale: scale as u8,
            })
        })
    })?;
    Ok(le_bytes(py, &mantissas, i64::to_le_bytes))
}

/// A column of nanosecond-timestamp strings as little-endian `u64`s.
#[pyfunction]
pub fn parse_timestamp_column<'py>(
    py: Python<'py>,
    values: &Bound<'py, PyList>,
) -> PyResult<Bound<'py, PyBytes>> {
    let stamps = parse_column(values, |row, text| {
        core_parse_timestamp(text).map_err(|e| timestamp_error_at(py, &e, row))
    })?;
    Ok(le_bytes(py, &stamps, u64::to_le_bytes))
}
