//! The delta writer for Python (`DeltaWriter`): after a minute close or an advance of a
//! `FeatureUniverse`, every changed row's `svc.feature_row_delta` document encoded in Rust, one
//! `bytes` per document (what `Hub.publish` takes). Convert, call core, return.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};
use spine_core::bars::Resolution;
use spine_core::features::Updated;
use spine_core::screener::{DeltaWriter, Deltas};

use crate::errors::feature_refusal;
use crate::features::to_py;
use crate::int_args;
use crate::universe::PyFeatureUniverse;

/// The documents' rows as little-endian uint32 pairs `(instrument, resolution index)` (as
/// `FeatureUniverse.close_minute` returns changed rows), and the documents.
fn documents<'py>(
    py: Python<'py>,
    deltas: &Deltas,
) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyList>)> {
    let rows = PyBytes::new_with(py, deltas.len() * 8, |out| {
        for (pair, (row, _)) in out.chunks_exact_mut(8).zip(deltas.iter()) {
            let Updated {
                instrument,
                resolution,
            } = row;
            pair[..4].copy_from_slice(&instrument.to_le_bytes());
            pair[4..].copy_from_slice(&(resolution as u32).to_le_bytes());
        }
        Ok(())
    })?;
    let docs: Vec<Bound<'py, PyBytes>> = deltas
        .iter()
        .map(|(_, bytes)| PyBytes::new(py, bytes))
        .collect();
    let docs = PyList::new(py, docs)?;
    Ok((rows, docs))
}

/// `changed` as rows: little-endian uint32 pairs `(instrument, resolution index)`.
pub(crate) fn changed_rows(py: Python<'_>, changed: &[u8]) -> PyResult<Vec<Updated>> {
    if changed.len() % 8 != 0 {
        return Err(feature_refusal(py, format!(
            "INVALID_COLUMN: changed holds {} bytes; allowed: uint32 pairs (instrument, resolution index) as \
             FeatureUniverse.close_minute and advance return them",
            changed.len()
        )));
    }
    changed
        .chunks_exact(8)
        .map(|pair| {
            let instrument = u32::from_le_bytes([pair[0], pair[1], pair[2], pair[3]]);
            let index = u32::from_le_bytes([pair[4], pair[5], pair[6], pair[7]]) as usize;
            let resolution = *Resolution::ALL.get(index).ok_or_else(|| {
                feature_refusal(
                    py,
                    format!(
                        "INVALID_COLUMN: changed names resolution index {index}; allowed 0..=6 \
                                             (1m, 5m, 15m, 30m, 1h, 4h, 1d)"
                    ),
                )
            })?;
            Ok(Updated {
                instrument,
                resolution,
            })
        })
        .collect()
}

/// Per (instrument, resolution), the values last published; encodes the deltas of a close.
#[pyclass(module = "spine._core", name = "DeltaWriter")]
pub struct PyDeltaWriter {
    pub(crate) inner: DeltaWriter,
    pub(crate) out: Deltas,
}

#[pymethods]
impl PyDeltaWriter {
    #[new]
    fn new() -> Self {
        Self {
            inner: DeltaWriter::new(),
            out: Deltas::default(),
        }
    }

    /// Name instrument `instrument` (its documents' `instrument_id`).
    fn register(
        &mut self,
        py: Python<'_>,
        #[pyo3(from_py_with = int_args::instrument_index)] instrument: u32,
        instrument_id: &str,
    ) -> PyResult<()> {
        to_py(py, self.inner.register(instrument, instrument_id))
    }

    /// The delta of each row a close or an advance of `universe` changed: `changed` is what
    /// `FeatureUniverse.close_minute` / `advance` returned (uint32 pairs `(instrument,
    /// resolution index)`).
    fn deltas<'py>(
        &mut self,
        py: Python<'py>,
        universe: PyRef<'_, PyFeatureUniverse>,
        changed: &[u8],
    ) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyList>)> {
        let rows = changed_rows(py, changed)?;
        // The encoding runs detached: the event loop's other threads go on.
        let (writer, out, u) = (&mut self.inner, &mut self.out, &universe.inner);
        to_py(py, py.detach(|| writer.deltas(u, &rows, out)))?;
        documents(py, &self.out)
    }

    /// The delta of every row of `universe` against what was published: the first call
    /// publishes every row whole; after a registry change (a universe of another selection)
    /// the keys it lacks retire.
    fn refresh<'py>(
        &mut self,
        py: Python<'py>,
        universe: PyRef<'_, PyFeatureUniverse>,
    ) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyList>)> {
        let (writer, out, u) = (&mut self.inner, &mut self.out, &universe.inner);
        to_py(py, py.detach(|| writer.refresh(u, out)))?;
        documents(py, &self.out)
    }
}
