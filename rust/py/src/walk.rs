//! The walk from Python objects to canonical JSON bytes, over the raw C API.
//!
//! Why unsafe: the safe PyO3 wrappers cost a refcount round trip (a function call each under
//! abi3), a size check per dict step and an extra vector per object. On a 60-value feature row
//! that was 2x slower than orjson; this walk borrows every reference instead (see
//! benches/bench_identity.py for the measured ratio).
//!
//! Soundness rests on one invariant: the walk runs no Python code while it holds borrowed
//! references. It calls only C API functions that cannot re-enter the interpreter on the
//! types they are called on (PyDict_Next, PyList_GetItem, PyUnicode_AsUTF8AndSize,
//! PyLong_AsLongLongAndOverflow, type checks), and error messages are built from data read in
//! Rust (type names, values) rather than from `repr()`, which could run user code and mutate a
//! container being walked. The GIL is held throughout.
#![allow(unsafe_code)]

use std::ffi::c_int;

use std::ops::{Deref, DerefMut};

use pyo3::ffi;
use smallvec::SmallVec;
use spine_core::{json, CanonicalWriter, JsonError, JsonErrorKind, MAX_DEPTH};

use crate::key_shapes::{KeyIds, KeyShapes, Shape, MAX_SHAPE_KEYS};

/// The state of one walk: the output and the shapes seen so far (valid for this walk only).
pub struct Walker {
    out: CanonicalWriter,
    shapes: KeyShapes,
}

impl Walker {
    /// A walk writing into `out`.
    pub fn new(out: CanonicalWriter) -> Self {
        Self {
            out,
            shapes: KeyShapes::default(),
        }
    }

    /// The writer, to take the bytes back.
    pub fn into_writer(self) -> CanonicalWriter {
        self.out
    }
}

impl Deref for Walker {
    type Target = CanonicalWriter;
    fn deref(&self) -> &CanonicalWriter {
        &self.out
    }
}

impl DerefMut for Walker {
    fn deref_mut(&mut self) -> &mut CanonicalWriter {
        &mut self.out
    }
}

/// A refusal, with the path collected while unwinding.
pub type Walk = Result<(), JsonError>;

fn refuse(kind: JsonErrorKind, detail: String) -> JsonError {
    JsonError::new(kind, detail)
}

/// Write `obj` canonically.
///
/// # Safety
/// `obj` must be a valid object pointer and the GIL must be held.
pub unsafe fn write_value(w: &mut Walker, obj: *mut ffi::PyObject, depth: usize) -> Walk {
    // SAFETY (whole function): `obj` is valid per the contract; every pointer derived from it is
    // borrowed from a container that stays alive and unmodified (no Python code runs).
    unsafe {
        let ty = ffi::Py_TYPE(obj);
        if ty == &raw mut ffi::PyUnicode_Type {
            w.string(utf8(obj)?);
        } else if ty == &raw mut ffi::PyDict_Type {
            write_dict(w, obj, depth)?;
        } else if ty == &raw mut ffi::PyLong_Type {
            write_int(w, obj)?;
        } else if ty == &raw mut ffi::PyList_Type {
            write_list(w, obj, depth)?;
        } else if obj == ffi::Py_None() {
            w.null();
        } else if ty == &raw mut ffi::PyBool_Type {
            w.bool(obj == ffi::Py_True());
        } else {
            write_other(w, obj, depth)?;
        }
    }
    Ok(())
}

/// Subclasses, tuples, and the refusals.
unsafe fn write_other(w: &mut Walker, obj: *mut ffi::PyObject, depth: usize) -> Walk {
    // SAFETY: as in `write_value`.
    unsafe {
        if ffi::PyFloat_Check(obj) != 0 {
            let value = ffi::PyFloat_AsDouble(obj);
            return Err(refuse(
                JsonErrorKind::Float,
                format!("float {value:?} is refused; send decimals as strings"),
            ));
        }
        if ffi::PyUnicode_Check(obj) != 0 {
            w.string(utf8(obj)?);
        } else if ffi::PyLong_Check(obj) != 0 {
            write_int(w, obj)?;
        } else if ffi::PyDict_Check(obj) != 0 {
            write_dict(w, obj, depth)?;
        } else if ffi::PyTuple_Check(obj) != 0 {
            write_tuple(w, obj, depth)?;
        } else if ffi::PyList_Check(obj) != 0 {
            write_list(w, obj, depth)?;
        } else {
            return Err(refuse(
                JsonErrorKind::UnsupportedType,
                format!(
                    "a value of type {} has no JSON form; allowed: dict (str keys), list, tuple, str, int, bool, None",
                    type_name(obj)
                ),
            ));
        }
    }
    Ok(())
}

/// The type's name, read from the type object (no Python code runs).
unsafe fn type_name(obj: *mut ffi::PyObject) -> String {
    // SAFETY: PyType_GetName (limited API, 3.11+) reads the type's stored name and returns a
    // new reference, released below; it runs no Python code.
    unsafe {
        let name = ffi::PyType_GetName(ffi::Py_TYPE(obj));
        if name.is_null() {
            ffi::PyErr_Clear();
            return "object".to_owned();
        }
        let text = utf8(name)
            .map(str::to_owned)
            .unwrap_or_else(|_| "object".to_owned());
        ffi::Py_DecRef(name);
        text
    }
}

/// The UTF-8 view of a str (exact or subclass); a lone surrogate is a refusal.
unsafe fn utf8<'a>(obj: *mut ffi::PyObject) -> Result<&'a str, JsonError> {
    // SAFETY: the buffer returned is owned by the str object and lives as long as it does; the
    // caller's container keeps the str alive for the borrow.
    unsafe {
        let mut size: ffi::Py_ssize_t = 0;
        let data = ffi::PyUnicode_AsUTF8AndSize(obj, &mut size);
        if data.is_null() {
            ffi::PyErr_Clear();
            return Err(lone_surrogate(obj));
        }
        let bytes =
            std::slice::from_raw_parts(data.cast::<u8>(), usize::try_from(size).unwrap_or(0));
        // CPython's UTF-8 encoder succeeds only on valid Unicode (surrogates fail above), so the
        // bytes are valid UTF-8; re-validating cost 11% of a feature-row walk.
        Ok(std::str::from_utf8_unchecked(bytes))
    }
}

unsafe fn lone_surrogate(obj: *mut ffi::PyObject) -> JsonError {
    // SAFETY: PyUnicode_GetLength and PyUnicode_ReadChar read the str's code points.
    let (index, code) = unsafe {
        let length = ffi::PyUnicode_GetLength(obj);
        (0..length)
            .map(|i| (i, ffi::PyUnicode_ReadChar(obj, i)))
            .find(|(_, c)| (0xD800..=0xDFFF).contains(c))
            .unwrap_or((0, 0))
    };
    refuse(
        JsonErrorKind::LoneSurrogate,
        format!("string has a lone surrogate U+{code:04X} at character {index}; strings must be valid Unicode"),
    )
}

unsafe fn write_int(w: &mut Walker, obj: *mut ffi::PyObject) -> Walk {
    let mut overflow: c_int = 0;
    // SAFETY: `obj` is an int (exact or subclass); this call runs no Python code for ints.
    let value = unsafe { ffi::PyLong_AsLongLongAndOverflow(obj, &mut overflow) };
    if overflow != 0 {
        // SAFETY: formatting an exact int runs CPython's own code only; subclasses are described.
        let text = unsafe { int_text(obj) };
        return Err(refuse(
            JsonErrorKind::IntegerOutOfRange,
            format!("integer {text} is outside signed 64 bit [-9223372036854775808, 9223372036854775807]"),
        ));
    }
    w.int(value);
    Ok(())
}

unsafe fn int_text(obj: *mut ffi::PyObject) -> String {
    // SAFETY: PyLong_Type's own __str__ is CPython code; the new reference is released.
    unsafe {
        if ffi::Py_TYPE(obj) != &raw mut ffi::PyLong_Type {
            return format!("(of type {})", type_name(obj));
        }
        let text = ffi::PyObject_Str(obj);
        if text.is_null() {
            ffi::PyErr_Clear();
            return "(too large to print)".to_owned();
        }
        let out = utf8(text).map(str::to_owned).unwrap_or_default();
        ffi::Py_DecRef(text);
        out
    }
}

fn enter(depth: usize) -> Result<usize, JsonError> {
    if depth >= MAX_DEPTH {
        return Err(refuse(
            JsonErrorKind::TooDeep,
            format!("containers nest deeper than {MAX_DEPTH} levels"),
        ));
    }
    Ok(depth + 1)
}

unsafe fn write_list(w: &mut Walker, obj: *mut ffi::PyObject, depth: usize) -> Walk {
    // SAFETY: indexes stay below the size read first; the list is not mutated during the walk.
    unsafe {
        write_items(w, depth, ffi::PyList_Size(obj), |i| {
            ffi::PyList_GetItem(obj, i)
        })
    }
}

unsafe fn write_tuple(w: &mut Walker, obj: *mut ffi::PyObject, depth: usize) -> Walk {
    // SAFETY: as for lists; tuples are immutable.
    unsafe {
        write_items(w, depth, ffi::PyTuple_Size(obj), |i| {
            ffi::PyTuple_GetItem(obj, i)
        })
    }
}

unsafe fn write_items(
    w: &mut Walker,
    depth: usize,
    len: ffi::Py_ssize_t,
    get: impl Fn(ffi::Py_ssize_t) -> *mut ffi::PyObject,
) -> Walk {
    let depth = enter(depth)?;
    w.punct(b'[');
    for i in 0..len.max(0) {
        if i > 0 {
            w.comma();
        }
        let index = usize::try_from(i).unwrap_or(0);
        // SAFETY: `get` returns a borrowed, non-null item for an index below `len`.
        unsafe { write_value(w, get(i), depth) }.map_err(|e| e.at_index(index))?;
    }
    w.punct(b']');
    Ok(())
}

/// A dict's entries as borrowed (key, value) pointers, in iteration order. Eight inline
/// entries cover nearly every wire object and keep this recursive frame small.
type Entries = SmallVec<[(*mut ffi::PyObject, *mut ffi::PyObject); 8]>;

unsafe fn write_dict(w: &mut Walker, dict: *mut ffi::PyObject, depth: usize) -> Walk {
    let depth = enter(depth)?;
    let mut entries: Entries = SmallVec::new();
    let mut exact_keys = true;
    let (mut pos, mut key, mut value) = (0, std::ptr::null_mut(), std::ptr::null_mut());
    // SAFETY: PyDict_Next yields borrowed references owned by the dict, which outlives this call.
    unsafe {
        while ffi::PyDict_Next(dict, &mut pos, &mut key, &mut value) != 0 {
            if ffi::Py_TYPE(key) != &raw mut ffi::PyUnicode_Type {
                if ffi::PyUnicode_Check(key) == 0 {
                    return Err(non_string_key(key));
                }
                exact_keys = false;
            }
            entries.push((key, value));
        }
    }
    // Shapes are cached only for exact-str keys: a str subclass may compare equal to another key.
    let cacheable = exact_keys && entries.len() <= MAX_SHAPE_KEYS;
    let cached = if cacheable {
        w.shapes.get(entries.iter().map(|(k, _)| *k as usize))
    } else {
        None
    };
    let Some(shape) = cached else {
        // SAFETY: the entries are borrowed from the live dict.
        return unsafe { write_dict_sorting(w, &entries, cacheable, depth) };
    };
    w.punct(b'{');
    for (n, (index, rendered)) in shape.entries().enumerate() {
        if n > 0 {
            w.comma();
        }
        w.raw(rendered);
        let (key, value) = entries[index];
        // SAFETY: `value` and `key` are borrowed references held by the dict.
        unsafe { write_value(w, value, depth) }.map_err(|e| unsafe { at_key_of(e, key) })?;
    }
    w.punct(b'}');
    Ok(())
}

/// The general path: look up each key's UTF-8, sort, write; remember the shape if asked.
unsafe fn write_dict_sorting(
    w: &mut Walker,
    entries: &Entries,
    remember: bool,
    depth: usize,
) -> Walk {
    let mut members: SmallVec<[(usize, &str); 8]> = SmallVec::with_capacity(entries.len());
    for (index, (key, _)) in entries.iter().enumerate() {
        // SAFETY: keys are live str objects (checked by the caller).
        members.push((index, unsafe { utf8(*key) }?));
    }
    json::sort_members(&mut members, |m| m.1)?;
    w.punct(b'{');
    for (n, (index, key)) in members.iter().enumerate() {
        if n > 0 {
            w.comma();
        }
        w.key(key);
        // SAFETY: the value is a borrowed reference held by the dict.
        unsafe { write_value(w, entries[*index].1, depth) }.map_err(|e| e.at_key(key))?;
    }
    w.punct(b'}');
    if remember && !entries.is_empty() {
        let ids: KeyIds = entries.iter().map(|(k, _)| *k as usize).collect();
        w.shapes.put(Shape::new(ids, &members));
    }
    Ok(())
}

/// Add a key segment to an error's path (error path only).
unsafe fn at_key_of(error: JsonError, key: *mut ffi::PyObject) -> JsonError {
    // SAFETY: `key` is a live str whose UTF-8 was read successfully when its shape was built.
    match unsafe { utf8(key) } {
        Ok(text) => error.at_key(text),
        Err(_) => error,
    }
}

unsafe fn non_string_key(key: *mut ffi::PyObject) -> JsonError {
    // SAFETY: only exact ints are printed (CPython code); other keys are named by type.
    let shown = unsafe {
        if ffi::Py_TYPE(key) == &raw mut ffi::PyLong_Type
            || ffi::Py_TYPE(key) == &raw mut ffi::PyBool_Type
        {
            format!("{} ({})", int_text(key), type_name(key))
        } else {
            format!("of type {}", type_name(key))
        }
    };
    refuse(
        JsonErrorKind::NonStringKey,
        format!("object key {shown} is not a string; keys must be strings"),
    )
}
