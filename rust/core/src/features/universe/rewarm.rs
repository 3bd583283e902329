//! Rewarming a universe's state from the series: after a late bar repairs closed history,
//! or when an instrument is bulk loaded. The series is the truth; a state is refolded from
//! it and warmed in one pass per run between gaps.

use super::{is_gap, slot_of, Instrument, Updated};
use crate::bars::{fold_many, BarsView, Closed, Resolution, WithheldReason};
use crate::features::engine::lanes::Lanes;
use crate::features::engine::state::FeatureState;
use crate::features::error::FeatureError;

impl Instrument {
    /// Rewarm 1m and every resolution with a closed bucket in `closed` from the series.
    pub(super) fn rewarm_touched(
        &self,
        (index, lane): (u32, usize),
        lanes: &mut [Lanes<'_>],
        closed: &[Closed],
        updated: &mut Vec<Updated>,
    ) -> Result<(), FeatureError> {
        let mut touched = vec![Resolution::M1];
        for event in closed {
            let (Closed::Bar { resolution, .. } | Closed::Withheld { resolution, .. }) = *event;
            if !touched.contains(&resolution) {
                touched.push(resolution);
            }
        }
        for resolution in touched {
            self.rewarm_lane(&mut lanes[slot_of(resolution)], lane, resolution)?;
            updated.push(Updated {
                instrument: index,
                resolution,
            });
        }
        Ok(())
    }

    /// Warm lane `lane` of `resolution`'s lanes afresh from the series (see
    /// [`Self::rewarm`]); on error the lane is left as it was.
    pub(super) fn rewarm_lane(
        &self,
        lanes: &mut Lanes<'_>,
        lane: usize,
        resolution: Resolution,
    ) -> Result<(), FeatureError> {
        let mut state = lanes.gather(lane);
        self.rewarm(&mut state, resolution)?;
        lanes.scatter(lane, &state);
        Ok(())
    }

    /// Warm `state`, of `resolution`, afresh from the series: its bars split at gaps.
    fn rewarm(&self, state: &mut FeatureState, resolution: Resolution) -> Result<(), FeatureError> {
        let view = self.series.view();
        let channel = self.channel();
        let coverage = self.series.coverage();
        state.reset();
        if resolution == Resolution::M1 {
            return warm_split(state, &view, |prev, next| {
                is_gap(coverage, channel, resolution, prev, next)
            });
        }
        let Some(out) = fold_many(&view, coverage, channel, &[resolution])?.pop() else {
            return Ok(());
        };
        // Only the buckets the incremental fold has closed: the page fold closes a bucket by
        // the coverage watermark, which an observation may carry past the newest bar. A
        // bucket the fold still holds open is judged when it closes (a withheld bucket then
        // restarts the state, a bar joins it); judged here too, a gap found now would stand
        // after a later candle completes the bucket.
        let closed_through = self.fold.closed_through();
        let step = resolution.step_ns();
        // Withheld spans closed by then (not the still-open buckets) break the input.
        let breaks: Vec<u64> = out
            .withheld
            .iter()
            .filter(|w| w.reason != WithheldReason::NotClosed && w.start + step <= closed_through)
            .map(|w| w.start)
            .collect();
        let closed = out.bars.ts_event.partition_point(|&t| t <= closed_through);
        let columns = out.bars.view(false).slice(0..closed);
        warm_split(state, &columns, |prev, next| {
            is_gap(coverage, channel, resolution, prev, next)
                || breaks.iter().any(|&b| prev <= b && b < next)
        })?;
        // A withheld bucket after the newest bar leaves the row stale: restart now.
        let newest = columns.ts_event.last().copied();
        if newest.is_some_and(|newest| breaks.iter().any(|&b| b >= newest)) {
            state.mark_gap();
        }
        Ok(())
    }
}

/// Warm `state` from `columns`, restarting it (a gap) wherever `gap(prev, next)` holds.
fn warm_split(
    state: &mut FeatureState,
    columns: &BarsView<'_>,
    gap: impl Fn(u64, u64) -> bool,
) -> Result<(), FeatureError> {
    let ts = columns.ts_event;
    let mut from = 0;
    for i in 1..=ts.len() {
        if i == ts.len() || gap(ts[i - 1], ts[i]) {
            state.warm_columns(&columns.slice(from..i))?;
            if i < ts.len() {
                state.mark_gap();
            }
            from = i;
        }
    }
    Ok(())
}
