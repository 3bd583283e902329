//! The bars kernels for Python: fold results (`FoldResult`), the offline fold over columns
//! (`fold_columns`), and the helpers the series binding (`series.rs`) shares. Convert, call
//! core, return.

use pyo3::prelude::*;
use pyo3::types::{IntoPyDict, PyBytes, PyDict, PyList};
use spine_core::bars::{
    fold, fold_many, write_bar_row, write_page, BarsError, BarsView, Channel, Coverage, Derived,
    FoldOutput, PageQuery, Resolution,
};
use spine_core::decimal::checked_scale;

use crate::columns::le_bytes;
use crate::errors::{bars_error, decimal_error};
use crate::int_args;
use crate::ohlcv::{argument, Named, Ohlcv, Positional, Refusal};

pub(crate) fn to_py<T>(py: Python<'_>, result: Result<T, BarsError>) -> PyResult<T> {
    result.map_err(|e| bars_error(py, &e))
}

/// Bars as little-endian column buffers by name: ts_event and sequence (empty without one)
/// as uint64, prices and volume as int64 mantissas.
pub(crate) fn columns_dict<'py>(
    py: Python<'py>,
    view: &BarsView<'_>,
) -> PyResult<Bound<'py, PyDict>> {
    let times = |column: &[u64]| le_bytes(py, column, u64::to_le_bytes);
    let mantissas = |column: &[i64]| le_bytes(py, column, i64::to_le_bytes);
    [
        ("ts_event", times(view.ts_event)),
        ("open", mantissas(view.open)),
        ("high", mantissas(view.high)),
        ("low", mantissas(view.low)),
        ("close", mantissas(view.close)),
        ("volume", mantissas(view.volume)),
        ("sequence", times(view.sequence.unwrap_or_default())),
    ]
    .into_py_dict(py)
}

/// The JSON bar rows `query` selects at the given precisions, and whether more match after
/// them.
pub(crate) fn page_bytes<'py>(
    py: Python<'py>,
    view: &BarsView<'_>,
    (price_precision, size_precision): (i64, i64),
    query: &PageQuery,
) -> PyResult<(Bound<'py, PyBytes>, bool)> {
    let scale = |p: i64| checked_scale(i128::from(p)).map_err(|e| decimal_error(py, &e));
    let (price, size) = (scale(price_precision)?, scale(size_precision)?);
    let page = write_page(view, query, price, size);
    Ok((PyBytes::new(py, &page.json), page.more))
}

/// One bar as the JSON array a stream event's `bars` holds (`[{...}]`): the row a page of the
/// same bar holds, written by the same writer.
#[pyfunction]
#[pyo3(signature = (sequence, ts_event, open, high, low, close, volume, *, price_precision, size_precision))]
#[allow(clippy::too_many_arguments)]
pub fn bar_row<'py>(
    py: Python<'py>,
    #[pyo3(from_py_with = int_args::sequence)] sequence: u64,
    ts_event: &Bound<'py, PyAny>,
    open: &Bound<'py, PyAny>,
    high: &Bound<'py, PyAny>,
    low: &Bound<'py, PyAny>,
    close: &Bound<'py, PyAny>,
    volume: &Bound<'py, PyAny>,
    price_precision: &Bound<'py, PyAny>,
    size_precision: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    // Read in argument order, as PyO3 reads those it extracts itself.
    let bar = Ohlcv::new([ts_event, open, high, low, close, volume]).bar()?;
    let precision = |name, obj| argument(py, name, int_args::precision(obj));
    let price_precision = precision("price_precision", price_precision)?;
    let size_precision = precision("size_precision", size_precision)?;
    let scale = |p: i64| checked_scale(i128::from(p)).map_err(|e| decimal_error(py, &e));
    let (price, size) = (scale(price_precision)?, scale(size_precision)?);
    let mut json = Vec::with_capacity(160);
    json.push(b'[');
    let values = [bar.open, bar.high, bar.low, bar.close, bar.volume];
    write_bar_row(&mut json, sequence, bar.ts_event, values, price, size);
    json.push(b']');
    Ok(PyBytes::new(py, &json))
}

/// A fold's result: derived bars as little-endian column buffers, and withheld spans.
#[pyclass(module = "spine._core", name = "FoldResult", frozen)]
pub struct PyFoldResult {
    pub(crate) out: FoldOutput,
}

impl From<FoldOutput> for PyFoldResult {
    fn from(out: FoldOutput) -> Self {
        Self { out }
    }
}

#[pymethods]
impl PyFoldResult {
    /// The resolution folded to.
    #[getter]
    fn resolution(&self) -> &'static str {
        self.out.resolution.name()
    }

    fn __len__(&self) -> usize {
        self.out.bars.ts_event.len()
    }

    /// Column buffers: ts_event and sequence as uint64, prices and volume as int64 mantissas.
    fn columns<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        // The sequence column as held: empty for a fold of bars given without sequences.
        columns_dict(py, &self.out.bars.view(true))
    }

    /// The JSON array of the bar rows a page query selects (see `Series.page`), at the given
    /// precisions, and whether more rows match after them.
    #[pyo3(signature = (*, price_precision, size_precision, start=None, end=None, after_sequence=None, offset=0, limit))]
    #[allow(clippy::too_many_arguments)]
    fn page<'py>(
        &self,
        py: Python<'py>,
        #[pyo3(from_py_with = int_args::precision)] price_precision: i64,
        #[pyo3(from_py_with = int_args::precision)] size_precision: i64,
        #[pyo3(from_py_with = int_args::nanos_or_none)] start: Option<u64>,
        #[pyo3(from_py_with = int_args::nanos_or_none)] end: Option<u64>,
        #[pyo3(from_py_with = int_args::nanos_or_none)] after_sequence: Option<u64>,
        #[pyo3(from_py_with = int_args::count)] offset: usize,
        #[pyo3(from_py_with = int_args::count)] limit: usize,
    ) -> PyResult<(Bound<'py, PyBytes>, bool)> {
        let query = PageQuery {
            start,
            end,
            after_sequence,
            offset,
            limit,
        };
        // A fold of bars given without sequences has none (its rows carry sequence 0).
        let sequenced = self.out.bars.sequence.len() == self.out.bars.ts_event.len();
        page_bytes(
            py,
            &self.out.bars.view(sequenced),
            (price_precision, size_precision),
            &query,
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
#[pyo3(
    signature = (*bar, resolution, channel, coverage=None, sequence=None, **named),
    text_signature = "(ts_event, open, high, low, close, volume, *, resolution, channel, coverage=None, sequence=None)"
)]
pub fn fold_columns<'py>(
    py: Python<'py>,
    bar: &Positional<'py>,
    resolution: &str,
    channel: &str,
    #[pyo3(from_py_with = int_args::spans_or_none)] coverage: Option<Vec<(u64, u64)>>,
    sequence: Option<&Bound<'py, PyAny>>,
    named: Option<&Named<'py>>,
) -> PyResult<PyFoldResult> {
    let bar = Ohlcv::bind("fold_columns", bar, named)?;
    let resolution = to_py(py, Resolution::parse(resolution))?;
    fold_offline(
        &bar,
        channel,
        coverage,
        sequence,
        |view, coverage, channel| fold(view, coverage, channel, resolution),
    )
    .map(PyFoldResult::from)
}

/// Fold bar columns offline to several resolutions (each from the next finer one requested).
#[pyfunction]
#[pyo3(
    signature = (*bar, resolutions, channel, coverage=None, sequence=None, **named),
    text_signature = "(ts_event, open, high, low, close, volume, *, resolutions, channel, coverage=None, sequence=None)"
)]
pub fn fold_columns_many<'py>(
    py: Python<'py>,
    bar: &Positional<'py>,
    resolutions: Vec<String>,
    channel: &str,
    #[pyo3(from_py_with = int_args::spans_or_none)] coverage: Option<Vec<(u64, u64)>>,
    sequence: Option<&Bound<'py, PyAny>>,
    named: Option<&Named<'py>>,
) -> PyResult<Vec<PyFoldResult>> {
    let bar = Ohlcv::bind("fold_columns_many", bar, named)?;
    let resolutions = to_py(py, parse_resolutions(&resolutions))?;
    let outputs = fold_offline(
        &bar,
        channel,
        coverage,
        sequence,
        |view, coverage, channel| fold_many(view, coverage, channel, &resolutions),
    )?;
    Ok(outputs.into_iter().map(PyFoldResult::from).collect())
}

/// Bars already at `resolution` (an import's daily bars) as a `FoldResult`: checked as a
/// fold's input is, then served as a fold's output is, with nothing withheld.
#[pyfunction]
#[pyo3(
    signature = (*bar, resolution, sequence=None, **named),
    text_signature = "(ts_event, open, high, low, close, volume, *, resolution, sequence=None)"
)]
pub fn resolution_bars<'py>(
    py: Python<'py>,
    bar: &Positional<'py>,
    resolution: &str,
    sequence: Option<&Bound<'py, PyAny>>,
    named: Option<&Named<'py>>,
) -> PyResult<PyFoldResult> {
    let bar = Ohlcv::bind("resolution_bars", bar, named)?;
    let resolution = to_py(py, Resolution::parse(resolution))?;
    let columns = bar.columns(sequence, Refusal::Layout)?;
    let view = columns.view();
    to_py(py, view.validate())?;
    let bars = Derived {
        ts_event: view.ts_event.to_vec(),
        open: view.open.to_vec(),
        high: view.high.to_vec(),
        low: view.low.to_vec(),
        close: view.close.to_vec(),
        volume: view.volume.to_vec(),
        sequence: view.sequence.map(<[u64]>::to_vec).unwrap_or_default(),
    };
    Ok(PyFoldResult::from(FoldOutput {
        resolution,
        bars,
        withheld: Vec::new(),
    }))
}

/// Read an offline fold's channel and columns (in argument order, after the bars and the
/// resolutions), validate the columns, then `fold` them over the coverage stated with them
/// (or, with none stated, the span they cover).
fn fold_offline<'py, T>(
    bar: &Ohlcv<'py>,
    channel: &str,
    coverage: Option<Vec<(u64, u64)>>,
    sequence: Option<&Bound<'py, PyAny>>,
    fold: impl FnOnce(&BarsView<'_>, &Coverage, Channel) -> Result<T, BarsError>,
) -> PyResult<T> {
    let py = bar.py();
    let channel = to_py(py, Channel::parse(channel))?;
    let columns = bar.columns(sequence, Refusal::Layout)?;
    let view = columns.view();
    to_py(py, view.validate())?;
    let coverage = match coverage {
        Some(spans) => to_py(py, Coverage::from_spans(spans))?,
        None => default_coverage(&view),
    };
    to_py(py, fold(&view, &coverage, channel))
}

pub(crate) fn parse_resolutions(names: &[String]) -> Result<Vec<Resolution>, BarsError> {
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
