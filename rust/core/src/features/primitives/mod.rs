//! What the kernels are built from, and nothing above them: the [`kernel`] contract; bars in
//! (`input`, `block`, and `check`, the quick check of a block's mantissas); rings (`ring`,
//! `bar_ring`, `window`); packed words (`packed`); recurrence steps (`recurrence`); and what a
//! kernel's file declares to the registry (`define`). Nothing here imports the kernels, the
//! registry or the engine.

pub(crate) mod bar_ring;
pub mod block;
pub(crate) mod check;
pub(crate) mod define;
pub mod input;
pub mod kernel;
pub(crate) mod packed;
pub(crate) mod recurrence;
pub mod ring;
#[cfg(test)]
pub(crate) mod testing;
pub(crate) mod window;
