//! Canonical JSON straight from Python objects: one walk over the objects writing canonical
//! bytes as it goes (no intermediate JSON text, no second parse), then one hash of the buffer.

use std::cell::Cell;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};
use spine_core::{identity_hex, json, CanonicalWriter, JsonError, JsonErrorKind};

use crate::errors::{identity_error, json_error};
use crate::walk;

thread_local! {
    /// A reusable output buffer: taken for a call and put back after, so re-entry is safe.
    static BUFFER: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
}

/// Buffers that grew past this are dropped rather than kept for the next call.
const KEEP_BUFFER_BYTES: usize = 1 << 20;

/// Walk `value` into canonical bytes and hand them to `finish`.
fn with_canonical<R>(
    py: Python<'_>,
    value: &Bound<'_, PyAny>,
    finish: impl FnOnce(&[u8]) -> PyResult<R>,
) -> PyResult<R> {
    let mut walker = walk::Walker::new(CanonicalWriter::from_vec(BUFFER.with(Cell::take)));
    // SAFETY: `value` is a live object and the GIL is held (we have `py`).
    #[allow(unsafe_code)]
    let walked = unsafe { walk::write_value(&mut walker, value.as_ptr(), 0) };
    let writer = walker.into_writer();
    let result = match walked {
        Ok(()) => finish(writer.as_bytes()),
        Err(e) => Err(json_error(py, &e)),
    };
    let buf = writer.into_bytes();
    if buf.capacity() <= KEEP_BUFFER_BYTES {
        BUFFER.with(|b| b.set(buf));
    }
    result
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
pub fn identity(
    py: Python<'_>,
    name: &Bound<'_, PyString>,
    value: &Bound<'_, PyAny>,
) -> PyResult<String> {
    // A name that is not even valid Unicode is still a bad name, reported as one (lossily
    // decoded, it holds U+FFFD, which the name rule refuses).
    let name = name.to_string_lossy();
    let name = name.as_ref();
    spine_core::identity::check_name(name).map_err(|e| identity_error(py, &e))?;
    with_canonical(py, value, |bytes| {
        identity_hex(name, bytes).map_err(|e| identity_error(py, &e))
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
