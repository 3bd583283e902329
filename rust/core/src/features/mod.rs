//! Indicator features: kernels, the registry that builds them from specs, and the engine
//! that keeps their incremental state per (instrument, resolution).
//!
//! Kernels take closed bars as `f64` (one [`BarInput`], or a [`BarBlock`] of columns when
//! warming; converted once from the fixed-point mantissas), compute in `f64` in O(1)
//! amortised per bar with storage sized once, and type their outputs at the declared scale
//! only when a row is read ([`value::fixed_from_f64`]: exact, half to even). A kernel reports
//! ABSENT `WARMING_UP` until it has seen exactly `warmupBars` bars, and a value from that bar
//! on.
//!
//! Layers, each importing only the ones above it:
//! - [`kernel`], [`spec`], [`value`], [`error`]: the kernel contract and the published shapes;
//! - [`engine`]'s primitives (rings, packed words, blocks, recurrences) the kernels build on;
//! - [`kernels`]: one indicator per file, by family;
//! - [`registry`]: the one table of kernels (`registry/kinds.rs`), spec building and the
//!   default registry (adding an indicator: see [`kernels`]);
//! - [`engine`]'s state (layout, fusion, lanes, [`FeatureState`]) and the [`universe`].

pub mod engine;
pub mod error;
pub mod kernel;
pub mod kernels;
pub mod registry;
pub mod spec;
#[cfg(test)]
pub(crate) mod testing;
pub mod universe;
pub mod value;

pub use engine::block::{BarBlock, Inputs};
pub use engine::input::{BarColumns, BarInput};
pub use engine::state::{FeatureState, Row};
pub use error::FeatureError;
pub use kernel::{Kernel, Outputs, Owned, MAX_OUTPUTS};
pub use registry::{build_spec, default_registry, AnyKernel, KernelKind, Registry};
pub use spec::{FeatureSpec, OutputSpec, Refresh, ValueType, FEATURE_VERSION};
pub use universe::{Universe, Updated};
pub use value::{fixed_from_f64, AbsentReason, FeatureValue, Raw};
