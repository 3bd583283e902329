//! Canonical JSON straight from Python objects: one walk over the objects, writing canonical
//! bytes as it goes (no intermediate JSON text, no second parse), then hashing the buffer.

use std::cell::Cell;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use spine_core::{identity_hex, json, CanonicalWriter, JsonError, JsonErrorKind, MAX_DEPTH};

use crate::errors::{identity_error, json_error};

/// Why a walk stopped: a refusal of the canonical rules, or a Python error raised underneath.
enum WalkError {
    Refused(JsonError),
    Python(PyErr),
}

impl WalkError {
    fn at_key(self, key: &str) -> Self {
        match self {
            Self::Refused(e) => Self::Refused(e.at_key(key)),
            python => python,
        }
    }

    fn at_index(self, index: usize) -> Self {
        match self {
            Self::Refused(e) => Self::Refused(e.at_index(index)),
            python => python,
        }
    }

    fn into_pyerr(self, py: Python<'_>) -> PyErr {
        match self {
            Self::Refused(e) => json_error(py, &e),
            Self::Python(e) => e,
        }
    }
}

fn refuse(kind: JsonErrorKind, detail: String) -> WalkError {
    WalkError::Refused(JsonError::new(kind, detail))
}

type Walk = Result<(), WalkError>;

thread_local! {
    /// A reusable output buffer: taken for a call, put back after, so nested use is safe.
    static BUFFER: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
}

/// Walk `value` into canonical bytes and hand them to `finish`.
fn with_canonical<R>(py: Python<'_>, value: &Bound<'_, PyAny>, finish: impl FnOnce(&[u8]) -> PyResult<R>) -> PyResult<R> {
    let mut writer = CanonicalWriter::from_vec(BUFFER.with(Cell::take));
    let walked = write_value(&mut writer, value, 0);
    let result = match walked {
        Ok(()) => finish(writer.as_bytes()),
        Err(e) => Err(e.into_pyerr(py)),
    };
    let mut buf = writer.into_bytes();
    if buf.capacity() <= 1 << 20 {
        buf.clear();
        BUFFER.with(|b| b.set(buf));
    }
    result
}

/// Canonical JSON bytes of a Python value (dict, list, tuple, str, int, bool, None).
#[pyfunction]
pub fn canonical_json<'py>(py: Python<'py>, value: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
    with_canonical(py, value, |bytes| Ok(PyBytes::new(py, bytes)))
}

/// The identity `spine.v2/<name>` of a Python value, as 64 lowercase hex characters.
#[pyfunction]
pub fn identity(py: Python<'_>, name: &str, value: &Bound<'_, PyAny>) -> PyResult<String> {
    spine_core::identity::check_name(name).map_err(|e| identity_error(py, &e))?;
    with_canonical(py, value, |bytes| identity_hex(name, bytes).map_err(|e| identity_error(py, &e)))
}

/// Canonicalise JSON text given as `str` or UTF-8 `bytes`.
#[pyfunction]
pub fn canonicalize<'py>(py: Python<'py>, text: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
    let result = if let Ok(bytes) = text.cast::<PyBytes>() {
        let input = bytes.as_bytes();
        py.detach(|| json::canonicalize(input))
    } else if let Ok(s) = text.cast::<PyString>() {
        let input = str_utf8(s).map_err(|e| e.into_pyerr(py))?;
        py.detach(|| json::canonicalize(input.as_bytes()))
    } else {
        let type_name = text.get_type().name()?;
        return Err(PyTypeError::new_err(format!("canonicalize() takes str or bytes, not {type_name}")));
    };
    result.map(|bytes| PyBytes::new(py, &bytes)).map_err(|e| json_error(py, &e))
}

/// The UTF-8 view of a Python str; a lone surrogate is a refusal naming its position.
fn str_utf8<'a>(s: &'a Bound<'_, PyString>) -> Result<&'a str, WalkError> {
    s.to_str().map_err(|err| {
        let start = err.value(s.py()).getattr("start").and_then(|v| v.extract::<usize>()).unwrap_or(0);
        let code = surrogate_at(s, start).unwrap_or(0);
        refuse(
            JsonErrorKind::LoneSurrogate,
            format!("string has a lone surrogate U+{code:04X} at character {start}; strings must be valid Unicode"),
        )
    })
}

fn surrogate_at(s: &Bound<'_, PyString>, index: usize) -> Option<u32> {
    let ch = s.as_any().get_item(index).ok()?;
    let builtins = s.py().import("builtins").ok()?;
    builtins.getattr("ord").ok()?.call1((ch,)).ok()?.extract().ok()
}

fn write_value(w: &mut CanonicalWriter, obj: &Bound<'_, PyAny>, depth: usize) -> Walk {
    // Exact types first: they are nearly every value and cost one pointer compare each.
    if let Ok(s) = obj.cast_exact::<PyString>() {
        w.string(str_utf8(s)?);
    } else if let Ok(d) = obj.cast_exact::<PyDict>() {
        write_dict(w, d, depth)?;
    } else if obj.is_exact_instance_of::<PyInt>() {
        write_int(w, obj)?;
    } else if let Ok(l) = obj.cast_exact::<PyList>() {
        write_seq(w, l.iter(), depth)?;
    } else if obj.is_none() {
        w.null();
    } else if let Ok(b) = obj.cast::<PyBool>() {
        w.bool(b.is_true());
    } else {
        write_other(w, obj, depth)?;
    }
    Ok(())
}

/// Subclasses, tuples and everything refused.
fn write_other(w: &mut CanonicalWriter, obj: &Bound<'_, PyAny>, depth: usize) -> Walk {
    if obj.is_instance_of::<PyFloat>() {
        let repr = obj.repr().map_err(WalkError::Python)?;
        return Err(refuse(JsonErrorKind::Float, format!("float {repr} is refused; send decimals as strings")));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        w.string(str_utf8(s)?);
    } else if obj.is_instance_of::<PyInt>() {
        write_int(w, obj)?;
    } else if let Ok(d) = obj.cast::<PyDict>() {
        write_dict(w, d, depth)?;
    } else if let Ok(t) = obj.cast::<PyTuple>() {
        write_seq(w, t.iter(), depth)?;
    } else if let Ok(l) = obj.cast::<PyList>() {
        write_seq(w, l.iter(), depth)?;
    } else {
        let type_name = obj.get_type().name().map_err(WalkError::Python)?;
        return Err(refuse(
            JsonErrorKind::UnsupportedType,
            format!("a value of type {type_name} has no JSON form; allowed: dict (str keys), list, tuple, str, int, bool, None"),
        ));
    }
    Ok(())
}

fn write_int(w: &mut CanonicalWriter, obj: &Bound<'_, PyAny>) -> Walk {
    match obj.extract::<i64>() {
        Ok(i) => {
            w.int(i);
            Ok(())
        }
        Err(_) => {
            let text = obj.str().map_err(WalkError::Python)?;
            Err(refuse(
                JsonErrorKind::IntegerOutOfRange,
                format!("integer {text} is outside signed 64 bit [-9223372036854775808, 9223372036854775807]"),
            ))
        }
    }
}

fn enter(depth: usize) -> Result<usize, WalkError> {
    if depth >= MAX_DEPTH {
        return Err(refuse(JsonErrorKind::TooDeep, format!("containers nest deeper than {MAX_DEPTH} levels")));
    }
    Ok(depth + 1)
}

fn write_seq<'py>(w: &mut CanonicalWriter, items: impl Iterator<Item = Bound<'py, PyAny>>, depth: usize) -> Walk {
    let depth = enter(depth)?;
    w.punct(b'[');
    for (i, item) in items.enumerate() {
        if i > 0 {
            w.comma();
        }
        write_value(w, &item, depth).map_err(|e| e.at_index(i))?;
    }
    w.punct(b']');
    Ok(())
}

fn write_dict(w: &mut CanonicalWriter, dict: &Bound<'_, PyDict>, depth: usize) -> Walk {
    let depth = enter(depth)?;
    let mut members: Vec<(Bound<'_, PyString>, Bound<'_, PyAny>)> = Vec::with_capacity(dict.len());
    for (key, value) in dict.iter() {
        match key.cast_into::<PyString>() {
            Ok(k) => {
                str_utf8(&k)?;
                members.push((k, value));
            }
            Err(e) => {
                let key = e.into_inner();
                let type_name = key.get_type().name().map_err(WalkError::Python)?;
                let repr = key.repr().map_err(WalkError::Python)?;
                return Err(refuse(
                    JsonErrorKind::NonStringKey,
                    format!("object key {repr} is a {type_name}; keys must be strings"),
                ));
            }
        }
    }
    // Keys were checked above, so to_str cannot fail here.
    let key = |m: &(Bound<'_, PyString>, Bound<'_, PyAny>)| m.0.to_str().unwrap_or_default().to_owned();
    json::sort_members(&mut members, |m| m.0.to_str().unwrap_or_default()).map_err(WalkError::Refused)?;
    w.punct(b'{');
    for (i, member) in members.iter().enumerate() {
        if i > 0 {
            w.comma();
        }
        let k = member.0.to_str().unwrap_or_default();
        w.key(k);
        write_value(w, &member.1, depth).map_err(|e| e.at_key(&key(member)))?;
    }
    w.punct(b'}');
    Ok(())
}
