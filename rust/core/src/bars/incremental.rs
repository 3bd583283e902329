//! Incremental folding: each new closed 1-minute bar updates every derived resolution and
//! emits the derived bars it closes. The rules are those of [`super::fold`], applied bucket by
//! bucket as buckets close, so a stream and a page never disagree.
//!
//! Buckets close when the watermark reaches their end: either the bar closing at the bucket's
//! end arrives, a later bar arrives, or the caller advances the watermark (a quiet minute on
//! INTERNAL produces no bar, so time alone must be able to close a bucket).

use super::fold::{sum_volume, Withheld, WithheldReason};
use super::{Bar, Channel, Coverage, Resolution};

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
struct Bucket {
    /// Close of the bucket; 0 when no bucket is open.
    end: u64,
    open: i64,
    high: i64,
    low: i64,
    close: i64,
    volume: i64,
    overflow: bool,
    count: u64,
    sequence: u64,
}

/// Open buckets for the six derived resolutions of one series.
#[derive(Debug, Clone)]
pub struct IncrementalFold {
    channel: Channel,
    buckets: [Bucket; 6],
}

impl IncrementalFold {
    /// No open bucket yet.
    #[must_use]
    pub fn new(channel: Channel) -> Self {
        Self {
            channel,
            buckets: [Bucket::default(); 6],
        }
    }

    /// Take a bar newer than every bar seen so far (an `Appended` arrival), pushing the
    /// buckets it closes onto `out`, oldest resolution first.
    pub fn on_bar(&mut self, bar: &Bar, sequence: u64, coverage: &Coverage, out: &mut Vec<Closed>) {
        for (slot, resolution) in Resolution::DERIVED.into_iter().enumerate() {
            let end = resolution.bucket_end(bar.ts_event);
            let bucket = &mut self.buckets[slot];
            if bucket.end != 0 && bucket.end < end {
                out.extend(close(bucket, resolution, self.channel, coverage));
            }
            if bucket.end != end {
                *bucket = Bucket {
                    end,
                    open: bar.open,
                    high: bar.high,
                    low: bar.low,
                    ..Bucket::default()
                };
            }
            bucket.high = bucket.high.max(bar.high);
            bucket.low = bucket.low.min(bar.low);
            bucket.close = bar.close;
            match sum_volume(&[bucket.volume, bar.volume]) {
                Some(v) => bucket.volume = v,
                None => bucket.overflow = true,
            }
            bucket.count += 1;
            bucket.sequence = bucket.sequence.max(sequence);
            if bar.ts_event == end {
                out.extend(close(bucket, resolution, self.channel, coverage));
            }
        }
    }

    /// The watermark reached `watermark`: close every bucket ending at or before it.
    pub fn advance(&mut self, watermark: u64, coverage: &Coverage, out: &mut Vec<Closed>) {
        for (slot, resolution) in Resolution::DERIVED.into_iter().enumerate() {
            let bucket = &mut self.buckets[slot];
            if bucket.end != 0 && bucket.end <= watermark {
                out.extend(close(bucket, resolution, self.channel, coverage));
            }
        }
    }
}

/// Close one bucket by the fold's rules and clear it.
fn close(
    bucket: &mut Bucket,
    resolution: Resolution,
    channel: Channel,
    coverage: &Coverage,
) -> Option<Closed> {
    let b = std::mem::take(bucket);
    let start = b.end - resolution.step_ns();
    let reason = if !coverage.covers(start, b.end) {
        Some(WithheldReason::Unobserved)
    } else if channel == Channel::External && b.count < resolution.minutes() {
        Some(WithheldReason::GapInInput)
    } else {
        None
    };
    if let Some(reason) = reason {
        return Some(Closed::Withheld {
            resolution,
            withheld: Withheld {
                start,
                end: b.end,
                reason,
            },
        });
    }
    if b.overflow {
        // Not representable: withheld rather than wrapped; pages report it as an error.
        return None;
    }
    let bar = Bar {
        ts_event: b.end,
        open: b.open,
        high: b.high,
        low: b.low,
        close: b.close,
        volume: b.volume,
    };
    Some(Closed::Bar {
        resolution,
        bar,
        sequence: b.sequence,
    })
}
