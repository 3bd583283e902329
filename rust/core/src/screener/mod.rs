//! The screener's kernels over the feature universe: evaluation (a row table kept as columns,
//! screen definitions compiled against its registry, filter / sort / rank over the columns)
//! and publishing (the values last published per (instrument, resolution), and after a minute
//! close the `svc.feature_row_delta` documents of the rows that changed, encoded once) and
//! observing (the `svc.pattern_observation` documents of the patterns those rows made), and
//! the live minute close that runs them all in one call per loop turn ([`Turn`]).
//!
//! Imports point one way: this module reads [`crate::features`] (value types, and rows through
//! [`crate::features::Universe::for_each_value`] like any other reader), [`crate::decimal`]
//! and [`crate::bars`] (resolutions); nothing there imports it.

mod batch;
mod column;
mod definition;
mod delta_rows;
mod deltas;
mod encode;
mod error;
mod eval;
pub(crate) mod grammar;
mod ids;
mod literal;
pub(crate) mod members;
mod observations;
mod patterns;
mod table;
mod turn;

#[cfg(test)]
mod delta_tests;
#[cfg(test)]
mod observation_tests;
#[cfg(test)]
mod screen_tests;
#[cfg(test)]
mod test_rows;

pub use batch::Deltas;
pub use definition::{Screen, MAX_DEPTH, MAX_GROUP, MAX_INSTRUMENTS, MAX_LIMIT, MAX_SORT};
pub use deltas::DeltaWriter;
pub use error::ScreenError;
pub use eval::Ranked;
pub use observations::{Observation, ObservationWriter};
pub use patterns::Pattern;
pub use table::{Cell, ScreenTable};
pub use turn::{Book, Frame, LiveBar, Outcome, Run, Stop, Turn};
