//! The durable 1-minute series for Python (`Series`): pushes, bulk loads, folds, pages and
//! the incremental fold's closed buckets. Convert, call core, return.
//!
//! A series given a `reserve` callable asks it before handing out a sequence number above
//! the highest it granted (the node persists a reservation there, so a restart never reuses
//! a number that may have been served); below that ceiling a number costs one comparison.

use pyo3::prelude::*;
use pyo3::types::{IntoPyDict, PyBytes, PyDict, PyList, PyTuple};
use spine_core::bars::{
    fold_many, BarsError, Channel, Closed, IncrementalFold, PageQuery, PushOutcome, Resolution,
    Series, SeriesConfig,
};

use crate::bars::{columns_dict, page_bytes, parse_resolutions, to_py, PyFoldResult};
use crate::columns::Column;
use crate::errors::{bars_error, bars_refusal};
use crate::int_args;
use crate::ohlcv::{Named, Ohlcv, Positional, Refusal};

/// The durable 1-minute series of one instrument and channel, with its incremental folds.
#[pyclass(module = "spine._core", name = "Series")]
pub struct PySeries {
    series: Series,
    incremental: IncrementalFold,
    reserve: Option<Py<PyAny>>,
    /// The highest sequence `reserve` granted (`u64::MAX` without one).
    ceiling: u64,
}

impl PySeries {
    /// Let the series hand out numbers up to `top`: above the ceiling, `reserve(top)` is asked
    /// first and must grant at least `top`. Its error is raised before any number is taken.
    fn make_room(&mut self, py: Python<'_>, top: u64) -> PyResult<()> {
        if top <= self.ceiling {
            return Ok(());
        }
        let Some(reserve) = self.reserve.as_ref().map(|r| r.clone_ref(py)) else {
            return Ok(());
        };
        let granted: u64 = reserve.call1(py, (top,))?.extract(py)?;
        if granted < top {
            return Err(bars_refusal(
                py,
                format!("INVALID_SEQUENCE: reserve granted {granted}, below the {top} asked for"),
            ));
        }
        self.ceiling = granted;
        Ok(())
    }

    /// The buckets the incremental fold closes in `step` over the series.
    fn closing(
        &mut self,
        py: Python<'_>,
        step: impl FnOnce(&mut IncrementalFold, &Series, &mut Vec<Closed>) -> Result<(), BarsError>,
    ) -> PyResult<Vec<Closed>> {
        let mut closed = Vec::new();
        to_py(py, step(&mut self.incremental, &self.series, &mut closed))?;
        Ok(closed)
    }
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
    #[pyo3(signature = (*, channel, price_precision, size_precision, capacity = spine_core::bars::DEFAULT_CAPACITY, reserve = None))]
    fn new(
        py: Python<'_>,
        channel: &str,
        #[pyo3(from_py_with = int_args::precision)] price_precision: i64,
        #[pyo3(from_py_with = int_args::precision)] size_precision: i64,
        #[pyo3(from_py_with = int_args::count)] capacity: usize,
        reserve: Option<Py<PyAny>>,
    ) -> PyResult<Self> {
        let channel = to_py(py, Channel::parse(channel))?;
        let mut config = to_py(
            py,
            SeriesConfig::new(channel, price_precision, size_precision),
        )?;
        config.capacity = capacity;
        let series = to_py(py, Series::new(config))?;
        let ceiling = if reserve.is_some() { 0 } else { u64::MAX };
        Ok(Self {
            series,
            incremental: IncrementalFold::new(),
            reserve,
            ceiling,
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
        #[pyo3(from_py_with = int_args::nanos_or_none)] start: Option<u64>,
        #[pyo3(from_py_with = int_args::nanos_or_none)] end: Option<u64>,
        #[pyo3(from_py_with = int_args::nanos_or_none)] after_sequence: Option<u64>,
        #[pyo3(from_py_with = int_args::count)] offset: usize,
        #[pyo3(from_py_with = int_args::count)] limit: usize,
    ) -> PyResult<(Bound<'py, PyBytes>, bool)> {
        let config = self.series.config();
        let scales = (i64::from(config.price_scale), i64::from(config.size_scale));
        let query = PageQuery {
            start,
            end,
            after_sequence,
            offset,
            limit,
        };
        page_bytes(py, &self.series.view(), scales, &query)
    }

    /// Take one closed 1-minute bar; returns the derived buckets it closed as tuples
    /// `(resolution, "bar", start, end, (o, h, l, c, v, sequence))` or
    /// `(resolution, reason, start, end, None)`.
    #[allow(clippy::too_many_arguments)]
    fn push<'py>(
        &mut self,
        py: Python<'py>,
        ts_event: &Bound<'py, PyAny>,
        open: &Bound<'py, PyAny>,
        high: &Bound<'py, PyAny>,
        low: &Bound<'py, PyAny>,
        close: &Bound<'py, PyAny>,
        volume: &Bound<'py, PyAny>,
    ) -> PyResult<(String, Bound<'py, PyList>)> {
        let bar = Ohlcv::new([ts_event, open, high, low, close, volume]).bar()?;
        self.make_room(py, self.series.last_sequence().saturating_add(1))?;
        let outcome = self.series.push(bar);
        let label = match &outcome {
            PushOutcome::Appended(_) => "APPENDED",
            PushOutcome::Inserted(_) => "INSERTED",
            PushOutcome::Duplicate => "DUPLICATE",
            PushOutcome::TooOld => "TOO_OLD",
            PushOutcome::Rejected(error) => return Err(bars_error(py, error)),
        };
        let closed = self.closing(py, |fold, series, out| {
            fold.on_push(series, &bar, &outcome, out)
        })?;
        Ok((label.to_owned(), closed_to_py(py, &closed)?))
    }

    /// The watermark reached `watermark` (quiet minutes): close the buckets ending by then.
    fn advance<'py>(
        &mut self,
        py: Python<'py>,
        #[pyo3(from_py_with = int_args::nanos)] watermark: u64,
    ) -> PyResult<Bound<'py, PyList>> {
        let closed = self.closing(py, |fold, series, out| fold.advance(series, watermark, out))?;
        closed_to_py(py, &closed)
    }

    /// Bulk load columns through the arrival rule (history, backfill, reload); returns the
    /// number of bars accepted. A bulk load streams nothing: the derived buckets it fills
    /// are served by pages, and the bucket it leaves open is completed by the next live bar.
    #[pyo3(
        signature = (*bar, **named),
        text_signature = "($self, ts_event, open, high, low, close, volume)"
    )]
    fn extend<'py>(
        &mut self,
        py: Python<'py>,
        bar: &Positional<'py>,
        named: Option<&Named<'py>>,
    ) -> PyResult<usize> {
        let bar = Ohlcv::bind("Series.extend", bar, named)?;
        let columns = bar.columns(None, Refusal::Layout)?;
        let view = columns.view();
        let count = u64::try_from(view.ts_event.len()).unwrap_or(u64::MAX);
        self.make_room(py, self.series.last_sequence().saturating_add(count))?;
        let outcomes = to_py(py, self.series.extend(&view))?;
        if let Some(&newest) = view.ts_event.last() {
            // A bulk load streams nothing: what it closed is discarded.
            self.closing(py, |fold, series, out| fold.on_bulk(series, newest, out))?;
        }
        Ok(outcomes
            .iter()
            .filter(|o| matches!(o, PushOutcome::Appended(_) | PushOutcome::Inserted(_)))
            .count())
    }

    /// Give the held bars the sequences they had before a restart (a contiguous uint64 array,
    /// oldest bar first) and continue numbering above `last_sequence`.
    fn resequence(
        &mut self,
        py: Python<'_>,
        sequence: &Bound<'_, PyAny>,
        #[pyo3(from_py_with = int_args::nanos)] last_sequence: u64,
    ) -> PyResult<()> {
        let column = Column::<u64>::new("sequence", sequence, "uint64")?;
        self.make_room(py, last_sequence)?;
        to_py(py, self.series.resequence(column.slice(), last_sequence))
    }

    /// Record that `[start, end)` was observed (rounded inward to whole minutes).
    fn observe(
        &mut self,
        py: Python<'_>,
        #[pyo3(from_py_with = int_args::nanos)] start: u64,
        #[pyo3(from_py_with = int_args::nanos)] end: u64,
    ) -> PyResult<()> {
        to_py(py, self.series.observe(start, end))
    }

    /// The venue's history answered for `[start, end)` and held no candle for the minutes of
    /// it the series holds no bar for: confirm those empty (no longer gaps). Returns the
    /// derived buckets that closed already and are complete now, as `push` returns them.
    fn confirm_empty<'py>(
        &mut self,
        py: Python<'py>,
        #[pyo3(from_py_with = int_args::nanos)] start: u64,
        #[pyo3(from_py_with = int_args::nanos)] end: u64,
    ) -> PyResult<Bound<'py, PyList>> {
        let confirmed = to_py(py, self.series.confirm_empty(start, end))?;
        let closed = self.closing(py, |fold, series, out| {
            confirmed
                .into_iter()
                .try_for_each(|(start, end)| fold.on_confirm(series, start, end, out))
        })?;
        closed_to_py(py, &closed)
    }

    /// The spans confirmed empty `[(start, end), ...]`.
    fn confirmed_empty(&self) -> Vec<(u64, u64)> {
        self.series.coverage().confirmed().to_vec()
    }

    /// The gaps unresolved now `[(start, end), ...]`: unobserved time inside the series, and
    /// on EXTERNAL observed minutes without a candle not confirmed empty.
    fn unresolved(&self) -> Vec<(u64, u64)> {
        self.series.unresolved()
    }

    /// Whether any gap is unresolved now (stops at the first).
    fn has_unresolved(&self) -> bool {
        self.series.has_unresolved()
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
        Ok(outputs.into_iter().map(PyFoldResult::from).collect())
    }

    /// The held bars as little-endian column buffers (ts_event, sequence: uint64; others int64).
    fn columns<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        columns_dict(py, &self.series.view())
    }

    /// Consecutive held closes more than a minute apart, `[(earlier, later), ...]`.
    fn jumps(&self) -> Vec<(u64, u64)> {
        self.series.jumps()
    }

    /// The observed spans `[(start, end), ...]`.
    fn coverage(&self) -> Vec<(u64, u64)> {
        self.series.coverage().spans().to_vec()
    }

    /// Counters: accepted, duplicates, out_of_order, evicted, too_old, rejected.
    fn counters<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let c = self.series.counters();
        [
            ("accepted", c.accepted),
            ("duplicates", c.duplicates),
            ("out_of_order", c.out_of_order),
            ("evicted", c.evicted),
            ("too_old", c.too_old),
            ("rejected", c.rejected),
        ]
        .into_py_dict(py)
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
