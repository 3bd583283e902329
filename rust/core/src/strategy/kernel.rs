//! [`StrategyKernel`]: a strategy's features over one instrument's closed bars and its rules
//! evaluated after each bar.
//!
//! Per bar: the features take the bar ([`FeatureState::update_raw`]); the bar's values and
//! every feature output land in one array of mantissas at their keys' scales (visited in slot
//! order, no lookup, no allocation); each rule is a tree of integer compares over that array
//! and the previous bar's (kept by swapping the two arrays, so crosses need no state of their
//! own).

use std::sync::Arc;

use crate::bars::Bar;
use crate::decimal::MAX_SCALE;
use crate::features::registry::Compiled;
use crate::features::{build_spec, default_registry, FeatureState, KernelKind};
use crate::json;
use crate::strategy::error::StrategyError;
use crate::strategy::keys::{mantissa, Keys, BAR_KEYS};
use crate::strategy::rule::{compile, named_keys, Node};

/// Most rules (one bit each of [`StrategyKernel::update`]'s answer).
pub const MAX_RULES: usize = 32;

/// One declared feature: its id, the kernel's `implementation` string and its exact string
/// parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeatureDecl {
    /// `^[a-z][a-z0-9_]{0,63}$`, not `bar`.
    pub feature_id: String,
    /// `spine_core.features.<kind>`.
    pub implementation: String,
    /// Name -> exact text.
    pub parameters: Vec<(String, String)>,
}

impl FeatureDecl {
    /// Feature `feature_id` of the registry kernel `kind` (`ema`, `rsi`, ...: its
    /// implementation is `spine_core.features.<kind>`) with exact string `parameters`.
    #[must_use]
    pub fn of_kind(feature_id: &str, kind: &str, parameters: &[(&str, &str)]) -> Self {
        Self {
            feature_id: feature_id.to_owned(),
            implementation: format!("spine_core.features.{kind}"),
            parameters: parameters
                .iter()
                .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
                .collect(),
        }
    }
}

/// A strategy's features and rules over one instrument's closed bars.
#[derive(Debug, Clone)]
pub struct StrategyKernel {
    state: FeatureState,
    keys: Keys,
    /// Rule names and conditions, in declaration order (rule `i` is bit `i`).
    rules: Vec<(String, Node)>,
    /// This bar's mantissas by slot (`None`: ABSENT), and the previous bar's.
    now: Vec<Option<i128>>,
    prev: Vec<Option<i128>>,
    /// `prev` holds a bar since the start or the last gap.
    has_prev: bool,
}

impl StrategyKernel {
    /// Build the declared features and compile the rules (name, condition JSON text). A rule
    /// may also read a feature of the default registry by its key (`rsi_14.value`) when no
    /// declared feature has that id; the kernel computes it too.
    ///
    /// # Errors
    /// [`StrategyError::Feature`] for a repeated or reserved (`bar`) id, an unknown
    /// implementation or a bad parameter; [`StrategyError::Rule`] for a condition outside the
    /// grammar or naming a key that is not readable; [`StrategyError::Declaration`] for a scale
    /// outside `0..=18`, more than [`MAX_RULES`] rules or a repeated rule name.
    pub fn new(
        features: &[FeatureDecl],
        rules: &[(String, String)],
        price_scale: i64,
        size_scale: i64,
    ) -> Result<Self, StrategyError> {
        let scale = |what: &str, s: i64| {
            u8::try_from(s)
                .ok()
                .filter(|s| *s <= MAX_SCALE)
                .ok_or_else(|| {
                    StrategyError::declaration(format!(
                        "{what} scale {s} is out of range; allowed: 0..={MAX_SCALE}"
                    ))
                })
        };
        let (price, size) = (scale("price", price_scale)?, scale("size", size_scale)?);
        if rules.len() > MAX_RULES {
            return Err(StrategyError::declaration(format!(
                "{} rules; allowed: at most {MAX_RULES}",
                rules.len()
            )));
        }
        for (i, (name, _)) in rules.iter().enumerate() {
            if rules[..i].iter().any(|(other, _)| other == name) {
                return Err(StrategyError::declaration(format!(
                    "rule {name:?} is declared twice; rule names are unique"
                )));
            }
        }
        let mut compiled = build_features(features)?;
        add_defaults(&mut compiled, rules);
        let keys = Keys::new(price, size, compiled.iter().map(Arc::as_ref));
        let rules = rules
            .iter()
            .map(|(name, condition)| Ok((name.clone(), compile(name, condition, &keys)?)))
            .collect::<Result<Vec<_>, StrategyError>>()?;
        let state = FeatureState::new(compiled, i64::from(price), i64::from(size))?;
        let slots = keys.len();
        Ok(Self {
            state,
            keys,
            rules,
            now: vec![None; slots],
            prev: vec![None; slots],
            has_prev: false,
        })
    }

    /// The readable row keys: `bar.*` first, then each feature's outputs, in slot order.
    #[must_use]
    pub fn keys(&self) -> &[String] {
        &self.keys.names
    }

    /// The rule names, in bit order.
    pub fn rule_names(&self) -> impl Iterator<Item = &str> {
        self.rules.iter().map(|(name, _)| name.as_str())
    }

    /// Take one closed bar (mantissas at the kernel's scales); bit `i` of the answer is set
    /// when rule `i` holds on it.
    ///
    /// # Errors
    /// [`StrategyError::Bar`] for a bar not after the previous one or inconsistent; the kernel
    /// is unchanged then.
    pub fn update(&mut self, bar: &Bar) -> Result<u32, StrategyError> {
        self.state.update_raw(bar)?;
        std::mem::swap(&mut self.now, &mut self.prev);
        let fields = [bar.open, bar.high, bar.low, bar.close, bar.volume];
        for (slot, field) in self.now.iter_mut().zip(fields) {
            *slot = Some(i128::from(field));
        }
        let (now, scales) = (
            &mut self.now[BAR_KEYS.len()..],
            &self.keys.scales[BAR_KEYS.len()..],
        );
        let mut slot = 0;
        self.state.for_each_value(|_, value| {
            if let (Some(cell), Some(&scale)) = (now.get_mut(slot), scales.get(slot)) {
                *cell = mantissa(value, scale);
            }
            slot += 1;
        });
        let prev = self.has_prev.then_some(self.prev.as_slice());
        let mut fired = 0u32;
        for (i, (_, rule)) in self.rules.iter().enumerate() {
            if rule.holds(&self.now, prev) {
                fired |= 1 << i;
            }
        }
        self.has_prev = true;
        Ok(fired)
    }

    /// The current value of `key` as exact text (a decimal at the key's scale, an integer, a
    /// nanosecond timestamp); `None` when ABSENT or before the first bar.
    ///
    /// # Errors
    /// [`StrategyError::Declaration`] for a key that is not readable.
    pub fn value(&self, key: &str) -> Result<Option<String>, StrategyError> {
        let slot = self.keys.slot(key).ok_or_else(|| {
            StrategyError::declaration(format!(
                "row key {key:?} is not readable; allowed: {}",
                self.keys.listed()
            ))
        })?;
        Ok(self.now[slot].map(|m| self.keys.text(slot, m)))
    }

    /// The input had a gap: the features restart (see [`FeatureState::mark_gap`]) and the next
    /// bar crosses nothing.
    pub fn mark_gap(&mut self) {
        self.state.mark_gap();
        self.has_prev = false;
    }
}

/// Build the declared features, refusing a reserved or repeated id and an unknown kernel.
fn build_features(features: &[FeatureDecl]) -> Result<Vec<Arc<Compiled>>, StrategyError> {
    let mut compiled: Vec<Arc<Compiled>> = Vec::with_capacity(features.len());
    for decl in features {
        let id = decl.feature_id.as_str();
        let refuse = |detail: String| StrategyError::Feature {
            feature_id: id.to_owned(),
            detail,
        };
        if id == "bar" {
            return Err(refuse("the id \"bar\" is reserved for the bar's own keys (bar.open, bar.high, bar.low, bar.close, bar.volume); allowed: any other ^[a-z][a-z0-9_]{0,63}$".into()));
        }
        if compiled.iter().any(|f| f.spec.feature_id == id) {
            return Err(refuse("declared twice; feature ids are unique".into()));
        }
        let kind = KernelKind::from_implementation(&decl.implementation).ok_or_else(|| {
            let allowed = KernelKind::ALL
                .iter()
                .map(|k| k.implementation())
                .collect::<Vec<_>>()
                .join(", ");
            refuse(format!(
                "implementation {:?} is not a feature kernel; allowed: {allowed}",
                decl.implementation
            ))
        })?;
        let parameters: Vec<(&str, &str)> = decl
            .parameters
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect();
        let spec = build_spec(kind, id, &parameters).map_err(|e| StrategyError::feature(id, &e))?;
        compiled.push(Arc::new(spec));
    }
    Ok(compiled)
}

/// Add the default registry's features the rules read by key and no declared feature
/// provides, in order of first mention.
fn add_defaults(compiled: &mut Vec<Arc<Compiled>>, rules: &[(String, String)]) {
    for (_, condition) in rules {
        // A condition that does not parse is refused, with its path, when compiled.
        let Ok(value) = json::parse(condition.as_bytes()) else {
            continue;
        };
        let mut named = Vec::new();
        named_keys(&value, &mut named);
        for key in named {
            let Some((id, _)) = key.split_once('.') else {
                continue;
            };
            if id == "bar" || compiled.iter().any(|f| f.spec.feature_id == id) {
                continue;
            }
            if let Some(feature) = default_registry().get(id) {
                compiled.push(Arc::clone(feature));
            }
        }
    }
}
