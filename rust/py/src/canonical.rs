//! Canonical JSON straight from Python objects: one walk over the objects writing canonical
//! bytes as it goes (no intermediate JSON text, no second parse), then one hash of the buffer.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};
use spine_core::{json, JsonError, JsonErrorKind};

use crate::errors::{identity_error, json_error};
use crate::walk;

/// Walk `value` into canonical bytes and hand them to `finish`.
fn with_canonical<R>(
    py: Python<'_>,
    value: &Bound<'_, PyAny>,
    finish: impl FnOnce(&[u8]) -> PyResult<R>,
) -> PyResult<R> {
    walk::with_canonical(value, finish).unwrap_or_else(|e| Err(json_error(py, &e)))
}

/// Canonical JSON bytes of a Python value (dict, list, tuple, str, int, bool, None).
#[pyfunction]
pub fn canonical_json<'py>(
    py: Python<'py>,
    value: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    with_canonical(py, value, |bytes| Ok(PyBytes::new(py, bytes)))
}

/// The identity `spine.v2/<name>` of a Python value, as 64 lowercase hex characters.
#[pyfunction]
pub fn identity<'py>(
    py: Python<'py>,
    name: &Bound<'py, PyString>,
    value: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyString>> {
    // A name that is not even valid Unicode is still a bad name, reported as one (lossily
    // decoded, it holds U+FFFD, which the name rule refuses).
    let name = name.to_string_lossy();
    let name = name.as_ref();
    spine_core::identity::check_name(name).map_err(|e| identity_error(py, &e))?;
    with_canonical(py, value, |bytes| {
        let digest = spine_core::identity(name, bytes).map_err(|e| identity_error(py, &e))?;
        // Hex straight into a stack buffer: the String that `identity_hex` allocates would
        // only be copied into the Python str.
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut hex = [0u8; 64];
        for (pair, byte) in hex.chunks_exact_mut(2).zip(digest) {
            pair[0] = HEX[usize::from(byte >> 4)];
            pair[1] = HEX[usize::from(byte & 0xf)];
        }
        Ok(PyString::new(
            py,
            std::str::from_utf8(&hex).unwrap_or_default(),
        ))
    })
}

/// Canonicalise JSON text given as `str` or UTF-8 `bytes`.
#[pyfunction]
pub fn canonicalize<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    let result = if let Ok(bytes) = text.cast::<PyBytes>() {
        let input = bytes.as_bytes();
        py.detach(|| json::canonicalize(input))
    } else if let Ok(s) = text.cast::<PyString>() {
        let input = s
            .to_str()
            .map_err(|e| json_error(py, &lone_surrogate_in_text(py, &e)))?;
        py.detach(|| json::canonicalize(input.as_bytes()))
    } else {
        let type_name = text.get_type().name()?;
        return Err(PyTypeError::new_err(format!(
            "canonicalize() takes str or bytes, not {type_name}"
        )));
    };
    result
        .map(|bytes| PyBytes::new(py, &bytes))
        .map_err(|e| json_error(py, &e))
}

/// A str argument that cannot be UTF-8: name the first surrogate's position in the text.
fn lone_surrogate_in_text(py: Python<'_>, encode_error: &PyErr) -> JsonError {
    let position = encode_error
        .value(py)
        .getattr("start")
        .and_then(|start| start.extract::<usize>())
        .map_or_else(|_| String::new(), |i| format!(" at character {i}"));
    JsonError::new(
        JsonErrorKind::LoneSurrogate,
        format!("the JSON text has a lone surrogate{position}; text must be valid Unicode"),
    )
}
