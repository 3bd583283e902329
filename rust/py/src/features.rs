//! Feature kernels for Python: the registry (`feature_specs`) and the incremental state of
//! one instrument and resolution (`FeatureState`). Convert, call core, return.
//!
//! Row values come out wire-shaped: `{"kind": "DECIMAL", "value": "54.1234", "scale": 4}`,
//! `{"kind": "INTEGER", "value": "-1"}`, `{"kind": "UNIX_NANOS", "value": "<ns>"}` or
//! `{"kind": "ABSENT", "reason": "WARMING_UP", "bars_seen": 3, "bars_needed": 15}`
//! (`bars_seen`/`bars_needed` only with WARMING_UP). Integers travel as strings, like
//! decimals and timestamps, so no client parses them through a double.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyInt, PyList};
use spine_core::features::{
    default_registry, AbsentReason, FeatureError, FeatureState, FeatureValue,
};
use spine_core::Value;

use crate::errors::feature_error;
use crate::ohlcv::{Named, Ohlcv, Positional, Refusal};

/// Add this module's functions and classes to `spine._core`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(feature_specs, m)?)?;
    m.add_class::<PyFeatureState>()?;
    Ok(())
}

pub(crate) fn to_py<T>(py: Python<'_>, result: Result<T, FeatureError>) -> PyResult<T> {
    result.map_err(|e| feature_error(py, &e))
}

/// A JSON value tree as plain Python objects.
fn value_to_py<'py>(py: Python<'py>, value: &Value<'_>) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => pyo3::types::PyBool::new(py, *b).to_owned().into_any(),
        Value::Int(i) => i.into_pyobject(py)?.into_any(),
        Value::Str(s) => s.as_ref().into_pyobject(py)?.into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(value_to_py(py, item)?)?;
            }
            list.into_any()
        }
        Value::Object(members) => {
            let dict = PyDict::new(py);
            for (key, item) in members {
                dict.set_item(key.as_ref(), value_to_py(py, item)?)?;
            }
            dict.into_any()
        }
    })
}

/// The default feature registry as `svc.feature_spec` documents (plain dicts; parameters,
/// decimals and the config_hash as strings), in registry order.
#[pyfunction]
pub fn feature_specs(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let list = PyList::empty(py);
    for feature in default_registry().features() {
        list.append(value_to_py(py, &feature.spec.document())?)?;
    }
    Ok(list)
}

/// One value as its wire-shaped dict.
pub(crate) fn feature_value_to_py<'py>(
    py: Python<'py>,
    value: FeatureValue,
) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    dict.set_item("kind", value.kind())?;
    match value {
        FeatureValue::Decimal(d) => {
            dict.set_item("value", d.to_string())?;
            dict.set_item("scale", d.scale)?;
        }
        FeatureValue::Integer(i) => dict.set_item("value", i.to_string())?,
        FeatureValue::UnixNanos(ns) => dict.set_item("value", ns.to_string())?,
        FeatureValue::Absent(reason) => {
            dict.set_item("reason", reason.symbol())?;
            if let AbsentReason::WarmingUp {
                bars_seen,
                bars_needed,
            } = reason
            {
                dict.set_item("bars_seen", bars_seen)?;
                dict.set_item("bars_needed", bars_needed)?;
            }
        }
    }
    Ok(dict)
}

/// Incremental feature state of one instrument and resolution.
#[pyclass(module = "spine._core", name = "FeatureState")]
pub struct PyFeatureState {
    inner: FeatureState,
}

#[pymethods]
impl PyFeatureState {
    #[new]
    #[pyo3(signature = (*, price_scale, size_scale, feature_ids = None))]
    fn new(
        py: Python<'_>,
        price_scale: &Bound<'_, PyInt>,
        size_scale: &Bound<'_, PyInt>,
        feature_ids: Option<Vec<String>>,
    ) -> PyResult<Self> {
        // Out-of-i64 scales (and bools) become -1, which the core refuses naming the precision.
        let scale = |s: &Bound<'_, PyInt>| {
            if s.is_instance_of::<pyo3::types::PyBool>() {
                -1
            } else {
                s.extract::<i64>().unwrap_or(-1)
            }
        };
        let (price, size) = (scale(price_scale), scale(size_scale));
        let inner = to_py(
            py,
            FeatureState::from_registry(default_registry(), feature_ids.as_deref(), price, size),
        )?;
        Ok(Self { inner })
    }

    /// Selected feature ids, in selection order.
    #[getter]
    fn feature_ids(&self) -> Vec<String> {
        self.inner
            .features()
            .map(|f| f.spec.feature_id.clone())
            .collect()
    }

    /// Row keys `<feature_id>.<output_name>`, in key order.
    #[getter]
    fn keys(&self) -> Vec<String> {
        let mut keys: Vec<String> = self
            .inner
            .features()
            .flat_map(|f| f.keys.iter().cloned())
            .collect();
        keys.sort_unstable();
        keys
    }

    #[getter]
    fn price_scale(&self) -> u8 {
        self.inner.price_scale()
    }

    #[getter]
    fn size_scale(&self) -> u8 {
        self.inner.size_scale()
    }

    #[getter]
    fn last_ts_event(&self) -> Option<u64> {
        self.inner.last_ts_event()
    }

    /// Warm from contiguous columns (ts_event uint64; open..volume int64 mantissas) in one
    /// call, zero-copy. Returns the number of bars taken; nothing is taken on error.
    #[pyo3(
        signature = (*bar, **named),
        text_signature = "($self, ts_event, open, high, low, close, volume)"
    )]
    fn warm(&mut self, bar: &Positional<'_>, named: Option<&Named<'_>>) -> PyResult<usize> {
        let bar = Ohlcv::bind("FeatureState.warm", bar, named)?;
        let columns = bar.columns(None, Refusal::Feature)?;
        to_py(bar.py(), self.inner.warm_columns(&columns.view()))
    }

    /// Take one closed bar (mantissas at the state's scales).
    #[allow(clippy::too_many_arguments)]
    fn update(
        &mut self,
        py: Python<'_>,
        ts_event: &Bound<'_, PyAny>,
        open: &Bound<'_, PyAny>,
        high: &Bound<'_, PyAny>,
        low: &Bound<'_, PyAny>,
        close: &Bound<'_, PyAny>,
        volume: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let bar = Ohlcv::new([ts_event, open, high, low, close, volume]).feature_bar()?;
        to_py(py, self.inner.update_raw(&bar))
    }

    /// The input had a gap: restart every kernel (values read ABSENT GAP_IN_INPUT until warm).
    fn mark_gap(&mut self) {
        self.inner.mark_gap();
    }

    /// Forget every bar.
    fn reset(&mut self) {
        self.inner.reset();
    }

    /// The current row: `<feature_id>.<output_name>` -> wire-shaped value dict, in key order.
    fn row<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let row = self.inner.row();
        let dict = PyDict::new(py);
        for (key, value) in row {
            dict.set_item(key, feature_value_to_py(py, value)?)?;
        }
        Ok(dict)
    }
}
