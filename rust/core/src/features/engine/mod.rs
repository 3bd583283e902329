//! What runs the kernels, above the registry: a state's `layout` of packed kernels in one
//! arena, the `fused` loop of the recurrences, `lanes` of states side by side, and the
//! [`state`] of one instrument and resolution.

pub(crate) mod fused;
pub(crate) mod lanes;
pub(crate) mod layout;
pub mod state;
