//! Indicator features: kernels, the registry that builds them from specs, and the engine
//! that keeps their incremental state per (instrument, resolution).
//!
//! Kernels take closed bars as `f64` (one [`BarInput`], or a [`crate::bars::BarsView`] of `f64`
//! columns when warming; converted once from the fixed-point mantissas), compute in `f64` in O(1)
//! amortised per bar with storage sized once, and type their outputs at the declared scale
//! only when a row is read ([`value::fixed_from_f64`]: exact, half to even). A kernel reports
//! ABSENT `WARMING_UP` until it has seen exactly `warmupBars` bars, and a value from that bar
//! on.
//!
//! # Layers
//!
//! Each layer imports only the layers below it (and itself), never one above:
//!
//! 1. [`error`], [`spec`], [`value`]: the refusals and the published shapes;
//! 2. [`primitives`]: what kernels are built from: the [`Kernel`] contract, bars in (inputs,
//!    blocks), rings, packed words, recurrence steps, and what a kernel declares to the
//!    registry;
//! 3. [`kernels`]: one indicator per file, by family;
//! 4. [`registry`]: the one table of kernels (`registry/kinds.rs`), spec building and the
//!    default registry (adding an indicator: see [`kernels`]);
//! 5. [`engine`]: what runs the kernels (layout, fusion, lanes, [`FeatureState`]);
//! 6. [`universe`]: every instrument's series and states.
//!
//! A path to another layer is written `crate::features::<layer>::...`;
//! `rust/core/tests/feature_layers.rs` reads every file and refuses an import upwards.

pub mod engine;
pub mod error;
pub mod kernels;
pub mod primitives;
pub mod registry;
pub mod spec;
pub mod universe;
pub mod value;

pub use engine::state::{FeatureState, Row};
pub use error::FeatureError;
pub use primitives::block::Inputs;
pub use primitives::input::BarInput;
pub use primitives::kernel::{Kernel, Outputs, Owned, MAX_OUTPUTS};
pub use registry::{build_spec, default_registry, AnyKernel, KernelKind, Registry};
pub use spec::{FeatureSpec, OutputSpec, Refresh, ValueType, FEATURE_VERSION};
pub use universe::{Universe, Updated};
pub use value::{fixed_from_f64, AbsentReason, FeatureValue, Raw};
