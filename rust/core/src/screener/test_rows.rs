//! What the screener's writer tests share: rows as `FeatureState` snapshots them.
#![allow(clippy::unwrap_used)]

use crate::bars::Resolution;
use crate::features::{Row, Universe};

/// Every row of `u` with its close time (its newest bar's), instrument by instrument,
/// resolutions in order.
pub(super) fn snapshot(u: &Universe) -> Vec<(Option<u64>, Row)> {
    (0..u.len() as u32)
        .flat_map(|i| {
            Resolution::ALL.map(|r| {
                let state = u.state(i, r).unwrap();
                (state.last_ts_event(), state.row())
            })
        })
        .collect()
}
