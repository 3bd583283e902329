//! Volume statistics.

pub mod volume_zscore;
