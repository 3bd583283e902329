//! Buckets that close with nothing in them: a bar after missing minutes, or an advanced
//! watermark, can close buckets no bar reached, and the fold reports nothing for them. A
//! state restarts at once where they were a gap after its newest input, as a warm from the
//! series restarts it, rather than at its next input: every row then equals a warm from the
//! series whatever the order the bars came in.

use super::close::{input_of, keep_first, push_rows, Batches};
use super::{slot_of, Instrument, Updated};
use crate::bars::{Bar, Closed, Resolution};
use crate::features::engine::lanes::Lanes;
use crate::features::error::FeatureError;

impl Instrument {
    /// As [`Self::owe`] for the 1m `bar` (if any) and the buckets in `closed`, their rows
    /// pushed onto `updated`; then each resolution restarts where the buckets closed after
    /// its newest input (by the fold's watermark) were a gap, its row pushed too when no
    /// bucket of it closed. A resolution whose closed bar is followed by more (a withheld
    /// bucket, a second bar, such a gap) is rewarmed from the series instead: its batch
    /// takes bars only after every restart, so it cannot take them in between.
    pub(super) fn owe_swept(
        &self,
        lanes: &mut [Lanes<'_>],
        batches: &mut Batches<'_>,
        (index, lane): (u32, usize),
        bar: Option<Bar>,
        closed: &[Closed],
        updated: &mut Vec<Updated>,
    ) -> Result<(), FeatureError> {
        let mut first = Ok(());
        if let Some(bar) = bar {
            let row = std::iter::once((Resolution::M1, Some(bar)));
            updated.push(Updated {
                instrument: index,
                resolution: Resolution::M1,
            });
            keep_first(&mut first, self.owe(lanes, batches, lane, row));
        }
        let closed_through = self.fold.closed_through();
        for resolution in Resolution::DERIVED {
            // The fold pushes a resolution's buckets together, oldest first.
            let from = closed.iter().position(|e| resolution_of(e) == resolution);
            let from = from.unwrap_or(closed.len());
            let len = closed[from..]
                .iter()
                .take_while(|e| resolution_of(e) == resolution)
                .count();
            let events = &closed[from..from + len];
            push_rows(index, events, updated);
            let slot = slot_of(resolution);
            let newest = events.iter().rev().find_map(|e| input_of(e).1);
            let last = newest
                .map(|b| b.ts_event)
                .or(lanes[slot].last_ts_event(lane));
            // The bucket still open starts at the watermark's grid line.
            let step = resolution.step_ns();
            let open = closed_through - closed_through % step;
            let gap = last.is_some_and(|last| self.is_gap(resolution, last, open + step));
            let bar_at = events.iter().position(|e| matches!(e, Closed::Bar { .. }));
            if bar_at.is_some_and(|k| k + 1 < len || gap) {
                keep_first(
                    &mut first,
                    self.rewarm_lane(&mut lanes[slot], lane, resolution),
                );
                continue;
            }
            let inputs = events.iter().map(input_of);
            keep_first(&mut first, self.owe(lanes, batches, lane, inputs));
            if gap {
                lanes[slot].mark_gap(lane);
                if len == 0 {
                    updated.push(Updated {
                        instrument: index,
                        resolution,
                    });
                }
            }
        }
        first
    }
}

fn resolution_of(event: &Closed) -> Resolution {
    let (Closed::Bar { resolution, .. } | Closed::Withheld { resolution, .. }) = *event;
    resolution
}
