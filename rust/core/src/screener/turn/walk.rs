//! The feed's rules for a turn's closes, applied in payload order as the per-event path
//! applies them: a close whose first bar's sequence is at or below the newest folded (or
//! queued in this turn) for its instrument was folded already (a catch-up took it) and is
//! dropped; one whose sequence is not the next stops the walk (the closes queued before it
//! fold, then the caller catches that instrument up from the node's pages and walks on after
//! it); the rest queue to fold. A payload the strict reader refuses stops the walk with nothing
//! queued: the caller folds the whole turn on the per-event path.

use std::collections::HashMap;

use super::book::Book;
use super::event::{read, Event, LiveBar, Refused};
use crate::features::universe::threads::{pool, THREADS};
use crate::features::Universe;

/// Payloads at least this many are read on the close's threads (a large turn: a minute's
/// closes of many instruments), in as many slices.
const PARALLEL_MIN: usize = 256;

/// At most this many threads read one turn.
const MAX_THREADS: usize = 8;

/// Where a walk (and so a turn) stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// Every payload was taken.
    End,
    /// Payload `event` jumps instrument `instrument`'s sequence: the caller catches it up,
    /// then takes the payloads after this one.
    Jump {
        /// The payload's place in the turn.
        event: usize,
        /// The instrument to catch up.
        instrument: u32,
    },
    /// Payload `event` is one the strict reader leaves to the per-event path, which takes the
    /// whole turn (nothing was folded).
    Refused {
        /// The payload's place in the turn.
        event: usize,
    },
}

/// A turn's closes to fold, the newest close time offered, and where the walk stopped.
#[derive(Debug)]
pub(super) struct Walk {
    pub(super) bars: Vec<LiveBar>,
    pub(super) offered: Option<u64>,
    pub(super) stop: Stop,
}

/// Walk `payloads` for feed `feed` (see the module docs).
pub(super) fn walk(payloads: &[&[u8]], feed: &str, book: &Book, universe: &Universe) -> Walk {
    let feed = book.feed_number(feed);
    let mut out = Walk {
        bars: Vec::with_capacity(payloads.len()),
        offered: None,
        stop: Stop::End,
    };
    let mut queued: HashMap<u32, u64> = HashMap::new();
    for (k, event) in read_all(payloads, feed, book, universe)
        .into_iter()
        .enumerate()
    {
        let bars = match event {
            Err(_) => {
                return Walk {
                    bars: Vec::new(),
                    offered: None,
                    stop: Stop::Refused { event: k },
                }
            }
            Ok(Event::Skip) => continue,
            Ok(Event::Bars(bars)) => bars,
        };
        let Some(&first) = bars.first() else {
            continue;
        };
        let ts = first.bar.ts_event;
        out.offered = Some(out.offered.map_or(ts, |offered| offered.max(ts)));
        let instrument = first.instrument;
        let last = match queued.get(&instrument) {
            Some(&queued) => Some(queued),
            None => book.sequence(instrument).ok().flatten(),
        };
        if let Some(last) = last {
            if first.sequence <= last {
                continue;
            }
            if last.checked_add(1) != Some(first.sequence) {
                out.stop = Stop::Jump {
                    event: k,
                    instrument,
                };
                return out;
            }
        }
        let newest = bars
            .iter()
            .map(|b| b.sequence)
            .max()
            .unwrap_or(first.sequence);
        queued.insert(instrument, last.unwrap_or(0).max(newest));
        out.bars.extend(bars);
    }
    out
}

/// Every payload read, in order: a large turn in slices on the close's threads (reading is
/// pure, so a payload after the walk's stop is read for nothing, and that is all).
fn read_all(
    payloads: &[&[u8]],
    feed: Option<u32>,
    book: &Book,
    universe: &Universe,
) -> Vec<Result<Event, Refused>> {
    let one = |payload: &&[u8]| read(payload, feed, book, universe);
    let threads = (*THREADS).min(MAX_THREADS);
    let pool = (payloads.len() >= PARALLEL_MIN && threads > 1)
        .then(pool)
        .flatten();
    let Some(pool) = pool else {
        return payloads.iter().map(one).collect();
    };
    let mut parts: Vec<Vec<Result<Event, Refused>>> = (0..threads).map(|_| Vec::new()).collect();
    let slices = payloads.chunks(payloads.len().div_ceil(threads));
    pool.in_place_scope(|scope| {
        let mut jobs = slices.zip(parts.iter_mut());
        let here = jobs.next();
        for (slice, out) in jobs {
            scope.spawn(move |_| *out = slice.iter().map(one).collect());
        }
        if let Some((slice, out)) = here {
            *out = slice.iter().map(one).collect();
        }
    });
    parts.into_iter().flatten().collect()
}
