//! Decimal strings and nanosecond timestamps: parse, format, quantize.

use pyo3::prelude::*;
use spine_core::{parse_timestamp as core_parse_timestamp, Fixed};

use crate::errors::{decimal_error, timestamp_error};

/// Parse a decimal string exactly at `scale`; returns the integer mantissa.
#[pyfunction]
pub fn parse_decimal(py: Python<'_>, text: &str, scale: u32) -> PyResult<i128> {
    Fixed::parse(text, scale)
        .map(|d| d.raw)
        .map_err(|e| decimal_error(py, &e))
}

/// Format an integer mantissa at `scale` as the canonical decimal string.
#[pyfunction]
pub fn format_decimal(py: Python<'_>, raw: i128, scale: u32) -> PyResult<String> {
    let fixed = Fixed::zero(0)
        .rescale_half_even(scale)
        .map_err(|e| decimal_error(py, &e))?;
    Ok(Fixed {
        raw,
        scale: fixed.scale,
    }
    .to_string())
}

/// Round a decimal string to `scale` (half to even) and format it canonically.
#[pyfunction]
pub fn quantize_decimal(py: Python<'_>, text: &str, scale: u32) -> PyResult<String> {
    Fixed::parse_natural(text)
        .and_then(|d| d.rescale_half_even(scale))
        .map(|d| d.to_string())
        .map_err(|e| decimal_error(py, &e))
}

/// Validate a nanosecond-epoch string; returns its integer value.
#[pyfunction]
pub fn parse_timestamp(py: Python<'_>, text: &str) -> PyResult<u64> {
    core_parse_timestamp(text).map_err(|e| timestamp_error(py, &e))
}
