//! Incremental folding: each closed 1-minute bar a series accepts updates every derived
//! resolution and emits the derived bars it closes.
//!
//! A bucket closes when the watermark reaches its end: the bar closing at the bucket's end
//! arrives, a later bar arrives, or the caller advances the watermark (a quiet minute on
//! INTERNAL produces no bar, so time alone must be able to close a bucket). A closing bucket
//! is computed from the series itself by the rules of [`super::fold`], so a stream and a page
//! never disagree, whatever arrived in bulk, late or out of order. A bar accepted into a
//! bucket that has already closed (a late or repaired bar) re-emits that bucket with its new
//! value and sequence.

use super::fold::{aggregate, closed_reason, Withheld};
use super::{Bar, BarsError, PushOutcome, Resolution, Series};

/// One closed derived bucket: a bar, or the reason it was withheld.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Closed {
    /// A complete bucket.
    Bar {
        /// Its resolution.
        resolution: Resolution,
        /// The derived bar (`ts_event` = bucket close).
        bar: Bar,
        /// Highest constituent sequence.
        sequence: u64,
    },
    /// A bucket that was not computed.
    Withheld {
        /// Its resolution.
        resolution: Resolution,
        /// The bucket and reason.
        withheld: Withheld,
    },
}

/// Which buckets of one series have closed and which hold bars still open.
#[derive(Debug, Clone)]
pub struct IncrementalFold {
    /// Every bucket ending at or before this instant has closed.
    closed_through: u64,
    /// Per derived resolution, the end of the open bucket holding a bar (0: none).
    pending: [u64; 6],
}

impl Default for IncrementalFold {
    fn default() -> Self {
        Self::new()
    }
}

impl IncrementalFold {
    /// Nothing closed, nothing open.
    #[must_use]
    pub const fn new() -> Self {
        Self {
            closed_through: 0,
            pending: [0; 6],
        }
    }

    /// Every bucket ending at or before this instant has closed.
    #[must_use]
    pub const fn closed_through(&self) -> u64 {
        self.closed_through
    }

    /// Take what `series.push` (already applied) answered for a bar closing at `ts_event`,
    /// pushing the buckets that closed or changed onto `out`, finest resolution first.
    /// Dropped arrivals (duplicates, too old, rejected) change nothing.
    ///
    /// # Errors
    /// [`BarsError::VolumeOverflow`] when a bucket's volume does not fit 64 bits.
    pub fn on_push(
        &mut self,
        series: &Series,
        ts_event: u64,
        outcome: &PushOutcome,
        out: &mut Vec<Closed>,
    ) -> Result<(), BarsError> {
        if !matches!(outcome, PushOutcome::Appended(_) | PushOutcome::Inserted(_)) {
            return Ok(());
        }
        self.closed_through = self.closed_through.max(ts_event);
        for (slot, resolution) in Resolution::DERIVED.into_iter().enumerate() {
            let end = resolution.bucket_end(ts_event);
            if self.pending[slot] == end {
                self.pending[slot] = 0; // this bar's bucket: handled below, once
            }
            self.close_pending(series, slot, resolution, out)?;
            if end <= self.closed_through {
                // The bar closes its bucket, or repairs one that closed already.
                close(series, resolution, end, out)?;
            } else {
                self.pending[slot] = end;
            }
        }
        Ok(())
    }

    /// The series took a bulk load (history, backfill, reload) whose newest bar closes at
    /// `newest`. A bulk load streams nothing of its own: buckets it filled are served by
    /// pages. Buckets that were open before it and have closed now are pushed onto `out`,
    /// and the bucket holding `newest` stays open for the next live bar.
    ///
    /// # Errors
    /// [`BarsError::VolumeOverflow`].
    pub fn on_bulk(
        &mut self,
        series: &Series,
        newest: u64,
        out: &mut Vec<Closed>,
    ) -> Result<(), BarsError> {
        self.advance(series, newest, out)?;
        for (slot, resolution) in Resolution::DERIVED.into_iter().enumerate() {
            let end = resolution.bucket_end(newest);
            if end > self.closed_through {
                self.pending[slot] = end;
            }
        }
        Ok(())
    }

    /// The watermark reached `watermark`: close every open bucket ending by then.
    ///
    /// # Errors
    /// [`BarsError::VolumeOverflow`].
    pub fn advance(
        &mut self,
        series: &Series,
        watermark: u64,
        out: &mut Vec<Closed>,
    ) -> Result<(), BarsError> {
        self.closed_through = self.closed_through.max(watermark);
        for (slot, resolution) in Resolution::DERIVED.into_iter().enumerate() {
            self.close_pending(series, slot, resolution, out)?;
        }
        Ok(())
    }

    fn close_pending(
        &mut self,
        series: &Series,
        slot: usize,
        resolution: Resolution,
        out: &mut Vec<Closed>,
    ) -> Result<(), BarsError> {
        let end = self.pending[slot];
        if end != 0 && end <= self.closed_through {
            self.pending[slot] = 0;
            close(series, resolution, end, out)?;
        }
        Ok(())
    }
}

/// Compute the closed bucket ending at `end` from the series, by the fold's rules. An
/// INTERNAL bucket of no-trade minutes only yields nothing.
fn close(
    series: &Series,
    resolution: Resolution,
    end: u64,
    out: &mut Vec<Closed>,
) -> Result<(), BarsError> {
    let view = series.view();
    let start = end - resolution.step_ns();
    let i = view.ts_event.partition_point(|&t| t <= start);
    let j = i + view.ts_event[i..].partition_point(|&t| t <= end);
    let incomplete = ((j - i) as u64) < resolution.minutes();
    let channel = series.config().channel;
    if let Some(reason) = closed_reason(series.coverage(), channel, start, end, incomplete) {
        out.push(Closed::Withheld {
            resolution,
            withheld: Withheld { start, end, reason },
        });
    } else if j > i {
        let (bar, sequence) = aggregate(&view, i, j, end)?;
        out.push(Closed::Bar {
            resolution,
            bar,
            sequence,
        });
    }
    Ok(())
}
