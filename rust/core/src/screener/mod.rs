//! The screener's evaluation: a row table kept as columns, screen definitions compiled against
//! its registry, and filter / sort / rank over the columns.
//!
//! Imports point one way: this module reads [`crate::features`] (value types),
//! [`crate::decimal`] and [`crate::bars`] (resolutions); nothing there imports it.

mod column;
mod definition;
mod error;
mod eval;
mod literal;
mod members;
mod table;
#[cfg(test)]
mod tests;

pub use definition::{Screen, MAX_DEPTH, MAX_GROUP, MAX_INSTRUMENTS, MAX_LIMIT, MAX_SORT};
pub use error::ScreenError;
pub use eval::Ranked;
pub use table::{Cell, ScreenTable};
