//! The screener's live minute close for Python (`LiveBook.turn`): a loop turn's raw event
//! payloads in, one call, the rows' universe closed and the stream's events (`Frames`, for
//! `Hub.publish_frames`) and the observer's documents out, per run (`TurnRun`). The turn runs
//! detached from the interpreter. Convert, call core, return.

use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use pyo3::types::{PyBytes, PyList};
use spine_core::screener::{Book, Frame, Outcome, Run, Stop, Turn};

use crate::deltas::PyDeltaWriter;
use crate::errors::feature_error;
use crate::features::to_py;
use crate::int_args;
use crate::observations::PyObservationWriter;
use crate::universe::{updated_bytes, PyFeatureUniverse};

/// The screener's instruments as a live turn reads them: id, feed, newest sequence folded.
#[pyclass(module = "spine._core", name = "LiveBook")]
pub struct PyLiveBook {
    inner: Book,
}

#[pymethods]
impl PyLiveBook {
    #[new]
    fn new() -> Self {
        Self { inner: Book::new() }
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }

    /// Add an instrument served by `feed` (its node's base URL); returns its index.
    fn add(&mut self, instrument_id: &str, feed: &str) -> u32 {
        self.inner.add(instrument_id, feed)
    }

    /// The newest sequence folded for instrument `index` (None: none yet).
    fn sequence(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = int_args::instrument_index)] index: u32,
    ) -> PyResult<Option<u64>> {
        to_py(py, self.inner.sequence(index))
    }

    /// Set (None: forget) the newest sequence folded for instrument `index`.
    fn set_sequence(
        &mut self,
        py: Python<'_>,
        #[pyo3(from_py_with = int_args::instrument_index)] index: u32,
        #[pyo3(from_py_with = int_args::sequence_or_none)] sequence: Option<u64>,
    ) -> PyResult<()> {
        to_py(py, self.inner.set_sequence(index, sequence))
    }

    /// Raise each of `indexes`' newest sequence to the matching one of `sequences` (a fold
    /// took those bars), as `max(held, sequence)`.
    fn raise_sequences(
        &mut self,
        py: Python<'_>,
        indexes: Vec<u32>,
        sequences: Vec<u64>,
    ) -> PyResult<()> {
        to_py(py, self.inner.raise_all(&indexes, &sequences))
    }

    /// Take one loop turn of feed `feed`'s event payloads, the rows at `version`: close
    /// `universe`, and with `deltas` / `observations` (every instrument registered) frame the
    /// stream's events and write the observer's documents.
    #[pyo3(signature = (universe, feed, payloads, version, *, deltas = None, observations = None))]
    #[allow(clippy::too_many_arguments)]
    fn turn(
        &mut self,
        py: Python<'_>,
        mut universe: PyRefMut<'_, PyFeatureUniverse>,
        feed: &str,
        payloads: Vec<PyBackedBytes>,
        #[pyo3(from_py_with = int_args::sequence)] version: u64,
        mut deltas: Option<PyRefMut<'_, PyDeltaWriter>>,
        mut observations: Option<PyRefMut<'_, PyObservationWriter>>,
    ) -> PyResult<PyTurn> {
        let slices: Vec<&[u8]> = payloads.iter().map(|p| &**p).collect();
        let turn = Turn {
            universe: &mut universe.inner,
            book: &mut self.inner,
            deltas: deltas.as_deref_mut().map(|w| (&mut w.inner, &mut w.out)),
            observations: observations.as_deref_mut().map(|w| &mut w.inner),
        };
        let outcome = py.detach(|| turn.take(feed, &slices, version));
        PyTurn::new(py, outcome)
    }
}

/// What a turn did (see `spine_core::screener::Outcome`).
#[pyclass(module = "spine._core", name = "Turn", frozen)]
pub struct PyTurn {
    #[pyo3(get)]
    runs: Py<PyList>,
    #[pyo3(get)]
    offered: Option<u64>,
    #[pyo3(get)]
    stop: &'static str,
    #[pyo3(get)]
    event: Option<usize>,
    #[pyo3(get)]
    instrument: Option<u32>,
    #[pyo3(get)]
    error: Option<Py<PyAny>>,
}

impl PyTurn {
    fn new(py: Python<'_>, outcome: Outcome) -> PyResult<Self> {
        let runs = outcome
            .runs
            .into_iter()
            .map(|run| Py::new(py, PyTurnRun::new(py, run)?))
            .collect::<PyResult<Vec<_>>>()?;
        let (stop, event, instrument) = match outcome.stop {
            Stop::End => ("END", None, None),
            Stop::Jump { event, instrument } => ("JUMP", Some(event), Some(instrument)),
            Stop::Refused { event } => ("REFUSED", Some(event), None),
        };
        Ok(Self {
            runs: PyList::new(py, runs)?.unbind(),
            offered: outcome.offered,
            stop,
            event,
            instrument,
            error: outcome
                .error
                .map(|e| feature_error(py, &e).into_value(py).into_any()),
        })
    }
}

/// One run of a turn: one version step of the rows.
#[pyclass(module = "spine._core", name = "TurnRun", frozen)]
pub struct PyTurnRun {
    #[pyo3(get)]
    changed: Py<PyBytes>,
    #[pyo3(get)]
    frames: Py<PyFrames>,
    #[pyo3(get)]
    observations: Py<PyList>,
    #[pyo3(get)]
    bars: usize,
    #[pyo3(get)]
    newest: u64,
}

impl PyTurnRun {
    fn new(py: Python<'_>, run: Run) -> PyResult<Self> {
        let observations = run.observations.iter().map(|doc| PyBytes::new(py, doc));
        Ok(Self {
            changed: updated_bytes(py, &run.changed)?.unbind(),
            frames: Py::new(py, PyFrames { frames: run.frames })?,
            observations: PyList::new(py, observations)?.unbind(),
            bars: run.bars,
            newest: run.newest,
        })
    }
}

/// A run's stream events, for `Hub.publish_frames`.
#[pyclass(module = "spine._core", name = "Frames", frozen)]
pub struct PyFrames {
    pub(crate) frames: Vec<Frame>,
}

#[pymethods]
impl PyFrames {
    fn __len__(&self) -> usize {
        self.frames.len()
    }

    /// Each event as `(kind, instrument_id, bytes)`, in order.
    fn events<'py>(&self, py: Python<'py>) -> Vec<(&'static str, &str, Bound<'py, PyBytes>)> {
        self.frames
            .iter()
            .map(|f| {
                (
                    f.resolution.name(),
                    &*f.instrument,
                    PyBytes::new(py, &f.bytes),
                )
            })
            .collect()
    }
}
