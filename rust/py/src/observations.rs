//! The observation writer for Python (`ObservationWriter`): after a minute close or an advance
//! of a `FeatureUniverse`, the `svc.pattern_observation` documents of the patterns its changed
//! rows made, encoded in Rust, one `bytes` each. Convert, call core, return.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};
use spine_core::screener::ObservationWriter;

use crate::deltas::changed_rows;
use crate::features::to_py;
use crate::int_args;
use crate::universe::PyFeatureUniverse;

/// Per (instrument, resolution), the values the patterns read at the newest bar.
#[pyclass(module = "spine._core", name = "ObservationWriter")]
pub struct PyObservationWriter {
    pub(crate) inner: ObservationWriter,
}

#[pymethods]
impl PyObservationWriter {
    #[new]
    fn new() -> Self {
        Self {
            inner: ObservationWriter::new(),
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

    /// Take the rows of `universe` (or of `instrument`) as they are, seeing nothing: after a
    /// warm, so history makes no observation.
    #[pyo3(signature = (universe, instrument = None))]
    fn prime(
        &mut self,
        py: Python<'_>,
        universe: PyRef<'_, PyFeatureUniverse>,
        #[pyo3(from_py_with = int_args::optional_instrument_index)] instrument: Option<u32>,
    ) -> PyResult<()> {
        to_py(py, self.inner.prime(&universe.inner, instrument))
    }

    /// The documents of the patterns the rows a close or an advance of `universe` changed
    /// made (`changed`: what that call returned), in row order then pattern order.
    fn observe<'py>(
        &mut self,
        py: Python<'py>,
        universe: PyRef<'_, PyFeatureUniverse>,
        changed: &[u8],
    ) -> PyResult<Bound<'py, PyList>> {
        let rows = changed_rows(py, changed)?;
        let (writer, u) = (&mut self.inner, &universe.inner);
        let mut out = Vec::new();
        to_py(py, py.detach(|| writer.observe(u, &rows, &mut out)))?;
        PyList::new(py, out.iter().map(|doc| PyBytes::new(py, doc)))
    }
}
