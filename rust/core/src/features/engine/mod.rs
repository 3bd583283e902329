//! What runs the kernels. Below them, the primitives they build on: bars in (`input`,
//! `block`), rings (`ring`, `bar_ring`, `window`), packed words (`packed`) and recurrence
//! steps (`recurrence`). Above the registry: a state's `layout` of packed kernels in one
//! arena, the `fused` loop of the recurrences, `lanes` of states side by side, and the
//! [`state`] of one instrument and resolution.

pub(crate) mod bar_ring;
pub mod block;
pub(crate) mod check;
pub(crate) mod fused;
pub mod input;
pub(crate) mod lanes;
pub(crate) mod layout;
pub(crate) mod packed;
pub(crate) mod recurrence;
pub mod ring;
pub mod state;
pub(crate) mod window;
