//! A minute closed on several threads, in jobs smaller than a block: each block's first pass
//! (its series and folds, [`fold_bars`]), then each of its resolutions' batches taken
//! ([`Lanes::take`](crate::features::engine::lanes::Lanes::take)) as a job of its own.
//!
//! Whole blocks as jobs left a thread idle at the end whenever the machine slowed the other
//! one, waiting out the other's last block. A resolution's take is a seventh of a block's
//! second pass, so the last job to finish is short.
//!
//! Every first pass comes before every take in the queue, so a take's first pass was
//! claimed first and is running or done: a take waits for it only while it runs.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use super::close::{fold_bars, Batch, Scratch};
use super::threads::run_all;
use super::{Block, Instrument, Updated};
use crate::bars::{Bar, Closed, Resolution};
use crate::features::engine::lanes::Store;
use crate::features::engine::layout::Layout;
use crate::features::error::FeatureError;

/// What a block's first pass works on, and how it ended.
struct Folding<'a> {
    instruments: &'a mut [Instrument],
    closed: &'a mut Vec<Closed>,
    out: &'a mut Vec<Updated>,
    result: Result<(), FeatureError>,
}

/// One resolution's states and the batch its first pass leaves them.
struct Taking<'a> {
    store: &'a mut Store,
    batch: &'a mut Batch,
}

/// A block's part of a split minute: its bars (instruments from index `base`) and its parts,
/// each behind a lock its jobs take.
struct Parts<'a> {
    base: u32,
    bars: &'a [(u32, Bar)],
    folding: Mutex<Folding<'a>>,
    taking: [Mutex<Taking<'a>>; Resolution::ALL.len()],
    /// Set once the first pass ended (or panicked): the takes may start.
    folded: AtomicBool,
}

/// A block with the minute's bars of its instruments (indexes from the `u32`).
pub(super) type BlockBars<'a> = (u32, &'a mut Block, &'a [(u32, Bar)]);

/// A job of a split minute.
enum Job<'p, 'a> {
    /// A block's first pass.
    Fold(&'p Parts<'a>),
    /// A block's take at the resolution of a slot.
    Take(&'p Parts<'a>, usize),
}

/// Close each block's `bars` (non-empty, instruments from index `base`) on this thread and
/// up to `helpers` threads of `pool`. Pushes each block's rows onto `updated` in block order;
/// returns the first block's error.
pub(super) fn close_blocks<'a>(
    pool: &rayon::ThreadPool,
    helpers: usize,
    layout: &Arc<Layout>,
    blocks: Vec<BlockBars<'a>>,
    updated: &mut Vec<Updated>,
) -> Result<(), FeatureError> {
    let parts: Vec<Parts<'_>> = blocks
        .into_iter()
        .map(|(base, block, bars)| parts_of(base, block, bars))
        .collect();
    let folds = parts.iter().map(Job::Fold);
    let takes = parts
        .iter()
        .flat_map(|p| (0..Resolution::ALL.len()).map(move |slot| Job::Take(p, slot)));
    let jobs: Vec<Mutex<Job<'_, '_>>> = folds.chain(takes).map(Mutex::new).collect();
    let helpers = helpers.min(jobs.len().saturating_sub(1));
    run_all(pool, helpers, &jobs, |job| match *job {
        Job::Fold(parts) => fold(parts, layout),
        Job::Take(parts, slot) => take(parts, slot, layout),
    });
    drop(jobs);
    let mut first = Ok(());
    for parts in parts {
        let result = parts.finish(updated);
        if first.is_ok() {
            first = result;
        }
    }
    first
}

/// `block`'s parts for a split minute.
fn parts_of<'a>(base: u32, block: &'a mut Block, bars: &'a [(u32, Bar)]) -> Parts<'a> {
    let Block {
        instruments,
        stores,
        scratch,
        out,
    } = block;
    let Scratch { closed, batches } = scratch;
    out.clear();
    let mut batches = batches.iter_mut();
    let taking = stores.each_mut().map(|store| {
        let Some(batch) = batches.next() else {
            unreachable!("a batch per resolution")
        };
        Mutex::new(Taking { store, batch })
    });
    Parts {
        base,
        bars,
        folding: Mutex::new(Folding {
            instruments,
            closed,
            out,
            result: Ok(()),
        }),
        taking,
        folded: AtomicBool::new(false),
    }
}

impl Parts<'_> {
    /// Push this block's rows onto `updated`; return its result.
    fn finish(self, updated: &mut Vec<Updated>) -> Result<(), FeatureError> {
        let folding = self
            .folding
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner);
        updated.extend_from_slice(folding.out);
        folding.result
    }
}

/// A lock's guard, whether or not a thread panicked holding it (the panic reaches the
/// caller through the pool's scope).
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Sets `folded` when dropped, a panic included: no take waits for a pass that ended.
struct Folded<'p>(&'p AtomicBool);

impl Drop for Folded<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Release);
    }
}

/// A block's first pass, with every resolution's states (it rewarms a late bar's) and
/// batch (it fills them) locked.
fn fold(parts: &Parts<'_>, layout: &Arc<Layout>) {
    let _folded = Folded(&parts.folded);
    let mut folding = lock(&parts.folding);
    let mut taking = parts.taking.each_ref().map(lock);
    let (mut lanes, mut batches) = (Vec::with_capacity(taking.len()), Vec::new());
    for taking in &mut taking {
        let Taking { store, batch } = &mut **taking;
        lanes.push(store.lanes(layout));
        batches.push(&mut **batch);
    }
    let Folding {
        instruments,
        closed,
        out,
        result,
    } = &mut *folding;
    let instruments = (&mut **instruments, parts.base);
    *result = fold_bars(
        instruments,
        &mut lanes,
        parts.bars,
        closed,
        &mut batches,
        out,
    );
}

/// A block's batch at the resolution of `slot` taken, once its first pass ended.
fn take(parts: &Parts<'_>, slot: usize, layout: &Arc<Layout>) {
    // The pass is running on another thread: spin a while (a yield may not return for a
    // time slice), then yield.
    let mut spins = 0_u32;
    while !parts.folded.load(Ordering::Acquire) {
        if spins < 10_000 {
            spins += 1;
            std::hint::spin_loop();
        } else {
            std::thread::yield_now();
        }
    }
    let mut taking = lock(&parts.taking[slot]);
    let Taking { store, batch } = &mut *taking;
    store.lanes(layout).take(batch);
}
