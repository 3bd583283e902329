//! The one conversion from core errors to Python exceptions.
//!
//! The exception classes live in `spine/errors.py` (so they can inherit from both
//! `SpineError` and `ValueError`); this module only instantiates them.

use pyo3::prelude::*;
use spine_core::bars::BarsError;
use spine_core::features::FeatureError;
use spine_core::{DecimalError, IdentityError, JsonError, TimestampError};

/// Instantiate `spine.errors.<class_name>(message, symbol, path)` as a PyErr.
fn raise(
    py: Python<'_>,
    class_name: &str,
    message: String,
    symbol: &str,
    path: Option<String>,
) -> PyErr {
    let build = || -> PyResult<PyErr> {
        let class = py.import("spine.errors")?.getattr(class_name)?;
        let instance = class.call1((message.clone(), symbol, path.clone()))?;
        Ok(PyErr::from_value(instance))
    };
    build().unwrap_or_else(|e| e)
}

/// The symbol is the message's first word, before the colon.
fn symbol_of(message: &str) -> &str {
    message.split(':').next().unwrap_or("")
}

/// A canonical-JSON refusal, naming its JSON path.
pub fn json_error(py: Python<'_>, err: &JsonError) -> PyErr {
    raise(
        py,
        "CanonicalJsonError",
        err.to_string(),
        err.kind.symbol(),
        Some(err.path()),
    )
}

/// A refusal whose `message` starts with its symbol, as `spine.errors.<class_name>`.
fn refusal(py: Python<'_>, class_name: &str, message: String) -> PyErr {
    let symbol = symbol_of(&message).to_owned();
    raise(py, class_name, message, &symbol, None)
}

/// A decimal refusal.
pub fn decimal_error(py: Python<'_>, err: &DecimalError) -> PyErr {
    refusal(py, "DecimalError", err.to_string())
}

/// A timestamp refusal.
pub fn timestamp_error(py: Python<'_>, err: &TimestampError) -> PyErr {
    refusal(py, "TimestampError", err.to_string())
}

/// A refusal of one row of a column (`class_name` from `spine.errors`): `SYMBOL: row N: text`.
fn at_row(py: Python<'_>, class_name: &str, message: &str, row: usize) -> PyErr {
    let located = match message.split_once(": ") {
        Some((symbol, text)) => format!("{symbol}: row {row}: {text}"),
        None => format!("{message} (row {row})"),
    };
    raise(py, class_name, located, symbol_of(message), None)
}

/// A decimal refusal in a column, naming its row.
pub fn decimal_error_at(py: Python<'_>, err: &DecimalError, row: usize) -> PyErr {
    at_row(py, "DecimalError", &err.to_string(), row)
}

/// A timestamp refusal in a column, naming its row.
pub fn timestamp_error_at(py: Python<'_>, err: &TimestampError, row: usize) -> PyErr {
    at_row(py, "TimestampError", &err.to_string(), row)
}

/// A bad identity name.
pub fn identity_error(py: Python<'_>, err: &IdentityError) -> PyErr {
    refusal(py, "IdentityNameError", err.to_string())
}

/// A refused bar input or fold request.
pub fn bars_error(py: Python<'_>, err: &BarsError) -> PyErr {
    refusal(py, "BarsError", err.to_string())
}

/// A refusal of a bars argument before it reaches the core (`message` starts with its symbol).
pub fn bars_refusal(py: Python<'_>, message: String) -> PyErr {
    refusal(py, "BarsError", message)
}

/// A refused feature selection, spec parameter or bar input.
pub fn feature_error(py: Python<'_>, err: &FeatureError) -> PyErr {
    refusal(py, "FeatureError", err.to_string())
}

/// A refusal of the fan-out hub.
pub fn hub_error(py: Python<'_>, err: &spine_core::fanout::HubError) -> PyErr {
    refusal(py, "HubError", err.to_string())
}

/// A refusal of a feature argument before it reaches the core (`message` starts with its symbol).
pub fn feature_refusal(py: Python<'_>, message: String) -> PyErr {
    refusal(py, "FeatureError", message)
}

/// A refusal of a hub argument before it reaches the core (`message` starts with its symbol).
pub fn hub_refusal(py: Python<'_>, message: String) -> PyErr {
    refusal(py, "HubError", message)
}

/// A refused screen definition or screen-table input.
pub fn screen_error(py: Python<'_>, err: &spine_core::screener::ScreenError) -> PyErr {
    raise(py, "ScreenError", err.to_string(), err.symbol(), None)
}

/// A refused strategy declaration (`StrategyRuleError`) or bar (`FeatureError`).
pub fn strategy_error(py: Python<'_>, err: &spine_core::strategy::StrategyError) -> PyErr {
    match err {
        spine_core::strategy::StrategyError::Bar(e) => feature_error(py, e),
        other => raise(
            py,
            "StrategyRuleError",
            other.to_string(),
            other.symbol(),
            None,
        ),
    }
}
