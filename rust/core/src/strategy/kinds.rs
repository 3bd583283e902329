//! The kernels a strategy may declare a feature of, for authoring validation.

use crate::features::KernelKind;

/// Prefix of every kernel's `implementation` string.
const PREFIX: &str = "spine_core.features.";

/// One kernel a feature may be declared with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FeatureKind {
    /// The short name a `strategy.toml` gives (`ema`).
    pub kind: &'static str,
    /// The `implementation` string (`spine_core.features.ema`).
    pub implementation: &'static str,
    /// The parameters it requires, sorted.
    pub parameters: &'static [&'static str],
    /// The parameters it may take besides them.
    pub optional: &'static [&'static str],
}

/// Every kernel, in registry order.
#[must_use]
pub fn feature_kinds() -> Vec<FeatureKind> {
    KernelKind::ALL
        .into_iter()
        .map(|kind| {
            let implementation = kind.implementation();
            FeatureKind {
                kind: implementation
                    .strip_prefix(PREFIX)
                    .unwrap_or(implementation),
                implementation,
                parameters: kind.parameter_names(),
                optional: &["threshold"],
            }
        })
        .collect()
}
