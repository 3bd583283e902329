//! The bars kernels for Python: the durable series (`Series`), fold results (`FoldResult`)
//! and the offline fold over columns (`fold_columns`). Convert, call core, return.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};
use spine_core::bars::{
    fold, fold_many, write_page, Bar, BarsError, BarsView, Channel, Closed, Coverage, FoldOutput,
    IncrementalFold, PageQuery, PushOutcome, Resolution, Series, SeriesConfig,
};
use spine_core::decimal::checked_scale;

use crate::columns::Column;
use crate::errors::{bars_error, decimal_error};

fn to_py<T>(py: Python<'_>, result: Result<T, BarsError>) -> PyResult<T> {
    result.map_err(|e| bars_error(py, &e))
}

/// The six OHLCV columns plus an optional sequence, borrowed from Python buffers.
struct Columns {
    ts_event: Column<u64>,
    open: Column<i64>,
    high: Column<i64>,
    low: Column<i64>,
    close: Column<i64>,
    volume: Column<i64>,
    sequence: Option<Column<u64>>,
}

impl Columns {
    #[allow(clippy::too_many_arguments)]
    fn new(
        ts_event: &Bound<'_, PyAny>,
        open: &Bound<'_, PyAny>,
        high: &Bound<'_, PyAny>,
        low: &Bound<'_, PyAny>,
        close: &Bound<'_, PyAny>,
        volume: &Bound<'_, PyAny>,
        sequence: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        Ok(Self {
            ts_event: Column::new("ts_event", ts_event, "uint64")?,
            open: Column::new("open", open, "int64")?,
            high: Column::new("high", high, "int64")?,
            low: Column::new("low", low, "int64")?,
            close: Column::new("close", close, "int64")?,
            volume: Column::new("volume", volume, "int64")?,
            sequence: sequence
                .map(|s| Column::new("sequence", s, "uint64"))
                .transpose()?,
        })
    }

    fn view(&self) -> BarsView<'_> {
        BarsView {
            ts_event: self.ts_event.slice(),
            open: self.open.slice(),
            high: self.high.slice(),
            low: self.low.slice(),
            close: self.close.slice(),
            volume: self.volume.slice(),
            sequence: self.sequence.as_ref().map(Column::slice),
        }
    }
}

fn bytes_of<T: Copy, const N: usize>(
    py: Python<'_>,
    values: &[T],
    to_le: impl Fn(T) -> [u8; N],
) -> Py<PyAny> {
    let mut out = Vec::with_capacity(values.len() * N);
    for &v in values {
        out.extend_from_slice(&to_le(v));
    }
    PyBytes::new(py, &out).into_any().unbind()
}

/// The JSON bar rows a page query selects, and whether more match after them.
#[allow(clippy::too_many_arguments)]
fn page_bytes<'py>(
    py: Python<'py>,
    view: &BarsView<'_>,
    price_precision: i64,
    size_precision: i64,
    start: Option<u64>,
    end: Option<u64>,
    after_sequence: Option<u64>,
    offset: usize,
    limit: usize,
) -> PyResult<(Bound<'py, PyBytes>, bool)> {
    let scale = |p: i64| checked_scale(i128::from(p)).map_err(|e| decimal_error(py, &e));
    let (price, size) = (scale(price_precision)?, scale(size_precision)?);
    let query = PageQuery {
        start,
        end,
        after_sequence,
        offset,
        limit,
    };
    let page = write_page(view, &query, price, size);
    Ok((PyBytes::new(py, &page.json), page.more))
}

/// A fold's result: derived bars as little-endian column buffers, and withheld spans.
#[pyclass(module = "spine._core", name = "FoldResult", frozen)]
pub struct PyFoldResult {
    out: FoldOutput,
}

#[pymethods]
impl PyFoldResult {
    /// The resolution folded to.
    #[getter]
    fn resolution(&self) -> &'static str {
        self.out.resolution.name()
    }

    fn __len__(&self) -> usize {
        self.out.bars.len()
    }

    /// Column buffers: ts_event and sequence as uint64, prices and volume as int64 mantissas.
    fn columns<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let bars = &self.out.bars;
        let dict = PyDict::new(py);
        dict.set_item("ts_event", bytes_of(py, &bars.ts_event, u64::to_le_bytes))?;
        for (name, column) in [
            ("open", &bars.open),
            ("high", &bars.high),
            ("low", &bars.low),
            ("close", &bars.close),
            ("volume", &bars.volume),
        ] {
            dict.set_item(name, bytes_of(py, column, i64::to_le_bytes))?;
        }
        dict.set_item("sequence", bytes_of(py, &bars.sequence, u64::to_le_bytes))?;
        Ok(dict)
    }

    /// The JSON array of the bar rows a page query selects (see `Series.page`), at the given
    /// precisions, and whether more rows match after them.
    #[pyo3(signature = (*, price_precision, size_precision, start=None, end=None, after_sequence=None, offset=0, limit))]
    #[allow(clippy::too_many_arguments)]
    fn page<'py>(
        &self,
        py: Python<'py>,
        price_precision: i64,
        size_precision: i64,
        start: Option<u64>,
        end: Option<u64>,
        after_sequence: Option<u64>,
        offset: usize,
        limit: usize,
    ) -> PyResult<(Bound<'py, PyBytes>, bool)> {
        page_bytes(
            py,
            &self.out.bars.view(true),
            price_precision,
            size_precision,
            start,
            end,
            after_sequence,
            offset,
            limit,
        )
    }

    /// Withheld spans as `(start, end, reason)`, oldest first.
    fn withheld<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let items: Vec<(u64, u64, &str)> = self
            .out
            .withheld
            .iter()
            .map(|w| (w.start, w.end, w.reason.name()))
            .collect();
        PyList::new(py, items)
    }
}

/// Fold bar columns offline (no series): the view is validated first.
#[pyfunction]
#[pyo3(signature = (ts_event, open, high, low, close, volume, *, resolution, channel, coverage=None, sequence=None))]
#[allow(clippy::too_many_arguments)]
pub fn fold_columns(
    py: Python<'_>,
    ts_event: &Bound<'_, PyAny>,
    open: &Bound<'_, PyAny>,
    high: &Bound<'_, PyAny>,
    low: &Bound<'_, PyAny>,
    close: &Bound<'_, PyAny>,
    volume: &Bound<'_, PyAny>,
    resolution: &str,
    channel: &str,
    coverage: Option<Vec<(u64, u64)>>,
    sequence: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyFoldResult> {
    let resolution = to_py(py, Resolution::parse(resolution))?;
    let channel = to_py(py, Channel::parse(channel))?;
    let columns = Columns::new(ts_event, open, high, low, close, volume, sequence)?;
    let view = columns.view();
    to_py(py, view.validate())?;
    let coverage = match coverage {
        Some(spans) => to_py(py, Coverage::from_spans(spans))?,
        None => default_coverage(&view),
    };
    let out = to_py(py, fold(&view, &coverage, channel, resolution))?;
    Ok(PyFoldResult { out })
}

/// Fold bar columns offline to several resolutions (each from the next finer one requested).
#[pyfunction]
#[pyo3(signature = (ts_event, open, high, low, close, volume, *, resolutions, channel, coverage=None, sequence=None))]
#[allow(clippy::too_many_arguments)]
pub fn fold_columns_many(
    py: Python<'_>,
    ts_event: &Bound<'_, PyAny>,
    open: &Bound<'_, PyAny>,
    high: &Bound<'_, PyAny>,
    low: &Bound<'_, PyAny>,
    close: &Bound<'_, PyAny>,
    volume: &Bound<'_, PyAny>,
    resolutions: Vec<String>,
    channel: &str,
    coverage: Option<Vec<(u64, u64)>>,
    sequence: Option<&Bound<'_, PyAny>>,
) -> PyResult<Vec<PyFoldResult>> {
    let resolutions = to_py(py, parse_resolutions(&resolutions))?;
    let channel = to_py(py, Channel::parse(channel))?;
    let columns = Columns::new(ts_event, open, high, low, close, volume, sequence)?;
    let view = columns.view();
    to_py(py, view.validate())?;
    let coverage = match coverage {
        Some(spans) => to_py(py, Coverage::from_spans(spans))?,
        None => default_coverage(&view),
    };
    let outputs = to_py(py, fold_many(&view, &coverage, channel, &resolutions))?;
    Ok(outputs
        .into_iter()
        .map(|out| PyFoldResult { out })
        .collect())
}

fn parse_resolutions(names: &[String]) -> Result<Vec<Resolution>, BarsError> {
    names.iter().map(|name| Resolution::parse(name)).collect()
}

/// Without stated coverage, the input is taken as one observation from its first open to
/// its last close.
fn default_coverage(view: &BarsView<'_>) -> Coverage {
    match (view.ts_event.first(), view.ts_event.last()) {
        (Some(&first), Some(&last)) => {
            Coverage::from_spans([(first - spine_core::bars::MINUTE_NS, last)]).unwrap_or_default()
        }
        _ => Coverage::new(),
    }
}

/// The durable 1-minute series of one instrument and channel, with its incremental folds.
#[pyclass(module = "spine._core", name = "Series")]
pub struct PySeries {
    series: Series,
    incremental: IncrementalFold,
}

fn closed_to_py<'py>(py: Python<'py>, closed: &[Closed]) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for event in closed {
        let item = match event {
            Closed::Bar {
                resolution,
                bar,
                sequence,
            } => PyTuple::new(
                py,
                [
                    resolution.name().into_pyobject(py)?.into_any(),
                    "bar".into_pyobject(py)?.into_any(),
                    (bar.ts_event - resolution.step_ns())
                        .into_pyobject(py)?
                        .into_any(),
                    bar.ts_event.into_pyobject(py)?.into_any(),
                    (
                        bar.open, bar.high, bar.low, bar.close, bar.volume, *sequence,
                    )
                        .into_pyobject(py)?
                        .into_any(),
                ],
            )?,
            Closed::Withheld {
                resolution,
                withheld,
            } => PyTuple::new(
                py,
                [
                    resolution.name().into_pyobject(py)?.into_any(),
                    withheld.reason.name().into_pyobject(py)?.into_any(),
                    withheld.start.into_pyobject(py)?.into_any(),
                    withheld.end.into_pyobject(py)?.into_any(),
                    py.None().into_bound(py),
                ],
            )?,
        };
        list.append(item)?;
    }
    Ok(list)
}

#[pymethods]
impl PySeries {
    #[new]
    #[pyo3(signature = (*, channel, price_precision, size_precision, capacity = spine_core::bars::DEFAULT_CAPACITY))]
    fn new(
        py: Python<'_>,
        channel: &str,
        price_precision: i64,
        size_precision: i64,
        capacity: usize,
    ) -> PyResult<Self> {
        let channel = to_py(py, Channel::parse(channel))?;
        let mut config = to_py(
            py,
            SeriesConfig::new(channel, price_precision, size_precision),
        )?;
        config.capacity = capacity;
        let series = to_py(py, Series::new(config))?;
        Ok(Self {
            series,
            incremental: IncrementalFold::new(),
        })
    }

    fn __len__(&self) -> usize {
        self.series.len()
    }

    /// The channel name.
    #[getter]
    fn channel(&self) -> &'static str {
        self.series.config().channel.name()
    }

    /// Price precision (fractional digits).
    #[getter]
    fn price_precision(&self) -> u8 {
        self.series.config().price_scale
    }

    /// Size precision (fractional digits).
    #[getter]
    fn size_precision(&self) -> u8 {
        self.series.config().size_scale
    }

    /// The highest sequence handed out.
    #[getter]
    fn last_sequence(&self) -> u64 {
        self.series.last_sequence()
    }

    /// Bumped by every call that may change the series: cached reads stay fresh while it holds.
    #[getter]
    fn revision(&self) -> u64 {
        self.series.revision()
    }

    /// The JSON array of bar rows a query selects: `ts_event` in `[start, end]`, sequence above
    /// `after_sequence`, `limit` rows from `offset`; and whether more rows match after them.
    #[pyo3(signature = (*, start=None, end=None, after_sequence=None, offset=0, limit))]
    fn page<'py>(
        &self,
        py: Python<'py>,
        start: Option<u64>,
        end: Option<u64>,
        after_sequence: Option<u64>,
        offset: usize,
        limit: usize,
    ) -> PyResult<(Bound<'py, PyBytes>, bool)> {
        let config = self.series.config();
        page_bytes(
            py,
            &self.series.view(),
            i64::from(config.price_scale),
            i64::from(config.size_scale),
            start,
            end,
            after_sequence,
            offset,
            limit,
        )
    }

    /// Take one closed 1-minute bar; returns the derived buckets it closed as tuples
    /// `(resolution, "bar", start, end, (o, h, l, c, v, sequence))` or
    /// `(resolution, reason, start, end, None)`.
    #[allow(clippy::too_many_arguments)]
    fn push<'py>(
        &mut self,
        py: Python<'py>,
        ts_event: u64,
        open: i64,
        high: i64,
        low: i64,
        close: i64,
        volume: i64,
    ) -> PyResult<(String, Bound<'py, PyList>)> {
        let bar = Bar {
            ts_event,
            open,
            high,
            low,
            close,
            volume,
        };
        let mut closed = Vec::new();
        let outcome = self.series.push(bar);
        let label = match &outcome {
            PushOutcome::Appended(_) => "APPENDED",
            PushOutcome::Inserted(_) => "INSERTED",
            PushOutcome::Duplicate => "DUPLICATE",
            PushOutcome::TooOld => "TOO_OLD",
            PushOutcome::Rejected(error) => return Err(bars_error(py, error)),
        };
        to_py(
            py,
            self.incremental
                .on_push(&self.series, &bar, &outcome, &mut closed),
        )?;
        Ok((label.to_owned(), closed_to_py(py, &closed)?))
    }

    /// The watermark reached `watermark` (quiet minutes): close the buckets ending by then.
    fn advance<'py>(&mut self, py: Python<'py>, watermark: u64) -> PyResult<Bound<'py, PyList>> {
        let mut closed = Vec::new();
        to_py(
            py,
            self.incremental
                .advance(&self.series, watermark, &mut closed),
        )?;
        closed_to_py(py, &closed)
    }

    /// Bulk load columns through the arrival rule (history, backfill, reload); returns the
    /// number of bars accepted. A bulk load streams nothing: the derived buckets it fills
    /// are served by pages, and the bucket it leaves open is completed by the next live bar.
    #[pyo3(signature = (ts_event, open, high, low, close, volume))]
    #[allow(clippy::too_many_arguments)]
    fn extend(
        &mut self,
        py: Python<'_>,
        ts_event: &Bound<'_, PyAny>,
        open: &Bound<'_, PyAny>,
        high: &Bound<'_, PyAny>,
        low: &Bound<'_, PyAny>,
        close: &Bound<'_, PyAny>,
        volume: &Bound<'_, PyAny>,
    ) -> PyResult<usize> {
        let columns = Columns::new(ts_event, open, high, low, close, volume, None)?;
        let view = columns.view();
        let outcomes = to_py(py, self.series.extend(&view))?;
        if let Some(&newest) = view.ts_event.last() {
            let mut discarded = Vec::new();
            to_py(
                py,
                self.incremental
                    .on_bulk(&self.series, newest, &mut discarded),
            )?;
        }
        Ok(outcomes
            .iter()
            .filter(|o| matches!(o, PushOutcome::Appended(_) | PushOutcome::Inserted(_)))
            .count())
    }

    /// Record that `[start, end)` was observed (rounded inward to whole minutes).
    fn observe(&mut self, py: Python<'_>, start: u64, end: u64) -> PyResult<()> {
        to_py(py, self.series.observe(start, end))
    }

    /// Fold the held bars to a derived resolution.
    fn fold(&self, py: Python<'_>, resolution: &str) -> PyResult<PyFoldResult> {
        let resolution = to_py(py, Resolution::parse(resolution))?;
        let out = to_py(py, self.series.fold(resolution))?;
        Ok(PyFoldResult { out })
    }

    /// Fold the held bars to several resolutions at once (each from the next finer one).
    fn fold_many(&self, py: Python<'_>, resolutions: Vec<String>) -> PyResult<Vec<PyFoldResult>> {
        let resolutions = to_py(py, parse_resolutions(&resolutions))?;
        let outputs = to_py(
            py,
            fold_many(
                &self.series.view(),
                self.series.coverage(),
                self.series.config().channel,
                &resolutions,
            ),
        )?;
        Ok(outputs
            .into_iter()
            .map(|out| PyFoldResult { out })
            .collect())
    }

    /// The held bars as little-endian column buffers (ts_event, sequence: uint64; others int64).
    fn columns<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let view = self.series.view();
        let dict = PyDict::new(py);
        dict.set_item("ts_event", bytes_of(py, view.ts_event, u64::to_le_bytes))?;
        for (name, column) in [
            ("open", view.open),
            ("high", view.high),
            ("low", view.low),
            ("close", view.close),
            ("volume", view.volume),
        ] {
            dict.set_item(name, bytes_of(py, column, i64::to_le_bytes))?;
        }
        dict.set_item(
            "sequence",
            bytes_of(py, view.sequence.unwrap_or(&[]), u64::to_le_bytes),
        )?;
        Ok(dict)
    }

    /// The observed spans `[(start, end), ...]`.
    fn coverage(&self) -> Vec<(u64, u64)> {
        self.series.coverage().spans().to_vec()
    }

    /// Counters: accepted, duplicates, out_of_order, evicted, too_old, rejected.
    fn counters<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let c = self.series.counters();
        let dict = PyDict::new(py);
        for (name, value) in [
            ("accepted", c.accepted),
            ("duplicates", c.duplicates),
            ("out_of_order", c.out_of_order),
            ("evicted", c.evicted),
            ("too_old", c.too_old),
            ("rejected", c.rejected),
        ] {
            dict.set_item(name, value)?;
        }
        Ok(dict)
    }

    /// The resume hint: newest close, its sequence, and the first unobserved instant above it.
    fn resume_hint<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let hint = self.series.resume_hint();
        let dict = PyDict::new(py);
        dict.set_item("newest_ts_event", hint.newest_ts_event)?;
        dict.set_item("newest_sequence", hint.newest_sequence)?;
        dict.set_item("resume_from", hint.resume_from)?;
        Ok(dict)
    }
}
