//! Zero-copy views of 1-D numeric buffers (numpy arrays, Arrow buffers, `bytes`) coming in,
//! and numeric columns going out as little-endian `bytes`.
#![allow(unsafe_code)]

use pyo3::buffer::{Element, PyBuffer};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// A held buffer; its slice borrows from it.
pub struct Column<T: Element> {
    buffer: PyBuffer<T>,
}

impl<T: Element + Copy> Column<T> {
    /// Take the buffer of `obj`, which must be a C-contiguous 1-D array of `T`.
    pub fn new(name: &'static str, obj: &Bound<'_, PyAny>, type_name: &str) -> PyResult<Self> {
        let buffer = PyBuffer::<T>::get(obj).map_err(|_| {
            PyTypeError::new_err(format!("{name} must be a 1-D array of {type_name}"))
        })?;
        if buffer.dimensions() != 1 || !buffer.is_c_contiguous() {
            return Err(PyTypeError::new_err(format!(
                "{name} must be a contiguous 1-D array of {type_name}"
            )));
        }
        // PyBuffer accepts any byte order its format states; the slice is read natively.
        let format = buffer.format().to_bytes();
        let foreign = match format.first() {
            Some(b'>' | b'!') => cfg!(target_endian = "little"),
            Some(b'<') => cfg!(target_endian = "big"),
            _ => false,
        };
        if foreign {
            return Err(PyTypeError::new_err(format!(
                "{name} must be a 1-D array of {type_name} in native byte order, got buffer format {:?} (convert with .astype(dtype.newbyteorder('=')))",
                String::from_utf8_lossy(format)
            )));
        }
        Ok(Self { buffer })
    }

    /// The elements, borrowed.
    pub fn slice(&self) -> &[T] {
        let len = self.buffer.item_count();
        if len == 0 {
            return &[];
        }
        // SAFETY: the buffer is C-contiguous, 1-D, of `len` items of `T` (format and alignment
        // checked by PyBuffer::get), and stays acquired while `self` lives. The GIL is held and
        // no Python code runs while the slice is used, so nothing mutates it meanwhile.
        unsafe { std::slice::from_raw_parts(self.buffer.buf_ptr().cast::<T>(), len) }
    }
}

/// `values` as one `bytes` object, each value written by `to_le` (its little-endian bytes).
pub fn le_bytes<'py, T: Copy, const N: usize>(
    py: Python<'py>,
    values: &[T],
    to_le: impl Fn(T) -> [u8; N],
) -> Bound<'py, PyBytes> {
    let mut out = Vec::with_capacity(values.len() * N);
    for &v in values {
        out.extend_from_slice(&to_le(v));
    }
    PyBytes::new(py, &out)
}
