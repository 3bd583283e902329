//! The row keys a strategy reads, each at a slot of the kernel's value arrays: the bar's own
//! (`bar.open`, `bar.high`, `bar.low`, `bar.close` at the price scale, `bar.volume` at the size
//! scale), then every output of every feature in feature order, then output order (the order
//! [`crate::features::FeatureState::for_each_value`] visits them, so a bar's values land in
//! their slots without a lookup).

use std::collections::BTreeMap;

use crate::decimal::Fixed;
use crate::features::registry::Compiled;
use crate::features::{FeatureValue, ValueType};
use crate::screener::grammar::KeyTable;

/// The bar's own keys, in slot order.
pub(crate) const BAR_KEYS: [&str; 5] =
    ["bar.open", "bar.high", "bar.low", "bar.close", "bar.volume"];

/// The readable keys with their slots, scales and value types.
#[derive(Debug, Clone)]
pub(crate) struct Keys {
    /// By slot.
    pub(crate) names: Vec<String>,
    pub(crate) scales: Vec<u8>,
    pub(crate) types: Vec<ValueType>,
    index: BTreeMap<String, usize>,
}

impl Keys {
    /// The bar's keys, then each feature's.
    pub(crate) fn new<'a>(
        price_scale: u8,
        size_scale: u8,
        features: impl Iterator<Item = &'a Compiled>,
    ) -> Self {
        let mut keys = Self {
            names: Vec::new(),
            scales: Vec::new(),
            types: Vec::new(),
            index: BTreeMap::new(),
        };
        for (i, name) in BAR_KEYS.iter().enumerate() {
            let scale = if i == 4 { size_scale } else { price_scale };
            keys.push(name, scale, ValueType::Decimal);
        }
        for feature in features {
            for (key, output) in feature.keys.iter().zip(&feature.spec.outputs) {
                keys.push(key, output.scale, output.value_type);
            }
        }
        keys
    }

    fn push(&mut self, name: &str, scale: u8, value_type: ValueType) {
        self.index.insert(name.to_owned(), self.names.len());
        self.names.push(name.to_owned());
        self.scales.push(scale);
        self.types.push(value_type);
    }

    /// Number of slots.
    pub(crate) fn len(&self) -> usize {
        self.names.len()
    }

    /// The slot of `key`.
    pub(crate) fn slot(&self, key: &str) -> Option<usize> {
        self.index.get(key).copied()
    }

    /// The keys in slot order, comma separated.
    pub(crate) fn listed(&self) -> String {
        self.names.join(", ")
    }

    /// The exact text of `mantissa` at `slot`: a decimal at the key's scale, or the integer or
    /// nanosecond value of an INTEGER / UNIX_NANOS key.
    pub(crate) fn text(&self, slot: usize, mantissa: i128) -> String {
        let scale = self.scales[slot];
        match self.types[slot] {
            ValueType::Decimal => Fixed {
                raw: mantissa,
                scale,
            }
            .to_string(),
            // Widened from an integer, so the division is exact.
            _ => (mantissa / 10i128.pow(u32::from(scale))).to_string(),
        }
    }
}

impl KeyTable for Keys {
    fn column_of(&self, key: &str) -> Option<usize> {
        self.slot(key)
    }

    fn scale_of(&self, column: usize) -> u8 {
        self.scales.get(column).copied().unwrap_or(0)
    }

    fn allowed(&self) -> String {
        format!(
            "{}, or a key of the default feature registry (feature_specs())",
            self.listed()
        )
    }
}

/// A feature value's mantissa at `scale` (exact: a decimal is published at its output's scale,
/// an integer or timestamp is widened); `None` for ABSENT or anything out of range.
#[inline]
pub(crate) fn mantissa(value: FeatureValue, scale: u8) -> Option<i128> {
    let widen = |v: i128, from: u8| -> Option<i128> {
        v.checked_mul(10i128.checked_pow(u32::from(scale.checked_sub(from)?))?)
    };
    match value {
        FeatureValue::Absent(_) => None,
        FeatureValue::Decimal(Fixed { raw, scale: from }) => widen(raw, from),
        FeatureValue::Integer(i) => widen(i128::from(i), 0),
        FeatureValue::UnixNanos(ns) => widen(i128::from(ns), 0),
    }
}
