//! The six bar arguments `ts_event, open, high, low, close, volume` ([`Ohlcv`]) that the folds,
//! the series, the feature states and universe, the strategy kernel and `bar_row` take, read
//! in one place: as columns (ts_event uint64; open, high, low, close, volume int64 mantissas;
//! an optional uint64 sequence) handed to the core as a view, or as one bar's integers.
//!
//! A binding taking columns declares them as `*bar, **named` with a `text_signature` naming
//! the six, so its Python signature is unchanged, and [`Ohlcv::bind`] binds them as Python
//! binds parameters given by position or by name, refusing a call with PyO3's own words. A
//! binding taking one bar per call declares the six itself ([`Ohlcv::new`]): `**named` puts
//! PyO3 on the tuple-and-dict calling convention, which makes such a call (about a
//! microsecond) a third to two thirds slower.

use pyo3::buffer::Element;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyInt, PyTuple};
use spine_core::bars::{Bar, BarsView};

use crate::columns::Column;
use crate::errors::feature_refusal;
use crate::int_args;

/// A binding's extra positional arguments (its `*bar`).
pub(crate) type Positional<'py> = Bound<'py, PyTuple>;

/// A binding's keyword arguments it does not name itself (its `**named`).
pub(crate) type Named<'py> = Bound<'py, PyDict>;

/// The argument names, in order.
const NAMES: [&str; 6] = ["ts_event", "open", "high", "low", "close", "volume"];

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

/// The six bar arguments of one call, as given.
pub(crate) struct Ohlcv<'py> {
    /// ts_event, open, high, low, close, volume.
    args: [Bound<'py, PyAny>; 6],
}

impl<'py> Ohlcv<'py> {
    /// The six arguments as PyO3 bound them.
    pub(crate) fn new(args: [&Bound<'py, PyAny>; 6]) -> Self {
        Self {
            args: args.map(|arg| arg.clone()),
        }
    }

    /// The six arguments of `function` (named as PyO3 names it: `Class.method` or `function`)
    /// from its `*bar` and `**named`.
    ///
    /// # Errors
    /// As [`bind_names`].
    pub(crate) fn bind(
        function: &str,
        bar: &Positional<'py>,
        named: Option<&Named<'py>>,
    ) -> PyResult<Self> {
        match bind_names(function, NAMES, bar, named)? {
            [Some(t), Some(o), Some(h), Some(l), Some(c), Some(v)] => Ok(Self {
                args: [t, o, h, l, c, v],
            }),
            args => Err(missing(function, &NAMES, &args)),
        }
    }

    /// The argument `first` that comes before the six, and the six, as [`Self::bind`].
    ///
    /// # Errors
    /// As [`bind_names`].
    pub(crate) fn bind_after(
        function: &str,
        first: &'static str,
        bar: &Positional<'py>,
        named: Option<&Named<'py>>,
    ) -> PyResult<(Bound<'py, PyAny>, Self)> {
        let [t, o, h, l, c, v] = NAMES;
        let names = [first, t, o, h, l, c, v];
        match bind_names(function, names, bar, named)? {
            [Some(f), Some(t), Some(o), Some(h), Some(l), Some(c), Some(v)] => Ok((
                f,
                Self {
                    args: [t, o, h, l, c, v],
                },
            )),
            args => Err(missing(function, &names, &args)),
        }
    }

    /// The Python the arguments belong to.
    pub(crate) fn py(&self) -> Python<'py> {
        self.args[0].py()
    }

    /// The arguments as columns, with a `sequence` column when given; the first refused (in
    /// argument order) is reported.
    pub(crate) fn columns(
        &self,
        sequence: Option<&Bound<'py, PyAny>>,
        refusal: Refusal,
    ) -> PyResult<Columns> {
        let [ts_event, open, high, low, close, volume] = &self.args;
        let py = self.py();
        let value = |name, obj| column::<i64>(py, name, obj, "int64", refusal);
        Ok(Columns {
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

    /// The arguments as one bar, refused as the bars bindings refuse an int (`int_args`): the
    /// close time a nanosecond instant, the others mantissas.
    pub(crate) fn bar(&self) -> PyResult<Bar> {
        let py = self.py();
        let mantissa = |i: usize| argument(py, NAMES[i], int_args::mantissa(&self.args[i]));
        Ok(Bar {
            ts_event: argument(py, "ts_event", int_args::nanos(&self.args[0]))?,
            open: mantissa(1)?,
            high: mantissa(2)?,
            low: mantissa(3)?,
            close: mantissa(4)?,
            volume: mantissa(5)?,
        })
    }

    /// The arguments as one bar, refused as the feature bindings refuse one: each must be an
    /// `int` (a `TypeError` naming the first that is not), then fit (`INVALID_BAR`, a
    /// `FeatureError`, naming the first that does not: the close time a uint64, the others
    /// int64s).
    pub(crate) fn feature_bar(&self) -> PyResult<Bar> {
        let py = self.py();
        let int = |i: usize| {
            argument(
                py,
                NAMES[i],
                self.args[i].cast::<PyInt>().map_err(Into::into),
            )
        };
        let ints = [int(0)?, int(1)?, int(2)?, int(3)?, int(4)?, int(5)?];
        let fits = |i: usize, expected| scalar::<i64>(NAMES[i], ints[i], expected);
        Ok(Bar {
            ts_event: scalar::<u64>("ts_event", ints[0], "a uint64")?,
            open: fits(1, "an int64")?,
            high: fits(2, "an int64")?,
            low: fits(3, "an int64")?,
            close: fits(4, "an int64")?,
            volume: fits(5, "an int64")?,
        })
    }
}

/// The parameters `names` of `function` from `given` (positional arguments) and `named`
/// (keywords), as Python binds parameters given by position or by name: every one is `Some`.
///
/// # Errors
/// A `TypeError` for too many positional arguments, a keyword given twice or unknown, or a
/// missing argument, worded as PyO3 words it.
fn bind_names<'py, const N: usize>(
    function: &str,
    names: [&'static str; N],
    given: &Positional<'py>,
    named: Option<&Named<'py>>,
) -> PyResult<[Option<Bound<'py, PyAny>>; N]> {
    if given.len() > N {
        return Err(PyTypeError::new_err(format!(
            "{function}() takes {N} positional arguments but {} were given",
            given.len()
        )));
    }
    let mut args: [Option<Bound<'py, PyAny>>; N] = std::array::from_fn(|_| None);
    for (slot, value) in args.iter_mut().zip(given.iter()) {
        *slot = Some(value);
    }
    for (key, value) in named.into_iter().flat_map(|named| named.iter()) {
        let key: String = key.extract()?;
        let Some(slot) = names.iter().position(|&n| n == key).map(|i| &mut args[i]) else {
            return Err(PyTypeError::new_err(format!(
                "{function}() got an unexpected keyword argument '{key}'"
            )));
        };
        if slot.is_some() {
            return Err(PyTypeError::new_err(format!(
                "{function}() got multiple values for argument '{key}'"
            )));
        }
        *slot = Some(value);
    }
    if args.iter().any(Option::is_none) {
        return Err(missing(function, &names, &args));
    }
    Ok(args)
}

/// The refusal of a call to `function` missing some of `names` (`args` holds those given).
fn missing(function: &str, names: &[&str], args: &[Option<Bound<'_, PyAny>>]) -> PyErr {
    let names: Vec<String> = names
        .iter()
        .zip(args)
        .filter(|(_, arg)| arg.is_none())
        .map(|(name, _)| format!("'{name}'"))
        .collect();
    let list = match names.as_slice() {
        [a, b] => format!("{a} and {b}"),
        [rest @ .., last] if rest.len() > 1 => format!("{}, and {last}", rest.join(", ")),
        _ => names.concat(),
    };
    let plural = if names.len() == 1 { "" } else { "s" };
    PyTypeError::new_err(format!(
        "{function}() missing {} required positional argument{plural}: {list}",
        names.len()
    ))
}

/// `result` of the argument `name`: a `TypeError` says which argument, as PyO3 says it.
pub(crate) fn argument<T>(py: Python<'_>, name: &str, result: PyResult<T>) -> PyResult<T> {
    result.map_err(|error| {
        if !error.is_instance_of::<PyTypeError>(py) {
            return error;
        }
        let named = PyTypeError::new_err(format!("argument '{name}': {}", error.value(py)));
        named.set_cause(py, error.cause(py));
        named
    })
}

/// A scalar bar field of any Python int size, checked against its machine range (a bool is
/// refused: it is no time or mantissa, whatever `int` says).
fn scalar<T: TryFrom<i128>>(
    name: &'static str,
    value: &Bound<'_, PyInt>,
    expected: &'static str,
) -> PyResult<T> {
    (!value.is_instance_of::<PyBool>())
        .then(|| value.extract::<i128>().ok())
        .flatten()
        .and_then(|v| T::try_from(v).ok())
        .ok_or_else(|| {
            feature_refusal(
                value.py(),
                format!("INVALID_BAR: {name} = {value} is out of range; expected {expected}"),
            )
        })
}

/// The OHLCV columns (and a sequence, when given), borrowed from Python buffers.
pub(crate) struct Columns {
    ts_event: Column<u64>,
    /// open, high, low, close, volume.
    values: [Column<i64>; 5],
    sequence: Option<Column<u64>>,
}

impl Columns {
    /// The columns as the bars core takes them.
    pub(crate) fn view(&self) -> BarsView<'_> {
        BarsView::new(
            self.ts_event.slice(),
            self.values.each_ref().map(Column::slice),
            self.sequence.as_ref().map(Column::slice),
        )
    }
}
