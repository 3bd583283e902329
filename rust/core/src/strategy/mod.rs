//! The per-bar rule kernel of a declarative strategy: the features it declares (built from the
//! registry's kernels, [`crate::features::build_spec`]) computed over one instrument's closed
//! bars, and its rules (the screen condition grammar plus key-vs-key comparisons and crosses;
//! see [`crate::screener`]'s grammar) evaluated after each bar as a bitmask.
//!
//! Imports point one way: this module reads [`crate::features`] and the screener's condition
//! grammar; nothing there imports it.

mod error;
mod kernel;
mod keys;
mod kinds;
mod rule;

#[cfg(test)]
mod tests;

pub use error::StrategyError;
pub use kernel::{FeatureDecl, StrategyKernel, MAX_RULES};
pub use kinds::{feature_kinds, FeatureKind};
