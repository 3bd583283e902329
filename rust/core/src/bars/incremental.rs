//! Incremental folding: each closed 1-minute bar a series accepts updates every derived
//! resolution and emits the derived bars it closes.
//!
//! A bucket closes when the watermark reaches its end: the bar closing at the bucket's end
//! arrives, a later bar arrives, or the caller advances the watermark (a quiet minute on
//! INTERNAL produces no bar, so time alone must be able to close a bucket). Each open bucket
//! keeps a running aggregate of the bars appended live, so closing a 1d bucket costs O(1),
//! not a pass over 1,440 minutes. When anything reached a bucket out of band (a bulk load, a
//! late bar) its aggregate is not trusted and the bucket is computed from the series itself.
//! Either way the rules are those of [`super::fold`], so a stream and a page never disagree.
//! A bar accepted into a bucket that has already closed (a late or repaired bar) re-emits
//! that bucket with its new value and sequence.

use super::derived::sum_volume;
use super::fold::{aggregate, closed_reason, Withheld};
use super::{Bar, BarsError, PushOutcome, Resolution, Series, MINUTE_NS};

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

/// The open bucket of one resolution.
#[derive(Debug, Clone, Copy, Default)]
struct Open {
    /// Close of the bucket; 0 when none is open.
    end: u64,
    /// Whether every bar of the bucket in the series went through the aggregate below.
    exact: bool,
    open: i64,
    high: i64,
    low: i64,
    close: i64,
    /// `None` once the sum left i64.
    volume: Option<i64>,
    count: u64,
    sequence: u64,
}

impl Open {
    fn start(end: u64, bar: &Bar, sequence: u64) -> Self {
        Self {
            end,
            exact: true,
            open: bar.open,
            high: bar.high,
            low: bar.low,
            close: bar.close,
            volume: Some(bar.volume),
            count: 1,
            sequence,
        }
    }

    /// The end of `resolution`'s bucket holding `ts_event`: this bucket's when the bar falls
    /// in it (most minutes), without the division [`Resolution::bucket_end`] costs.
    #[inline]
    fn end_holding(&self, ts_event: u64, resolution: Resolution) -> u64 {
        // An open bucket's end is on the grid: `end - step < ts_event <= end` means it.
        let inside =
            self.end != 0 && ts_event <= self.end && ts_event > self.end - resolution.step_ns();
        if inside {
            self.end
        } else {
            resolution.bucket_end(ts_event)
        }
    }

    fn add(&mut self, bar: &Bar, sequence: u64) {
        self.high = self.high.max(bar.high);
        self.low = self.low.min(bar.low);
        self.close = bar.close;
        self.volume = self.volume.and_then(|v| sum_volume(&[v, bar.volume]));
        self.count += 1;
        self.sequence = self.sequence.max(sequence);
    }

    /// Open but not trusted: computed from the series when it closes.
    const fn untrusted(end: u64) -> Self {
        Self {
            end,
            exact: false,
            open: 0,
            high: 0,
            low: 0,
            close: 0,
            volume: None,
            count: 0,
            sequence: 0,
        }
    }
}

/// Which buckets of one series have closed, and the running aggregates of the open ones.
#[derive(Debug, Clone)]
pub struct IncrementalFold {
    /// Every bucket ending at or before this instant has closed.
    closed_through: u64,
    /// Per derived resolution, the open bucket holding a bar (`end == 0`: none).
    open: [Open; 6],
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
            open: [Open::untrusted(0); 6],
        }
    }

    /// Every bucket ending at or before this instant has closed.
    #[must_use]
    pub const fn closed_through(&self) -> u64 {
        self.closed_through
    }

    /// Take what `series.push` (already applied) answered for `bar`, pushing the buckets
    /// that closed or changed onto `out`, finest resolution first. Dropped arrivals
    /// (duplicates, too old, rejected) change nothing.
    ///
    /// # Errors
    /// [`BarsError::VolumeOverflow`] when a bucket's volume does not fit 64 bits.
    pub fn on_push(
        &mut self,
        series: &Series,
        bar: &Bar,
        outcome: &PushOutcome,
        out: &mut Vec<Closed>,
    ) -> Result<(), BarsError> {
        let (sequence, appended) = match *outcome {
            PushOutcome::Appended(sequence) => (sequence, true),
            PushOutcome::Inserted(sequence) => (sequence, false),
            _ => return Ok(()),
        };
        let ts_event = bar.ts_event;
        // In band: newest bar, and newer than everything closed. Only then may it join a
        // running aggregate.
        let live = appended && ts_event > self.closed_through;
        self.closed_through = self.closed_through.max(ts_event);
        for (slot, resolution) in Resolution::DERIVED.into_iter().enumerate() {
            let end = self.open[slot].end_holding(ts_event, resolution);
            let open = &mut self.open[slot];
            if open.end != 0 && open.end != end && open.end <= self.closed_through {
                let finished = std::mem::take(open);
                close(series, resolution, &finished, out)?;
            }
            let open = &mut self.open[slot];
            if open.end == end {
                if live && open.exact {
                    open.add(bar, sequence);
                } else {
                    open.exact = false;
                }
            } else if end > self.closed_through || end == ts_event && live {
                *open = if live {
                    Open::start(end, bar, sequence)
                } else {
                    Open::untrusted(end)
                };
            } else {
                // A late bar into a bucket that closed already: a repair.
                close(series, resolution, &Open::untrusted(end), out)?;
                continue;
            }
            if end <= self.closed_through {
                let finished = std::mem::take(&mut self.open[slot]);
                close(series, resolution, &finished, out)?;
            }
        }
        Ok(())
    }

    /// The series took a bulk load (history, backfill, reload) and the watermark reached
    /// `newest` (its newest bar's close, or a later observed end). A bulk load streams
    /// nothing of its own: buckets it filled are served by pages. Buckets that were open
    /// before it and have closed now are pushed onto `out`, and the bucket holding `newest`
    /// stays open (computed from the series when it closes).
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
                self.open[slot] = Open::untrusted(end);
            }
        }
        Ok(())
    }

    /// The series confirmed the minutes `[start, end)` empty (see
    /// [`Series::confirm_empty`]). A bucket that has closed and holds them may be complete
    /// now: each such bucket that is is pushed onto `out` as a bar (a repair, as a late bar
    /// is); one still withheld is not repeated. Open buckets are checked when they close.
    ///
    /// # Errors
    /// [`BarsError::VolumeOverflow`].
    pub fn on_confirm(
        &mut self,
        series: &Series,
        start: u64,
        end: u64,
        out: &mut Vec<Closed>,
    ) -> Result<(), BarsError> {
        if end <= start {
            return Ok(());
        }
        let mut closed = Vec::new();
        for resolution in Resolution::DERIVED {
            let step = resolution.step_ns();
            let mut bucket = resolution.bucket_end(start + MINUTE_NS);
            while bucket - step < end && bucket <= self.closed_through {
                close(series, resolution, &Open::untrusted(bucket), &mut closed)?;
                bucket += step;
            }
        }
        out.extend(
            closed
                .into_iter()
                .filter(|c| matches!(c, Closed::Bar { .. })),
        );
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
            let open = &mut self.open[slot];
            if open.end != 0 && open.end <= self.closed_through {
                let finished = std::mem::take(open);
                close(series, resolution, &finished, out)?;
            }
        }
        Ok(())
    }
}

/// Close the bucket `bucket.end` by the fold's rules: from its running aggregate when that
/// is exact, else from the series. An INTERNAL bucket of no-trade minutes yields nothing.
fn close(
    series: &Series,
    resolution: Resolution,
    bucket: &Open,
    out: &mut Vec<Closed>,
) -> Result<(), BarsError> {
    let end = bucket.end;
    let start = end - resolution.step_ns();
    let (count, computed) = if bucket.exact {
        let volume = bucket
            .volume
            .ok_or(BarsError::VolumeOverflow { ts_event: end })?;
        let bar = Bar {
            ts_event: end,
            open: bucket.open,
            high: bucket.high,
            low: bucket.low,
            close: bucket.close,
            volume,
        };
        (bucket.count, Some((bar, bucket.sequence)))
    } else {
        let view = series.view();
        let i = view.ts_event.partition_point(|&t| t <= start);
        let j = i + view.ts_event[i..].partition_point(|&t| t <= end);
        let computed = if j > i {
            Some(aggregate(&view, i, j, end)?)
        } else {
            None
        };
        ((j - i) as u64, computed)
    };
    let incomplete = count < resolution.minutes();
    let channel = series.config().channel;
    let minutes = series.view().ts_event;
    if let Some(reason) = closed_reason(series.coverage(), channel, minutes, start, end, incomplete)
    {
        out.push(Closed::Withheld {
            resolution,
            withheld: Withheld { start, end, reason },
        });
    } else if let Some((bar, sequence)) = computed {
        out.push(Closed::Bar {
            resolution,
            bar,
            sequence,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The open bucket's end stands for the division only when the bar falls in it.
    #[test]
    fn the_end_holding_a_bar_is_its_bucket_end() {
        let bar = |minute: u64| Bar {
            ts_event: minute * MINUTE_NS,
            open: 1,
            high: 1,
            low: 1,
            close: 1,
            volume: 0,
        };
        for resolution in Resolution::DERIVED {
            let step = resolution.minutes();
            for open_end in [0, step, 3 * step, 1_440 * 7] {
                let open = Open::start(open_end * MINUTE_NS, &bar(1), 1);
                for minute in 1..(1_440 * 8) {
                    let ts = minute * MINUTE_NS;
                    let expected = resolution.bucket_end(ts);
                    assert_eq!(open.end_holding(ts, resolution), expected, "{resolution:?}");
                }
            }
        }
    }
}
