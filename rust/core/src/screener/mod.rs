//! The screener's publishing side over a [`crate::features::Universe`]: the values last
//! published per (instrument, resolution), and after a minute close the
//! `svc.feature_row_delta` documents of the rows that changed, encoded once.
//!
//! The kernels, the engine and the universe know nothing of deltas: the writer reads rows
//! through [`crate::features::Universe::for_each_value`] like any other reader.

mod batch;
mod deltas;
mod encode;

pub use batch::Deltas;
pub use deltas::DeltaWriter;

#[cfg(test)]
mod tests;
