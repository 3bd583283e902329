//! The walk from Python objects to canonical JSON bytes, over the raw C API.
//!
//! Why unsafe: the safe PyO3 wrappers cost a refcount round trip (a function call each under
//! abi3), a size check per dict step and an extra vector per object; this walk borrows every
//! reference instead (benches/bench_identity.py times it against orjson).
//!
//! Soundness rests on one invariant: the walk runs no Python code while it holds borrowed
//! references. It calls only C API functions that cannot re-enter the interpreter on the
//! types they are called on (PyDict_Next, PyList_GetItem, PyUnicode_AsUTF8AndSize,
//! PyLong_AsLongLongAndOverflow, type checks, and Py_IncRef/Py_DecRef on exact `str` keys,
//! whose deallocation runs no Python code), and error messages are built from data read in
//! Rust (type names, values) rather than from `repr()`, which could run user code and mutate a
//! container being walked. The GIL is held throughout.
//!
//! The state of a walk (output buffer, scratch vectors, the key-shape cache) is kept per
//! thread between calls, so a call allocates nothing once warm. The shape cache owns one reference to
//! each cached key (see `key_shapes.rs`); this module takes and releases them. A thread that
//! exits leaks its cache's references rather than releasing them without the GIL.
#![allow(unsafe_code)]

use std::cell::Cell;
use std::ffi::c_int;

use pyo3::{ffi, Bound, PyAny};
use spine_core::{json, CanonicalWriter, JsonError, JsonErrorKind, MAX_DEPTH};

use crate::key_shapes::{Entry, KeyShapes, LeafHit, Shape, MAX_SHAPE_KEYS};

/// Dicts with up to this many entries are collected in a stack array (8 covers nearly every
/// wire object and keeps the recursive frame small).
const SMALL_DICT: usize = 8;

/// Output buffers that grew past this are dropped rather than kept for the next call.
const KEEP_BUFFER_BYTES: usize = 1 << 20;

/// A key's UTF-8, borrowed from its `str` (alive as long as the dict being written).
#[derive(Clone, Copy)]
struct KeyText {
    /// Position of the key in the dict's iteration order.
    index: usize,
    data: *const u8,
    len: usize,
}

impl KeyText {
    /// # Safety
    /// The key's `str` must still be alive.
    unsafe fn text<'a>(self) -> &'a str {
        // SAFETY: `data`/`len` came from PyUnicode_AsUTF8AndSize on a live str, whose UTF-8 is
        // valid and owned by the str.
        unsafe { std::str::from_utf8_unchecked(std::slice::from_raw_parts(self.data, self.len)) }
    }
}

/// The state of one walk, reused by the next one on this thread.
#[derive(Default)]
struct Walker {
    out: CanonicalWriter,
    shapes: KeyShapes,
    /// Spare vectors for the entries of dicts too large for a stack array.
    pool: Vec<Vec<Entry>>,
    /// Key texts of the dicts being written without a cached shape, stacked (each such dict
    /// pushes its keys, then truncates).
    keys: Vec<KeyText>,
    /// This walk's number (never 0), which scopes the shapes' leaf memos to it.
    walk: u64,
}

thread_local! {
    /// Taken for a call and put back after, so a (theoretical) re-entry gets a fresh walker.
    static WALKER: Cell<Option<Box<Walker>>> = const { Cell::new(None) };
}

/// The write position after a value, or a refusal (boxed, so the result fits two registers; the
/// path is collected while unwinding).
///
/// The position is threaded through the walk in registers rather than read back from the
/// writer: every C API call is opaque to the compiler, so a position kept only in the writer
/// was stored and reloaded around each one, a store-to-load chain through every piece of
/// output.
type Walk = Result<usize, Box<JsonError>>;

/// Walk `value` into canonical bytes and hand them to `finish`.
///
/// # Errors
/// The refusal of pinned decision 2 met first, with its JSON path.
pub fn with_canonical<R>(
    value: &Bound<'_, PyAny>,
    finish: impl FnOnce(&[u8]) -> R,
) -> Result<R, JsonError> {
    let mut walker = WALKER.with(Cell::take).unwrap_or_default();
    walker.out.clear();
    walker.walk = walker.walk.wrapping_add(1).max(1);
    walker.keys.clear();
    // SAFETY: `value` is a live object and the GIL is held (a `Bound` proves both).
    let walked = unsafe { walker.value(value.as_ptr(), 0, 0) };
    let result = match walked {
        Ok(end) => {
            walker.out.at(end);
            Ok(finish(walker.out.as_bytes()))
        }
        Err(e) => Err(*e),
    };
    if walker.out.capacity() > KEEP_BUFFER_BYTES {
        walker.out = CanonicalWriter::default();
    }
    if let Some(displaced) = WALKER.with(|cell| cell.replace(Some(walker))) {
        // SAFETY: the GIL is held (we hold `value`), so references may be released.
        unsafe { release(displaced.shapes) };
    }
    result
}

/// Release the key references of every shape in a cache.
///
/// # Safety
/// The GIL must be held.
unsafe fn release(mut shapes: KeyShapes) {
    for shape in shapes.drain() {
        // SAFETY: the cache took one reference per key when it stored the shape.
        unsafe { release_keys(&shape) };
    }
}

/// # Safety
/// The GIL must be held; `shape` must be leaving the cache.
unsafe fn release_keys(shape: &Shape) {
    for &id in shape.ids() {
        // SAFETY: one reference per key was taken in `Walker::cache_shape`.
        unsafe { ffi::Py_DecRef(id as *mut ffi::PyObject) };
    }
}

#[cold]
fn refuse(kind: JsonErrorKind, detail: String) -> Box<JsonError> {
    Box::new(JsonError::new(kind, detail))
}

#[cold]
fn at_key(error: JsonError, key: &str) -> Box<JsonError> {
    Box::new(error.at_key(key))
}

#[cold]
fn at_index(error: JsonError, index: ffi::Py_ssize_t) -> Box<JsonError> {
    Box::new(error.at_index(usize::try_from(index).unwrap_or(0)))
}

#[inline]
fn enter(depth: usize) -> Result<usize, Box<JsonError>> {
    if depth >= MAX_DEPTH {
        return Err(too_deep());
    }
    Ok(depth + 1)
}

#[cold]
fn too_deep() -> Box<JsonError> {
    refuse(
        JsonErrorKind::TooDeep,
        format!("containers nest deeper than {MAX_DEPTH} levels"),
    )
}

impl Walker {
    /// Write `obj` canonically. Exact types are recognised by their type pointer first (the
    /// common case, no call); subclasses and refusals go the slow way.
    ///
    /// # Safety
    /// `obj` must be a valid object pointer and the GIL must be held.
    #[inline(always)]
    unsafe fn value(&mut self, obj: *mut ffi::PyObject, depth: usize, pos: usize) -> Walk {
        // SAFETY (whole function): `obj` is valid per the contract; every pointer derived from
        // it is borrowed from a container that stays alive and unmodified (no Python code runs).
        unsafe {
            let ty = ffi::Py_TYPE(obj);
            if ty == &raw mut ffi::PyUnicode_Type {
                let text = utf8(obj)?;
                self.out.at(pos).string(text);
            } else if ty == &raw mut ffi::PyLong_Type {
                return self.int(obj, pos);
            } else if ty == &raw mut ffi::PyDict_Type {
                return self.dict(obj, depth, pos);
            } else if ty == &raw mut ffi::PyList_Type {
                return self.list(obj, depth, pos);
            } else if obj == ffi::Py_None() {
                self.out.at(pos).null();
            } else if ty == &raw mut ffi::PyBool_Type {
                self.out.at(pos).bool(obj == ffi::Py_True());
            } else {
                return self.other(obj, depth, pos);
            }
        }
        Ok(self.out.pos())
    }

    /// Subclasses, tuples, and the refusals.
    #[inline(never)]
    unsafe fn other(&mut self, obj: *mut ffi::PyObject, depth: usize, pos: usize) -> Walk {
        // SAFETY: as in `value`.
        unsafe {
            if ffi::PyFloat_Check(obj) != 0 {
                let value = ffi::PyFloat_AsDouble(obj);
                return Err(refuse(
                    JsonErrorKind::Float,
                    format!("float {value:?} is refused; send decimals as strings"),
                ));
            }
            if ffi::PyUnicode_Check(obj) != 0 {
                let text = utf8(obj)?;
                self.out.at(pos).string(text);
                Ok(self.out.pos())
            } else if ffi::PyLong_Check(obj) != 0 {
                self.int(obj, pos)
            } else if ffi::PyDict_Check(obj) != 0 {
                self.dict(obj, depth, pos)
            } else if ffi::PyTuple_Check(obj) != 0 {
                let depth = enter(depth)?;
                self.items(depth, pos, ffi::PyTuple_Size(obj), |i| {
                    ffi::PyTuple_GetItem(obj, i)
                })
            } else if ffi::PyList_Check(obj) != 0 {
                self.list(obj, depth, pos)
            } else {
                Err(refuse(
                    JsonErrorKind::UnsupportedType,
                    format!(
                        "a value of type {} has no JSON form; allowed: dict (str keys), list, tuple, str, int, bool, None",
                        type_name(obj)
                    ),
                ))
            }
        }
    }

    #[inline(always)]
    unsafe fn int(&mut self, obj: *mut ffi::PyObject, pos: usize) -> Walk {
        let mut overflow: c_int = 0;
        // SAFETY: `obj` is an int (exact or subclass); this call runs no Python code for ints.
        let value = unsafe { ffi::PyLong_AsLongLongAndOverflow(obj, &mut overflow) };
        if overflow != 0 {
            // SAFETY: as above.
            return Err(unsafe { int_out_of_range(obj) });
        }
        self.out.at(pos).int(value);
        Ok(self.out.pos())
    }

    #[inline(never)]
    unsafe fn list(&mut self, obj: *mut ffi::PyObject, depth: usize, pos: usize) -> Walk {
        let depth = enter(depth)?;
        // SAFETY: indexes stay below the size read first; the list is not mutated during the
        // walk.
        unsafe {
            self.items(depth, pos, ffi::PyList_Size(obj), |i| {
                ffi::PyList_GetItem(obj, i)
            })
        }
    }

    /// The elements of an array; `depth` already counts it.
    #[inline(always)]
    unsafe fn items(
        &mut self,
        depth: usize,
        mut pos: usize,
        len: ffi::Py_ssize_t,
        get: impl Fn(ffi::Py_ssize_t) -> *mut ffi::PyObject,
    ) -> Walk {
        self.out.at(pos).punct(b'[');
        pos = self.out.pos();
        for i in 0..len.max(0) {
            if i > 0 {
                self.out.at(pos).comma();
                pos = self.out.pos();
            }
            // SAFETY: `get` returns a borrowed, non-null item for an index below `len`.
            match unsafe { self.value(get(i), depth, pos) } {
                Ok(end) => pos = end,
                Err(e) => return Err(at_index(*e, i)),
            }
        }
        self.out.at(pos).punct(b']');
        Ok(self.out.pos())
    }

    #[inline(never)]
    unsafe fn dict(&mut self, dict: *mut ffi::PyObject, depth: usize, pos: usize) -> Walk {
        let depth = enter(depth)?;
        // Most dicts on the wire are small: their entries stay in this frame (no vector
        // length stored and reloaded around each C call); larger ones move to a pooled
        // vector.
        let mut small = [(std::ptr::null_mut(), std::ptr::null_mut()); SMALL_DICT];
        let mut len = 0;
        let mut large: Option<Vec<Entry>> = None;
        let (mut cursor, mut key, mut value) = (0, std::ptr::null_mut(), std::ptr::null_mut());
        // SAFETY: PyDict_Next yields borrowed references owned by the dict, which outlives
        // this call.
        unsafe {
            while ffi::PyDict_Next(dict, &mut cursor, &mut key, &mut value) != 0 {
                // Start loading the value's header now: the type check that needs it comes
                // after the whole dict is collected, and that load's latency showed in
                // profiles (a document's objects do not fit in L1).
                #[cfg(target_arch = "x86_64")]
                std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                    value.cast::<i8>().cast_const(),
                );
                if let Some(slot) = small.get_mut(len) {
                    *slot = (key, value);
                    len += 1;
                } else {
                    large
                        .get_or_insert_with(|| {
                            let mut spare = self.pool.pop().unwrap_or_default();
                            spare.extend_from_slice(&small);
                            spare
                        })
                        .push((key, value));
                }
            }
        }
        let Some(mut large) = large else {
            // SAFETY: the entries are borrowed from the live dict.
            return unsafe { self.dict_entries(&small[..len], depth, pos) };
        };
        // SAFETY: as above.
        let result = unsafe { self.dict_entries(&large, depth, pos) };
        large.clear();
        self.pool.push(large);
        result
    }

    /// Write a dict from its entries; `depth` already counts it.
    ///
    /// # Safety
    /// `entries` are the live dict's, in iteration order.
    #[inline(always)]
    unsafe fn dict_entries(&mut self, entries: &[Entry], depth: usize, pos: usize) -> Walk {
        if entries.is_empty() {
            self.out.at(pos).put(b"{}");
            Ok(self.out.pos())
        } else if let Some(shape) = self.shapes.get(entries) {
            // SAFETY: the entries are borrowed from the live dict.
            unsafe { self.dict_shaped(&shape, entries, depth, pos) }
        } else {
            // SAFETY: as above.
            unsafe { self.dict_sorting(entries, depth, pos) }
        }
    }

    /// A dict whose keys are a cached shape's: prefixes from the cache, values in key order.
    ///
    /// # Safety
    /// `entries` are the live dict's and match `shape`.
    #[inline(always)]
    unsafe fn dict_shaped(
        &mut self,
        shape: &Shape,
        entries: &[Entry],
        depth: usize,
        mut pos: usize,
    ) -> Walk {
        for (index, prefix) in shape.members() {
            prefix.write(self.out.at(pos));
            pos = self.out.pos();
            let Some(&(key, value)) = entries.get(index) else {
                continue; // unreachable: the shape was matched against these entries
            };
            // Sibling dicts repeat leaf objects under the same key (`"kind": "DECIMAL"`,
            // `"scale": 4`): the second time, remember the bytes; after that, copy them
            // without touching the object (no type check, no C call, no cache miss).
            let hit = prefix.leaf(self.walk, value as usize);
            if let LeafHit::Rendered(bytes, len) = hit {
                self.out.at(pos).raw_padded(&bytes, len);
                pos = self.out.pos();
                continue;
            }
            let start = pos;
            // SAFETY: `value` and `key` are borrowed references held by the dict.
            match unsafe { self.value(value, depth, pos) } {
                Ok(end) => pos = end,
                Err(e) => return Err(unsafe { at_key_of(e, key) }),
            }
            // Only leaves: a container's bytes depend on its depth (the nesting limit).
            // SAFETY: `value` is live.
            if matches!(hit, LeafHit::Repeated) && unsafe { is_leaf(value) } {
                if let Some(bytes) = self.out.as_bytes().get(start..pos) {
                    prefix.remember(bytes);
                }
            }
        }
        self.out.at(pos).punct(b'}');
        Ok(self.out.pos())
    }

    /// The general path: check the keys, look up their UTF-8, sort, then write (through a new
    /// shape when this key sequence repeats).
    ///
    /// # Safety
    /// `entries` are the live dict's.
    #[inline(never)]
    unsafe fn dict_sorting(&mut self, entries: &[Entry], depth: usize, pos: usize) -> Walk {
        let count = entries.len();
        let mut exact_keys = true;
        for &(key, _) in entries {
            // SAFETY: keys are live objects held by the dict.
            unsafe {
                if ffi::Py_TYPE(key) != &raw mut ffi::PyUnicode_Type {
                    if ffi::PyUnicode_Check(key) == 0 {
                        return Err(non_string_key(key));
                    }
                    exact_keys = false;
                }
            }
        }
        let key_base = self.keys.len();
        for (index, &(key, _)) in entries.iter().enumerate() {
            // SAFETY: keys are live str objects (checked above).
            let text = unsafe { utf8(key) }?;
            self.keys.push(KeyText {
                index,
                data: text.as_ptr(),
                len: text.len(),
            });
        }
        // SAFETY: the key texts borrow from the dict's live keys.
        json::sort_members(&mut self.keys[key_base..], |k| unsafe { k.text() })
            .map_err(Box::new)?;

        // Shapes are cached only for exact-str keys: a str subclass may compare equal to
        // another key, or not be the same text next time.
        let result = if exact_keys && count <= MAX_SHAPE_KEYS && self.shapes.seen_before(entries) {
            // SAFETY: as above.
            let shape = unsafe { self.cache_shape(entries, key_base) };
            // SAFETY: the shape was just built from these entries.
            unsafe { self.dict_shaped(&shape, entries, depth, pos) }
        } else {
            // SAFETY: as above.
            unsafe { self.dict_members(entries, key_base, depth, pos) }
        };
        self.keys.truncate(key_base);
        result
    }

    /// Write a dict from its sorted key texts.
    ///
    /// # Safety
    /// `keys[key_base..]` are the sorted texts of the live dict's `entries`.
    #[inline(never)]
    unsafe fn dict_members(
        &mut self,
        entries: &[Entry],
        key_base: usize,
        depth: usize,
        mut pos: usize,
    ) -> Walk {
        self.out.at(pos).punct(b'{');
        pos = self.out.pos();
        for n in key_base..self.keys.len() {
            if n > key_base {
                self.out.at(pos).comma();
                pos = self.out.pos();
            }
            let key = self.keys[n];
            // SAFETY: the key's str is held by the dict.
            let text = unsafe { key.text() };
            self.out.at(pos).key(text);
            pos = self.out.pos();
            // SAFETY: the value is a borrowed reference held by the dict.
            match unsafe { self.value(entries[key.index].1, depth, pos) } {
                Ok(end) => pos = end,
                Err(e) => return Err(at_key(*e, text)),
            }
        }
        self.out.at(pos).punct(b'}');
        Ok(self.out.pos())
    }

    /// Build and cache the shape of `entries`, taking a reference to each key.
    ///
    /// # Safety
    /// As for `dict_members`; every key is an exact `str`.
    #[cold]
    #[inline(never)]
    unsafe fn cache_shape(&mut self, entries: &[Entry], key_base: usize) -> std::rc::Rc<Shape> {
        let ids: Box<[usize]> = entries.iter().map(|(key, _)| *key as usize).collect();
        // SAFETY: the key texts borrow from the dict's live keys.
        let sorted = self.keys[key_base..]
            .iter()
            .map(|k| (k.index, unsafe { k.text() }));
        let shape = Shape::new(ids, sorted);
        for &(key, _) in entries {
            // SAFETY: the cache owns one reference per key, released on eviction.
            unsafe { ffi::Py_IncRef(key) };
        }
        let (shape, evicted) = self.shapes.put(shape);
        if let Some(evicted) = evicted {
            // SAFETY: the GIL is held; the evicted shape has left the cache. Its keys may be
            // freed here: an exact str's deallocation runs no Python code.
            unsafe { release_keys(&evicted) };
        }
        shape
    }
}

/// Whether `obj` is an exact str or int, whose canonical bytes depend on nothing else.
///
/// # Safety
/// `obj` must be live.
unsafe fn is_leaf(obj: *mut ffi::PyObject) -> bool {
    // SAFETY: reading the type of a live object.
    let ty = unsafe { ffi::Py_TYPE(obj) };
    ty == &raw mut ffi::PyUnicode_Type || ty == &raw mut ffi::PyLong_Type
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
#[inline(always)]
unsafe fn utf8<'a>(obj: *mut ffi::PyObject) -> Result<&'a str, Box<JsonError>> {
    // SAFETY: the buffer returned is owned by the str object and lives as long as it does; the
    // caller's container keeps the str alive for the borrow.
    unsafe {
        let mut size: ffi::Py_ssize_t = 0;
        let data = ffi::PyUnicode_AsUTF8AndSize(obj, &mut size);
        if data.is_null() {
            return Err(lone_surrogate(obj));
        }
        let bytes =
            std::slice::from_raw_parts(data.cast::<u8>(), usize::try_from(size).unwrap_or(0));
        // CPython's UTF-8 encoder succeeds only on valid Unicode (surrogates fail above), so the
        // bytes are valid UTF-8 and are not scanned again.
        Ok(std::str::from_utf8_unchecked(bytes))
    }
}

#[cold]
unsafe fn lone_surrogate(obj: *mut ffi::PyObject) -> Box<JsonError> {
    // SAFETY: PyUnicode_GetLength and PyUnicode_ReadChar read the str's code points.
    let (index, code) = unsafe {
        ffi::PyErr_Clear();
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

#[cold]
unsafe fn int_out_of_range(obj: *mut ffi::PyObject) -> Box<JsonError> {
    // SAFETY: formatting an exact int runs CPython's own code only; subclasses are described.
    let text = unsafe { int_text(obj) };
    refuse(
        JsonErrorKind::IntegerOutOfRange,
        format!(
            "integer {text} is outside signed 64 bit [-9223372036854775808, 9223372036854775807]"
        ),
    )
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

/// Add a key segment to an error's path (error path only).
#[cold]
unsafe fn at_key_of(error: Box<JsonError>, key: *mut ffi::PyObject) -> Box<JsonError> {
    // SAFETY: `key` is a live str whose UTF-8 was read successfully when its shape was built.
    match unsafe { utf8(key) } {
        Ok(text) => at_key(*error, text),
        Err(_) => error,
    }
}

#[cold]
unsafe fn non_string_key(key: *mut ffi::PyObject) -> Box<JsonError> {
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
