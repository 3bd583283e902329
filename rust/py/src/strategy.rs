//! The strategy rule kernel for Python (`StrategyKernel`, `feature_kinds`): declared features
//! and rules in, one bitmask per closed bar out. Convert, call core, return.

use std::collections::BTreeMap;

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyInt, PyList};
use spine_core::strategy::{feature_kinds as kinds, FeatureDecl, StrategyError, StrategyKernel};

use crate::errors::strategy_error;
use crate::ohlcv::Ohlcv;

/// Add this module's functions and classes to `spine._core`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(feature_kinds, m)?)?;
    m.add_class::<PyStrategyKernel>()?;
    m.add(
        "StrategyRuleError",
        m.py()
            .import("spine.errors")?
            .getattr("StrategyRuleError")?,
    )?;
    Ok(())
}

fn to_py<T>(py: Python<'_>, result: Result<T, StrategyError>) -> PyResult<T> {
    result.map_err(|e| strategy_error(py, &e))
}

/// The kernels a feature may be declared with: `{"kind", "implementation", "parameters",
/// "optional"}` each, in registry order (parameters: the required names, sorted; optional:
/// the names it may also take).
#[pyfunction]
pub fn feature_kinds(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let list = PyList::empty(py);
    for kind in kinds() {
        let dict = PyDict::new(py);
        dict.set_item("kind", kind.kind)?;
        dict.set_item("implementation", kind.implementation)?;
        dict.set_item("parameters", kind.parameters.to_vec())?;
        dict.set_item("optional", kind.optional.to_vec())?;
        list.append(dict)?;
    }
    Ok(list)
}

/// A strategy's features and rules over one instrument's closed bars.
#[pyclass(module = "spine._core", name = "StrategyKernel")]
pub struct PyStrategyKernel {
    inner: StrategyKernel,
}

#[pymethods]
impl PyStrategyKernel {
    #[new]
    #[pyo3(signature = (*, features, rules, price_scale, size_scale))]
    fn new(
        py: Python<'_>,
        features: Vec<(String, String, BTreeMap<String, String>)>,
        rules: Vec<(String, String)>,
        price_scale: &Bound<'_, PyInt>,
        size_scale: &Bound<'_, PyInt>,
    ) -> PyResult<Self> {
        // Out-of-i64 scales (and bools) become -1, which the core refuses naming the scale.
        let scale = |s: &Bound<'_, PyInt>| {
            if s.is_instance_of::<PyBool>() {
                -1
            } else {
                s.extract::<i64>().unwrap_or(-1)
            }
        };
        let features: Vec<FeatureDecl> = features
            .into_iter()
            .map(|(feature_id, implementation, parameters)| FeatureDecl {
                feature_id,
                implementation,
                parameters: parameters.into_iter().collect(),
            })
            .collect();
        let inner = to_py(
            py,
            StrategyKernel::new(&features, &rules, scale(price_scale), scale(size_scale)),
        )?;
        Ok(Self { inner })
    }

    /// Readable row keys: `bar.*` first, then each feature's outputs.
    #[getter]
    fn keys(&self) -> Vec<String> {
        self.inner.keys().to_vec()
    }

    /// Take one closed bar (mantissas at the kernel's scales); bit `i` of the answer is set
    /// when `rules[i]` fires.
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
    ) -> PyResult<u32> {
        let bar = Ohlcv::new([ts_event, open, high, low, close, volume]).feature_bar()?;
        to_py(py, self.inner.update(&bar))
    }

    /// The current value of `key` as exact text; `None` when ABSENT.
    fn value(&self, py: Python<'_>, key: &str) -> PyResult<Option<String>> {
        to_py(py, self.inner.value(key))
    }

    /// The input had a gap: the features restart and the next bar crosses nothing.
    fn mark_gap(&mut self) {
        self.inner.mark_gap();
    }
}
