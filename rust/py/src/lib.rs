//! `spine._core`: the thin PyO3 layer over `spine-core`. Convert, call, return.
//!
//! This file is a table of contents: one `add_function` per exported name.

use pyo3::prelude::*;

mod bars;
mod canonical;
mod columns;
mod decimal;
mod deltas;
mod errors;
mod fanout;
mod features;
mod int_args;
mod key_shapes;
mod observations;
mod ohlcv;
mod screener;
mod series;
mod strategy;
mod turn;
mod universe;
mod walk;

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("MAX_JSON_DEPTH", spine_core::MAX_DEPTH)?;
    m.add("MAX_DECIMAL_SCALE", spine_core::MAX_SCALE)?;
    m.add("WIRE_VERSION", spine_core::WIRE_VERSION)?;
    m.add_function(wrap_pyfunction!(canonical::canonical_json, m)?)?;
    m.add_function(wrap_pyfunction!(canonical::canonicalize, m)?)?;
    m.add_function(wrap_pyfunction!(canonical::identity, m)?)?;
    m.add_function(wrap_pyfunction!(decimal::parse_decimal, m)?)?;
    m.add_function(wrap_pyfunction!(decimal::format_decimal, m)?)?;
    m.add_function(wrap_pyfunction!(decimal::quantize_decimal, m)?)?;
    m.add_function(wrap_pyfunction!(decimal::parse_timestamp, m)?)?;
    m.add_function(wrap_pyfunction!(decimal::parse_decimal_column, m)?)?;
    m.add_function(wrap_pyfunction!(decimal::parse_timestamp_column, m)?)?;
    m.add_function(wrap_pyfunction!(bars::bar_row, m)?)?;
    m.add_function(wrap_pyfunction!(bars::fold_columns, m)?)?;
    m.add_function(wrap_pyfunction!(bars::fold_columns_many, m)?)?;
    m.add_function(wrap_pyfunction!(bars::resolution_bars, m)?)?;
    m.add_class::<series::PySeries>()?;
    m.add_class::<bars::PyFoldResult>()?;
    features::register(m)?;
    m.add_class::<universe::PyFeatureUniverse>()?;
    m.add_class::<deltas::PyDeltaWriter>()?;
    m.add_class::<observations::PyObservationWriter>()?;
    m.add_class::<fanout::PyHub>()?;
    m.add_class::<screener::PyScreenTable>()?;
    m.add_class::<turn::PyLiveBook>()?;
    m.add_class::<turn::PyTurn>()?;
    m.add_class::<turn::PyTurnRun>()?;
    m.add_class::<turn::PyFrames>()?;
    strategy::register(m)?;
    Ok(())
}
