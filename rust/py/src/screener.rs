//! The screener's table and screens for Python (`ScreenTable`): rows in (a feature row's value
//! dicts, or straight from a `FeatureUniverse`), ranked `(instrument_id, resolution, rank)`
//! out. Convert, call core, return.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};
use spine_core::bars::Resolution;
use spine_core::features::default_registry;
use spine_core::screener::{Cell, Screen, ScreenError, ScreenTable};

use crate::errors::screen_error;
use crate::int_args;
use crate::universe::PyFeatureUniverse;

fn to_py<T>(py: Python<'_>, result: Result<T, ScreenError>) -> PyResult<T> {
    result.map_err(|e| screen_error(py, &e))
}

fn resolution(py: Python<'_>, name: &str) -> PyResult<Resolution> {
    to_py(
        py,
        Resolution::parse(name).map_err(|_| ScreenError::Table {
            detail: format!(
                "resolution {name:?} is not a screener resolution; allowed: 1m, 5m, 15m, 30m, 1h, 4h, 1d"
            ),
        }),
    )
}

fn refuse(detail: String) -> ScreenError {
    ScreenError::Table { detail }
}

/// The rows a screener ranks: per registered row key a column of exact values.
#[pyclass(module = "spine._core", name = "ScreenTable")]
pub struct PyScreenTable {
    inner: ScreenTable,
    cells: Vec<Cell>,
    /// Each instrument id as a Python str, by instrument index, made once: ranked rows
    /// share them rather than building a str per row per screen.
    names: Vec<Py<PyString>>,
    /// The seven resolution names, by declaration index.
    resolutions: Vec<Py<PyString>>,
}

impl PyScreenTable {
    /// Make the Python names of instruments the table learnt since the last call.
    fn learn_names(&mut self, py: Python<'_>) {
        for index in self.names.len()..self.inner.instruments() {
            let id = u32::try_from(index)
                .ok()
                .and_then(|i| self.inner.instrument_id(i))
                .unwrap_or_default();
            self.names.push(PyString::new(py, id).unbind());
        }
    }

    /// One wire-shaped value dict as a cell at key `k`'s scale.
    fn cell(
        &self,
        py: Python<'_>,
        k: usize,
        key: &str,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<Cell> {
        let shape = || {
            refuse(format!("{key}: {value} is not a feature value; allowed: {{\"kind\": \"DECIMAL\" | \"INTEGER\" | \"UNIX_NANOS\", \"value\": <decimal string>, ...}} or {{\"kind\": \"ABSENT\", ...}}"))
        };
        let bad = |_| screen_error(py, &shape());
        let dict = value.cast::<PyDict>().map_err(bad)?;
        // A member of the dict as text, else the value is no feature value.
        let text = |name: &str| -> PyResult<String> {
            let item = dict
                .get_item(name)?
                .ok_or_else(|| screen_error(py, &shape()))?;
            Ok(item
                .cast::<PyString>()
                .map_err(|_| screen_error(py, &shape()))?
                .to_str()?
                .to_owned())
        };
        match text("kind")?.as_str() {
            "ABSENT" => Ok(None),
            "DECIMAL" | "INTEGER" | "UNIX_NANOS" => {
                to_py(py, self.inner.parse_cell(k, &text("value")?))
            }
            _ => Err(screen_error(py, &shape())),
        }
    }
}

#[pymethods]
impl PyScreenTable {
    /// `keys`: `(row key, scale)` pairs; `None`: every output of the default registry at its
    /// declared scale.
    #[new]
    #[pyo3(signature = (keys = None))]
    fn new(py: Python<'_>, keys: Option<Vec<(String, i64)>>) -> PyResult<Self> {
        let inner = match keys {
            None => ScreenTable::from_registry(default_registry()),
            Some(keys) => {
                let mut checked = Vec::with_capacity(keys.len());
                for (key, scale) in keys {
                    let scale = u8::try_from(scale).map_err(|_| {
                        screen_error(
                            py,
                            &refuse(format!(
                                "key {key:?} has scale {scale}; allowed: 0..={}",
                                spine_core::MAX_SCALE
                            )),
                        )
                    })?;
                    checked.push((key, scale));
                }
                ScreenTable::new(&checked)
            }
        };
        let inner = to_py(py, inner)?;
        Ok(Self {
            cells: Vec::with_capacity(inner.keys().len()),
            inner,
            names: Vec::new(),
            resolutions: Resolution::ALL
                .iter()
                .map(|r| PyString::new(py, r.name()).unbind())
                .collect(),
        })
    }

    /// `(row key, scale)` pairs, in declaration order.
    #[getter]
    fn keys(&self) -> Vec<(String, u8)> {
        self.inner.keys().to_vec()
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }

    /// Replace (or add) the row of `instrument_id` at `resolution` from its values
    /// (`FeatureUniverse.row`'s dict: every key of the table, no other).
    fn upsert(
        &mut self,
        py: Python<'_>,
        instrument_id: &str,
        resolution: &str,
        values: &Bound<'_, PyDict>,
    ) -> PyResult<()> {
        let resolution = self::resolution(py, resolution)?;
        let mut cells = std::mem::take(&mut self.cells);
        cells.clear();
        let mut read = || -> PyResult<()> {
            for (k, (key, _)) in self.inner.keys().iter().enumerate() {
                let value = values.get_item(key)?.ok_or_else(|| {
                    screen_error(
                        py,
                        &refuse(format!(
                            "the row has no value for {key:?}; a row holds every key of the table"
                        )),
                    )
                })?;
                cells.push(self.cell(py, k, key, &value)?);
            }
            if values.len() != cells.len() {
                for key in values.keys() {
                    let name = key.str()?.to_string();
                    if self.inner.key_index(&name).is_none() || !key.is_instance_of::<PyString>() {
                        return Err(screen_error(
                            py,
                            &refuse(format!(
                                "row key {key} is not in the table; allowed: {}",
                                self.inner.allowed_keys()
                            )),
                        ));
                    }
                }
            }
            Ok(())
        };
        let read = read();
        let result =
            read.and_then(|()| to_py(py, self.inner.upsert(instrument_id, resolution, &cells)));
        self.cells = cells;
        self.learn_names(py);
        result.map(|_| ())
    }

    /// Replace (or add) the row of `instrument_id` at `resolution` straight from instrument
    /// `instrument` of `universe` (no value dicts).
    fn upsert_universe(
        &mut self,
        py: Python<'_>,
        universe: PyRef<'_, PyFeatureUniverse>,
        #[pyo3(from_py_with = int_args::instrument_index)] instrument: u32,
        instrument_id: &str,
        resolution: &str,
    ) -> PyResult<()> {
        let resolution = self::resolution(py, resolution)?;
        let state = crate::features::to_py(py, universe.inner.state(instrument, resolution))?;
        let result = to_py(
            py,
            self.inner.upsert_state(instrument_id, resolution, &state),
        );
        self.learn_names(py);
        result.map(|_| ())
    }

    /// Drop a retired row; returns whether it was held.
    fn remove(&mut self, py: Python<'_>, instrument_id: &str, resolution: &str) -> PyResult<bool> {
        let resolution = self::resolution(py, resolution)?;
        Ok(self.inner.remove(instrument_id, resolution))
    }

    /// Evaluate an `svc.screen_definition` (JSON `bytes`/`str`, or its dict): returns
    /// `([(instrument_id, resolution, rank), ...], evaluated, matched)`, rows in rank order.
    fn screen<'py>(
        &self,
        py: Python<'py>,
        definition: &Bound<'py, PyAny>,
    ) -> PyResult<(Bound<'py, PyList>, usize, usize)> {
        let table = &self.inner;
        let screen = if let Ok(bytes) = definition.cast::<PyBytes>() {
            Screen::from_json(bytes.as_bytes(), table)
        } else if let Ok(text) = definition.cast::<PyString>() {
            Screen::from_json(text.to_str()?.as_bytes(), table)
        } else if definition.is_instance_of::<PyDict>() {
            crate::walk::with_canonical(definition, |bytes| Screen::from_json(bytes, table))
                .unwrap_or_else(|e| {
                    Err(ScreenError::Definition {
                        path: e.path(),
                        detail: e.to_string(),
                    })
                })
        } else {
            let type_name = definition.get_type().name()?;
            return Err(PyTypeError::new_err(format!(
                "screen() takes the definition as bytes, str or dict, not {type_name}"
            )));
        };
        let screen = to_py(py, screen)?;
        let ranked = to_py(py, py.detach(|| screen.evaluate(table)))?;
        let mut rows = Vec::with_capacity(ranked.rows.len());
        for (position, &row) in ranked.rows.iter().enumerate() {
            let names = table.row_key(row).and_then(|(i, r)| {
                Some((
                    self.names.get(i as usize)?,
                    self.resolutions.get(r as usize)?,
                ))
            });
            if let Some((name, resolution)) = names {
                rows.push(PyTuple::new(
                    py,
                    [
                        name.bind(py).clone().into_any(),
                        resolution.bind(py).clone().into_any(),
                        (position + 1).into_pyobject(py)?.into_any(),
                    ],
                )?);
            }
        }
        let rows = PyList::new(py, rows)?;
        Ok((rows, ranked.evaluated, ranked.matched))
    }
}
