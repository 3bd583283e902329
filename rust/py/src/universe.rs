//! The universe feature fold for Python (`FeatureUniverse`): bulk warm-up per instrument and
//! one call per minute close across the universe, columns in, changed rows out.
//! Convert, call core, return.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use spine_core::bars::{Bar, Channel, Resolution, SeriesConfig, DEFAULT_CAPACITY};
use spine_core::features::{default_registry, Universe, Updated};

use crate::bars::columns_dict;
use crate::errors::{bars_error, feature_refusal};
use crate::features::{feature_value_to_py, to_py};
use crate::int_args;
use crate::ohlcv::{argument, column, Named, Ohlcv, Positional, Refusal};

/// Changed rows as little-endian uint32 pairs `(instrument, resolution index)`, the index
/// into `1m, 5m, 15m, 30m, 1h, 4h, 1d` (the enum's declaration order), written straight into
/// the bytes object.
pub(crate) fn updated_bytes<'py>(
    py: Python<'py>,
    updated: &[Updated],
) -> PyResult<Bound<'py, PyBytes>> {
    PyBytes::new_with(py, updated.len() * 8, |out| {
        for (pair, u) in out.chunks_exact_mut(8).zip(updated) {
            pair[..4].copy_from_slice(&u.instrument.to_le_bytes());
            pair[4..].copy_from_slice(&(u.resolution as u32).to_le_bytes());
        }
        Ok(())
    })
}

/// A minute's bars from columns: `instrument` (uint32) beside ts_event (uint64) and
/// open..volume (int64 mantissas), all of one length.
fn minute_bars(instrument: &Bound<'_, PyAny>, bar: &Ohlcv<'_>) -> PyResult<Vec<(u32, Bar)>> {
    let py = instrument.py();
    let ix = column::<u32>(py, "instrument", instrument, "uint32", Refusal::Feature)?;
    let columns = bar.columns(None, Refusal::Feature)?;
    let view = columns.view();
    let n = ix.slice().len();
    // open..volume, then ts_event: the order the error has always named them in.
    let lengths: Vec<usize> = [view.open, view.high, view.low, view.close, view.volume]
        .iter()
        .map(|column| column.len())
        .chain([view.ts_event.len()])
        .collect();
    if lengths.iter().any(|&len| len != n) {
        return Err(feature_refusal(
            py,
            format!(
                "LENGTH_MISMATCH: bar columns must have equal lengths; ts_event has {n}, \
                 open/high/low/close/volume have {lengths:?}"
            ),
        ));
    }
    Ok((0..n).map(|k| (ix.slice()[k], view.bar(k))).collect())
}

/// Per instrument: the durable 1-minute series, its incremental fold, and feature state at
/// all seven resolutions.
#[pyclass(module = "spine._core", name = "FeatureUniverse")]
#[derive(Clone)]
pub struct PyFeatureUniverse {
    pub(crate) inner: Universe,
}

#[pymethods]
impl PyFeatureUniverse {
    #[new]
    #[pyo3(signature = (*, feature_ids = None))]
    fn new(py: Python<'_>, feature_ids: Option<Vec<String>>) -> PyResult<Self> {
        let features = to_py(py, default_registry().select(feature_ids.as_deref()))?;
        Ok(Self {
            inner: Universe::new(features),
        })
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }

    /// A deep copy (series, folds and states).
    fn copy(&self) -> Self {
        self.clone()
    }

    /// Add an instrument; returns its index.
    #[pyo3(signature = (*, channel, price_precision, size_precision, capacity = DEFAULT_CAPACITY))]
    fn add(
        &mut self,
        py: Python<'_>,
        channel: &str,
        #[pyo3(from_py_with = int_args::precision)] price_precision: i64,
        #[pyo3(from_py_with = int_args::precision)] size_precision: i64,
        #[pyo3(from_py_with = int_args::count)] capacity: usize,
    ) -> PyResult<u32> {
        let channel = Channel::parse(channel).map_err(|e| bars_error(py, &e))?;
        let mut config = SeriesConfig::new(channel, price_precision, size_precision)
            .map_err(|e| bars_error(py, &e))?;
        config.capacity = capacity;
        to_py(py, self.inner.add(config))
    }

    /// Record that an instrument observed `[start, end)`.
    fn observe(
        &mut self,
        py: Python<'_>,
        #[pyo3(from_py_with = int_args::instrument_index)] instrument: u32,
        #[pyo3(from_py_with = int_args::feature_nanos)] start: u64,
        #[pyo3(from_py_with = int_args::feature_nanos)] end: u64,
    ) -> PyResult<()> {
        to_py(py, self.inner.observe(instrument, start, end))
    }

    /// Bulk load an instrument's 1-minute history (uint64 ts_event, int64 mantissas) and
    /// warm all seven resolutions from it. Returns the bars accepted.
    #[pyo3(
        signature = (*bar, **named),
        text_signature = "($self, instrument, ts_event, open, high, low, close, volume)"
    )]
    fn warm(&mut self, bar: &Positional<'_>, named: Option<&Named<'_>>) -> PyResult<usize> {
        let (instrument, bar) =
            Ohlcv::bind_after("FeatureUniverse.warm", "instrument", bar, named)?;
        let instrument = argument(
            bar.py(),
            "instrument",
            int_args::instrument_index(&instrument),
        )?;
        let columns = bar.columns(None, Refusal::Feature)?;
        to_py(bar.py(), self.inner.warm(instrument, &columns.view()))
    }

    /// Close one minute across the universe: row `k` is a closed 1-minute bar of instrument
    /// `instrument[k]` (uint32). Returns the changed rows (see `updated_bytes`).
    #[pyo3(
        signature = (*bar, **named),
        text_signature = "($self, instrument, ts_event, open, high, low, close, volume)"
    )]
    fn close_minute<'py>(
        &mut self,
        py: Python<'py>,
        bar: &Positional<'py>,
        named: Option<&Named<'py>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let function = "FeatureUniverse.close_minute";
        let (instrument, bar) = Ohlcv::bind_after(function, "instrument", bar, named)?;
        let bars = minute_bars(&instrument, &bar)?;
        // Room for the worst minute (every resolution closes) without growing.
        let mut updated = Vec::with_capacity(bars.len() * Resolution::ALL.len());
        to_py(py, self.inner.close_minute(&bars, &mut updated))?;
        updated_bytes(py, &updated)
    }

    /// Every instrument's watermark reached `watermark` (quiet minutes): close their open
    /// buckets. Returns the changed rows.
    fn advance<'py>(
        &mut self,
        py: Python<'py>,
        #[pyo3(from_py_with = int_args::feature_nanos)] watermark: u64,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let mut updated = Vec::new();
        to_py(py, self.inner.advance(watermark, &mut updated))?;
        updated_bytes(py, &updated)
    }

    /// The row of an instrument at a resolution: key -> wire-shaped value dict, in key order.
    fn row<'py>(
        &self,
        py: Python<'py>,
        #[pyo3(from_py_with = int_args::instrument_index)] instrument: u32,
        resolution: &str,
    ) -> PyResult<Bound<'py, PyDict>> {
        let resolution = Resolution::parse(resolution).map_err(|e| bars_error(py, &e))?;
        let state = to_py(py, self.inner.state(instrument, resolution))?;
        let dict = PyDict::new(py);
        for (key, value) in state.row() {
            dict.set_item(key, feature_value_to_py(py, value)?)?;
        }
        Ok(dict)
    }

    /// An instrument's durable 1-minute series as little-endian column buffers (a copy, as
    /// `Series.columns` gives them; `sequence` is the universe's own numbering).
    fn series_columns<'py>(
        &self,
        py: Python<'py>,
        #[pyo3(from_py_with = int_args::instrument_index)] instrument: u32,
    ) -> PyResult<Bound<'py, PyDict>> {
        columns_dict(py, &to_py(py, self.inner.series(instrument))?.view())
    }

    /// An instrument's observed spans `[(start, end), ...]`.
    fn coverage(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = int_args::instrument_index)] instrument: u32,
    ) -> PyResult<Vec<(u64, u64)>> {
        let series = to_py(py, self.inner.series(instrument))?;
        Ok(series.coverage().spans().to_vec())
    }

    /// The close of the newest bar an instrument's state at `resolution` took.
    fn last_ts_event(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = int_args::instrument_index)] instrument: u32,
        resolution: &str,
    ) -> PyResult<Option<u64>> {
        let resolution = Resolution::parse(resolution).map_err(|e| bars_error(py, &e))?;
        Ok(to_py(py, self.inner.state(instrument, resolution))?.last_ts_event())
    }

    /// Bars an instrument's state at `resolution` has taken since it started.
    fn bars_taken(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = int_args::instrument_index)] instrument: u32,
        resolution: &str,
    ) -> PyResult<u64> {
        let resolution = Resolution::parse(resolution).map_err(|e| bars_error(py, &e))?;
        to_py(py, self.inner.bars_taken(instrument, resolution))
    }
}
