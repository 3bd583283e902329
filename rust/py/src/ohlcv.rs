//! The OHLCV column arguments (ts_event uint64; open, high, low, close, volume int64
//! mantissas; an optional uint64 sequence) that the folds, `Series.extend` and the feature
//! warm-ups and minute closes take: read in one place, then handed to the core as a view.

use pyo3::buffer::Element;
use pyo3::prelude::*;
use spine_core::bars::BarsView;

use crate::columns::Column;
use crate::errors::feature_refusal;

/// How a column argument that is not a contiguous, native 1-D array of its type is refused.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Refusal {
    /// A `TypeError` naming the layout wanted (the bars and series bindings).
    Layout,
    /// A `FeatureError` INVALID_COLUMN (the feature bindings).
    Feature,
}

/// One column argument of `type_name` elements, named `name` in its refusal.
pub(crate) fn column<T: Element + Copy>(
    py: Python<'_>,
    name: &'static str,
    obj: &Bound<'_, PyAny>,
    type_name: &'static str,
    refusal: Refusal,
) -> PyResult<Column<T>> {
    Column::new(name, obj, type_name).map_err(|error| match refusal {
        Refusal::Layout => error,
        Refusal::Feature => feature_refusal(
            py,
            format!("INVALID_COLUMN: {name} must be a contiguous 1-D array of {type_name}"),
        ),
    })
}

/// The OHLCV columns (and a sequence, when given), borrowed from Python buffers.
pub(crate) struct Ohlcv {
    ts_event: Column<u64>,
    /// open, high, low, close, volume.
    values: [Column<i64>; 5],
    sequence: Option<Column<u64>>,
}

impl Ohlcv {
    /// Read the columns in argument order; the first refused one is reported.
    pub(crate) fn read(
        py: Python<'_>,
        ts_event: &Bound<'_, PyAny>,
        [open, high, low, close, volume]: [&Bound<'_, PyAny>; 5],
        sequence: Option<&Bound<'_, PyAny>>,
        refusal: Refusal,
    ) -> PyResult<Self> {
        let value = |name, obj| column::<i64>(py, name, obj, "int64", refusal);
        Ok(Self {
            ts_event: column(py, "ts_event", ts_event, "uint64", refusal)?,
            values: [
                value("open", open)?,
                value("high", high)?,
                value("low", low)?,
                value("close", close)?,
                value("volume", volume)?,
            ],
            sequence: sequence
                .map(|s| column(py, "sequence", s, "uint64", refusal))
                .transpose()?,
        })
    }

    /// The columns as the bars core takes them.
    pub(crate) fn view(&self) -> BarsView<'_> {
        let [open, high, low, close, volume] = self.values.each_ref().map(Column::slice);
        BarsView {
            ts_event: self.ts_event.slice(),
            open,
            high,
            low,
            close,
            volume,
            sequence: self.sequence.as_ref().map(Column::slice),
        }
    }
}
