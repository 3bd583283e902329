//! The indicators, one per file, grouped by family (as NautilusTrader's
//! `crates/indicators`). A kernel knows the [`super::primitives`] only (the
//! [`super::Kernel`] contract, rings, packed words, blocks, recurrence steps, what it declares
//! to the registry); nothing here knows the dispatch that runs it (`super::registry::kinds`).
//!
//! # How to add an indicator
//!
//! One file and one table row:
//!
//! 1. **The file**, `kernels/<family>/<name>.rs` (declared by `pub mod <name>;` in the
//!    family's `mod.rs`), holds the kernel and everything the registry needs of it:
//!    - the kernel. A function of its newest closes or bars alone is a window kernel: a
//!      `windowed::Statistic` (what it computes from the window, read when a row is read)
//!      and `pub type <Name> = Windowed<Statistic>` with a `new`; the ring, warm-up, packing
//!      and views come with [`windowed::Windowed`]. Any other kernel implements
//!      [`super::Kernel`] and `Packed` (its mutable state as words) itself;
//!    - `DECLARED`: the `implementation` string, parameter names, outputs (name, type,
//!      scale), the `threshold` bound and its default specs (none keeps it out of the
//!      default registry, whose rows then stay as they are);
//!    - `build` from a spec's checked parameters (`Params::integer`, `Params::decimal`);
//!    - unit tests: values by hand, `testing::batch_equals_incremental`, and a proptest in
//!      `mod property_tests` against a direct computation.
//! 2. **The row**, `<Name>(<family>::<name>::<Name>)`, in the table at the bottom of
//!    `registry/kinds.rs`: [`super::KernelKind`], [`super::AnyKernel`], their dispatch, the
//!    spec checks and the default list follow from it.
//!
//! Then the plain-Python reference in `tests/reference/indicators.py`: a default feature is
//! checked through the Python API (`tests/unit/test_features.py`); any other through vectors
//! (`tests/reference/make_feature_vectors.py`, checked by `rust/core/tests/feature_vectors.rs`).
//! `momentum/stochastic.rs` was added this way.

pub mod average;
pub mod momentum;
pub mod volatility;
pub mod volume;
pub mod windowed;
