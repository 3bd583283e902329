//! The delta writer for Python (`DeltaWriter`): a minute close of a `FeatureUniverse` with
//! every changed row's `svc.feature_row_delta` document encoded in Rust, one `bytes` per
//! document (what `Hub.publish` takes). Convert, call core, return.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};
use spine_core::features::Updated;
use spine_core::screener::{DeltaWriter, Deltas};

use crate::features::to_py;
use crate::int_args;
use crate::universe::{minute_bars, PyFeatureUniverse};

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

/// Per (instrument, resolution), the values last published; encodes the deltas of a close.
#[pyclass(module = "spine._core", name = "DeltaWriter")]
pub struct PyDeltaWriter {
    inner: DeltaWriter,
    out: Deltas,
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

    /// `universe.close_minute(...)`, then the delta of every row it changed.
    #[pyo3(signature = (universe, instrument, ts_event, open, high, low, close, volume))]
    #[allow(clippy::too_many_arguments)]
    fn close_minute<'py>(
        &mut self,
        py: Python<'py>,
        mut universe: PyRefMut<'_, PyFeatureUniverse>,
        instrument: &Bound<'_, PyAny>,
        ts_event: &Bound<'_, PyAny>,
        open: &Bound<'_, PyAny>,
        high: &Bound<'_, PyAny>,
        low: &Bound<'_, PyAny>,
        close: &Bound<'_, PyAny>,
        volume: &Bound<'_, PyAny>,
    ) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyList>)> {
        let bars = minute_bars(py, instrument, [ts_event, open, high, low, close, volume])?;
        // The close and the encoding run detached: the event loop's other threads go on.
        let (writer, out, u) = (&mut self.inner, &mut self.out, &mut universe.inner);
        let closed = py.detach(|| writer.close_minute(u, &bars, out));
        to_py(py, closed)?;
        documents(py, &self.out)
    }

    /// `universe.advance(watermark)`, then the delta of every row it changed.
    fn advance<'py>(
        &mut self,
        py: Python<'py>,
        mut universe: PyRefMut<'_, PyFeatureUniverse>,
        #[pyo3(from_py_with = int_args::feature_nanos)] watermark: u64,
    ) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyList>)> {
        let (writer, out, u) = (&mut self.inner, &mut self.out, &mut universe.inner);
        let advanced = py.detach(|| writer.advance(u, watermark, out));
        to_py(py, advanced)?;
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
