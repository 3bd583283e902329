//! What a kernel's file declares for the registry: its `implementation`, outputs, parameters
//! and default specs (`Declared`), and how it is built from a spec's checked parameters
//! ([`Define`]). The table in `kinds.rs` generates every enum and dispatch from these.

use std::collections::BTreeMap;

use crate::decimal::Fixed;
use crate::features::error::FeatureError;
use crate::features::primitives::kernel::Kernel;
use crate::features::primitives::packed::Packed;
use crate::features::primitives::window::Window;
use crate::features::spec::ValueType;

/// The longest window a spec may declare. The durable series keeps 5,000 bars; a longer
/// period could never warm from it, and the bound caps the memory one spec can ask for.
pub const MAX_PERIOD: u64 = 100_000;

/// Price-level outputs (averages, bands, ranges) are published at 8 decimals: enough for
/// every venue precision in use and far inside the i128 mantissa for any i64 price. Kernels
/// compute in f64 (~16 significant digits), so for price levels above ~1e7 the last of the 8
/// places carry f64 rounding; the decimal is still the exact rounding of the computed f64.
pub(crate) const PRICE: u8 = 8;

/// Declared outputs: name, value type, scale.
pub(crate) type OutputTable = &'static [(&'static str, ValueType, u8)];

/// A default spec: feature id and parameters.
pub(crate) type DefaultSpec = (&'static str, &'static [(&'static str, &'static str)]);

/// How a decimal parameter is bounded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Bound {
    /// Any decimal.
    Any,
    /// At least zero.
    NonNegative,
    /// Above zero.
    Positive,
}

/// The facts a spec of a kernel publishes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Declared {
    /// The `implementation` string of its specs.
    pub(crate) implementation: &'static str,
    /// Parameter names it accepts besides the optional `threshold`, sorted.
    pub(crate) parameters: &'static [&'static str],
    /// Its outputs, in order.
    pub(crate) outputs: OutputTable,
    /// How an optional `threshold` is bounded.
    pub(crate) threshold: Bound,
    /// Its specs in the default registry.
    pub(crate) defaults: &'static [DefaultSpec],
}

impl Declared {
    /// `implementation` with these parameters: no outputs yet, any `threshold`, no defaults.
    pub(crate) const fn new(
        implementation: &'static str,
        parameters: &'static [&'static str],
    ) -> Self {
        Self {
            implementation,
            parameters,
            outputs: &[],
            threshold: Bound::Any,
            defaults: &[],
        }
    }

    /// With these outputs.
    pub(crate) const fn outputs(self, outputs: OutputTable) -> Self {
        Self { outputs, ..self }
    }

    /// With `threshold` bounded so.
    pub(crate) const fn threshold(self, threshold: Bound) -> Self {
        Self { threshold, ..self }
    }

    /// With these specs in the default registry.
    pub(crate) const fn defaults(self, defaults: &'static [DefaultSpec]) -> Self {
        Self { defaults, ..self }
    }
}

/// A kernel the registry builds from a spec.
pub(crate) trait Define: Kernel + Packed + Copy + std::fmt::Debug {
    /// What its specs publish.
    const DECLARED: Declared;

    /// A fresh kernel from the spec's parameters, checked in the order they are read.
    ///
    /// # Errors
    /// [`FeatureError::BadParameter`] for a missing or out-of-range parameter.
    fn build(params: &Params<'_>) -> Result<Self, FeatureError>;

    /// The ring it keeps of every bar (or close) taken since its last reset, if any.
    fn window(&self) -> Option<Window> {
        None
    }

    /// This kernel reading `window`, another kernel's ring, after `seen` bars; `None` unless
    /// its values are a function of its newest entries of such a ring alone.
    fn viewing(&self, _window: Window, _seen: u64) -> Option<Self> {
        None
    }
}

/// A spec's parameters, exact strings, read and checked one by one.
pub(crate) struct Params<'a> {
    pub(crate) feature_id: &'a str,
    pub(crate) parameters: &'a BTreeMap<String, String>,
    /// The `threshold`, already checked.
    pub(crate) threshold: Option<Fixed>,
}

impl Params<'_> {
    /// A refusal of `name = value`.
    pub(crate) fn bad(&self, name: &str, value: &str, expected: impl Into<String>) -> FeatureError {
        FeatureError::BadParameter {
            feature_id: self.feature_id.to_owned(),
            name: name.to_owned(),
            value: value.to_owned(),
            expected: expected.into(),
        }
    }

    /// The text of a required parameter.
    pub(crate) fn get(&self, name: &str) -> Result<&str, FeatureError> {
        self.parameters
            .get(name)
            .map(String::as_str)
            .ok_or_else(|| self.bad(name, "<missing>", "a required parameter"))
    }

    /// An integer string `^[1-9][0-9]*$` within `min..=MAX_PERIOD`.
    pub(crate) fn integer(&self, name: &str, min: u64) -> Result<u64, FeatureError> {
        let text = self.get(name)?;
        let expected =
            format!("an integer string from {min} to {MAX_PERIOD}, no sign or leading zero");
        let canonical = !text.is_empty()
            && text.bytes().all(|b| b.is_ascii_digit())
            && !(text.len() > 1 && text.starts_with('0'));
        text.parse::<u64>()
            .ok()
            .filter(|n| canonical && (min..=MAX_PERIOD).contains(n))
            .ok_or_else(|| self.bad(name, text, expected))
    }

    /// `text` as a decimal string (pinned decision 4) within `bound`.
    pub(crate) fn decimal(
        &self,
        name: &str,
        text: &str,
        bound: Bound,
    ) -> Result<Fixed, FeatureError> {
        let expected = match bound {
            Bound::Positive => "a positive decimal string such as \"2\" or \"2.5\"",
            Bound::NonNegative => "a non-negative decimal string such as \"0\" or \"0.001\"",
            Bound::Any => "a decimal string such as \"70\" or \"-0.5\"",
        };
        let value = Fixed::parse_natural(text).map_err(|_| self.bad(name, text, expected))?;
        let ok = match bound {
            Bound::Positive => value.raw > 0,
            Bound::NonNegative => value.raw >= 0,
            Bound::Any => true,
        };
        if ok {
            Ok(value)
        } else {
            Err(self.bad(name, text, expected))
        }
    }
}

/// A decimal as the nearest `f64`.
pub(crate) fn to_f64(value: Fixed) -> f64 {
    value.to_string().parse::<f64>().unwrap_or(f64::NAN)
}
